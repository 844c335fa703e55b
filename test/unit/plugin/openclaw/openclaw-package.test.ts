// The OpenClaw converter on package folders written here: what it writes (plugin.json, the runtime,
// its spec, the SDK stand-in), how tiers follow toolMetadata.sideEffecting and settings follow
// configSchema, and every refusal naming its field.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { checkManifest } from '../../../../src/plugin/manifest.js';
import { convertOpenClawPackage, isOpenClawPackage, settingKey, tierOf } from '../../../../src/plugin/openclaw/openclaw-package.js';
import { expectError } from '../../fixtures/support.js';

function write(dir: string, files: Record<string, unknown>): string {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), typeof content === 'string' ? content : JSON.stringify(content));
  }
  return dir;
}

const base = (manifest: Record<string, unknown> = {}) => ({
  'openclaw.plugin.json': { id: 'notes', configSchema: { type: 'object' }, contracts: { tools: ['note_add'] }, ...manifest },
  'package.json': { name: 'notes', version: '2.0.1', type: 'module', openclaw: { extensions: ['./dist/index.js'] } },
  'dist/index.js': 'export default { register() {} };',
});

t.test('tiers from declared effects, setting names in snake case', async (t) => {
  t.equal(tierOf({ sideEffecting: false }), 'read');
  t.equal(tierOf({ sideEffecting: true }), 'act');
  t.equal(tierOf({ replaySafe: true }), 'dangerous', 'effects not declared');
  t.equal(tierOf(undefined), 'dangerous');
  t.equal(tierOf({ sideEffecting: 'no' }), 'dangerous', 'a declaration that is not a boolean counts as none');
  t.equal(settingKey('apiKey'), 'api_key');
  t.equal(settingKey('baseURL'), 'base_url');
  t.equal(settingKey('city'), 'city');
});

t.test('a package becomes a process plugin whose manifest HomeAgent accepts', async (t) => {
  const dir = write(
    t.testdir(),
    base({
      description: 'Household notes.',
      contracts: { tools: ['note_add', 'note_list'] },
      toolMetadata: { note_list: { sideEffecting: false } },
      configSchema: {
        type: 'object',
        properties: {
          maxNotes: { type: 'integer', minimum: 1, maximum: 500, default: 50 },
          token: { type: 'string' },
          mode: { type: 'string', enum: ['short', 'long'] },
        },
      },
      uiHints: { token: { sensitive: true } },
    }),
  );
  t.ok(isOpenClawPackage(dir));
  const manifest = convertOpenClawPackage(dir);
  t.notOk(isOpenClawPackage(dir), 'converted once: plugin.json now exists');
  t.same(checkManifest(JSON.parse(readFileSync(join(dir, 'plugin.json'), 'utf8')), 'plugin.json'), manifest);
  t.match(manifest, {
    name: 'notes',
    version: '2.0.1',
    kind: 'process',
    entry: 'homeagent-openclaw.mjs',
    description: 'Household notes. (OpenClaw)',
  });
  t.same(manifest.permissions, { tools: ['note_add', 'note_list'] });
  t.same(manifest.config, {
    max_notes: { type: 'integer', default: 50, description: 'OpenClaw setting maxNotes.', minimum: 1, maximum: 500 },
    token: { type: 'string', default: '', description: 'OpenClaw setting token.', secret: true },
    mode: { type: 'string', default: 'short', description: 'OpenClaw setting mode.', enum: ['short', 'long'] },
  });
  t.same(JSON.parse(readFileSync(join(dir, 'homeagent-openclaw.json'), 'utf8')), {
    id: 'notes',
    entry: './dist/index.js',
    tools: { note_add: 'dangerous', note_list: 'read' },
    settings: { maxNotes: 'max_notes', token: 'token', mode: 'mode' },
  });
  t.match(
    readFileSync(join(dir, 'node_modules', 'openclaw', 'plugin-sdk', 'plugin-entry.js'), 'utf8'),
    /export function definePluginEntry/,
  );
});

t.test('what cannot be hosted is refused, naming the field', async (t) => {
  const cases: Array<[string, Record<string, unknown>, RegExp]> = [
    ['bad id', base({ id: 'My Plugin' }), /openclaw\.plugin\.json \/id: "My Plugin" must be/],
    ['no config schema', base({ configSchema: undefined }), /\/configSchema: is required/],
    ['no tools', base({ contracts: { tools: [] } }), /\/contracts\/tools: lists no tools/],
    ['a bad tool name', base({ contracts: { tools: ['ok', 'not ok'] } }), /\/contracts\/tools\/1: "not ok" is not a tool name/],
    [
      'an object setting',
      base({ configSchema: { type: 'object', properties: { server: { type: 'object' } } } }),
      /\/configSchema\/properties\/server: type "object" is not supported/,
    ],
    [
      'a setting named enabled',
      base({ configSchema: { type: 'object', properties: { enabled: { type: 'boolean' } } } }),
      /\/configSchema\/properties\/enabled: cannot be a HomeAgent setting name/,
    ],
    [
      'several entries',
      { ...base(), 'package.json': { name: 'n', version: '1.0.0', openclaw: { extensions: ['./a.js', './b.js'] } } },
      /package\.json \/openclaw\/extensions: a package with several entries/,
    ],
    [
      'an entry outside',
      { ...base(), 'package.json': { name: 'n', version: '1.0.0', openclaw: { extensions: ['../x.js'] } } },
      /\.\.\/x\.js is outside the plugin/,
    ],
    [
      'a missing entry',
      { ...base(), 'package.json': { name: 'n', version: '1.0.0', openclaw: { extensions: ['./gone.js'] } } },
      /\.\/gone\.js does not exist/,
    ],
    [
      'a bad version',
      { ...base(), 'package.json': { name: 'n', version: 'latest', openclaw: { extensions: ['./dist/index.js'] } } },
      /package\.json \/version: "latest"/,
    ],
    ['broken JSON', { ...base(), 'openclaw.plugin.json': '{ "id": ' }, /openclaw\.plugin\.json: is not readable JSON/],
  ];
  const root = t.testdir();
  for (const [what, files, message] of cases) {
    const dir = join(root, what.replace(/\W+/g, '-'));
    const manifest = files['openclaw.plugin.json'];
    if (typeof manifest === 'object' && manifest !== null)
      for (const [k, v] of Object.entries(manifest)) if (v === undefined) delete (manifest as Record<string, unknown>)[k];
    write(dir, files);
    t.match(expectError(t, () => convertOpenClawPackage(dir), 'HA_ERR_OPENCLAW_MANIFEST').message, message, what);
  }
});

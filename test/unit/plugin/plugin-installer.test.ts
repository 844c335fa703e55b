import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import * as tar from 'tar';
import { readManifest } from '../../../src/plugin/manifest.js';
import { installArchive } from '../../../src/plugin/plugin-installer.js';
import { tempDir } from '../fixtures/support.js';
import { writeZip } from './fixtures/zip-writer.js';

const MANIFEST = JSON.stringify({
  name: 'porch',
  version: '1.0.0',
  description: 'Porch light.',
  engine: '*',
  kind: 'process',
  entry: 'index.js',
});

function options(dir: string, file: string, maxBytes = 1_000_000) {
  return {
    file,
    installDir: join(dir, 'installed'),
    maxBytes,
    refuseNames: new Set(['cli']),
    readManifest: (root: string) => readManifest(join(root, 'plugin.json')),
  };
}

/** Nothing but the installed plugins may be left in the install folder, and nothing outside it. */
function assertClean(
  t: { same: (a: unknown, b: unknown, m: string) => void; notOk: (a: unknown, m: string) => void },
  dir: string,
  expected: string[],
) {
  const installDir = join(dir, 'installed');
  t.same(existsSync(installDir) ? readdirSync(installDir).sort() : [], expected, 'no staging leftovers');
  t.notOk(existsSync(join(dir, 'evil.txt')), 'nothing written outside');
}

t.test('a zip with the plugin at its root installs, keeping executable bits', async (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'porch.zip');
  writeZip(file, [
    { name: 'plugin.json', data: MANIFEST },
    { name: 'index.js', data: 'export default () => ({ start() {}, stop() {} });' },
    { name: 'scripts/', mode: 0o040755 },
    { name: 'scripts/run.sh', data: '#!/bin/sh\necho hi\n', mode: 0o100755 },
  ]);
  const result = await installArchive(options(dir, file));
  t.equal(result.manifest.name, 'porch');
  t.equal(result.dir, join(dir, 'installed', 'porch'));
  t.equal(readFileSync(join(result.dir, 'plugin.json'), 'utf8'), MANIFEST);
  t.ok((statSync(join(result.dir, 'scripts', 'run.sh')).mode & 0o111) !== 0, 'scripts stay executable');
  t.equal(statSync(join(result.dir, 'index.js')).mode & 0o111, 0);
  result.cleanup();
  assertClean(t, dir, ['porch']);
});

t.test('hostile zip archives are refused and leave nothing behind', async (t) => {
  const cases: Array<[string, Parameters<typeof writeZip>[1], RegExp]> = [
    [
      'dot-dot',
      [
        { name: 'plugin.json', data: MANIFEST },
        { name: '../evil.txt', data: 'x' },
      ],
      /leaves the archive|invalid relative path/,
    ],
    [
      'nested dot-dot',
      [
        { name: 'plugin.json', data: MANIFEST },
        { name: 'a/../../evil.txt', data: 'x' },
      ],
      /leaves the archive|invalid relative path/,
    ],
    [
      'backslash dot-dot',
      [
        { name: 'plugin.json', data: MANIFEST },
        { name: 'a\\..\\..\\evil.txt', data: 'x' },
      ],
      /leaves the archive|invalid relative path/,
    ],
    [
      'absolute',
      [
        { name: 'plugin.json', data: MANIFEST },
        { name: '/tmp/evil.txt', data: 'x' },
      ],
      /absolute path/,
    ],
    [
      'drive letter',
      [
        { name: 'plugin.json', data: MANIFEST },
        { name: 'C:/evil.txt', data: 'x' },
      ],
      /absolute path/,
    ],
    [
      'symlink',
      [
        { name: 'plugin.json', data: MANIFEST },
        { name: 'link', data: '/etc/passwd', mode: 0o120777 },
      ],
      /symbolic link/,
    ],
    [
      'device',
      [
        { name: 'plugin.json', data: MANIFEST },
        { name: 'dev', data: '', mode: 0o020644 },
      ],
      /special file/,
    ],
    [
      'control chars',
      [
        { name: 'plugin.json', data: MANIFEST },
        { name: 'a\nb', data: 'x' },
      ],
      /control characters/,
    ],
    ['no manifest', [{ name: 'index.js', data: 'x' }], /no plugin.json/],

    ['shipped name', [{ name: 'plugin.json', data: MANIFEST.replace('"porch"', '"cli"') }], /shipped with HomeAgent/],
    ['builtin kind', [{ name: 'plugin.json', data: MANIFEST.replace('"process"', '"builtin"') }], /cannot be of kind builtin/],
    [
      'zip bomb',
      [
        { name: 'plugin.json', data: MANIFEST },
        { name: 'big.bin', data: Buffer.alloc(5_000_000), deflate: true },
      ],
      /unpacks to more than/,
    ],
  ];
  const dir = tempDir(t);
  const badManifest = join(dir, 'bad-manifest.zip');
  writeZip(badManifest, [{ name: 'plugin.json', data: '{"name": "Porch"}' }]);
  await t.rejects(
    installArchive(options(dir, badManifest)),
    { code: 'HA_ERR_PLUGIN_MANIFEST', message: /bad-manifest.zip:\/plugin.json: \/version: Expected required property/ },
    'a bad manifest names the field',
  );
  assertClean(t, dir, []);
  for (const [label, entries, message] of cases) {
    const dir = tempDir(t);
    const file = join(dir, `${label.replace(/ /g, '-')}.zip`);
    writeZip(file, entries);
    await t.rejects(installArchive(options(dir, file, 100_000)), { code: 'HA_ERR_PLUGIN_INSTALL', message }, label);
    assertClean(t, dir, []);
  }
});

t.test('tar archives: a package/ folder installs; links and escapes are refused', async (t) => {
  const dir = tempDir(t);
  const src = join(dir, 'src', 'package');
  mkdirSync(src, { recursive: true });
  writeFileSync(join(src, 'plugin.json'), MANIFEST);
  writeFileSync(join(src, 'index.js'), 'export default () => ({ start() {}, stop() {} });');
  const good = join(dir, 'good.tgz');
  await tar.c({ gzip: true, file: good, cwd: join(dir, 'src') }, ['package']);
  const result = await installArchive(options(dir, good));
  t.equal(result.dir, join(dir, 'installed', 'porch'));
  t.ok(existsSync(join(result.dir, 'index.js')));

  writeFileSync(join(dir, 'evil-source.txt'), 'x');
  const escaping = join(dir, 'escape.tgz');
  await tar.c({ gzip: true, file: escaping, cwd: src, preservePaths: true }, ['plugin.json', '../../evil-source.txt']);
  await t.rejects(installArchive(options(dir, escaping)), { code: 'HA_ERR_PLUGIN_INSTALL', message: /leaves the archive/ });

  symlinkSync('/etc/passwd', join(src, 'link'));
  const linked = join(dir, 'linked.tgz');
  await tar.c({ gzip: true, file: linked, cwd: src }, ['plugin.json', 'link']);
  await t.rejects(installArchive(options(dir, linked)), { code: 'HA_ERR_PLUGIN_INSTALL', message: /symbolic link/ });

  const oversized = join(dir, 'oversized.tgz');
  writeFileSync(oversized, Buffer.concat([Buffer.from([0x1f, 0x8b]), Buffer.alloc(2000)]));
  await t.rejects(installArchive(options(dir, oversized, 1000)), { code: 'HA_ERR_PLUGIN_INSTALL', message: /the limit is 1000/ });
  await t.rejects(installArchive(options(dir, join(dir, 'missing.tgz'))), { code: 'HA_ERR_PLUGIN_INSTALL', message: /cannot read it/ });
  assertClean(t, dir, ['porch']);
});

/**
 * One contract every plugin kind passes, through the real plugin host with the real runtimes:
 * built-in (in-process), out-of-process (a child node under the permission model), Lua (its own
 * sandbox) and SKILL.md. Each kind loads and is listed, offers its tool, answers a health ping,
 * hot-reloads to a new version, is disabled and enabled again, stops cleanly, and a broken
 * variant is quarantined with its reason while the others keep running.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { createLuaPlugin } from '../../src/plugin/lua/lua-plugin.js';
import type { PluginKind } from '../../src/plugin/manifest.js';
import { createProcessPlugin } from '../../src/plugin/process/process-plugin.js';
import { SkillLibrary } from '../../src/plugin/skills/skill-library.js';
import { createSkillRuntime, skillManifest } from '../../src/plugin/skills/skill-plugin.js';
import { keepTapOutOfPluginChildren } from '../helpers/tap-children.js';
import { tempDir } from '../unit/fixtures/support.js';
import { type HostSetup, startHost } from '../unit/plugin/fixtures/host-setup.js';

interface KindFixture {
  kind: PluginKind;
  name: string;
  /** The tool whose answer shows which version runs. */
  tool: string;
  args: Record<string, unknown>;
  /** Writes version `v` (or a broken one) into `dir`. */
  write(dir: string, version: string, broken?: boolean): void;
  /** The tool's answer, as text, contains this for version `v`. */
  expect(version: string): string;
}

const manifest = (name: string, kind: PluginKind, entry: string, version: string) =>
  JSON.stringify({ name, version: `${version}.0.0`, description: `The ${kind} contract plugin.`, engine: '>=0.1.0', kind, entry });

keepTapOutOfPluginChildren();

const FIXTURES: KindFixture[] = [
  {
    kind: 'builtin',
    name: 'kbuiltin',
    tool: 'kbuiltin_echo',
    args: { text: 'hi' },
    write(dir, v, broken) {
      writeFileSync(join(dir, 'plugin.json'), manifest(this.name, 'builtin', 'index.mjs', v));
      writeFileSync(
        join(dir, 'index.mjs'),
        broken
          ? 'export default { kind: "homeagent-plugin", create() { return { async start() { throw new Error("broken builtin"); }, async stop() {} }; } };'
          : `export default { kind: 'homeagent-plugin', create(ctx) { return {
  async start() { ctx.tools.register({ name: 'kbuiltin_echo', description: 'echo', tier: 'read', parameters: { type: 'object', properties: { text: { type: 'string' } } }, execute: (a) => 'builtin-v${v}:' + a.text }); },
  async stop() {} }; } };`,
      );
    },
    expect: (v) => `builtin-v${v}:hi`,
  },
  {
    kind: 'process',
    name: 'kproc',
    tool: 'kproc_echo',
    args: { text: 'hi' },
    write(dir, v, broken) {
      writeFileSync(join(dir, 'plugin.json'), manifest(this.name, 'process', 'index.mjs', v));
      writeFileSync(
        join(dir, 'index.mjs'),
        broken
          ? 'export default (ctx) => ({ async start() { throw new Error("broken process"); }, async stop() {} });'
          : `export default (ctx) => ({
  async start() { ctx.tools.register({ name: 'kproc_echo', description: 'echo', tier: 'read', parameters: { type: 'object', properties: { text: { type: 'string' } } }, execute: (a) => 'process-v${v}:' + a.text }); },
  async stop() {},
});`,
      );
    },
    expect: (v) => `process-v${v}:hi`,
  },
  {
    kind: 'lua',
    name: 'klua',
    tool: 'klua_echo',
    args: { text: 'hi' },
    write(dir, v, broken) {
      writeFileSync(join(dir, 'plugin.json'), manifest(this.name, 'lua', 'main.lua', v));
      writeFileSync(
        join(dir, 'main.lua'),
        broken
          ? 'return { start = function(ha) error("broken lua") end }'
          : `return { start = function(ha)
  ha.register_tool{ name = 'klua_echo', description = 'echo', tier = 'read',
    parameters = { type = 'object', properties = { text = { type = 'string' } } },
    handler = function(args) return 'lua-v${v}:' .. args.text end }
end }`,
      );
    },
    expect: (v) => `lua-v${v}:hi`,
  },
  {
    kind: 'skill',
    name: 'kskill',
    tool: 'skill_info',
    args: { name: 'kskill' },
    write(dir, v, broken) {
      writeFileSync(
        join(dir, 'SKILL.md'),
        broken
          ? '---\nname: kskill\n---\nno description\n'
          : `---\nname: kskill\ndescription: The skill contract plugin.\nversion: ${v}.0.0\n---\n# Steps\n1. Say skill-v${v}.\n`,
      );
    },
    expect: (v) => `skill-v${v}`,
  },
];

async function setup(t: Parameters<typeof tempDir>[0]): Promise<HostSetup & { library: SkillLibrary }> {
  const dir = tempDir(t);
  const library = new SkillLibrary();
  const host = await startHost(t, {
    dir,
    runtimes: { process: createProcessPlugin, lua: createLuaPlugin, skill: createSkillRuntime(library) },
    skillManifest,
  });
  for (const def of library.tools()) host.tools.register(def);
  return { ...host, library };
}

function folderFor(s: HostSetup, fixture: KindFixture): string {
  const dir = join(fixture.kind === 'builtin' ? s.shippedDir : s.installDir, fixture.name);
  mkdirSync(dir, { recursive: true });
  return dir;
}

async function callTool(s: HostSetup, fixture: KindFixture): Promise<string> {
  const def = s.tools.get(fixture.tool);
  if (!def) throw new Error(`${fixture.tool} is not registered`);
  const result = await def.execute(fixture.args, {
    signal: new AbortController().signal,
    task_id: 't',
    call_id: 'c',
    source: 'test',
    channel: 'test',
    trust: 'owner',
  });
  return typeof result === 'string' ? result : JSON.stringify(result);
}

for (const fixture of FIXTURES) {
  t.test(`${fixture.kind} plugins pass the plugin contract`, async (t) => {
    const s = await setup(t);
    const dir = folderFor(s, fixture);
    fixture.write(dir, '1');
    await s.host.reload(undefined, 'test');

    const listed = s.host.list().find((p) => p.name === fixture.name);
    t.match(listed, { kind: fixture.kind, state: 'running', version: '1.0.0' }, 'loads and is listed as running');
    t.match(await callTool(s, fixture), fixture.expect('1'), 'its tool answers');
    t.match(await s.host.health(fixture.name), [{ ok: true }], 'answers the health ping');

    fixture.write(dir, '2');
    const [reloaded] = await s.host.reload(fixture.name, 'test');
    t.match(reloaded, { state: 'running', version: '2.0.0' }, 'hot reload to the new version');
    t.match(await callTool(s, fixture), fixture.expect('2'), 'the new version answers');

    await s.host.disable(fixture.name, 'test');
    if (fixture.kind === 'skill')
      t.match(await callTool(s, fixture).catch((e: { info?: unknown }) => e.info), { reason: 'not_found' }, 'a disabled skill is gone');
    else t.equal(s.tools.get(fixture.tool), undefined, 'disabling removes its tools');
    await s.host.enable(fixture.name, 'test');
    t.match(await callTool(s, fixture), fixture.expect('2'), 'enabled again');

    fixture.write(dir, '3', true);
    await t.rejects(s.host.reload(fixture.name, 'test'), { code: 'HA_ERR_PLUGIN_START' }, 'a broken new version is refused');
    t.match(await callTool(s, fixture), fixture.expect('2'), 'and the running version stays');

    await s.host.disable(fixture.name, 'test');
    const quarantined = await s.host.enable(fixture.name, 'test');
    t.equal(quarantined.state, 'quarantined', 'a broken plugin is quarantined');
    t.ok(quarantined.error && quarantined.error.length > 0, `with its reason: ${quarantined.error}`);

    fixture.write(dir, '4');
    await s.host.reload(fixture.name, 'test');
    t.match(await callTool(s, fixture), fixture.expect('4'), 'fixed and reloaded');
    await s.host.stop();
    t.equal(s.host.list().find((p) => p.name === fixture.name)?.state, 'stopped', 'stops cleanly');
  });
}

t.test('a broken plugin of one kind never affects the others', async (t) => {
  const s = await setup(t);
  for (const fixture of FIXTURES) fixture.write(folderFor(s, fixture), '1', fixture.kind === 'lua');
  await s.host.reload(undefined, 'test');
  const states = Object.fromEntries(s.host.list().map((p) => [p.name, p.state]));
  t.same(states, { kbuiltin: 'running', klua: 'quarantined', kproc: 'running', kskill: 'running' });
  for (const fixture of FIXTURES.filter((f) => f.kind !== 'lua')) t.match(await callTool(s, fixture), fixture.expect('1'));
});

for (const fixture of FIXTURES.filter((f) => f.kind !== 'skill')) {
  t.test(`${fixture.kind} plugins: calls made during a hot reload get the old or the new version, never an error`, async (t) => {
    const s = await setup(t);
    const dir = folderFor(s, fixture);
    fixture.write(dir, '1');
    await s.host.reload(undefined, 'test');
    const answers: string[] = [];
    const errors: string[] = [];
    let running = true;
    const caller = async () => {
      while (running) {
        try {
          answers.push(await callTool(s, fixture));
        } catch (error) {
          errors.push(String(error));
        }
        // In-process tools answer in a microtask; yield so the reload's own I/O can run.
        await new Promise((resolve) => setImmediate(resolve));
      }
    };
    const callers = Array.from({ length: 4 }, caller);
    fixture.write(dir, '2');
    await s.host.reload(fixture.name, 'test');
    const afterSwap = answers.length;
    while (answers.length < afterSwap + 20 && errors.length === 0) await new Promise((resolve) => setImmediate(resolve));
    running = false;
    await Promise.all(callers);
    t.same(errors, [], 'no call failed');
    t.ok(
      answers.some((a) => a.includes(fixture.expect('2'))),
      'the new version answered',
    );
    t.ok(
      answers.slice(afterSwap + 4).every((a) => a.includes(fixture.expect('2'))),
      'after the swap only the new version answers',
    );
  });
}

import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import t from 'tap';
import { StageRegistry } from '../../../src/agent/stage-registry.js';
import { ToolRegistry } from '../../../src/agent/tool-registry.js';
import { BUILTIN_DEFINITIONS } from '../../../src/config/definitions.js';
import { type LoadedConfig, loadConfig } from '../../../src/config/loader.js';
import { SettingsRegistry } from '../../../src/config/settings-registry.js';
import { EventBus, type EventMap } from '../../../src/events/event-bus.js';
import { InputScheduler } from '../../../src/io/input-scheduler.js';
import { IoManager } from '../../../src/io/io-manager.js';
import { ControlRegistry } from '../../../src/plugin/control-registry.js';
import { compareVersions, PluginHost } from '../../../src/plugin/plugin-host.js';
import { systemClock } from '../../../src/shared/clock.js';
import { type CapturedLogs, captureLogs, startStore, type Teardown, tempDir } from '../fixtures/support.js';

const NO_SYSTEM = '/nonexistent/homeagent/config.yaml';

/** What the test plugins record, shared through globalThis because they are imported as real modules. */
declare global {
  var __haPluginLog: string[] | undefined;
}

function pluginLog(): string[] {
  globalThis.__haPluginLog ??= [];
  return globalThis.__haPluginLog;
}

interface PluginSource {
  name: string;
  /** Body of `async start(signal)`; `log` and `ctx` are in scope. */
  start?: string;
  stop?: string;
  /** Replaces the whole module text. */
  module?: string;
  manifest?: Record<string, unknown>;
  entry?: string;
}

function writePlugin(root: string, folder: string, source: PluginSource): void {
  const dir = join(root, folder);
  mkdirSync(dir, { recursive: true });
  const entry = source.entry ?? 'index.mjs';
  const manifest = source.manifest ?? { name: source.name, version: '1.0.0', description: `The ${source.name} test plugin.`, entry };
  writeFileSync(join(dir, 'plugin.json'), JSON.stringify(manifest));
  const module =
    source.module ??
    `const log = { push: (line) => (globalThis.__haPluginLog ??= []).push(line) };
export default {
  kind: 'homeagent-plugin',
  create(ctx) {
    log.push('create ' + ctx.name);
    return {
      async start(signal) {
        log.push('start ' + ctx.name);
        ctx.events.on('settings.changed', () => log.push('event ' + ctx.name));
        ${source.start ?? ''}
      },
      async stop() {
        log.push('stop ' + ctx.name);
        ${source.stop ?? ''}
      },
    };
  },
};
`;
  mkdirSync(dirname(join(dir, entry)), { recursive: true });
  writeFileSync(join(dir, entry), module);
}

interface HostSetup {
  host: PluginHost;
  events: EventBus;
  settings: SettingsRegistry;
  captured: CapturedLogs;
  states: Array<EventMap['service.state']>;
  dataDir: string;
}

async function startHost(t: Teardown, builtinDir: string, loaded?: LoadedConfig): Promise<HostSetup> {
  const dir = tempDir(t);
  const captured = captureLogs();
  const { store } = await startStore(t, dir, { logs: captured.logs });
  const events = new EventBus(captured.logs.child('events'));
  const settings = new SettingsRegistry({
    database: () => store.database('state'),
    definitions: BUILTIN_DEFINITIONS,
    loaded: loaded ?? loadConfig({ env: {}, systemFile: NO_SYSTEM }),
    events,
    logs: captured.logs,
    clock: systemClock,
  });
  await settings.start();
  t.teardown(() => settings.stop());
  const states: Array<EventMap['service.state']> = [];
  events.on('test', 'service.state', (s) => void states.push(s));
  const dataDir = join(dir, 'plugins');
  const agentLog = captured.logs.child('agent');
  const io = new IoManager({ log: captured.logs.child('io') });
  const host = new PluginHost({
    builtinDir,
    settings,
    events,
    logs: captured.logs,
    control: new ControlRegistry(),
    pluginDataDir: dataDir,
    runtimeDir: join(dir, 'run'),
    io,
    scheduler: new InputScheduler({
      runner: { run: async (input) => ({ text: `echo ${String(input.payload)}` }) },
      limits: () => ({ dedupe_window_ms: 0, ready_queue_size: 8, interrupt_queue_size: 8 }),
      log: agentLog,
    }),
    tools: new ToolRegistry({ log: agentLog }),
    stages: new StageRegistry(agentLog),
    newId: randomUUID,
    now: Date.now,
  });
  await host.start(new AbortController().signal);
  t.teardown(() => host.stop());
  return { host, events, settings, captured, states, dataDir };
}

t.beforeEach(() => {
  pluginLog().length = 0;
});

t.test('good plugins start and are listed as running', async (t) => {
  const root = tempDir(t);
  writePlugin(root, 'alpha', { name: 'alpha' });
  writePlugin(root, 'beta', {
    name: 'beta',
    entry: 'lib/main.js',
    manifest: { name: 'beta', version: '2.1.0-rc.1', description: 'Beta.', entry: 'lib/main.js' },
  });
  mkdirSync(join(root, 'no-manifest'));
  writeFileSync(join(root, 'loose-file.txt'), 'ignored');
  // .js files are ESM here only if a package.json says so; the host must still import them.
  writeFileSync(join(root, 'beta', 'package.json'), '{"type":"module"}');
  const { host, states, dataDir } = await startHost(t, root);
  t.same(host.list(), [
    { name: 'alpha', version: '1.0.0', description: 'The alpha test plugin.', origin: 'builtin', state: 'running' },
    { name: 'beta', version: '2.1.0-rc.1', description: 'Beta.', origin: 'builtin', state: 'running' },
  ]);
  t.same(pluginLog(), ['create alpha', 'start alpha', 'create beta', 'start beta']);
  t.same(
    states.filter((s) => s.name === 'alpha').map((s) => [s.kind, s.state]),
    [
      ['plugin', 'starting'],
      ['plugin', 'running'],
    ],
  );
  t.ok(existsSync(join(dataDir, 'alpha')), 'each plugin gets its data directory');
});

t.test('a plugin whose start throws is failed and does not stop the others', async (t) => {
  const root = tempDir(t);
  writePlugin(root, 'a-good', { name: 'a-good' });
  writePlugin(root, 'b-bad', { name: 'b-bad', start: "throw new Error('cannot bind port 9999');" });
  writePlugin(root, 'c-good', { name: 'c-good' });
  const { host, events, captured } = await startHost(t, root);
  const list = host.list();
  t.same(
    list.map((p) => [p.name, p.state]),
    [
      ['a-good', 'running'],
      ['b-bad', 'failed'],
      ['c-good', 'running'],
    ],
  );
  t.match(list[1]?.error, 'cannot bind port 9999');
  t.ok(pluginLog().includes('stop b-bad'), 'the failed plugin was asked to clean up');
  t.equal(events.listenerCount('settings.changed'), 2, 'the failed plugin left no listeners (one per running plugin)');
  t.ok(captured.records().some((r) => r.plugin === 'b-bad' && r.level === 'error'));
});

t.test('an invalid manifest is skipped', async (t) => {
  const root = tempDir(t);
  writePlugin(root, 'bad-name', { name: 'Bad Name' });
  writePlugin(root, 'bad-entry', {
    name: 'escape',
    manifest: { name: 'escape', version: '1.0.0', description: 'x', entry: '../outside.mjs' },
  });
  writePlugin(root, 'extra-field', {
    name: 'extra',
    manifest: { name: 'extra', version: '1.0.0', description: 'x', entry: 'index.mjs', surprise: true },
  });
  mkdirSync(join(root, 'broken-json'));
  writeFileSync(join(root, 'broken-json', 'plugin.json'), '{ not json');
  writePlugin(root, 'fine', { name: 'fine' });
  const { host, captured } = await startHost(t, root);
  t.same(
    host.list().map((p) => [p.name, p.state]),
    [['fine', 'running']],
  );
  t.same(pluginLog(), ['create fine', 'start fine'], 'no code of a rejected plugin ran');
  t.equal(captured.records().filter((r) => r.msg === 'plugin manifest rejected').length, 4);
});

t.test('load failures: no plugin export, too new, import error', async (t) => {
  const root = tempDir(t);
  writePlugin(root, 'a', { name: 'a', module: 'export default { hello: 1 };\n' });
  writePlugin(root, 'b', {
    name: 'b',
    manifest: { name: 'b', version: '1.0.0', description: 'Needs the future.', entry: 'index.mjs', min_version: '999.0.0' },
  });
  writePlugin(root, 'c', { name: 'c', module: "throw new Error('top-level failure');\n" });
  writePlugin(root, 'd', { name: 'd', module: 'this is not javascript\n' });
  const { host } = await startHost(t, root);
  const byName = Object.fromEntries(host.list().map((p) => [p.name, p]));
  t.equal(byName.a?.state, 'failed');
  t.match(byName.a?.error, 'does not default-export');
  t.equal(byName.b?.state, 'failed');
  t.match(byName.b?.error, 'needs HomeAgent 999.0.0');
  t.equal(byName.c?.state, 'failed');
  t.match(byName.c?.error, 'top-level failure');
  t.equal(byName.d?.state, 'failed');
});

t.test('a plugin whose start never resolves fails after plugin_timeout_ms', async (t) => {
  const root = tempDir(t);
  writePlugin(root, 'hang', { name: 'hang', start: 'await new Promise(() => {});' });
  writePlugin(root, 'next', { name: 'next' });
  const loaded = loadConfig({ env: { HOMEAGENT_DAEMON_PLUGIN_TIMEOUT_MS: '200' }, systemFile: NO_SYSTEM });
  const { host } = await startHost(t, root, loaded);
  const [hang, next] = host.list();
  t.equal(hang?.state, 'failed');
  t.match(hang?.error, 'start of plugin hang took longer than 200 ms');
  t.equal(next?.state, 'running', 'the next plugin still starts');
  t.ok(pluginLog().includes('stop hang'));
});

t.test('plugins disabled by configuration are listed as disabled and never loaded', async (t) => {
  const root = tempDir(t);
  const dir = tempDir(t);
  const config = join(dir, 'config.yaml');
  writeFileSync(config, 'plugin:\n  weather:\n    enabled: false\n');
  writePlugin(root, 'cli', { name: 'cli' });
  writePlugin(root, 'weather', { name: 'weather' });
  writePlugin(root, 'other', { name: 'other' });
  const loaded = loadConfig({ env: { HOMEAGENT_CONFIG: config, HOMEAGENT_PLUGIN_CLI_ENABLED: 'false' }, systemFile: NO_SYSTEM });
  const { host } = await startHost(t, root, loaded);
  t.same(
    host.list().map((p) => [p.name, p.state]),
    [
      ['cli', 'disabled'],
      ['other', 'running'],
      ['weather', 'disabled'],
    ],
  );
  t.same(pluginLog(), ['create other', 'start other']);
});

t.test('stop() stops plugins in reverse order and removes their listeners', async (t) => {
  const root = tempDir(t);
  writePlugin(root, 'a', { name: 'a' });
  writePlugin(root, 'b', { name: 'b' });
  writePlugin(root, 'c', { name: 'c' });
  const { host, events, states, settings } = await startHost(t, root);
  t.equal(events.listenerCount('settings.changed'), 3);
  settings.set('core.name', 'Before stop', 'cli');
  t.same(
    pluginLog().filter((l) => l.startsWith('event')),
    ['event a', 'event b', 'event c'],
  );
  pluginLog().length = 0;
  await host.stop();
  t.same(pluginLog(), ['stop c', 'stop b', 'stop a']);
  t.equal(events.listenerCount('settings.changed'), 0, 'no plugin listener is left');
  t.same(host.list(), []);
  t.same(
    states.filter((s) => s.state === 'stopped').map((s) => s.name),
    ['c', 'b', 'a'],
  );
  settings.set('core.name', 'After stop', 'cli');
  t.same(pluginLog(), ['stop c', 'stop b', 'stop a'], 'no plugin hears events after stop');
});

t.test('a plugin whose stop hangs is marked failed and the others still stop', async (t) => {
  const root = tempDir(t);
  writePlugin(root, 'a', { name: 'a' });
  writePlugin(root, 'b', { name: 'b', stop: 'await new Promise(() => {});' });
  const loaded = loadConfig({ env: { HOMEAGENT_DAEMON_PLUGIN_TIMEOUT_MS: '100' }, systemFile: NO_SYSTEM });
  const { host, states, events } = await startHost(t, root, loaded);
  await host.stop();
  t.same(
    pluginLog().filter((l) => l.startsWith('stop')),
    ['stop b', 'stop a'],
  );
  t.same(states.filter((s) => s.name === 'b').at(-1), { name: 'b', kind: 'plugin', state: 'failed', error: 'did not stop cleanly' });
  t.equal(events.listenerCount('settings.changed'), 0, 'its listeners are removed anyway');
});

t.test('the plugin context: settings, paths and data directory', async (t) => {
  const root = tempDir(t);
  writePlugin(root, 'cli', {
    name: 'cli',
    start: `log.push('frame ' + ctx.settings.get('max_frame_bytes'));
        log.push('paths ' + (typeof ctx.paths.data) + ' ' + (typeof ctx.paths.runtime));
        ctx.settings.onChange((key) => log.push('changed ' + key));`,
  });
  const loaded = loadConfig({ env: { HOMEAGENT_PLUGIN_CLI_MAX_FRAME_BYTES: '2048' }, systemFile: NO_SYSTEM });
  const { settings } = await startHost(t, root, loaded);
  t.ok(pluginLog().includes('frame 2048'));
  t.ok(pluginLog().includes('paths string string'));
  settings.set('plugin.cli.max_connections', 3, 'cli');
  settings.set('core.name', 'Not for the plugin', 'cli');
  t.same(
    pluginLog().filter((l) => l.startsWith('changed')),
    ['changed max_connections'],
    'onChange sees only its own keys, without the prefix',
  );
});

t.test('a missing built-in folder is a warning, not a failure', async (t) => {
  const root = tempDir(t);
  const { host, captured } = await startHost(t, join(root, 'does-not-exist'));
  t.same(host.list(), []);
  t.ok(captured.records().some((r) => r.level === 'warn' && r.msg === 'built-in plugin folder is missing'));
});

t.test('compareVersions', async (t) => {
  t.equal(compareVersions('1.2.3', '1.2.3'), 0);
  t.equal(compareVersions('1.10.0', '1.9.9'), 1);
  t.equal(compareVersions('0.1.0', '1.0.0'), -1);
  t.equal(compareVersions('1.0.0-rc.1', '1.0.0'), 0, 'pre-release tags are ignored');
});

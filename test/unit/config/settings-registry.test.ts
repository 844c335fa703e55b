import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Type } from '@sinclair/typebox';
import Database from 'better-sqlite3';
import t from 'tap';
import { BUILTIN_DEFINITIONS, definitionFromLeaf } from '../../../src/config/definitions.js';
import { type LoadedConfig, loadConfig } from '../../../src/config/loader.js';
import { SECRET_MASK, SETTINGS_MIGRATIONS, SettingsRegistry } from '../../../src/config/settings-registry.js';
import { EventBus, type EventMap } from '../../../src/events/event-bus.js';
import type { LogManager } from '../../../src/log/logger.js';
import { systemClock } from '../../../src/shared/clock.js';
import type { Store } from '../../../src/store/store.js';
import { type CapturedLogs, captureLogs, expectError, silentLogs, startStore, type Teardown, tempDir } from '../fixtures/support.js';

const NO_SYSTEM = '/nonexistent/homeagent/config.yaml';

interface Setup {
  registry: SettingsRegistry;
  store: Store;
  events: EventBus;
  file: string;
  dir: string;
  loaded: LoadedConfig;
  changes: Array<EventMap['settings.changed']>;
}

async function setup(
  t: Teardown,
  options: {
    dir?: string;
    loaded?: LoadedConfig;
    logs?: LogManager;
    beforeStart?: (file: string) => void;
    renames?: ReadonlyMap<string, string>;
  } = {},
): Promise<Setup> {
  const dir = options.dir ?? tempDir(t);
  const logs = options.logs ?? silentLogs();
  const file = join(dir, 'state.db');
  options.beforeStart?.(file);
  const { store } = await startStore(t, dir, { logs, file });
  const events = new EventBus(logs.child('events'));
  const loaded = options.loaded ?? loadConfig({ env: {}, systemFile: NO_SYSTEM });
  const registry = new SettingsRegistry({
    database: () => store.database('state'),
    definitions: BUILTIN_DEFINITIONS,
    loaded,
    events,
    logs,
    clock: systemClock,
    ...(options.renames && { renames: options.renames }),
  });
  await registry.start();
  t.teardown(() => registry.stop());
  const changes: Array<EventMap['settings.changed']> = [];
  events.on('test', 'settings.changed', (c) => void changes.push(c));
  return { registry, store, events, file, dir, loaded, changes };
}

/** Reads the database file through a separate read-only connection. */
function readRows<T>(file: string, sql: string, ...params: unknown[]): T[] {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return db.prepare(sql).all(...params) as T[];
  } finally {
    db.close();
  }
}

t.test('get and list show defaults with their metadata', async (t) => {
  const { registry } = await setup(t);
  const view = registry.get('core.daemon.stop_timeout_ms');
  t.match(view, {
    key: 'core.daemon.stop_timeout_ms',
    value: 10000,
    default: 10000,
    source: 'default',
    type: 'integer',
    requires_restart: false,
    restart_pending: false,
    secret: false,
    file_only: false,
    env: 'HOMEAGENT_DAEMON_STOP_TIMEOUT_MS',
    minimum: 1000,
    maximum: 120000,
  });
  t.same(registry.get('core.store.startup_check').enum, ['full', 'quick', 'off']);
  t.equal(registry.list().length, BUILTIN_DEFINITIONS.length);
  const cli = registry.list('plugin.cli.');
  t.ok(cli.length > 0);
  t.ok(cli.every((v) => v.key.startsWith('plugin.cli.')));
  t.same(registry.list('nothing.'), []);
  t.same(registry.restartPending(), []);
});

t.test('set stores, coerces text and reports source runtime; reset goes back', async (t) => {
  const { registry, file, changes } = await setup(t);
  const view = registry.set('core.daemon.stop_timeout_ms', '42000', 'cli');
  t.equal(view.value, 42000, 'text is coerced to an integer');
  t.equal(view.source, 'runtime');
  t.equal(registry.get('core.daemon.stop_timeout_ms').value, 42000);
  t.equal(registry.config().core.daemon.stop_timeout_ms, 42000, 'non-restart keys apply at once');
  t.same(readRows(file, 'SELECT key, value, updated_by FROM settings'), [
    { key: 'core.daemon.stop_timeout_ms', value: '42000', updated_by: 'cli' },
  ]);

  t.equal(registry.set('plugin.cli.enabled', 'no', 'cli').value, false, 'text is coerced to a boolean');
  t.same(registry.set('core.log.levels', '{"store":"debug"}', 'cli').value, { store: 'debug' }, 'text is parsed as JSON');
  t.equal(registry.set('core.name', '42', 'cli').value, '42', 'strings stay strings');
  t.equal(registry.set('core.daemon.plugin_timeout_ms', 500, 'webui:admin').value, 500, 'typed values are taken as they are');

  const reset = registry.reset('core.daemon.stop_timeout_ms', 'cli');
  t.equal(reset.value, 10000);
  t.equal(reset.source, 'default');
  t.equal(registry.config().core.daemon.stop_timeout_ms, 10000);
  t.same(readRows(file, "SELECT key FROM settings WHERE key = 'core.daemon.stop_timeout_ms'"), []);

  t.same(
    changes.map((c) => [c.key, c.actor, c.reset, c.requires_restart]),
    [
      ['core.daemon.stop_timeout_ms', 'cli', false, false],
      ['plugin.cli.enabled', 'cli', false, true],
      ['core.log.levels', 'cli', false, false],
      ['core.name', 'cli', false, false],
      ['core.daemon.plugin_timeout_ms', 'webui:admin', false, false],
      ['core.daemon.stop_timeout_ms', 'cli', true, false],
    ],
    'a settings.changed event per change, with key, actor and reset',
  );

  const history = registry.history('core.daemon.stop_timeout_ms');
  t.same(
    history.map((h) => [h.action, h.value, h.actor]),
    [
      ['reset', null, 'cli'],
      ['set', '42000', 'cli'],
    ],
    'history is newest first',
  );
  t.equal(registry.history(undefined, 2).length, 2, 'limit applies');
});

t.test('reset falls back to the file or the environment', async (t) => {
  const dir = tempDir(t);
  const config = join(dir, 'config.yaml');
  writeFileSync(config, 'core:\n  name: FromFile\n');
  const loaded = loadConfig({ env: { HOMEAGENT_CONFIG: config, HOMEAGENT_LLM_MODEL: 'env-model' }, systemFile: NO_SYSTEM });
  const { registry } = await setup(t, { dir, loaded });
  t.equal(registry.get('core.name').source, config);
  t.equal(registry.get('core.llm.model').source, 'env:HOMEAGENT_LLM_MODEL');

  registry.set('core.name', 'Runtime', 'cli');
  registry.set('core.llm.model', 'runtime-model', 'cli');
  t.equal(registry.get('core.name').source, 'runtime');
  t.equal(registry.config().core.llm.model, 'runtime-model');

  t.match(registry.reset('core.name', 'cli'), { value: 'FromFile', source: config });
  t.match(registry.reset('core.llm.model', 'cli'), { value: 'env-model', source: 'env:HOMEAGENT_LLM_MODEL' });
  t.equal(registry.config().core.name, 'FromFile');
});

t.test('an invalid value is refused and nothing is stored', async (t) => {
  const { registry, file, changes } = await setup(t);
  for (const [key, value] of [
    ['core.daemon.stop_timeout_ms', '5'],
    ['core.daemon.stop_timeout_ms', 'soon'],
    ['core.daemon.stop_timeout_ms', 1500.5],
    ['plugin.cli.enabled', 'maybe'],
    ['core.store.backup_dir', 7],
    ['core.log.level', 'loud'],
    ['core.log.levels', '{"store": "noisy"}'],
  ] as const) {
    const error = expectError(t, () => registry.set(key, value, 'cli'), 'HA_ERR_SETTINGS_INVALID_VALUE');
    t.match(error.message, key, 'the message names the key');
    t.match(error.message, 'expected');
  }
  const error = expectError(t, () => registry.set('core.daemon.stop_timeout_ms', '5', 'cli'), 'HA_ERR_SETTINGS_INVALID_VALUE');
  t.equal(error.message, 'core.daemon.stop_timeout_ms: expected an integer from 1000 to 120000, found 5');
  t.equal(registry.get('core.daemon.stop_timeout_ms').value, 10000);
  t.same(changes, [], 'no event for a refused change');
  await registry.stop();
  t.same(readRows(file, 'SELECT * FROM settings'), [], 'no settings row');
  t.same(readRows(file, 'SELECT * FROM settings_history'), [], 'no history row');
});

t.test('an unknown key is refused with a suggestion', async (t) => {
  const { registry } = await setup(t);
  const error = expectError(t, () => registry.set('core.stop_timeout_ms', 2000, 'cli'), 'HA_ERR_SETTINGS_UNKNOWN_KEY');
  t.match(error.message, 'did you mean core.daemon.stop_timeout_ms');
  const section = expectError(t, () => registry.get('core.daemon'), 'HA_ERR_SETTINGS_UNKNOWN_KEY');
  t.match(section.message, 'core.daemon.stop_timeout_ms', 'a section name suggests its keys');
  const nothing = expectError(t, () => registry.reset('zzz', 'cli'), 'HA_ERR_SETTINGS_UNKNOWN_KEY');
  t.match(nothing.message, 'config list');
});

t.test('an unknown key names its near misses and what its section holds', async (t) => {
  const { registry, file } = await setup(t);
  const typo = expectError(t, () => registry.set('plugin.cli.sockt_path', '/run/x.sock', 'cli'), 'HA_ERR_SETTINGS_UNKNOWN_KEY');
  t.match(typo.message, /^no setting named plugin\.cli\.sockt_path; did you mean plugin\.cli\.socket_path\?/);
  t.match(typo.message, 'plugin.cli.* has: enabled, socket_path, socket_mode, max_frame_bytes, max_connections, idle_timeout_ms');
  const far = expectError(t, () => registry.set('plugin.webui.zzzzzzzz', '1', 'cli'), 'HA_ERR_SETTINGS_UNKNOWN_KEY');
  t.match(far.message, /^no setting named plugin\.webui\.zzzzzzzz; plugin\.webui\.\* has: enabled, host, port/);
  const plugin = expectError(t, () => registry.set('plugin.nosuch.key', '1', 'cli'), 'HA_ERR_SETTINGS_UNKNOWN_KEY');
  t.match(plugin.message, 'config list', 'a namespace nothing defines points at the full list');
  t.same(readRows(file, 'SELECT * FROM settings'), [], 'nothing stored');
});

t.test('a socket mode wider than 0660 is refused by config set, naming the key; the old value stays', async (t) => {
  const { registry, file } = await setup(t);
  const wide = expectError(t, () => registry.set('plugin.cli.socket_mode', '0666', 'cli'), 'HA_ERR_SETTINGS_INVALID_VALUE');
  t.match(
    wide.message,
    /^plugin\.cli\.socket_mode: expected an octal file mode within 0660 .*found "0666", which gives others more \(0006\)/,
  );
  expectError(t, () => registry.set('plugin.cli.socket_mode', '0670', 'cli'), 'HA_ERR_SETTINGS_INVALID_VALUE');
  t.equal(registry.get('plugin.cli.socket_mode').value, '0660');
  t.same(readRows(file, 'SELECT * FROM settings'), []);
  t.equal(registry.set('plugin.cli.socket_mode', '0600', 'cli').value, '0600', 'a narrower mode is taken');
});

t.test('config set on a full database fails with HA_ERR_STORE_FULL naming the key; the stored value stays', async (t) => {
  const { registry, store, file, changes } = await setup(t);
  registry.set('core.name', 'Kitchen', 'cli');
  const db = store.database('state').db;
  // SQLite's own page limit answers SQLITE_FULL like a full disk (test/integration/disk-full.test.ts has the real one).
  db.pragma(`max_page_count = ${Number(db.pragma('page_count', { simple: true }))}`);
  const before = changes.length;
  let full: Error | undefined;
  let taken = 0;
  for (let i = 0; i < 200 && full === undefined; i++) {
    try {
      registry.set('core.name', `Kitchen ${i}`, `cli-${'y'.repeat(500)}`);
      taken++;
    } catch (error) {
      full = error as Error;
    }
  }
  t.ok(full, `a write finds no room (after ${taken} that still fit)`);
  t.match(full, { code: 'HA_ERR_STORE_FULL' });
  const kept = registry.get('core.name').value;
  t.equal(kept, taken === 0 ? 'Kitchen' : `Kitchen ${taken - 1}`, 'the value stays the last one stored');
  t.match(
    full?.message,
    `core.name was not changed and stays ${JSON.stringify(kept)}: the disk is full: the state database ${file} could not be written`,
  );
  const stored = readRows<{ value: string }>(file, "SELECT value FROM settings WHERE key = 'core.name'");
  t.same(
    stored.map((r) => JSON.parse(r.value)),
    [kept],
    'the database holds what memory says',
  );
  t.equal(changes.length - before, taken, 'no change event for the failed write');
  db.pragma('max_page_count = 1073741823');
  t.equal(registry.set('core.name', 'Hall', 'cli').value, 'Hall', 'with room again the same registry takes writes');
});

t.test('file-only keys cannot be set at run time', async (t) => {
  const { registry, file } = await setup(t);
  const error = expectError(t, () => registry.set('core.data_dir', '/elsewhere', 'cli'), 'HA_ERR_SETTINGS_FILE_ONLY');
  t.match(error.message, 'HOMEAGENT_DATA_DIR');
  expectError(t, () => registry.set('core.store.startup_check', 'full', 'cli'), 'HA_ERR_SETTINGS_FILE_ONLY');
  t.equal(registry.get('core.data_dir').file_only, true);
  t.same(readRows(file, 'SELECT * FROM settings'), []);
});

t.test('values persist across a stop and start', async (t) => {
  const dir = tempDir(t);
  const loaded = loadConfig({ env: {}, systemFile: NO_SYSTEM });
  {
    const first = await setup(t, { dir, loaded });
    first.registry.set('core.daemon.stop_timeout_ms', 25000, 'cli');
    first.registry.set('core.supervisor.notify_backend', 'binary', 'cli');
    first.registry.set('core.name', 'Temporary', 'cli');
    first.registry.reset('core.name', 'cli');
    await first.registry.stop();
    await first.store.stop();
  }
  const second = await setup(t, { dir, loaded });
  t.match(second.registry.get('core.daemon.stop_timeout_ms'), { value: 25000, source: 'runtime' });
  t.match(second.registry.get('core.supervisor.notify_backend'), { value: 'binary', source: 'runtime', restart_pending: false });
  t.equal(second.registry.config().core.supervisor.notify_backend, 'binary', 'after a restart the stored value is the boot value');
  t.match(second.registry.get('core.name'), { value: 'HomeAgent', source: 'default' });
  t.equal(second.registry.history().length, 4);
});

t.test('requires_restart keys keep their boot value in config() until restart', async (t) => {
  const { registry, changes } = await setup(t);
  const view = registry.set('core.supervisor.notify_backend', 'binary', 'cli');
  t.equal(view.value, 'binary');
  t.equal(view.restart_pending, true);
  t.equal(registry.config().core.supervisor.notify_backend, 'auto', 'the running daemon keeps the boot value');
  t.same(registry.restartPending(), ['core.supervisor.notify_backend']);
  t.equal(changes[0]?.requires_restart, true);

  registry.set('core.daemon.stop_timeout_ms', 11000, 'cli');
  t.equal(registry.config().core.daemon.stop_timeout_ms, 11000, 'other keys change at once');
  t.equal(registry.get('core.daemon.stop_timeout_ms').restart_pending, false);

  registry.set('core.supervisor.notify_backend', 'auto', 'cli');
  t.equal(registry.get('core.supervisor.notify_backend').restart_pending, false, 'back to the boot value: nothing pending');
  registry.set('core.supervisor.notify_backend', 'addon', 'cli');
  t.equal(registry.reset('core.supervisor.notify_backend', 'cli').restart_pending, false);
  t.same(registry.restartPending(), []);
});

t.test('secrets are masked and never logged or kept in history', async (t) => {
  const secret = 'sk-live-0123456789abcdef';
  const captured: CapturedLogs = captureLogs('trace');
  const { registry, file, changes } = await setup(t, { logs: captured.logs });
  t.equal(registry.get('core.llm.api_key').value, '', 'an empty secret shows as empty');
  const view = registry.set('core.llm.api_key', secret, 'cli');
  t.equal(view.value, SECRET_MASK);
  t.equal(view.source, 'runtime');
  t.equal(registry.get('core.llm.api_key').value, '********');
  t.equal(registry.list('core.llm.').find((v) => v.key === 'core.llm.api_key')?.value, SECRET_MASK);
  t.equal(registry.config().core.llm.api_key, secret, 'the daemon itself gets the clear value');
  t.same(
    registry.history('core.llm.api_key').map((h) => h.value),
    [null],
  );
  t.same(readRows(file, "SELECT value FROM settings_history WHERE key = 'core.llm.api_key'"), [{ value: null }]);

  const bad = expectError(t, () => registry.set('core.llm.api_key', 'x'.repeat(5000), 'cli'), 'HA_ERR_SETTINGS_INVALID_VALUE');
  t.notMatch(bad.message, 'xxxx');
  registry.reset('core.llm.api_key', 'cli');

  const audits = captured.records().filter((r) => r.audit === true);
  t.same(
    audits.map((r) => [r.action, r.key, r.actor, r.value]),
    [
      ['settings.set', 'core.llm.api_key', 'cli', SECRET_MASK],
      ['settings.reset', 'core.llm.api_key', 'cli', undefined],
    ],
    'one audit record per change',
  );
  t.ok(captured.lines.length > 0);
  t.notMatch(captured.text(), secret, 'the secret never appears in the log output');
  t.notMatch(JSON.stringify(changes), secret);
});

t.test('audit records carry the new value of ordinary settings', async (t) => {
  const captured = captureLogs();
  const { registry } = await setup(t, { logs: captured.logs });
  registry.set('core.daemon.stop_timeout_ms', 12000, 'webui:admin');
  const audit = captured.records().find((r) => r.audit === true);
  t.match(audit, { action: 'settings.set', actor: 'webui:admin', key: 'core.daemon.stop_timeout_ms', value: 12000, level: 'info' });
});

t.test('history is pruned to core.settings.history_max_rows', async (t) => {
  const loaded = loadConfig({ env: { HOMEAGENT_SETTINGS_HISTORY_MAX_ROWS: '3' }, systemFile: NO_SYSTEM });
  const { registry, file } = await setup(t, { loaded });
  for (let i = 0; i < 6; i++) registry.set('core.daemon.stop_timeout_ms', 10000 + i, 'cli');
  t.same(
    registry.history().map((h) => h.value),
    ['10005', '10004', '10003'],
    'the newest three remain',
  );
  t.equal(readRows(file, 'SELECT id FROM settings_history').length, 3);

  registry.set('core.settings.history_max_rows', '1', 'cli');
  registry.set('core.name', 'A', 'cli');
  registry.set('core.name', 'B', 'cli');
  t.same(
    registry.history().map((h) => [h.key, h.value]),
    [['core.name', '"B"']],
    'a changed limit applies to the next write',
  );
});

t.test('define() adds plugin settings under their own namespace only', async (t) => {
  const { registry } = await setup(t);
  const leaf = (key: string, category = 'plugin.weather') =>
    definitionFromLeaf(
      key,
      Type.Integer({ default: 30, minimum: 5, maximum: 600, description: 'Refresh period in seconds.', requires_restart: false, category }),
    );
  registry.define('weather', [leaf('plugin.weather.refresh_s')]);
  t.match(registry.get('plugin.weather.refresh_s'), { value: 30, source: 'default', env: 'HOMEAGENT_PLUGIN_WEATHER_REFRESH_S' });
  t.equal((registry.config().plugin as Record<string, Record<string, unknown>>).weather?.refresh_s, 30);
  t.equal(registry.set('plugin.weather.refresh_s', '60', 'plugin:weather').value, 60);
  t.equal((registry.config().plugin as Record<string, Record<string, unknown>>).weather?.refresh_s, 60);
  expectError(t, () => registry.set('plugin.weather.refresh_s', 1, 'cli'), 'HA_ERR_SETTINGS_INVALID_VALUE');

  const other = expectError(t, () => registry.define('weather', [leaf('plugin.other.x')]), 'HA_ERR_SETTINGS_DEFINITION');
  t.match(other.message, 'plugin.weather.*');
  expectError(t, () => registry.define('weather', [leaf('core.weather')]), 'HA_ERR_SETTINGS_DEFINITION');
  expectError(t, () => registry.define('weather', [leaf('plugin.weatherstation.x')]), 'HA_ERR_SETTINGS_DEFINITION');
  const dup = expectError(t, () => registry.define('weather', [leaf('plugin.weather.refresh_s')]), 'HA_ERR_SETTINGS_DEFINITION');
  t.match(dup.message, 'already defined');
  expectError(t, () => registry.define('cli', [leaf('plugin.cli.enabled')]), 'HA_ERR_SETTINGS_DEFINITION');
  // A batch with one bad definition adds none of them.
  expectError(
    t,
    () => registry.define('weather', [leaf('plugin.weather.good'), leaf('plugin.weather.refresh_s')]),
    'HA_ERR_SETTINGS_DEFINITION',
  );
  expectError(t, () => registry.get('plugin.weather.good'), 'HA_ERR_SETTINGS_UNKNOWN_KEY');
});

t.test('a plugin value from the config file is used when the plugin defines the key', async (t) => {
  const dir = tempDir(t);
  const config = join(dir, 'config.yaml');
  writeFileSync(config, 'plugin:\n  weather:\n    refresh_s: 120\n');
  const loaded = loadConfig({ env: { HOMEAGENT_CONFIG: config }, systemFile: NO_SYSTEM });
  const { registry } = await setup(t, { dir, loaded });
  registry.define('weather', [
    definitionFromLeaf(
      'plugin.weather.refresh_s',
      Type.Integer({ default: 30, minimum: 5, maximum: 600, description: 'Refresh period.', requires_restart: false, category: 'x' }),
    ),
  ]);
  t.equal(registry.get('plugin.weather.refresh_s').value, 120);
});

/** A state database as an earlier version left it: the settings tables made, rows written by the caller. */
function settingsDatabase(file: string): Database.Database {
  const db = new Database(file);
  db.exec(`CREATE TABLE schema_migrations (component TEXT NOT NULL, version INTEGER NOT NULL, name TEXT NOT NULL,
    applied_at TEXT NOT NULL, PRIMARY KEY (component, version)) STRICT`);
  db.prepare('INSERT INTO schema_migrations VALUES (?, ?, ?, ?)').run('settings', 1, SETTINGS_MIGRATIONS[0]?.name, '2024-01-01T00:00:00Z');
  db.transaction(() => SETTINGS_MIGRATIONS[0]?.up(db))();
  return db;
}

t.test('a stored value that no longer fits its definition is ignored', async (t) => {
  const dir = tempDir(t);
  const seed = (file: string) => {
    const db = settingsDatabase(file);
    try {
      const insert = db.prepare("INSERT INTO settings VALUES (?, ?, '2024-01-01T00:00:00Z', 'old')");
      insert.run('core.daemon.stop_timeout_ms', '5'); // below the minimum now
      insert.run('core.name', '{not json');
      insert.run('core.daemon.plugin_timeout_ms', '2500'); // still fine
      insert.run('plugin.weather.refresh_s', '1'); // does not fit the definition the plugin adds later
      insert.run('plugin.cli.socket_mode', '"0666"'); // stored before modes wider than 0660 were refused
    } finally {
      db.close();
    }
  };
  const captured = captureLogs();
  const { registry, file } = await setup(t, { dir, beforeStart: seed, logs: captured.logs });
  t.match(registry.get('core.daemon.stop_timeout_ms'), { value: 10000, source: 'default' }, 'the configured value is used');
  t.match(registry.get('core.name'), { value: 'HomeAgent', source: 'default' });
  t.match(registry.get('core.daemon.plugin_timeout_ms'), { value: 2500, source: 'runtime' });
  t.match(registry.get('plugin.cli.socket_mode'), { value: '0660', source: 'default' }, 'a too wide socket mode is not used');
  t.equal(registry.config().core.daemon.stop_timeout_ms, 10000);
  t.ok(
    captured.records().some((r) => r.key === 'core.daemon.stop_timeout_ms' && r.level === 'warn'),
    'a warning names the ignored key',
  );
  t.equal(readRows(file, 'SELECT key FROM settings').length, 5, 'the rows stay in the database');

  registry.define('weather', [
    definitionFromLeaf(
      'plugin.weather.refresh_s',
      Type.Integer({ default: 30, minimum: 5, maximum: 600, description: 'Refresh period.', requires_restart: false, category: 'x' }),
    ),
  ]);
  t.match(
    registry.get('plugin.weather.refresh_s'),
    { value: 30, source: 'default' },
    'a stored plugin value is checked when the plugin defines the key',
  );
  t.equal((registry.config().plugin as Record<string, Record<string, unknown>>).weather?.refresh_s, 30);
});

t.test('the registry refuses to work before start', async (t) => {
  const logs = silentLogs();
  const registry = new SettingsRegistry({
    database: () => {
      throw new Error('not used');
    },
    definitions: BUILTIN_DEFINITIONS,
    loaded: loadConfig({ env: {}, systemFile: NO_SYSTEM }),
    events: new EventBus(logs.child('events')),
    logs,
    clock: systemClock,
  });
  expectError(t, () => registry.set('core.name', 'x', 'cli'), 'HA_ERR_INTERNAL');
  t.equal(registry.get('core.name').value, 'HomeAgent', 'reading works from the loaded configuration');
});

t.test('stored settings under a key a configuration migration renamed move to the new key with their history', async (t) => {
  const dir = tempDir(t);
  const seed = (file: string) => {
    const db = settingsDatabase(file);
    try {
      const insert = db.prepare("INSERT INTO settings VALUES (?, ?, '2024-01-01T00:00:00Z', 'cli')");
      const history = db.prepare(
        "INSERT INTO settings_history (key, action, value, actor, at) VALUES (?, 'set', ?, 'cli', '2024-01-01T00:00:00Z')",
      );
      insert.run('core.daemon.stop_ms', '42000'); // a retired name of core.daemon.stop_timeout_ms
      history.run('core.daemon.stop_ms', '42000');
      insert.run('core.old_name', '"Old"'); // renamed to core.name, which is stored too and wins
      insert.run('core.name', '"Kept"');
    } finally {
      db.close();
    }
  };
  const renames = new Map([
    ['core.daemon.stop_ms', 'core.daemon.stop_timeout_ms'],
    ['core.old_name', 'core.name'],
  ]);
  const { registry, file } = await setup(t, { dir, beforeStart: seed, renames });
  t.match(registry.get('core.daemon.stop_timeout_ms'), { value: 42000, source: 'runtime' }, 'the change made under the old name holds');
  t.match(registry.get('core.name'), { value: 'Kept', source: 'runtime' }, 'a value under the new name wins');
  t.same(readRows(file, 'SELECT key, value FROM settings ORDER BY key'), [
    { key: 'core.daemon.stop_timeout_ms', value: '42000' },
    { key: 'core.name', value: '"Kept"' },
  ]);
  t.same(readRows(file, 'SELECT key FROM settings_history'), [{ key: 'core.daemon.stop_timeout_ms' }], 'history follows the key');
  await registry.stop();
  await registry.start();
  t.equal(registry.get('core.daemon.stop_timeout_ms').value, 42000, 'a second start finds nothing left to move');
});

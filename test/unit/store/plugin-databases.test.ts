/**
 * A built-in plugin's own database (ctx.database.open) is one of the kernel's for status and
 * backup while its plugin runs: listed as <plugin>.<name>, backed up through the real `backup`
 * control method, gone when the plugin stops, back after a reload or a restart of the plugin.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import { systemClock } from '../../../src/shared/clock.js';
import { isHomeAgentError } from '../../../src/shared/errors.js';
import { ManagedDatabase } from '../../../src/store/database.js';
import { type KernelMethodDeps, registerKernelMethods } from '../../../src/supervisor/kernel-methods.js';
import { expectError, silentLogs, type Teardown, tempDir } from '../fixtures/support.js';
import { type HostSetup, pluginLog, startHost, writePlugin } from '../plugin/fixtures/host-setup.js';

const OWNER = { actor: 'test', owner: true };

/** A plugin that keeps `notes` in its own database and writes one row per start, saying which version started. */
function keeper(
  version: string,
  options: { closeOnStop?: boolean; database?: string; failStart?: boolean } = {},
): { name: string; module: string } {
  return {
    name: 'keeper',
    module: `export default {
  kind: 'homeagent-plugin',
  create(ctx) {
    let opened;
    return {
      async start() {
        opened = ctx.database.open({
          name: ${JSON.stringify(options.database ?? 'notes')},
          migrations: [{ version: 1, name: 'notes', up: (db) => db.exec('CREATE TABLE notes (text TEXT NOT NULL)') }],
        });
        opened.db.prepare('INSERT INTO notes (text) VALUES (?)').run('started ${version}');
        ${options.failStart ? "throw new Error('the port is taken');" : ''}
      },
      async stop() {
        (globalThis.__haPluginLog ??= []).push('stop keeper ${version}');
        ${options.closeOnStop === false ? '' : 'opened?.close();'}
      },
    };
  },
};
`,
  };
}

async function rig(t: Teardown, plugin = keeper('1')): Promise<HostSetup & { backupDir: string }> {
  const dir = tempDir(t);
  writePlugin(join(dir, 'shipped'), 'keeper', plugin);
  const setup = await startHost(t, { dir });
  const backupDir = join(dir, 'backups');
  // The kernel's real backup method over the host's store; nothing else of what it registers is called.
  registerKernelMethods({
    control: setup.control,
    settings: setup.settings,
    store: setup.store,
    clock: systemClock,
    logs: setup.captured.logs,
    paths: { dataDir: dir, runtimeDir: join(dir, 'run'), backupDir: () => backupDir },
  } as unknown as KernelMethodDeps);
  return { ...setup, backupDir };
}

const names = (setup: HostSetup) => setup.store.status().map((d) => d.name);

function rows(file: string): string[] {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return (db.prepare('SELECT text FROM notes ORDER BY rowid').all() as Array<{ text: string }>).map((r) => r.text);
  } finally {
    db.close();
  }
}

t.beforeEach(() => {
  pluginLog().length = 0;
});

t.test('a running plugin database is listed and backed up through the backup method', async (t) => {
  const setup = await rig(t);
  t.same(names(setup), ['state', 'keeper.notes'], 'listed after the kernel databases, named after its plugin');
  const listed = setup.store.status().find((d) => d.name === 'keeper.notes');
  t.equal(listed?.file, join(setup.dir, 'plugin-data', 'keeper', 'notes.db'), 'the file is <plugin data>/<name>.db');
  t.equal(listed?.synchronous, 'FULL');

  const dest = join(setup.dir, 'keeper-copy.db');
  const answer = (await setup.control.call('backup', { database: 'keeper.notes', path: dest }, OWNER)) as Record<string, unknown>;
  t.match(answer, { database: 'keeper.notes', file: dest });
  t.same(rows(dest), ['started 1'], 'the backup holds the row the plugin wrote');

  const byDefault = (await setup.control.call('backup', { database: 'keeper.notes' }, OWNER)) as { file: string };
  t.match(byDefault.file, /\/backups\/keeper\.notes-[^/]+\.db$/, 'default file under the backup folder, named after the database');
  t.same(rows(byDefault.file), ['started 1']);
  const audit = setup.captured.records().find((r) => r.action === 'store.backup');
  t.match(audit, { database: 'keeper.notes', actor: 'test' }, 'audited like a kernel backup');
});

t.test('a stopped plugin database is gone from the list and from backup; starting again brings it back', async (t) => {
  const setup = await rig(t);
  await setup.host.disable('keeper', 'test');
  t.same(names(setup), ['state'], 'no longer listed once its plugin stopped');
  const refused = await setup.control.call('backup', { database: 'keeper.notes' }, OWNER).catch((error: unknown) => error);
  t.ok(isHomeAgentError(refused) && refused.code === 'HA_ERR_RPC_INVALID_PARAMS', 'backup refuses the name');
  t.match((refused as Error).message, 'backup: no database named keeper.notes; known: state');

  await setup.host.enable('keeper', 'test');
  t.same(names(setup), ['state', 'keeper.notes'], 'listed again');
  const dest = join(setup.dir, 'after-enable.db');
  await setup.control.call('backup', { database: 'keeper.notes', path: dest }, OWNER);
  t.same(rows(dest), ['started 1', 'started 1'], 'the rows of both runs, in one file');
});

t.test('a reload registers the new generation without a clash; the old one closing leaves it listed', async (t) => {
  const setup = await rig(t);
  writePlugin(join(setup.dir, 'shipped'), 'keeper', keeper('2'));
  await setup.host.reload('keeper', 'test');
  t.ok(pluginLog().includes('stop keeper 1'), 'the old generation stopped and closed its connection');
  t.same(names(setup), ['state', 'keeper.notes'], 'listed once');
  const dest = join(setup.dir, 'after-reload.db');
  await setup.control.call('backup', { database: 'keeper.notes', path: dest }, OWNER);
  t.same(rows(dest), ['started 1', 'started 2'], 'backed up through the new generation');
  t.equal(setup.host.list()[0]?.state, 'running');
});

t.test('a plugin that does not close its database on stop is still taken off the list', async (t) => {
  const setup = await rig(t, keeper('1', { closeOnStop: false }));
  t.same(names(setup), ['state', 'keeper.notes']);
  await setup.host.disable('keeper', 'test');
  t.same(names(setup), ['state']);
});

t.test('a plugin whose start fails after opening its database, and does not close it, is not listed', async (t) => {
  const setup = await rig(t, keeper('1', { failStart: true, closeOnStop: false }));
  t.equal(setup.host.list()[0]?.state, 'quarantined');
  t.same(names(setup), ['state']);
});

t.test('a failed reload leaves the running generation listed', async (t) => {
  const setup = await rig(t);
  writePlugin(join(setup.dir, 'shipped'), 'keeper', keeper('2', { failStart: true }));
  const failed = await setup.host.reload('keeper', 'test').catch((error: unknown) => error);
  t.ok(isHomeAgentError(failed) && failed.code === 'HA_ERR_PLUGIN_START', 'the reload fails');
  t.same(names(setup), ['state', 'keeper.notes'], 'the running version stays listed');
  const dest = join(setup.dir, 'after-failed-reload.db');
  await setup.control.call('backup', { database: 'keeper.notes', path: dest }, OWNER);
  t.same(rows(dest), ['started 1', 'started 2'], 'both starts wrote before the second failed');
});

t.test('a database name that is not lower-case letters, digits and _ is refused: the plugin does not start', async (t) => {
  const setup = await rig(t, keeper('1', { database: '../state' }));
  const status = setup.host.list()[0];
  t.equal(status?.state, 'quarantined');
  t.match(status?.error, /may open databases named with 1-32 lower-case letters.*not "\.\.\/state"/);
  t.same(names(setup), ['state']);
});

t.test('the store refuses to list a plugin database under a kernel database name', async (t) => {
  const dir = tempDir(t);
  const setup = await startHost(t, { dir });
  const impostor = ManagedDatabase.open(
    { name: 'state', file: join(dir, 'impostor.db'), synchronous: 'FULL' },
    { busyTimeoutMs: 1000, startupCheck: 'off', log: silentLogs().child('store'), clock: systemClock },
  );
  t.teardown(() => impostor.close());
  const error = expectError(t, () => setup.store.attach(impostor), 'HA_ERR_STORE_OPEN');
  t.match(error.message, 'database name state belongs to the kernel');
  t.equal(setup.store.database('state').spec.file, join(dir, 'state.db'), 'the kernel database is untouched');
});

t.test('an attached database closed without detaching is not offered for backup', async (t) => {
  const dir = tempDir(t);
  const setup = await startHost(t, { dir });
  const file = join(dir, 'loose.db');
  writeFileSync(file, '');
  const loose = ManagedDatabase.open(
    { name: 'x.loose', file, synchronous: 'FULL' },
    { busyTimeoutMs: 1000, startupCheck: 'off', log: silentLogs().child('store'), clock: systemClock },
  );
  setup.store.attach(loose);
  t.same(names(setup), ['state', 'x.loose']);
  loose.close();
  t.same(names(setup), ['state']);
  expectError(t, () => setup.store.database('x.loose'), 'HA_ERR_INTERNAL');
});

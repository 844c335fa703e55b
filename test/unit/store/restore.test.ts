import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import type { Clock } from '../../../src/shared/clock.js';
import { ManagedDatabase } from '../../../src/store/database.js';
import { restoreDatabase, restoreTarget } from '../../../src/store/restore.js';
import { expectError, silentLogs, type Teardown, tempDir } from '../fixtures/support.js';

const clock: Clock = { now: () => Date.parse('2024-02-03T04:05:06.007Z'), monotonic: () => 0 };

/** A HomeAgent database (with schema_migrations) holding `values` in table notes, closed. */
function makeHomeAgentDb(t: Teardown, file: string, values: string[]): void {
  const db = ManagedDatabase.open(
    { name: 'state', file, synchronous: 'FULL' },
    { busyTimeoutMs: 1000, startupCheck: 'quick', log: silentLogs().child('store'), clock },
  );
  t.teardown(() => db.close());
  db.migrate('notes', [{ version: 1, name: 'notes', up: (d) => void d.exec('CREATE TABLE notes (text TEXT NOT NULL)') }]);
  const insert = db.db.prepare('INSERT INTO notes (text) VALUES (?)');
  for (const v of values) insert.run(v);
  db.close();
}

function notes(file: string): string[] {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return (db.prepare('SELECT text FROM notes ORDER BY rowid').all() as Array<{ text: string }>).map((r) => r.text);
  } finally {
    db.close();
  }
}

/** A backup made the way `homeagentctl backup` makes it. */
async function makeBackup(t: Teardown, dir: string, values: string[]): Promise<string> {
  const source = join(dir, 'source.db');
  makeHomeAgentDb(t, source, values);
  const db = ManagedDatabase.open(
    { name: 'state', file: source, synchronous: 'FULL' },
    { busyTimeoutMs: 1000, startupCheck: 'quick', log: silentLogs().child('store'), clock },
  );
  t.teardown(() => db.close());
  const dest = join(dir, 'backups', 'state-backup.db');
  await db.backup(dest);
  db.close();
  return dest;
}

t.test('restore puts the backup in place and keeps the previous database', async (t) => {
  const dir = tempDir(t);
  const backup = await makeBackup(t, dir, ['from backup 1', 'from backup 2']);
  const target = join(dir, 'data', 'state.db');
  makeHomeAgentDb(t, target, ['current']);

  const result = restoreDatabase(backup, target, clock);
  t.equal(result.restored, target);
  t.equal(result.previousMovedTo, `${target}.before-restore-2024-02-03T04-05-06-007Z`);
  t.same(notes(target), ['from backup 1', 'from backup 2'], 'the rows of the backup');
  t.same(notes(result.previousMovedTo ?? ''), ['current'], 'the previous database is kept');
  t.ok(existsSync(backup), 'the backup itself is not consumed');
  t.same(
    readdirSync(join(dir, 'data')).filter((f) => f.startsWith('.restore-')),
    [],
    'no staging file remains',
  );

  // The restored file opens as a normal HomeAgent database.
  const opened = ManagedDatabase.open(
    { name: 'state', file: target, synchronous: 'FULL' },
    { busyTimeoutMs: 1000, startupCheck: 'full', log: silentLogs().child('store'), clock },
  );
  t.teardown(() => opened.close());
  t.equal(opened.recovery, undefined);
  t.equal(opened.schemaVersion('notes'), 1);
});

t.test('restore into a place without a database', async (t) => {
  const dir = tempDir(t);
  const backup = await makeBackup(t, dir, ['only']);
  const target = join(dir, 'state.db');
  const result = restoreDatabase(backup, target, clock);
  t.equal(result.previousMovedTo, undefined);
  t.same(notes(target), ['only']);
});

t.test('restore refuses bad input and leaves the target untouched', async (t) => {
  const dir = tempDir(t);
  const target = join(dir, 'state.db');
  makeHomeAgentDb(t, target, ['keep me']);
  const before = readFileSync(target);
  const listing = readdirSync(dir).sort();

  const text = join(dir, 'not-sqlite.db');
  writeFileSync(text, 'definitely not a database\n'.repeat(100));
  const notDb = expectError(t, () => restoreDatabase(text, target, clock), 'HA_ERR_STORE_RESTORE');
  t.match(notDb.message, 'not a healthy SQLite database');
  t.match(notDb.message, 'nothing was changed');

  const foreign = join(dir, 'foreign.db');
  const db = new Database(foreign);
  db.exec('CREATE TABLE something (x)');
  db.close();
  const notOurs = expectError(t, () => restoreDatabase(foreign, target, clock), 'HA_ERR_STORE_RESTORE');
  t.match(notOurs.message, 'no schema_migrations table');

  const missing = expectError(t, () => restoreDatabase(join(dir, 'missing.db'), target, clock), 'HA_ERR_STORE_RESTORE');
  t.match(missing.message, 'no such file');

  t.same(readFileSync(target), before, 'the target is byte for byte the same');
  t.same(notes(target), ['keep me']);
  t.same(
    readdirSync(dir)
      .sort()
      .filter((f) => !['not-sqlite.db', 'foreign.db'].includes(f) && !f.endsWith('-wal') && !f.endsWith('-shm')),
    listing,
    'nothing was moved aside or staged',
  );
});

const PATHS = {
  stateDb: '/data/state.db',
  memoryDb: '/data/memory.db',
  knowledgeDb: '/data/knowledge.db',
  homeDb: '/data/home.db',
  pluginDataDir: '/data/plugin-data',
};

t.test('restoreTarget: the kernel databases by name, a plugin database as <plugin>.<name>', async (t) => {
  t.same(restoreTarget(PATHS, 'state'), { file: '/data/state.db' });
  t.same(restoreTarget(PATHS, 'home'), { file: '/data/home.db' });
  t.same(restoreTarget(PATHS, 'seq.sequences'), { file: '/data/plugin-data/seq/sequences.db', component: 'seq' });
  t.same(
    restoreTarget(PATHS, 'zigbee2mqtt-bridge.v2.devices'),
    { file: '/data/plugin-data/zigbee2mqtt-bridge.v2/devices.db', component: 'zigbee2mqtt-bridge.v2' },
    'a plugin name with dots splits at the last one',
  );
  for (const bad of [
    'bogus',
    'toString',
    '../seq.sequences',
    'seq/x.sequences',
    '..sequences',
    '.sequences',
    'seq.Sequences',
    'seq.',
    'seq.a.b-c',
  ]) {
    const error = expectError(t, () => restoreTarget(PATHS, bad), 'HA_ERR_STORE_RESTORE');
    t.match(error.message, `no database named ${bad}; known: state, memory, knowledge, home, or a plugin's as <plugin>.<name>`, bad);
  }
});

t.test('a plugin database restore refuses a backup of another database and leaves the target untouched', async (t) => {
  const dir = tempDir(t);
  const backup = await makeBackup(t, dir, ['from state']);
  const target = join(dir, 'plugin-data', 'seq', 'sequences.db');
  const error = expectError(t, () => restoreDatabase(backup, target, clock, { component: 'seq' }), 'HA_ERR_STORE_RESTORE');
  t.match(error.message, 'holds no tables of seq');
  t.match(error.message, 'nothing was changed');
  t.notOk(existsSync(join(dir, 'plugin-data')), 'nothing was created');

  const result = restoreDatabase(backup, join(dir, 'plugin-data', 'notes', 'notes.db'), clock, { component: 'notes' });
  t.equal(result.previousMovedTo, undefined, 'a plugin that never ran here: its folder is created');
  t.same(notes(result.restored), ['from state']);
});

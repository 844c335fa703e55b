import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, readlinkSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import type { Clock } from '../../../src/shared/clock.js';
import { checkFile, ManagedDatabase, type OpenOptions, type StartupCheck } from '../../../src/store/database.js';
import type { DatabaseSpec, Migration, SynchronousMode } from '../../../src/store/types.js';
import { captureLogs, expectError, expectErrorAsync, silentLogs, type Teardown, tempDir } from '../fixtures/support.js';

const fixedClock: Clock = { now: () => Date.parse('2024-05-06T07:08:09.123Z'), monotonic: () => 0 };

function options(check: StartupCheck = 'quick', log = silentLogs().child('store')): OpenOptions {
  return { busyTimeoutMs: 2000, startupCheck: check, log, clock: fixedClock };
}

function open(t: Teardown, file: string, opts: { synchronous?: SynchronousMode; check?: StartupCheck; options?: OpenOptions } = {}) {
  const spec: DatabaseSpec = { name: 'state', file, synchronous: opts.synchronous ?? 'FULL' };
  const db = ManagedDatabase.open(spec, opts.options ?? options(opts.check));
  t.teardown(() => db.close());
  return db;
}

/** A closed database file with `rows` rows in table `items` (and an index), in WAL mode. */
function makeDatabase(file: string, rows: number): void {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.exec('CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL, body TEXT NOT NULL); CREATE INDEX items_name ON items (name)');
  const insert = db.prepare('INSERT INTO items (name, body) VALUES (?, ?)');
  db.transaction(() => {
    for (let i = 0; i < rows; i++) insert.run(`item-${i}`, `${'body '.repeat(40)}${i}`);
  })();
  db.close();
}

function overwrite(file: string, offset: number, bytes: Buffer): void {
  const fd = openSync(file, 'r+');
  try {
    writeSync(fd, bytes, 0, bytes.length, offset);
  } finally {
    closeSync(fd);
  }
}

/** Paths of the files this process holds open. */
function openFiles(): string[] {
  return readdirSync('/proc/self/fd').flatMap((fd) => {
    try {
      return [readlinkSync(`/proc/self/fd/${fd}`)];
    } catch {
      return [];
    }
  });
}

const steps = (log: string[]): Migration[] => [
  {
    version: 1,
    name: 'create a',
    up(db) {
      log.push(`1:${db.inTransaction}`);
      db.exec('CREATE TABLE a (x INTEGER)');
    },
  },
  {
    version: 2,
    name: 'create b',
    up(db) {
      log.push(`2:${db.inTransaction}`);
      db.exec('CREATE TABLE b (y INTEGER)');
      db.prepare('INSERT INTO a (x) VALUES (1)').run();
    },
  },
];

const oneTable = (sql: string): Migration[] => [{ version: 1, name: 'table', up: (db) => void db.exec(sql) }];

function tables(db: ManagedDatabase): string[] {
  return (db.db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as Array<{ name: string }>).map(
    (r) => r.name,
  );
}

t.test('WAL mode and the synchronous pragma per spec', async (t) => {
  const dir = tempDir(t);
  const full = open(t, join(dir, 'full.db'), { synchronous: 'FULL' });
  const normal = open(t, join(dir, 'normal.db'), { synchronous: 'NORMAL' });
  t.equal(full.db.pragma('journal_mode', { simple: true }), 'wal');
  t.equal(full.db.pragma('synchronous', { simple: true }), 2, 'FULL is 2');
  t.equal(normal.db.pragma('synchronous', { simple: true }), 1, 'NORMAL is 1');
  t.equal(full.db.pragma('foreign_keys', { simple: true }), 1);
  t.equal(full.recovery, undefined);
  // journal_mode=WAL is stored in the file: a separate connection sees it too.
  const other = new Database(join(dir, 'full.db'), { readonly: true });
  t.teardown(() => other.close());
  t.equal(other.pragma('journal_mode', { simple: true }), 'wal');
});

t.test('open creates missing parent directories', async (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'a', 'b', 'state.db');
  open(t, file);
  t.ok(existsSync(file));
});

t.test('migrations apply in order, each in a transaction, and are recorded', async (t) => {
  const dir = tempDir(t);
  const db = open(t, join(dir, 'state.db'));
  const log: string[] = [];
  t.equal(db.schemaVersion('demo'), 0);
  t.same(db.migrate('demo', steps(log)), { from: 0, to: 2 });
  t.same(log, ['1:true', '2:true'], 'in order, inside a transaction');
  t.equal(db.schemaVersion('demo'), 2);
  t.same(db.db.prepare('SELECT component, version, name FROM schema_migrations ORDER BY version').all(), [
    { component: 'demo', version: 1, name: 'create a' },
    { component: 'demo', version: 2, name: 'create b' },
  ]);
  const applied = db.db.prepare('SELECT applied_at FROM schema_migrations LIMIT 1').get() as { applied_at: string };
  t.equal(applied.applied_at, '2024-05-06T07:08:09.123Z', 'stamped with the injected clock');

  t.same(db.migrate('demo', steps(log)), { from: 2, to: 2 }, 're-running is a no-op');
  t.same(log, ['1:true', '2:true'], 'no step ran again');
  t.equal((db.db.prepare('SELECT COUNT(*) AS n FROM a').get() as { n: number }).n, 1);

  t.same(db.migrate('other', [{ version: 1, name: 'x', up: (d) => void d.exec('CREATE TABLE other_x (z)') }]), { from: 0, to: 1 });
  t.equal(db.schemaVersion('demo'), 2, 'components are versioned separately');
  t.equal(db.schemaVersion('other'), 1);
});

t.test('a failing migration is rolled back and reported', async (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'state.db');
  const db = open(t, file);
  const log: string[] = [];
  const failing: Migration[] = [
    ...steps(log),
    {
      version: 3,
      name: 'add c then fail',
      up(d) {
        d.exec('CREATE TABLE c (z INTEGER)');
        d.prepare('INSERT INTO a (x) VALUES (99)').run();
        throw new Error('boom in step three');
      },
    },
    { version: 4, name: 'never reached', up: (d) => void d.exec('CREATE TABLE d (w INTEGER)') },
  ];
  const error = expectError(t, () => db.migrate('demo', failing), 'HA_ERR_STORE_MIGRATION');
  t.match(error.message, 'state database', 'names the database');
  t.match(error.message, 'migration demo 3 (add c then fail)', 'names component, version and migration');
  t.match(error.message, 'boom in step three', 'carries the cause');
  t.match(error.message, 'stays at demo version 2');
  t.equal(db.schemaVersion('demo'), 2, 'version stays at the previous one');
  t.same(tables(db), ['a', 'b', 'schema_migrations'], 'the table from the failing step does not exist');
  t.same(db.db.prepare('SELECT x FROM a').all(), [{ x: 1 }], 'the failing step wrote nothing');
  t.equal(db.db.inTransaction, false);

  db.close();
  const reopened = new Database(file, { readonly: true });
  t.teardown(() => reopened.close());
  t.same(reopened.prepare("SELECT MAX(version) AS v FROM schema_migrations WHERE component = 'demo'").get(), { v: 2 });
});

t.test('a database newer than the code is refused', async (t) => {
  const dir = tempDir(t);
  const db = open(t, join(dir, 'state.db'));
  db.migrate('demo', steps([]));
  const error = expectError(t, () => db.migrate('demo', steps([]).slice(0, 1)), 'HA_ERR_STORE_TOO_NEW');
  t.match(error.message, 'version 2');
  t.match(error.message, 'only up to 1');
});

t.test('misnumbered migrations are refused before anything runs', async (t) => {
  const dir = tempDir(t);
  const db = open(t, join(dir, 'state.db'));
  const ran: string[] = [];
  const bad: Migration[] = [
    { version: 1, name: 'one', up: () => void ran.push('one') },
    { version: 3, name: 'three', up: () => void ran.push('three') },
  ];
  const error = expectError(t, () => db.migrate('demo', bad), 'HA_ERR_STORE_MIGRATION');
  t.match(error.message, 'found 3 at position 2');
  t.same(ran, []);
  expectError(t, () => db.migrate('demo', [{ version: 0, name: 'zero', up: () => {} }]), 'HA_ERR_STORE_MIGRATION');
  t.equal(db.schemaVersion('demo'), 0);
});

t.test('a non-SQLite file is moved aside and a fresh database opened', async (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'state.db');
  const garbage = Buffer.from('this is not a database, just some text that happens to be here\n'.repeat(200));
  writeFileSync(file, garbage);
  const captured = captureLogs();
  const db = open(t, file, { options: options('quick', captured.logs.child('store')) });
  t.ok(db.recovery, 'recovery is set');
  const movedTo = db.recovery?.movedTo ?? '';
  t.equal(movedTo, `${file}.corrupt-2024-05-06T07-08-09-123Z`);
  t.match(db.recovery?.reason, /not a database/);
  t.ok(existsSync(movedTo), 'the old file is still there');
  t.same(readFileSync(movedTo), garbage, 'its bytes are unchanged');
  t.equal(db.db.pragma('journal_mode', { simple: true }), 'wal', 'the fresh database is usable');
  db.migrate('demo', steps([]));
  t.same(tables(db), ['a', 'b', 'schema_migrations']);
  t.ok(
    captured.records().some((r) => r.level === 'error' && r.moved_to === movedTo),
    'the recovery is logged as an error',
  );
});

t.test('garbage over the header of a real database is recovered', async (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'state.db');
  makeDatabase(file, 50);
  overwrite(file, 0, Buffer.alloc(100, 0xab));
  const before = readFileSync(file);
  const db = open(t, file);
  t.ok(db.recovery);
  t.same(readFileSync(db.recovery?.movedTo ?? ''), before, 'moved aside byte for byte');
  t.same(tables(db), []);
});

t.test('a corrupt page in the middle is caught by the full startup check', async (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'state.db');
  makeDatabase(file, 3000);
  const size = readFileSync(file).length;
  t.ok(size > 4096 * 40, `a database of many pages (${size} bytes)`);
  t.equal(checkFile(file, 'full'), undefined, 'healthy before');
  overwrite(file, 4096 * 30, Buffer.alloc(4096, 0));
  const corrupted = readFileSync(file);

  // With the check off the damage goes unnoticed at open: the check is what finds it.
  const unchecked = ManagedDatabase.open({ name: 'state', file, synchronous: 'FULL' }, options('off'));
  t.equal(unchecked.recovery, undefined);
  unchecked.close();

  const db = open(t, file, { check: 'full' });
  t.ok(db.recovery, 'recovered');
  const movedTo = db.recovery?.movedTo ?? '';
  t.ok(existsSync(movedTo));
  t.same(readFileSync(movedTo), corrupted, 'the corrupt file is kept unchanged');
  t.notOk(
    openFiles().some((f) => f.startsWith(movedTo)),
    'no connection to the moved-aside file stays open',
  );
  t.same(tables(db), [], 'a fresh, empty database');
});

t.test('the quick startup check also recovers without leaking a connection', async (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'state.db');
  makeDatabase(file, 3000);
  overwrite(file, 4096 * 30, Buffer.alloc(4096, 0));
  const db = open(t, file, { check: 'quick' });
  t.ok(db.recovery);
  const movedTo = db.recovery?.movedTo ?? '';
  t.notOk(
    openFiles().some((f) => f.startsWith(movedTo)),
    'no connection to the moved-aside file stays open',
  );
});

t.test('an open failure that is not corruption throws and moves nothing', async (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'state.db');
  mkdirSync(file);
  writeFileSync(join(file, 'keep'), 'x');
  const error = expectError(t, () => ManagedDatabase.open({ name: 'state', file, synchronous: 'FULL' }, options()), 'HA_ERR_STORE_OPEN');
  t.match(error.message, file);
  t.match(error.message, 'state database');
  t.same(readdirSync(dir), ['state.db'], 'nothing was moved aside');
  t.same(readdirSync(file), ['keep']);
});

t.test('backup writes a checked copy and refuses an existing destination', async (t) => {
  const dir = tempDir(t);
  const db = open(t, join(dir, 'state.db'));
  db.migrate('demo', steps([]));
  const insert = db.db.prepare('INSERT INTO a (x) VALUES (?)');
  for (let i = 0; i < 100; i++) insert.run(i);

  const backups = join(dir, 'backups');
  const dest = join(backups, 'state-1.db');
  const result = await db.backup(dest);
  t.equal(result.file, dest);
  t.ok(result.bytes > 0);
  t.equal(checkFile(dest, 'full'), undefined, 'the copy passes integrity_check');
  const copy = new Database(dest, { readonly: true });
  const count = (copy.prepare('SELECT COUNT(*) AS n FROM a').get() as { n: number }).n;
  const version = copy.prepare('SELECT MAX(version) AS v FROM schema_migrations').get();
  copy.close();
  t.equal(count, 101);
  t.same(version, { v: 2 });
  t.same(readdirSync(backups), ['state-1.db'], 'no partial or companion files remain');

  const before = readFileSync(dest);
  insert.run(1000);
  const error = await expectErrorAsync(t, () => db.backup(dest), 'HA_ERR_STORE_BACKUP');
  t.match(error.message, 'already exists');
  t.same(readFileSync(dest), before, 'the existing file is untouched');
});

t.test('a failed backup leaves no partial file', async (t) => {
  const dir = tempDir(t);
  const db = open(t, join(dir, 'state.db'));
  db.migrate('demo', steps([]));

  // The destination folder cannot be created: a file is in the way.
  writeFileSync(join(dir, 'blocker'), 'x');
  await expectErrorAsync(t, () => db.backup(join(dir, 'blocker', 'sub', 'state.db')), 'HA_ERR_STORE_BACKUP');

  // The copy cannot be written: something that is not a database sits at the temporary name.
  const out = join(dir, 'out');
  mkdirSync(out);
  const dest = join(out, 'state.db');
  writeFileSync(join(out, `.state.db.partial-${process.pid}`), Buffer.alloc(8192, 0x41));
  const error = await expectErrorAsync(t, () => db.backup(dest), 'HA_ERR_STORE_BACKUP');
  t.match(error.message, dest);
  t.same(readdirSync(out), [], 'no partial file and no destination');
});

t.test('checkWritable commits a real write and leaves nothing behind', async (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'state.db');
  const db = open(t, file);
  db.migrate('demo', steps([]));
  const walBefore = db.sizes().wal_bytes;
  db.checkWritable();
  t.equal(db.db.inTransaction, false);
  t.same(db.db.prepare("SELECT * FROM schema_migrations WHERE component = '_health'").all(), [], 'no probe row stays');
  t.ok(db.sizes().wal_bytes > walBefore, 'the probe reached the write-ahead log (a rolled-back probe would not)');
  t.ok(db.sizes().file_bytes > 0);
});

t.test('a full database is HA_ERR_STORE_FULL naming it, inside transactions too; with room again it takes writes', async (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'state.db');
  const db = open(t, file);
  db.migrate('demo', oneTable('CREATE TABLE blobs (id INTEGER PRIMARY KEY, data BLOB NOT NULL)'));
  const pages = Number(db.db.pragma('page_count', { simple: true }));
  // max_page_count makes SQLite itself answer SQLITE_FULL, as on a full disk (the tmpfs test does the real one).
  db.db.pragma(`max_page_count = ${pages + 1}`);
  const insert = db.db.prepare('INSERT INTO blobs (data) VALUES (?)');
  const full = expectError(t, () => insert.run(Buffer.alloc(64 * 1024)), 'HA_ERR_STORE_FULL');
  t.match(full.message, `the state database ${file}`, 'names the database and its file');
  t.match(full.message, /the disk is full/);
  t.equal(full.details?.cause_code, 'SQLITE_FULL');
  const inTransaction = expectError(
    t,
    () =>
      db.db.transaction(() => {
        insert.run(Buffer.alloc(10));
        insert.run(Buffer.alloc(64 * 1024));
      })(),
    'HA_ERR_STORE_FULL',
  );
  t.ok(inTransaction, 'inside a transaction too');
  t.equal(db.db.inTransaction, false, 'the transaction was rolled back');
  t.same(db.db.prepare('SELECT count(*) AS n FROM blobs').get(), { n: 0 }, 'nothing of it stays');

  db.db.pragma('max_page_count = 1073741823');
  db.checkWritable();
  insert.run(Buffer.alloc(64 * 1024));
  t.pass('writes work again once there is room, on the same connection');
});

t.test('a refused write is HA_ERR_STORE_WRITE; other errors keep their own codes', async (t) => {
  const dir = tempDir(t);
  const db = open(t, join(dir, 'state.db'));
  db.migrate('demo', oneTable('CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT UNIQUE)'));
  db.db.prepare('INSERT INTO items (name) VALUES (?)').run('a');
  const unique = t.throws(() => db.db.prepare('INSERT INTO items (name) VALUES (?)').run('a')) as { code?: string };
  t.equal(unique.code, 'SQLITE_CONSTRAINT_UNIQUE', 'a constraint stays a constraint');
  db.db.pragma('query_only = ON');
  const refused = expectError(t, () => db.db.prepare('INSERT INTO items (name) VALUES (?)').run('b'), 'HA_ERR_STORE_WRITE');
  t.match(refused.message, /the state database .*state\.db could not be written/);
  expectError(t, () => db.checkWritable(), 'HA_ERR_STORE_WRITE');
  db.db.pragma('query_only = OFF');
  db.checkWritable();
});

t.test('checkFile reports problems instead of throwing', async (t) => {
  const dir = tempDir(t);
  t.match(checkFile(join(dir, 'missing.db'), 'quick'), /unable to open|no such file|cannot open/i);
  const text = join(dir, 'text.db');
  writeFileSync(text, 'hello'.repeat(1000));
  t.match(checkFile(text, 'quick'), /not a database/);
});

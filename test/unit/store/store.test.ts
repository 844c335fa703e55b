import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { systemClock } from '../../../src/shared/clock.js';
import { Store } from '../../../src/store/store.js';
import { expectError, silentLogs, startStore, tempDir } from '../fixtures/support.js';

t.test('start opens every database; status reports them; stop closes them', async (t) => {
  const dir = tempDir(t);
  const store = new Store({
    databases: [
      { name: 'state', file: join(dir, 'state.db'), synchronous: 'FULL' },
      { name: 'memory', file: join(dir, 'memory.db'), synchronous: 'NORMAL' },
    ],
    busyTimeoutMs: 1000,
    startupCheck: 'quick',
    log: silentLogs().child('store'),
    clock: systemClock,
  });
  expectError(t, () => store.database('state'), 'HA_ERR_INTERNAL');
  await store.start();
  t.teardown(() => store.stop());
  t.equal(store.database('state').db.pragma('synchronous', { simple: true }), 2);
  t.equal(store.database('memory').db.pragma('synchronous', { simple: true }), 1);
  const status = store.status();
  t.same(
    status.map((s) => [s.name, s.synchronous, s.recovered_from_corruption]),
    [
      ['state', 'FULL', null],
      ['memory', 'NORMAL', null],
    ],
  );
  t.ok(status.every((s) => s.file_bytes > 0));
  t.ok(status.every((s) => typeof s.wal_bytes === 'number'));

  const state = store.database('state');
  await store.stop();
  t.equal(state.open, false, 'connections are closed');
  t.same(store.status(), []);
  expectError(t, () => store.database('state'), 'HA_ERR_INTERNAL');
  await store.stop();
  t.pass('stop twice is safe');
});

t.test('status reports a recovery from corruption', async (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'state.db');
  const garbage = Buffer.from('garbage, not SQLite. '.repeat(500));
  writeFileSync(file, garbage);
  const { store } = await startStore(t, dir, { file });
  const [status] = store.status();
  const recovery = status?.recovered_from_corruption;
  t.ok(recovery, 'the recovery is visible in status');
  t.match(recovery?.movedTo, /state\.db\.corrupt-\d{4}-\d\d-\d\dT/);
  t.ok(existsSync(recovery?.movedTo ?? ''));
  t.same(readFileSync(recovery?.movedTo ?? ''), garbage);
  const fresh = store.database('state');
  fresh.migrate('demo', [{ version: 1, name: 'x', up: (d) => void d.exec('CREATE TABLE x (y)') }]);
  fresh.checkWritable();
  t.equal(fresh.schemaVersion('demo'), 1, 'the fresh database takes writes');
});

/**
 * createDaemon (src/daemon.ts) in the test process, as test/helpers/in-process-daemon.ts uses it:
 * two daemons live side by side on their own data directories, a second one on the same directory
 * is refused, and close() stops everything and releases the lock so the same directory starts
 * again. The process-level behaviour (signals, exit codes, sd_notify) is daemon-lifecycle's.
 */
import { existsSync } from 'node:fs';
import t from 'tap';
import { tempDir } from '../helpers/daemon.js';
import { startDaemon } from '../helpers/in-process-daemon.js';

t.test('two daemons in one process, each on its own data directory', async (t) => {
  const [a, b] = await Promise.all([startDaemon(t), startDaemon(t)]);
  await Promise.all([a.waitForReady(), b.waitForReady()]);
  t.not(a.socketPath, b.socketPath, 'each has its own CLI socket');
  const [sa, sb] = await Promise.all([a.ctl(['status', '--json']), b.ctl(['status', '--json'])]);
  t.match(sa.json(), { data_dir: a.dataDir, state: /running|degraded/ });
  t.match(sb.json(), { data_dir: b.dataDir, state: /running|degraded/ });
  t.ok(
    a.logs.every((l) => !l.text.includes(b.dataDir)),
    "one daemon's log lines never carry the other's data directory",
  );
  a.kill('SIGTERM');
  t.match(await a.waitForExit(), { code: 0 }, 'the first closes cleanly');
  t.match((await b.ctl(['status', '--json'])).json(), { state: /running|degraded/ }, 'the second keeps running');
});

t.test('a second daemon on the same data directory is refused; after close() it starts again', async (t) => {
  const dataDir = tempDir(t);
  const first = await startDaemon(t, { dataDir });
  await first.waitForReady();
  await t.rejects(startDaemon(t, { dataDir }), { code: 'HA_ERR_DAEMON_ALREADY_RUNNING' });
  t.ok(existsSync(first.pidFile), "the refusal leaves the holder's lock file");
  const result = await first.daemon.close('test');
  t.same(result, { clean: true, timedOut: [], failed: [] }, 'every service stopped in time');
  t.notOk(existsSync(first.pidFile), 'close() released the lock');
  t.same(await first.daemon.close('again'), result, 'close() is idempotent');
  const again = await startDaemon(t, { dataDir });
  await again.waitForReady();
  t.match((await again.ctl(['status', '--json'])).json(), { state: /running|degraded/ });
});

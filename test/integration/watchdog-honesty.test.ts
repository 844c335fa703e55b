/**
 * The watchdog is fed only while the daemon is healthy: a blocked event loop stops the pings and,
 * once the loop runs again, the stall is reported (STATUS=Degraded) before pings resume. Also the
 * systemd-notify binary fallback used when the sd-notify addon is not built.
 */
import t from 'tap';
import { spawnDaemon } from '../helpers/daemon.js';
import { type NotifyMessage, startNotifyListener, withField } from '../helpers/notify-listener.js';
import { RpcConnection } from '../helpers/rpc.js';
import { requireTool } from '../helpers/tools.js';

const WATCHDOG_USEC = 400_000;
const INTERVAL_MS = WATCHDOG_USEC / 2000;
const BLOCK_MS = 1500;

const isPing = (m: NotifyMessage): boolean => m.fields.WATCHDOG === '1';

t.test('a blocked event loop stops the watchdog pings and marks the daemon degraded', async (t) => {
  if (!requireTool(t, 'python3')) return;
  const listener = await startNotifyListener({ t });
  const daemon = spawnDaemon(t, {
    env: {
      NOTIFY_SOCKET: listener.path,
      WATCHDOG_USEC: String(WATCHDOG_USEC),
      HOMEAGENT_SUPERVISOR_DEBUG_METHODS: 'true',
      HOMEAGENT_SUPERVISOR_MAX_LOOP_DELAY_MS: '500',
    },
  });
  const ready = await listener.waitFor(withField('READY', '1'), 20_000);
  await daemon.waitForReady();
  await listener.waitFor((m) => isPing(m) && m.t > ready.t, 5000);

  const rpc = await RpcConnection.connect(daemon.socketPath);
  t.teardown(() => rpc.close());
  const answer = await rpc.request('debug.block_event_loop', { ms: BLOCK_MS });
  t.equal(answer.ok, true, 'the debug method is available when enabled');
  const lastPingBefore = listener.messages.filter(isPing).at(-1) as NotifyMessage;

  const degraded = await listener.waitFor((m) => /^Degraded: health check failing/.test(m.fields.STATUS ?? ''), BLOCK_MS + 5000);
  const recovered = await listener.waitFor((m) => m.t > degraded.t && /^Running/.test(m.fields.STATUS ?? ''), 5000);
  const firstPingAfter = await listener.waitFor((m) => isPing(m) && m.t > lastPingBefore.t, 5000);

  t.ok(
    firstPingAfter.t - lastPingBefore.t >= BLOCK_MS,
    `no ping while the loop was blocked (gap ${Math.round(firstPingAfter.t - lastPingBefore.t)} ms, block ${BLOCK_MS} ms)`,
  );
  t.ok(
    !listener.messages.some((m) => isPing(m) && m.t > lastPingBefore.t && m.t < degraded.t),
    'the first health check after the stall does not feed the watchdog',
  );
  t.ok(recovered.t > degraded.t, 'the status returns to Running once the loop is healthy again');
  t.ok(await daemon.sawLog((l) => l.msg === 'health check failed; not feeding the systemd watchdog'), 'the failure is logged');

  const status = await rpc.request('status');
  t.equal((status.result as { state: string }).state, 'running', 'status reports running again');
});

t.test('debug methods are absent unless enabled', async (t) => {
  const daemon = spawnDaemon(t);
  await daemon.waitForReady();
  const rpc = await RpcConnection.connect(daemon.socketPath);
  t.teardown(() => rpc.close());
  const answer = await rpc.request('debug.block_event_loop', { ms: 10 });
  t.equal(answer.error?.code, 'HA_ERR_RPC_UNKNOWN_METHOD');
});

t.test('the systemd-notify binary fallback delivers READY, WATCHDOG and STOPPING', async (t) => {
  if (!requireTool(t, 'python3')) return;
  if (!requireTool(t, 'systemd-notify', 'systemd')) return;
  const listener = await startNotifyListener({ t });
  const daemon = spawnDaemon(t, {
    env: { NOTIFY_SOCKET: listener.path, WATCHDOG_USEC: String(WATCHDOG_USEC), HOMEAGENT_SUPERVISOR_NOTIFY_BACKEND: 'binary' },
  });
  const ready = await listener.waitFor(withField('READY', '1'), 20_000);
  t.match(ready.fields.STATUS, /^Running/);
  await daemon.waitForReady();
  t.ok(
    daemon.logs.some((l) => l.msg === 'systemd notification enabled' && l.json?.backend === 'binary'),
    'the binary back end was chosen',
  );
  await listener.waitFor((m) => isPing(m) && m.t > ready.t, 20 * INTERVAL_MS);
  daemon.kill('SIGTERM');
  await listener.waitFor(withField('STOPPING', '1'), 10_000);
  t.equal((await daemon.waitForExit()).code, 0);
});

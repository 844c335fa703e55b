// logs.recent (src/supervisor/kernel-methods.ts) on a real ControlRegistry and a real LogManager
// keeping its last lines, called as the CLI socket and the web API call it.
import t from 'tap';
import { LogManager } from '../../../src/log/logger.js';
import type { RecentLog } from '../../../src/log/recent-lines.js';
import { ControlRegistry } from '../../../src/plugin/control-registry.js';
import { MAX_RECENT_LOG_LINES, registerLogMethods } from '../../../src/supervisor/kernel-methods.js';
import { expectErrorAsync } from '../fixtures/support.js';

function setup(lines = 5000) {
  const logs = new LogManager({ level: 'info', levels: {}, destination: { write: () => undefined }, recent: { lines, lineBytes: 4096 } });
  const control = new ControlRegistry();
  registerLogMethods(control, logs);
  return { logs, call: (params: unknown) => control.call('logs.recent', params, { actor: 'webui:admin' }) as Promise<RecentLog> };
}

t.test('logs.recent: newest last, default 200 lines, filters passed through', async (t) => {
  const { logs, call } = setup();
  for (let i = 0; i < 300; i++) logs.child(i % 2 === 0 ? 'store' : 'plugin.mqtt').info({ i }, `message ${i}`);
  logs.child('plugin.mqtt').warn({ password: 'broker-pass' }, 'broker refused the login');
  logs.audit({ actor: 'cli', action: 'store.backup', database: 'state' });

  const all = await call({});
  t.equal(all.lines.length, 200, 'the default limit');
  t.equal(all.lines.at(-1)?.action, 'store.backup', 'newest last');
  t.equal(all.dropped, 0);

  const warn = await call({ level: 'warn', subsystem: 'plugin', q: 'refused' });
  t.same(
    warn.lines.map((l) => [l.msg, l.password]),
    [['broker refused the login', '[redacted]']],
  );
  t.same(
    (await call({ audit: true })).lines.map((l) => l.action),
    ['store.backup'],
  );
  t.same(
    (await call({ subsystem: 'store', limit: 2 })).lines.map((l) => l.i),
    [296, 298],
  );
});

t.test('logs.recent counts the lines no longer kept', async (t) => {
  const { logs, call } = setup(10);
  for (let i = 0; i < 25; i++) logs.root.info(`line ${i}`);
  const result = await call({ limit: MAX_RECENT_LOG_LINES });
  t.equal(result.lines.length, 10);
  t.equal(result.dropped, 15);
  t.equal(result.lines[0]?.msg, 'line 15');
});

t.test('logs.recent refuses bad params, naming them', async (t) => {
  const { call } = setup();
  for (const [params, field] of [
    [{ limit: 0 }, /limit/],
    [{ limit: MAX_RECENT_LOG_LINES + 1 }, /limit/],
    [{ limit: 2.5 }, /limit/],
    [{ level: 'verbose' }, /level/],
    [{ level: 'silent' }, /level/],
    [{ q: '' }, /q/],
    [{ audit: 'yes' }, /audit/],
    [{ subsystem: 'x'.repeat(201) }, /subsystem/],
  ] as const) {
    const error = await expectErrorAsync(t, () => call(params), 'HA_ERR_RPC_INVALID_PARAMS');
    t.match(error.message, field, `${JSON.stringify(params).slice(0, 40)} names the field`);
  }
});

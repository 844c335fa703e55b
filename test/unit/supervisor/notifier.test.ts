import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { Notifier } from '../../../src/supervisor/notifier.js';
import { silentLogs, tempDir } from '../fixtures/support.js';

const log = silentLogs().child('supervisor');

/** A PATH holding a fake systemd-notify, so the binary backend is chosen without touching systemd. */
function fakeBinaryPath(dir: string): string {
  const bin = join(dir, 'systemd-notify');
  writeFileSync(bin, '#!/bin/sh\nexit 0\n');
  chmodSync(bin, 0o755);
  return dir;
}

t.test('without NOTIFY_SOCKET the notifier is disabled and does nothing', async (t) => {
  const notifier = Notifier.create({ backend: 'auto', env: { WATCHDOG_USEC: '6000000' }, log });
  t.equal(notifier.enabled, false);
  t.equal(notifier.backend, 'none');
  t.equal(notifier.watchdogIntervalMs(), undefined, 'no watchdog without a transport');
  t.doesNotThrow(() => {
    notifier.ready('Running');
    notifier.status('still running');
    notifier.watchdog();
    notifier.stopping('Stopping');
  });
});

t.test('the watchdog interval is half of WATCHDOG_USEC, in ms', async (t) => {
  const dir = tempDir(t);
  const PATH = fakeBinaryPath(dir);
  const base = { NOTIFY_SOCKET: '/nonexistent/notify.sock', PATH };
  const make = (env: Record<string, string>) => Notifier.create({ backend: 'binary', env: { ...base, ...env }, log });

  const enabled = make({ WATCHDOG_USEC: '6000000' });
  t.equal(enabled.enabled, true);
  t.equal(enabled.backend, 'binary');
  t.equal(enabled.watchdogIntervalMs(), 3000);
  t.equal(make({ WATCHDOG_USEC: '6000000', WATCHDOG_PID: String(process.pid) }).watchdogIntervalMs(), 3000, 'our own pid');
  t.equal(make({ WATCHDOG_USEC: '6000000', WATCHDOG_PID: String(process.pid + 1) }).watchdogIntervalMs(), undefined, 'another pid');
  t.equal(make({}).watchdogIntervalMs(), undefined, 'no WATCHDOG_USEC');
  t.equal(make({ WATCHDOG_USEC: '0' }).watchdogIntervalMs(), undefined);
  t.equal(make({ WATCHDOG_USEC: 'soon' }).watchdogIntervalMs(), undefined);
  t.equal(make({ WATCHDOG_USEC: '1000' }).watchdogIntervalMs(), 1, 'never below 1 ms');
});

t.test('NOTIFY_SOCKET with no way to reach systemd is reported, not fatal', async (t) => {
  const dir = tempDir(t);
  const notifier = Notifier.create({ backend: 'binary', env: { NOTIFY_SOCKET: '/nonexistent/notify.sock', PATH: dir }, log });
  t.equal(notifier.enabled, false);
  t.equal(notifier.watchdogIntervalMs(), undefined);
});

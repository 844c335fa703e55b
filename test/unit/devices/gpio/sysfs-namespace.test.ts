/**
 * The sysfs back end with its default root, /sys/class/gpio, against a fake tree bind-mounted over
 * that path in a private mount namespace (`unshare -m`): once through the real onoff package
 * (installed as an optional dependency; it hard-codes that path, hence the namespace) and once
 * with onoff switched off. Needs root and unshare; skipped with a message otherwise. Runs the
 * built back end (dist/): `npm run build` first.
 *
 * The fake tree's value files are regular tmpfs files, which epoll refuses (EPERM): onoff's
 * watch() fails there, so this also shows the fallback to polling. Edges through epoll need a
 * real kernel (see devices/gpio/README.md, "Checking on a Pi").
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { tempDir } from '../../fixtures/support.js';
import { FakeSysfs, PI4_CHIPS } from './fixtures/fake-sysfs.js';

const CHILD = fileURLToPath(new URL('./fixtures/sysfs-default-root.mjs', import.meta.url));
const DIST = fileURLToPath(new URL('../../../../dist', import.meta.url));
// Where /sys/class/gpio is missing (containers, PCs) a tmpfs over /sys/class provides the mount point.
const MOUNT = [
  'set -e',
  '[ -d /sys/class/gpio ] || { mount -t tmpfs ha-test /sys/class; mkdir /sys/class/gpio; }',
  'mount --bind "$1" /sys/class/gpio',
  'shift',
  'exec "$@"',
].join('\n');

function whyNot(): string | undefined {
  if (process.getuid?.() !== 0) return 'not running as root (unshare -m and mount need CAP_SYS_ADMIN)';
  try {
    execFileSync('unshare', ['-m', '--propagation', 'private', 'sh', '-c', 'mount -t tmpfs ha-probe /mnt'], { stdio: 'pipe' });
  } catch (error) {
    return `unshare -m with a mount is not permitted here (${String(error).split('\n')[0]})`;
  }
  if (!existsSync(join(DIST, 'devices/gpio/sysfs-backend.js'))) return 'dist/ is not built (npm run build)';
  return undefined;
}

const reason = whyNot();

interface ChildReport {
  chip: unknown;
  atOpen: Record<string, string>;
  relayRead: number;
  attrs: Record<string, string>;
  buttonAttrs: Record<string, string>;
  held: string[];
  heldAfterClose: string[];
  event: unknown;
  describe: string;
  warnings: string[];
}

type T = Parameters<typeof tempDir>[0] & { teardown(fn: () => void): void };

async function runInNamespace(
  t: T,
  onoff: 'auto' | 'off',
): Promise<{ sys: FakeSysfs; report: ChildReport; code: number | null; err: string }> {
  const sys = new FakeSysfs(join(tempDir(t, 'ha-gpio-ns-'), 'gpio'), PI4_CHIPS).start((fn) => t.teardown(fn));
  const child = spawn(
    'unshare',
    ['-m', '--propagation', 'private', 'sh', '-c', MOUNT, 'sh', sys.root, process.execPath, CHILD, DIST, onoff],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => {
    out += c;
  });
  child.stderr.setEncoding('utf8').on('data', (c: string) => {
    err += c;
  });
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  const report = (out.trim() === '' ? {} : JSON.parse(out.trim())) as ChildReport;
  return { sys, report, code, err };
}

const options = reason === undefined ? {} : { skip: reason };

t.test(
  'through the real onoff on /sys/class/gpio: export with base offset, active_low, direction, value; edges by polling',
  options,
  async (t) => {
    const { sys, report, code, err } = await runInNamespace(t, 'auto');
    t.equal(code, 0, `the child ran (stderr: ${err.trim().slice(-500)})`);
    t.match(report.chip, { root: '/sys/class/gpio', name: 'gpiochip512', base: 512, label: 'pinctrl-bcm2711' });
    t.match(report.describe, /^sysfs \/sys\/class\/gpio, pins through onoff, 2 pin\(s\) open, edges by polling every 2 ms$/);
    t.ok(report.held.includes('/sys/class/gpio/gpio529/value'), "onoff holds the relay's value file open: it opened the pin");
    t.same(report.heldAfterClose, [], 'and closed it at unexport');
    t.same(
      report.atOpen,
      { active_low: '1', direction: 'high' },
      'active_low before an atomic output-at-high (off on an active-low board)',
    );
    t.equal(report.relayRead, 1);
    t.same(report.attrs, { active_low: '1', value: '1' }, 'switched on through onoff: the logical value, active_low set');
    t.same(report.buttonAttrs, { active_low: '1', direction: 'in', edge: 'both' });
    t.match(report.event, { bcm: 27, edge: 'rising', value: 1 }, 'the edge still arrived');
    t.same(
      report.warnings,
      ['onoff could not watch /sys/class/gpio/gpio539/value with epoll (Operation not permitted); inputs are polled every 2 ms instead'],
      'epoll refuses a tmpfs file: one warning, then polling',
    );
    t.same(
      sys.log,
      ['export 529', 'export 539', 'unexport 529', 'unexport 539'],
      'base + BCM reached the fake tree under the default path',
    );
    t.match(sys.atUnexport.get(529), { direction: 'high', active_low: '1', value: '1' });
    t.notOk(existsSync('/sys/class/gpio/gpio529'), 'nothing leaked out of the namespace');
  },
);

t.test('with onoff switched off: the same writes through the files', options, async (t) => {
  const { sys, report, code, err } = await runInNamespace(t, 'off');
  t.equal(code, 0, `the child ran (stderr: ${err.trim().slice(-500)})`);
  if (code !== 0) return;
  t.match(report.describe, /^sysfs \/sys\/class\/gpio, pins through the files \(onoff switched off\), 2 pin\(s\) open, edges by polling/);
  t.notOk(report.held.includes('/sys/class/gpio/gpio529/value'), 'no value file is held open');
  t.same(report.atOpen, { active_low: '1', direction: 'high' });
  t.equal(report.relayRead, 1);
  t.same(report.attrs, { active_low: '1', value: '1' });
  t.same(report.buttonAttrs, { active_low: '1', direction: 'in', edge: 'both' });
  t.match(report.event, { bcm: 27, edge: 'rising', value: 1 });
  t.same(report.warnings, []);
  t.same(sys.log, ['export 529', 'export 539', 'unexport 529', 'unexport 539']);
});

if (reason !== undefined) t.comment(`skipped: ${reason}`);

/**
 * The sysfs back end with its default root, /sys/class/gpio, against a fake tree bind-mounted over
 * that path in a private mount namespace (`unshare -m`). Needs root and unshare; skipped with a
 * message otherwise. Runs the built back end (dist/): `npm run build` first.
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

t.test(
  'default root /sys/class/gpio in a private mount namespace: export with base offset, direction, active_low, value, edges',
  reason === undefined ? {} : { skip: reason },
  async (t) => {
    const sys = new FakeSysfs(join(tempDir(t, 'ha-gpio-ns-'), 'gpio'), PI4_CHIPS).start((fn) => t.teardown(fn));
    const child = spawn('unshare', ['-m', '--propagation', 'private', 'sh', '-c', MOUNT, 'sh', sys.root, process.execPath, CHILD, DIST], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => {
      out += c;
    });
    child.stderr.setEncoding('utf8').on('data', (c: string) => {
      err += c;
    });
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    t.equal(code, 0, `the child ran (stderr: ${err.trim().slice(-500)})`);
    const result = JSON.parse(out.trim()) as Record<string, unknown>;
    t.match(result.chip, { root: '/sys/class/gpio', name: 'gpiochip512', base: 512, label: 'pinctrl-bcm2711' });
    t.equal(result.relayRead, 1);
    t.same(result.attrs, { active_low: '1', value: '1' }, 'switched on, logical value with active_low set');
    t.match(result.event, { bcm: 27, edge: 'rising', value: 1 });
    t.match(result.describe, /polling/, 'onoff is not installed here, so edges come from polling');
    t.same(
      sys.log,
      ['export 529', 'export 539', 'unexport 529', 'unexport 539'],
      'the writes reached the fake tree under the default path',
    );
    t.match(sys.atUnexport.get(529), { direction: 'high' }, 'the relay was opened as an output at the high (off) level');
    t.notOk(existsSync('/sys/class/gpio/gpio529'), 'nothing leaked out of the namespace');
  },
);

if (reason !== undefined) t.comment(`skipped: ${reason}`);

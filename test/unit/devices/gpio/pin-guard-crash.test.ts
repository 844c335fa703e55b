/**
 * Safe state when the process that holds the pins goes away: a child process (the built PinGuard
 * from dist/, `npm run build` first) switches outputs on, then gets SIGTERM with a clean stop,
 * SIGTERM without a handler, or SIGKILL. Afterwards the outputs must be at their safe values,
 * written either by the clean stop or by the detached crash watcher, and `keep` pins untouched.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import type { SafeStateReport } from '../../../../devices/gpio/safe-state.js';
import { alive } from '../../../helpers/processes.js';
import { tempDir } from '../../fixtures/support.js';
import { FakeSysfs, PI4_CHIPS } from './fixtures/fake-sysfs.js';

const CHILD = fileURLToPath(new URL('./fixtures/guard-child.mjs', import.meta.url));
const DIST = fileURLToPath(new URL('../../../../dist', import.meta.url));
const WATCHER = join(DIST, 'devices/gpio/safe-state-watcher.js');
const WAIT_LIMIT_MS = 20_000;

type Mode = 'graceful SIGTERM' | 'SIGTERM without a handler' | 'SIGKILL';
const MODES: Mode[] = ['graceful SIGTERM', 'SIGTERM without a handler', 'SIGKILL'];

/** Waits for a condition that another process makes true; fails after a generous limit. */
async function until(what: string, check: () => boolean): Promise<void> {
  const deadline = Date.now() + WAIT_LIMIT_MS;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

interface Run {
  watcherPid: number;
  report: SafeStateReport;
  stderr: string;
}

async function runAndKill(options: Record<string, unknown>, mode: Mode, onReady: () => void): Promise<Run> {
  const child = spawn(process.execPath, [CHILD, JSON.stringify({ ...options, dist: DIST, graceful: mode === 'graceful SIGTERM' })], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (c: string) => {
    stderr += c;
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const ready = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      if (line.startsWith('ready ')) resolve(line);
    });
    child.once('exit', (code, signal) => reject(new Error(`the child ended before ready (${signal ?? code}): ${stderr}`)));
  });
  const watcherPid = Number(ready.split(' ')[1]);
  onReady();
  child.kill(mode === 'SIGKILL' ? 'SIGKILL' : 'SIGTERM');
  await exited;
  const reportFile = String(options.reportFile);
  await until('the watcher report', () => existsSync(reportFile) && readFileSync(reportFile, 'utf8').endsWith('\n'));
  await until('the watcher to exit', () => !alive(watcherPid));
  return { watcherPid, report: JSON.parse(readFileSync(reportFile, 'utf8')) as SafeStateReport, stderr };
}

const built = existsSync(WATCHER) ? undefined : 'dist/ is not built (npm run build)';

for (const mode of MODES) {
  t.test(`simulated back end with a state dir: ${mode}`, built === undefined ? {} : { skip: built }, async (t) => {
    const dir = tempDir(t, 'ha-guard-crash-');
    const stateDir = join(dir, 'pins');
    const reportFile = join(dir, 'report.json');
    const specFile = join(dir, 'spec.json');
    const wire = (bcm: number) => readFileSync(join(stateDir, `gpio${bcm}`), 'utf8').trim();
    const run = await runAndKill({ backend: 'simulated', stateDir, reportFile, specFile }, mode, () => {
      t.equal(wire(17), '0', 'before: the active-low light is on (wire low)');
      t.equal(wire(12), '1', 'before: the pump is on');
      t.equal(wire(5), '1', 'before: the heater (keep) is on');
      t.ok(existsSync(specFile), 'the spec for ExecStopPost is written at start');
    });
    t.equal(wire(17), '1', 'after: light off (wire high)');
    t.equal(wire(12), '0', 'after: pump off');
    t.equal(wire(5), '1', 'after: the keep pin is untouched');
    if (mode === 'graceful SIGTERM') {
      t.equal(run.report.outcome, 'disarmed', 'the clean stop applied the safe state and disarmed the watcher');
      t.notOk(existsSync(specFile), 'a clean stop removes the ExecStopPost spec');
    } else {
      t.match(run.report, { outcome: 'applied', steps: 2, errors: [] }, 'the watcher applied it');
      t.ok(existsSync(specFile), 'the spec stays for ExecStopPost after a crash');
    }
  });

  t.test(`sysfs back end on a fake tree: ${mode}`, built === undefined ? {} : { skip: built }, async (t) => {
    const dir = tempDir(t, 'ha-guard-crash-');
    const sys = new FakeSysfs(join(dir, 'gpio'), PI4_CHIPS).start((fn) => t.teardown(fn));
    const reportFile = join(dir, 'report.json');
    const run = await runAndKill({ backend: 'sysfs', sysfsRoot: sys.root, reportFile }, mode, () => {
      t.same([sys.attr(529, 'value'), sys.attr(529, 'active_low')], ['1', '1'], 'before: light on (logical 1, active low)');
      t.equal(sys.attr(524, 'value'), '1', 'before: pump on');
      t.equal(sys.attr(517, 'direction'), 'high', 'before: heater (keep) opened on');
      // What the kernel reads back for an output; a safe-state write below must change it.
      for (const n of [529, 524, 517]) sys.setAttr(n, 'direction', 'out');
    });
    if (mode === 'graceful SIGTERM') {
      t.equal(run.report.outcome, 'disarmed');
      await until('the unexports', () => sys.atUnexport.has(529) && sys.atUnexport.has(524) && sys.atUnexport.has(517));
      t.match(sys.atUnexport.get(529), { value: '0', active_low: '1' }, 'light off when released');
      t.match(sys.atUnexport.get(524), { value: '0' }, 'pump off when released');
      t.match(sys.atUnexport.get(517), { direction: 'out', value: '0' }, 'heater (keep): no write at stop');
    } else {
      t.match(run.report, { outcome: 'applied', steps: 2, errors: [] });
      t.equal(sys.attr(529, 'direction'), 'high', 'light: output at the high wire level = off on an active-low board');
      t.equal(sys.attr(524, 'direction'), 'low', 'pump: output low = off');
      t.equal(sys.attr(517, 'direction'), 'out', 'heater (keep) untouched');
      t.ok(sys.isExported(529), 'pins stay exported after a crash, so the next start takes them over');
    }
  });
}

t.test(
  'safe-state-watcher.js --apply <file> (systemd ExecStopPost=) applies a spec; a missing file is a no-op',
  built === undefined ? {} : { skip: built },
  async (t) => {
    const dir = tempDir(t, 'ha-guard-apply-');
    const target = join(dir, 'gpio17');
    const report = join(dir, 'report.json');
    writeFileSync(target, '0');
    const spec = join(dir, 'spec.json');
    writeFileSync(spec, JSON.stringify({ parent_pid: 1, steps: [{ kind: 'write', path: target, data: '1' }], report_file: report }));
    const run = (file: string) =>
      new Promise<{ code: number | null; stderr: string }>((resolve) => {
        execFile(process.execPath, [WATCHER, '--apply', file], (error, _out, stderr) =>
          resolve({ code: error ? Number(error.code) : 0, stderr }),
        );
      });
    t.same(await run(spec), { code: 0, stderr: '' });
    t.equal(readFileSync(target, 'utf8'), '1');
    t.match(JSON.parse(readFileSync(report, 'utf8')), { outcome: 'applied', steps: 1, errors: [] });
    t.same(await run(join(dir, 'absent.json')), { code: 0, stderr: '' });
    writeFileSync(spec, '{"parent_pid": "x"}');
    const bad = await run(spec);
    t.equal(bad.code, 2, 'a malformed spec is an error exit');
    t.match(bad.stderr, /parent_pid/);
  },
);

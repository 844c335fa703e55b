/**
 * The crash watcher: a small detached process that puts outputs into their safe state once the
 * HomeAgent process that started it is gone, however it went (exception, SIGTERM without a clean
 * stop, SIGKILL, OOM killer).
 *
 *   node safe-state-watcher.js '<spec json>'   watch the parent (see below), then apply
 *   node safe-state-watcher.js --apply <file>  apply the spec in <file> now and exit (ExecStopPost=)
 *
 * Watching: stdin is a pipe whose other end only the parent holds, so it reaches end-of-file the
 * moment the parent dies, SIGKILL included. The parent's pid is polled as well, in case the pipe is
 * inherited somewhere it should not be. A clean stop writes `disarm` before closing the pipe; the
 * watcher then exits without touching anything (the parent has already applied the safe state and
 * a new HomeAgent may be starting).
 *
 * Imports only Node built-ins and safe-state.ts, so it starts fast and cannot break with the rest.
 */
import { existsSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import {
  ARMED_LINE,
  applySafeStateSteps,
  DISARM_LINE,
  parseSafeStateSpec,
  type SafeStateReport,
  type SafeStateSpec,
} from './safe-state.js';

const PARENT_POLL_MS = 250;

function parentAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^\d+ \(.*\) Z/.test(stat);
  } catch {
    return false;
  }
}

async function finish(spec: SafeStateSpec, outcome: SafeStateReport['outcome']): Promise<void> {
  const errors = outcome === 'applied' ? await applySafeStateSteps(spec.steps) : [];
  for (const e of errors) process.stderr.write(`homeagent-gpio-watcher: ${e}\n`);
  if (spec.report_file !== undefined) {
    const report: SafeStateReport = {
      outcome,
      parent_pid: spec.parent_pid,
      at: new Date().toISOString(),
      steps: spec.steps.length,
      errors,
    };
    try {
      writeFileSync(spec.report_file, `${JSON.stringify(report)}\n`);
    } catch (error) {
      process.stderr.write(`homeagent-gpio-watcher: report ${spec.report_file}: ${String(error)}\n`);
    }
  }
}

function watch(spec: SafeStateSpec): void {
  process.title = 'homeagent-gpio-watcher';
  // Signals meant for the whole service (Ctrl-C in a terminal, a cgroup-wide SIGTERM) must not
  // kill the one process that is there to clean up after the parent: it ends with the parent.
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(signal, () => {});

  let disarmed = false;
  let done = false;
  let buffered = '';
  const end = () => {
    if (done) return;
    done = true;
    clearInterval(poll);
    process.stdin.destroy();
    void finish(spec, disarmed ? 'disarmed' : 'applied').then(() => process.exit(0));
  };
  const poll = setInterval(() => {
    if (!parentAlive(spec.parent_pid)) end();
  }, PARENT_POLL_MS);

  process.stdin.setEncoding('utf8');
  process.stdin.on('data', (chunk: string) => {
    buffered += chunk;
    if (buffered.split('\n').includes(DISARM_LINE)) disarmed = true;
    if (buffered.length > 4096) buffered = buffered.slice(-64);
  });
  process.stdin.on('end', end);
  process.stdin.on('close', end);
  process.stdin.on('error', end);
  process.stdout.write(`${ARMED_LINE}\n`);
  if (!parentAlive(spec.parent_pid)) end();
}

async function main(argv: string[]): Promise<void> {
  if (argv[0] === '--apply') {
    const file = argv[1];
    if (file === undefined) throw new Error('usage: safe-state-watcher.js --apply <spec file>');
    // No spec: the last run stopped cleanly (it removes the file) or never had outputs to guard.
    if (!existsSync(file)) return;
    const spec = parseSafeStateSpec(readFileSync(file, 'utf8'));
    await finish(spec, 'applied');
    return;
  }
  const text = argv[0];
  if (text === undefined) throw new Error("usage: safe-state-watcher.js '<spec json>' | --apply <spec file>");
  watch(parseSafeStateSpec(text));
}

function isMain(): boolean {
  const script = process.argv[1];
  if (script === undefined) return false;
  try {
    return realpathSync(script) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isMain()) {
  main(process.argv.slice(2)).catch((error: unknown) => {
    process.stderr.write(`homeagent-gpio-watcher: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(2);
  });
}

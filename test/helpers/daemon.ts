/**
 * Runs the built daemon (`dist/src/main.js`) and its CLI (`dist/src/cli/homeagentctl.js`) as real
 * processes for integration tests, with `process.execPath` and paths resolved from the repository
 * root (never the working directory). Every daemon gets its own temporary data directory (unless the
 * test passes one), an environment cleaned of the caller's HOMEAGENT_* and systemd variables, and
 * an empty configuration file so that /etc/homeagent/config.yaml never leaks in. Cleanup is
 * registered with t.teardown: a daemon still alive is killed with SIGKILL, temporary directories
 * are removed.
 *
 * Build first (`npm run build`; `npm test` does it).
 */
import { type ChildProcessByStdio, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const MAIN_JS = join(REPO_ROOT, 'dist', 'src', 'main.js');
export const CTL_JS = join(REPO_ROOT, 'dist', 'src', 'cli', 'homeagentctl.js');

/** The parts of a tap test the helpers use. */
export interface HelperTest {
  teardown(fn: () => unknown): void;
}

/** A pino log record (the daemon's stdout is one JSON object per line). */
export interface LogRecord {
  level?: string;
  msg?: string;
  subsystem?: string;
  [field: string]: unknown;
}

export interface LogLine {
  /** The line as printed. */
  text: string;
  /** The parsed record, when the line is JSON. */
  json: LogRecord | undefined;
  /** `json.msg` when it is a string. */
  msg: string | undefined;
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface CommandResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Environment values; `undefined` removes a variable the helper would otherwise set. */
export type EnvOverrides = Record<string, string | undefined>;

export interface SpawnDaemonOptions {
  /** Extra environment (HOMEAGENT_*, NOTIFY_SOCKET, WATCHDOG_USEC, ...). */
  env?: EnvOverrides;
  /** Arguments after main.js; default `['run']`. */
  args?: string[];
  /** Use this data directory (kept at teardown; the caller owns it). Default: a fresh temporary one. */
  dataDir?: string;
}

export interface DaemonHandle {
  readonly child: ChildProcessByStdio<null, Readable, Readable>;
  readonly pid: number;
  readonly dataDir: string;
  readonly runtimeDir: string;
  readonly socketPath: string;
  readonly pidFile: string;
  readonly stateDb: string;
  /** stdout lines so far, parsed where they are JSON. */
  readonly logs: LogLine[];
  /** stderr text so far. */
  readonly stderr: () => string;
  /** The exit, once the process has ended. */
  readonly exit: Exit | undefined;
  /**
   * The first log line (already printed or still to come) matching; rejects on timeout or exit.
   * With `fromIndex`, only lines from that index of `logs` on count (`logs.length` taken before an
   * action: a line that action caused, not an earlier one of the same kind).
   */
  waitForLog(predicate: (line: LogLine) => boolean, timeoutMs: number, fromIndex?: number): Promise<LogLine>;
  /**
   * Whether a matching line is logged within `timeoutMs` (false instead of a rejection). Lines come
   * over stderr, so a line logged just before an answer over the socket may not be read yet: wait, do not look once.
   */
  sawLog(predicate: (line: LogLine) => boolean, timeoutMs?: number): Promise<boolean>;
  /** Waits for the "HomeAgent ready" line; rejects (with stderr) if the daemon exits first. */
  waitForReady(timeoutMs?: number): Promise<LogLine>;
  waitForExit(timeoutMs?: number): Promise<Exit>;
  kill(signal?: NodeJS.Signals): boolean;
  /** Runs homeagentctl against this daemon's data directory. */
  ctl(args: string[], options?: CtlOptions): Promise<CommandResult & { json: () => unknown }>;
  /** SIGKILL if still alive, wait for the exit; idempotent (teardown calls it too). */
  dispose(): Promise<void>;
}

export interface CtlOptions {
  env?: EnvOverrides;
  timeoutMs?: number;
}

/** True for the line the daemon prints once it takes requests. */
export const isReadyLine = (line: LogLine): boolean => line.msg?.startsWith('HomeAgent ready') === true;

let emptyConfigFile: string | undefined;

/**
 * An empty configuration file shared by every daemon of this test process, so a system-wide
 * /etc/homeagent/config.yaml cannot change what a test sees.
 */
export function emptyConfig(): string {
  if (emptyConfigFile === undefined || !existsSync(emptyConfigFile)) {
    const dir = mkdtempSync(join(tmpdir(), 'ha-config-'));
    emptyConfigFile = join(dir, 'empty.yaml');
    writeFileSync(emptyConfigFile, '# intentionally empty: defaults < environment only\n');
    const file = emptyConfigFile;
    process.once('exit', () => rmSync(dirname(file), { recursive: true, force: true }));
  }
  return emptyConfigFile;
}

/** Variables of the test runner that must not reach a daemon under test. */
const NOT_INHERITED =
  /^(HOMEAGENT_|NOTIFY_SOCKET$|WATCHDOG_|LISTEN_|STATE_DIRECTORY$|RUNTIME_DIRECTORY$|INVOCATION_ID$|NODE_OPTIONS$|_TAPJS_)/;

/**
 * The caller's environment without HomeAgent/systemd variables and without NODE_OPTIONS (a
 * developer's or tap's), plus `overrides`.
 */
export function cleanEnv(overrides: EnvOverrides = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && !NOT_INHERITED.test(name)) env[name] = value;
  }
  for (const [name, value] of Object.entries(overrides)) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  return env;
}

const ENV_BINARY = ['/usr/bin/env', '/bin/env'].find((file) => existsSync(file));

/**
 * The command line that runs `process.execPath ...args` uninstrumented. tap's process tracking
 * (@tapjs/processinfo) hooks every spawn of the test process and puts its loader into the child's
 * NODE_OPTIONS whatever env we pass; that doubles the daemon's start-up time and is not what
 * production runs. env(1) drops it and then execs node, so the child pid stays the node pid.
 */
export function nodeCommand(args: string[], env: NodeJS.ProcessEnv = {}): { command: string; args: string[] } {
  if (ENV_BINARY === undefined) return { command: process.execPath, args };
  // A test that sets NODE_OPTIONS itself gets exactly that value.
  const own = env.NODE_OPTIONS ? [`NODE_OPTIONS=${env.NODE_OPTIONS}`] : [];
  return { command: ENV_BINARY, args: ['-u', 'NODE_OPTIONS', ...own, process.execPath, ...args] };
}

/** A fresh temporary directory removed at teardown. */
export function tempDir(t: HelperTest, prefix = 'ha-it-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** `dir` when it exists (a test may check that a command does not create it), else the temp root. */
function existingDir(dir: string): string {
  return existsSync(dir) ? dir : tmpdir();
}

function assertBuilt(): void {
  for (const file of [MAIN_JS, CTL_JS]) {
    if (!existsSync(file)) throw new Error(`${file} is missing: run \`npm run build\` first (npm test does it)`);
  }
}

function collect(child: ChildProcessByStdio<null, Readable, Readable>, timeoutMs: number, what: string): Promise<CommandResult> {
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8');
  child.stdout.on('data', (s: string) => {
    stdout += s;
  });
  child.stderr.on('data', (s: string) => {
    stderr += s;
  });
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${what} did not finish within ${timeoutMs} ms; stdout: ${stdout}; stderr: ${stderr}`));
    }, timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolvePromise({ code, signal, stdout, stderr });
    });
  });
}

function withJson<T extends CommandResult>(result: T): T & { json: () => unknown } {
  return {
    ...result,
    json: () => {
      try {
        return JSON.parse(result.stdout);
      } catch (error) {
        throw new Error(`not JSON (${(error as Error).message}): ${result.stdout}\nstderr: ${result.stderr}`);
      }
    },
  };
}

/**
 * Runs homeagentctl with HOMEAGENT_DATA_DIR=`dataDir` (so it finds `<dataDir>/run/homeagent.sock`),
 * in `dataDir` as working directory so that a ./data/run socket of a development daemon is never
 * picked up.
 */
export function runCtl(dataDir: string, args: string[], options: CtlOptions = {}): Promise<CommandResult & { json: () => unknown }> {
  assertBuilt();
  const env = cleanEnv({ HOMEAGENT_DATA_DIR: dataDir, ...options.env });
  const command = nodeCommand([CTL_JS, ...args], env);
  const child = spawn(command.command, command.args, { cwd: existingDir(dataDir), env, stdio: ['ignore', 'pipe', 'pipe'] });
  return collect(child, options.timeoutMs ?? 30_000, `homeagentctl ${args.join(' ')}`).then(withJson);
}

/**
 * Runs a one-shot `homeagent` command (`restore FILE`, `version`, or `run` when the test expects it
 * to exit at once, e.g. on invalid configuration) and collects its output.
 */
export function runHomeagent(args: string[], options: { dataDir: string; env?: EnvOverrides; timeoutMs?: number }): Promise<CommandResult> {
  assertBuilt();
  const env = cleanEnv({ HOMEAGENT_CONFIG: emptyConfig(), HOMEAGENT_DATA_DIR: options.dataDir, ...options.env });
  const command = nodeCommand([MAIN_JS, ...args], env);
  const child = spawn(command.command, command.args, { cwd: existingDir(options.dataDir), env, stdio: ['ignore', 'pipe', 'pipe'] });
  return collect(child, options.timeoutMs ?? 30_000, `homeagent ${args.join(' ')}`);
}

/** Starts `node dist/src/main.js run` (or `args`) and returns a handle; see {@link DaemonHandle}. */
export function spawnDaemon(t: HelperTest, options: SpawnDaemonOptions = {}): DaemonHandle {
  assertBuilt();
  const dataDir = options.dataDir ?? tempDir(t, 'ha-daemon-');
  mkdirSync(dataDir, { recursive: true });
  // Port 0: daemons of parallel tests must not fight over the web server's 8080.
  const env = cleanEnv({ HOMEAGENT_CONFIG: emptyConfig(), HOMEAGENT_DATA_DIR: dataDir, HOMEAGENT_PLUGIN_WEBUI_PORT: '0', ...options.env });
  const runtimeDir = env.HOMEAGENT_RUNTIME_DIR ? resolve(dataDir, env.HOMEAGENT_RUNTIME_DIR) : join(dataDir, 'run');
  const socketPath = env.HOMEAGENT_PLUGIN_CLI_SOCKET_PATH || join(runtimeDir, 'homeagent.sock');

  const command = nodeCommand([MAIN_JS, ...(options.args ?? ['run'])], env);
  const child = spawn(command.command, command.args, { cwd: dataDir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  if (child.pid === undefined) throw new Error('could not spawn the daemon');

  const logs: LogLine[] = [];
  let stderr = '';
  let exit: Exit | undefined;
  let spawnError: Error | undefined;
  const waiters = new Set<() => void>();
  const wake = () => {
    for (const waiter of [...waiters]) waiter();
  };

  const stdoutLines = createInterface({ input: child.stdout });
  stdoutLines.on('line', (text) => {
    let json: LogRecord | undefined;
    try {
      const parsed: unknown = JSON.parse(text);
      if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) json = parsed as LogRecord;
    } catch {
      // not JSON: kept as text
    }
    logs.push({ text, json, msg: typeof json?.msg === 'string' ? json.msg : undefined });
    wake();
  });
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (s: string) => {
    stderr += s;
  });
  // 'close' (not 'exit') so that every stdout line has been read when waiters see the exit.
  const closed = new Promise<Exit>((resolvePromise) => {
    child.once('close', (code, signal) => {
      exit = { code, signal };
      wake();
      resolvePromise(exit);
    });
    child.once('error', (error) => {
      spawnError = error;
      exit = { code: null, signal: null };
      wake();
      resolvePromise(exit);
    });
  });

  const describe = () => {
    const tail = logs
      .slice(-20)
      .map((l) => l.text)
      .join('\n');
    return `exit ${JSON.stringify(exit ?? null)}${spawnError ? ` (${spawnError.message})` : ''}\nstderr: ${stderr}\nlast log lines:\n${tail}`;
  };

  let disposed: Promise<void> | undefined;
  const handle: DaemonHandle = {
    child,
    pid: child.pid,
    dataDir,
    runtimeDir,
    socketPath,
    pidFile: join(dataDir, 'homeagent.pid'),
    stateDb: join(dataDir, 'state.db'),
    logs,
    stderr: () => stderr,
    get exit() {
      return exit;
    },
    ...daemonWaits({ logs, exit: () => exit, describe, waiters }),
    kill(signal = 'SIGTERM') {
      return exit === undefined && child.kill(signal);
    },
    ctl(args, ctlOptions = {}) {
      return runCtl(dataDir, args, {
        ...ctlOptions,
        env: { ...(env.HOMEAGENT_RUNTIME_DIR ? { HOMEAGENT_RUNTIME_DIR: runtimeDir } : {}), ...ctlOptions.env },
      });
    },
    dispose() {
      disposed ??= (async () => {
        if (exit === undefined) {
          child.kill('SIGKILL');
          await closed;
        }
        stdoutLines.close();
      })();
      return disposed;
    },
  };
  t.teardown(() => handle.dispose());
  return handle;
}

/**
 * Waiting on a daemon's log lines and its exit, for the spawned and the in-process handle alike:
 * each wait is checked whenever a line or the exit arrives (`waiters`), fails with `describe()`
 * when it times out, and, unless it waits for the exit, when the daemon exits first.
 */
export function daemonWaits(o: {
  logs: readonly LogLine[];
  exit: () => Exit | undefined;
  describe: () => string;
  waiters: Set<() => void>;
}): Pick<DaemonHandle, 'waitForLog' | 'sawLog' | 'waitForReady' | 'waitForExit'> {
  const until = <T>(ready: () => T | undefined, timeoutMs: number, what: string, failOnExit: boolean): Promise<T> =>
    new Promise((resolvePromise, reject) => {
      const check = () => {
        const value = ready();
        if (value !== undefined) {
          finish();
          resolvePromise(value);
        } else if (failOnExit && o.exit()) {
          finish();
          reject(new Error(`the daemon exited while waiting for ${what}: ${o.describe()}`));
        }
      };
      const timer = setTimeout(() => {
        finish();
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}: ${o.describe()}`));
      }, timeoutMs);
      const finish = () => {
        clearTimeout(timer);
        o.waiters.delete(check);
      };
      o.waiters.add(check);
      check();
    });
  const waitForLog = (predicate: (line: LogLine) => boolean, timeoutMs: number, fromIndex = 0) =>
    until(
      () => {
        for (let i = fromIndex; i < o.logs.length; i++) {
          const line = o.logs[i] as LogLine;
          if (predicate(line)) return line;
        }
        return undefined;
      },
      timeoutMs,
      'a matching log line',
      true,
    );
  return {
    waitForLog,
    sawLog: (predicate, timeoutMs = 5000) =>
      waitForLog(predicate, timeoutMs).then(
        () => true,
        () => false,
      ),
    waitForReady: (timeoutMs = 20_000) => until(() => o.logs.find(isReadyLine), timeoutMs, 'the "HomeAgent ready" line', true),
    waitForExit: (timeoutMs = 15_000) => until(() => o.exit(), timeoutMs, 'the daemon to exit', false),
  };
}

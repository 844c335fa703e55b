/**
 * Builds the daemon inside the test process (`createDaemon` of the built dist/src/daemon.js), with
 * the same handle shape as {@link spawnDaemon} so that converting a test is mostly swapping the
 * helper. Use it where the process boundary is not what the test is about: it saves the node
 * start-up and module loading of every daemon (and of every restart), and its log lines arrive
 * synchronously. Keep spawnDaemon for signals, sd_notify, crashes, restarts after SIGKILL and exit
 * codes. Plugins that run out of process are still child processes; homeagentctl is still run as
 * the real binary against the daemon's socket.
 *
 * The environment given to the daemon is built like spawnDaemon's (the caller's without HOMEAGENT_*
 * and systemd variables, an empty configuration file, web port 0, plus `env`), but it is passed to
 * createDaemon: process.env is never changed. Build first (`npm run build`; `npm test` does it).
 */
import { existsSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Daemon, DaemonOptions } from '../../src/daemon.js';
import {
  type CtlOptions,
  cleanEnv,
  daemonWaits,
  type EnvOverrides,
  type Exit,
  emptyConfig,
  type HelperTest,
  type LogLine,
  type LogRecord,
  REPO_ROOT,
  runCtl,
  tempDir,
} from './daemon.js';

const DAEMON_JS = join(REPO_ROOT, 'dist', 'src', 'daemon.js');

/** The exit codes main.ts would give (src/shared/exit-codes.ts), for tests that compare them. */
const EXIT_OK = 0;
const EXIT_FAILURE = 1;
const EXIT_SOFTWARE = 70;
const EXIT_CONFIG = 78;

export interface StartDaemonOptions {
  /** Extra environment (HOMEAGENT_*), read by the configuration loader only. */
  env?: EnvOverrides;
  /** `--config FILE`. */
  configFile?: string;
  /** Use this data directory (kept at teardown; the caller owns it). Default: a fresh temporary one. */
  dataDir?: string;
}

/** What spawnDaemon's handle offers, minus the child process; plus the daemon itself. */
export interface InProcessDaemonHandle {
  readonly daemon: Daemon;
  /** This process: the daemon reports it as its pid (`status`). */
  readonly pid: number;
  readonly dataDir: string;
  readonly runtimeDir: string;
  readonly socketPath: string;
  readonly pidFile: string;
  readonly stateDb: string;
  /** Log lines so far, parsed (the daemon writes JSON lines). */
  readonly logs: LogLine[];
  /** What main.ts would have written to stderr about a failed start ('' otherwise). */
  readonly stderr: () => string;
  /** The exit main.ts would report, once the daemon has closed or failed to start. */
  readonly exit: Exit | undefined;
  /** As spawnDaemon's: with `fromIndex`, only lines from that index of `logs` on. */
  waitForLog(predicate: (line: LogLine) => boolean, timeoutMs: number, fromIndex?: number): Promise<LogLine>;
  sawLog(predicate: (line: LogLine) => boolean, timeoutMs?: number): Promise<boolean>;
  waitForReady(timeoutMs?: number): Promise<LogLine>;
  waitForExit(timeoutMs?: number): Promise<Exit>;
  /**
   * SIGTERM/SIGINT close the daemon as main.ts does on that signal. There is no process to kill:
   * any other signal throws (use spawnDaemon for SIGKILL and crash tests).
   */
  kill(signal?: NodeJS.Signals): boolean;
  ctl(args: string[], options?: CtlOptions): ReturnType<typeof runCtl>;
  /** Closes the daemon if it is still open and waits for it; idempotent (teardown calls it too). */
  dispose(): Promise<void>;
}

/**
 * tap's process tracking (@tapjs/processinfo) adds its --import to NODE_OPTIONS (and its
 * _TAPJS_PROCESSINFO_* variables) of every child of the test process, whatever env the spawner
 * passed. The daemon's own children (process plugins, the Lua and cmd helpers) would then start
 * instrumented: slower and with more memory than the heap limit of a fault test allows, and not
 * what production runs. spawnDaemon avoids it with env(1); here a listener of the same hook, added
 * after tap's and so run after it, takes tap's additions out again. The hook is the
 * process-on-spawn instance tap's processinfo uses, found through it so that it is the same one.
 */
let uninstrumented = false;
function spawnChildrenUninstrumented(): void {
  if (uninstrumented) return;
  uninstrumented = true;
  let hook: { addListener(fn: (options: { env: NodeJS.ProcessEnv }) => void): void };
  try {
    hook = createRequire(import.meta.resolve('@tapjs/processinfo'))('process-on-spawn');
  } catch {
    return; // not under tap: nothing adds anything
  }
  hook.addListener((options) => {
    const env = { ...options.env };
    for (const name of Object.keys(env)) if (name.startsWith('_TAPJS_PROCESSINFO_')) delete env[name];
    const kept = (env.NODE_OPTIONS ?? '').split(/\s+/).filter((option) => option !== '' && !option.includes('@tapjs/processinfo'));
    if (kept.length > 0) env.NODE_OPTIONS = kept.join(' ');
    else delete env.NODE_OPTIONS;
    options.env = env;
  });
}

let loaded: Promise<typeof import('../../src/daemon.js')> | undefined;

function daemonModule(): Promise<typeof import('../../src/daemon.js')> {
  if (!existsSync(DAEMON_JS)) throw new Error(`${DAEMON_JS} is missing: run \`npm run build\` first (npm test does it)`);
  loaded ??= import(pathToFileURL(DAEMON_JS).href) as Promise<typeof import('../../src/daemon.js')>;
  return loaded;
}

/** Creates and starts a daemon in this process; see {@link InProcessDaemonHandle}. */
export async function startDaemon(t: HelperTest, options: StartDaemonOptions = {}): Promise<InProcessDaemonHandle> {
  const { createDaemon } = await daemonModule();
  spawnChildrenUninstrumented();
  const dataDir = options.dataDir ?? tempDir(t, 'ha-daemon-');
  mkdirSync(dataDir, { recursive: true });
  const env = cleanEnv({ HOMEAGENT_CONFIG: emptyConfig(), HOMEAGENT_DATA_DIR: dataDir, HOMEAGENT_PLUGIN_WEBUI_PORT: '0', ...options.env });
  const runtimeDir = env.HOMEAGENT_RUNTIME_DIR ? resolve(dataDir, env.HOMEAGENT_RUNTIME_DIR) : join(dataDir, 'run');

  const logs: LogLine[] = [];
  let stderr = '';
  let exit: Exit | undefined;
  const waiters = new Set<() => void>();
  const wake = () => {
    for (const waiter of [...waiters]) waiter();
  };
  // pino writes one JSON line per call; a call may still carry several (the recent-lines tee).
  const destination = {
    write(chunk: string) {
      for (const text of chunk.split('\n')) {
        if (text === '') continue;
        let json: LogRecord | undefined;
        try {
          const parsed: unknown = JSON.parse(text);
          if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) json = parsed as LogRecord;
        } catch {
          // not JSON: kept as text
        }
        logs.push({ text, json, msg: typeof json?.msg === 'string' ? json.msg : undefined });
      }
      wake();
    },
  };
  const daemonOptions: DaemonOptions = { env, cwd: dataDir, logDestination: destination };
  if (options.configFile !== undefined) daemonOptions.configFile = options.configFile;
  const daemon = createDaemon(daemonOptions);
  const socketPath = env.HOMEAGENT_PLUGIN_CLI_SOCKET_PATH || join(runtimeDir, 'homeagent.sock');

  // The first outcome stands: a close after a failed start does not turn exit 78 into 0.
  const finished = (code: number) => {
    exit ??= { code, signal: null };
    wake();
  };
  // What main.ts does with a failed start: the problem on stderr, 78 for configuration, else 70.
  daemon.ready.catch((error: { code?: string; message?: string; details?: { problems?: string[] } }) => {
    if (exit !== undefined || closing !== undefined) return;
    if (error.code === 'HA_ERR_CONFIG_INVALID') {
      stderr += `homeagent: refusing to start, the configuration is invalid (${error.code}):\n`;
      for (const problem of error.details?.problems ?? [error.message ?? '']) stderr += `  ${problem}\n`;
      finished(EXIT_CONFIG);
    } else {
      stderr += `homeagent: start-up failed: ${error.message ?? String(error)}\n`;
      finished(EXIT_SOFTWARE);
    }
  });
  let closing: Promise<void> | undefined;
  const close = (reason: string) => {
    closing ??= daemon.close(reason).then((result) => finished(result.clean ? EXIT_OK : EXIT_FAILURE));
    return closing;
  };

  const describe = () => {
    const tail = logs
      .slice(-20)
      .map((l) => l.text)
      .join('\n');
    return `exit ${JSON.stringify(exit ?? null)}\nstderr: ${stderr}\nlast log lines:\n${tail}`;
  };

  const handle: InProcessDaemonHandle = {
    daemon,
    pid: process.pid,
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
      if (signal !== 'SIGTERM' && signal !== 'SIGINT') throw new Error(`an in-process daemon cannot get ${signal}: use spawnDaemon`);
      if (exit !== undefined || closing !== undefined) return false;
      void close(signal);
      return true;
    },
    ctl(args, ctlOptions = {}) {
      return runCtl(dataDir, args, {
        ...ctlOptions,
        env: { ...(env.HOMEAGENT_RUNTIME_DIR ? { HOMEAGENT_RUNTIME_DIR: runtimeDir } : {}), ...ctlOptions.env },
      });
    },
    async dispose() {
      await close('dispose');
    },
  };
  t.teardown(() => handle.dispose());
  return handle;
}

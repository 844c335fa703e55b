#!/usr/bin/env node
/**
 * The `homeagent` executable: the command line, signals and exit codes. The daemon itself is
 * composed by src/daemon.ts (`createDaemon`); `run` starts it, stops it on SIGTERM/SIGINT, and
 * maps its outcome to an exit code. Imported by nothing.
 *
 *   homeagent run [--config FILE]        run the daemon
 *   homeagent restore FILE [--config F]  replace the state database by a backup (daemon stopped)
 *   homeagent config-migrate [--config F] [--dry-run]  write the file at this release's config version
 *   homeagent memory-eval --locomo DIR [...]  measure memory recall on LoCoMo-format conversations
 *   homeagent intent-eval --tests DIR [...]   measure the local intent engine
 *   homeagent tracker-apply|tracker-recover --root DIR --state-dir DIR  (root, from systemd)
 *   homeagent version | help
 */
import { parseArgs } from 'node:util';
import type { Daemon, DaemonConfig, StopResult } from './daemon.js';
import { consoleDestination } from './log/console-format.js';
import { systemClock } from './shared/clock.js';
import { describeError, HomeAgentError, isHomeAgentError } from './shared/errors.js';
import { EXIT_CODES } from './shared/exit-codes.js';
import { VERSION } from './shared/version.js';
import { runningOwner } from './supervisor/pid-lock.js';

const USAGE = `usage: homeagent <command>

  run [--config FILE]           run the daemon (configuration: defaults < FILE, $HOMEAGENT_CONFIG
                                or /etc/homeagent/config.yaml < HOMEAGENT_* environment)
  restore FILE [--config FILE]  replace the state database by a backup; the daemon must be stopped
  config-migrate [--config FILE] [--dry-run]
                                write the configuration file at this release's version (a backup is kept)
  memory-eval --locomo DIR | --household DIR
                                measure memory recall on LoCoMo-format conversations or household logs (--help)
  intent-eval --tests DIR [--tests DIR ...] [--noise 0,0.05] [--json] [--failures N]
                                measure the local intent engine on Home Assistant-format intent tests
  tracker-apply|tracker-recover --root DIR --state-dir DIR
                                commit or roll back the plugins overlay (run as root by systemd)
  version                       print the version
  help                          print this text`;

async function main(argv: string[]): Promise<number> {
  // Each command loads only what it runs: the daemon's few hundred modules cost seconds on a Pi,
  // and tracker-apply runs before every start of the service. Offline tools with options of
  // their own; they never touch the daemon's data.
  if (argv[0] === 'memory-eval') return (await import('./eval/memory/memory-eval-command.js')).runMemoryEvalCommand(argv.slice(1));
  if (argv[0] === 'intent-eval') return (await import('./eval/intent/intent-eval-command.js')).runIntentEvalCommand(argv.slice(1));
  if (argv[0] === 'config-migrate') return (await import('./config/config-migrate-command.js')).runConfigMigrateCommand(argv.slice(1));
  // The privileged helpers of the plugins overlay, run as root by systemd units (docs/deploy.md).
  if (argv[0] === 'tracker-apply' || argv[0] === 'tracker-recover')
    return (await import('./tracker/tracker-helper.js')).runTrackerHelper(argv);
  let parsed: ReturnType<typeof parseCommandLine>;
  try {
    parsed = parseCommandLine(argv);
  } catch (error) {
    process.stderr.write(`homeagent: ${describeError(error)}\n${USAGE}\n`);
    return EXIT_CODES.USAGE;
  }
  const { command, file, config } = parsed;
  switch (command) {
    case 'run':
      return run(config);
    case 'restore':
      return await restore(file, config);
    case 'version':
      process.stdout.write(`homeagent ${VERSION}\n`);
      return EXIT_CODES.OK;
    default:
      process.stdout.write(`${USAGE}\n`);
      return command === 'help' ? EXIT_CODES.OK : EXIT_CODES.USAGE;
  }
}

function parseCommandLine(argv: string[]) {
  const { values, positionals } = parseArgs({
    args: argv,
    options: { config: { type: 'string', short: 'c' }, help: { type: 'boolean', short: 'h' } },
    allowPositionals: true,
  });
  const command = values.help ? 'help' : (positionals[0] ?? 'help');
  if (!['run', 'restore', 'version', 'help'].includes(command)) throw new Error(`unknown command ${command}`);
  if (command === 'restore' && positionals.length !== 2) throw new Error('restore needs exactly one backup file');
  if (command !== 'restore' && positionals.length > 1) throw new Error(`unexpected argument ${positionals[1]}`);
  return { command, file: positionals[1], config: values.config };
}

/** Loads the configuration or prints one line per problem; undefined means "exit 78". */
async function loadOrReport(file: string | undefined): Promise<DaemonConfig | undefined> {
  const { loadDaemonConfig } = await import('./daemon.js');
  try {
    return loadDaemonConfig({ ...(file !== undefined && { configFile: file }), env: process.env, cwd: process.cwd() });
  } catch (error) {
    if (!isHomeAgentError(error)) throw error;
    reportConfigProblems(error);
    return undefined;
  }
}

/** One line per configuration problem on stderr (the terminal, or the journal under systemd). */
function reportConfigProblems(error: HomeAgentError): void {
  const problems = (error.details?.problems as string[] | undefined) ?? [error.message];
  process.stderr.write(`homeagent: refusing to start, the configuration is invalid (${error.code}):\n`);
  for (const problem of problems) process.stderr.write(`  ${problem}\n`);
}

/** `homeagent run`: the daemon of src/daemon.ts under this process's signals and exit codes. */
async function run(configFile: string | undefined): Promise<number> {
  const config = await loadOrReport(configFile);
  if (!config) return EXIT_CODES.CONFIG;
  const { createDaemon } = await import('./daemon.js');
  let daemon: Daemon;
  // Readable lines on a terminal, JSON lines for the journal and pipes (core.log.format).
  const logDestination = consoleDestination(config.loaded.config.core.log.format);
  try {
    daemon = createDaemon({ config, env: process.env, cwd: process.cwd(), ...(logDestination && { logDestination }) });
  } catch (error) {
    process.stderr.write(`homeagent: ${describeError(error)}\n`);
    return isHomeAgentError(error, 'HA_ERR_DAEMON_ALREADY_RUNNING') ? EXIT_CODES.TEMP_FAIL : EXIT_CODES.SOFTWARE;
  }
  const { log } = daemon;

  // Shutdown: the first SIGTERM/SIGINT stops cleanly (giving up a start still running), a second
  // one forces the exit.
  let stopping: Promise<StopResult> | undefined;
  const shutdownRequested = new Promise<string>((resolve) => {
    const onSignal = (signal: NodeJS.Signals) => {
      if (stopping) {
        log.warn({ signal }, 'second signal: exiting without waiting for services');
        process.exit(EXIT_CODES.FAILURE);
      }
      log.info({ signal }, 'shutdown requested');
      stopping = daemon.close(signal);
      resolve(signal);
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  });
  process.on('uncaughtException', (error) => {
    log.fatal({ err: error }, 'uncaught exception: exiting so that systemd restarts HomeAgent');
    process.exit(EXIT_CODES.SOFTWARE);
  });
  process.on('unhandledRejection', (reason) => {
    log.fatal({ err: reason }, 'unhandled promise rejection: exiting so that systemd restarts HomeAgent');
    process.exit(EXIT_CODES.SOFTWARE);
  });

  try {
    await daemon.ready;
  } catch (error) {
    // The daemon logged it, told systemd and released the lock; a start given up for a signal stops below.
    if (!stopping) {
      if (isHomeAgentError(error, 'HA_ERR_CONFIG_INVALID')) {
        reportConfigProblems(error);
        return EXIT_CODES.CONFIG;
      }
      process.stderr.write(`homeagent: start-up failed: ${describeError(error)}\n`);
      return EXIT_CODES.SOFTWARE;
    }
  }

  await shutdownRequested;
  // A service that ignores its own deadline must not keep the process alive.
  setTimeout(() => {
    log.error('shutdown took too long; exiting');
    process.exit(EXIT_CODES.FAILURE);
  }, daemon.stopTimeoutMs() + 1000).unref();
  const result = await (stopping ?? daemon.close());
  return result.clean ? EXIT_CODES.OK : EXIT_CODES.FAILURE;
}

async function restore(file: string | undefined, configFile: string | undefined): Promise<number> {
  const boot = await loadOrReport(configFile);
  if (!boot || file === undefined) return EXIT_CODES.CONFIG;
  const owner = runningOwner(boot.paths.pidFile);
  if (owner !== undefined) {
    process.stderr.write(`homeagent: the daemon is running (pid ${owner}); stop it first (systemctl stop homeagent)\n`);
    return EXIT_CODES.TEMP_FAIL;
  }
  const { restoreDatabase } = await import('./store/restore.js');
  try {
    const result = restoreDatabase(file, boot.paths.stateDb, systemClock);
    process.stdout.write(
      `restored ${result.restored} from ${file}${result.previousMovedTo ? `; the previous database is kept at ${result.previousMovedTo}` : ''}\n`,
    );
    return EXIT_CODES.OK;
  } catch (error) {
    process.stderr.write(`homeagent: ${describeError(error)}\n`);
    return error instanceof HomeAgentError ? EXIT_CODES.DATA_ERROR : EXIT_CODES.SOFTWARE;
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`homeagent: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(EXIT_CODES.SOFTWARE);
  },
);

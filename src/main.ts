#!/usr/bin/env node
/**
 * The `homeagent` executable: the command line, signals and exit codes. The daemon itself is
 * composed by src/daemon.ts (`createDaemon`); `run` starts it, stops it on SIGTERM/SIGINT, and
 * maps its outcome to an exit code. Imported by nothing.
 *
 *   homeagent run [--config FILE]        run the daemon
 *   homeagent restore FILE [--db NAME] [--config F]  replace a database (default state) by a backup (daemon stopped)
 *   homeagent config-migrate [--config F] [--dry-run]  write the file at this release's config version
 *   homeagent memory-eval --locomo DIR [...]  measure memory recall on LoCoMo-format conversations
 *   homeagent intent-eval --tests DIR [...]   measure the local intent engine
 *   homeagent tracker-apply|tracker-recover --root DIR --state-dir DIR  (root, from systemd)
 *   homeagent version | help
 */
import { parseArgs } from 'node:util';
import { cliLanguage } from './cli/cli-language.js';
import { formatUsage, type UsageLine } from './cli/command-module.js';
import type { Daemon, DaemonConfig, StopResult } from './daemon.js';
import { consoleDestination } from './log/console-format.js';
import { systemClock } from './shared/clock.js';
import { describeError, HomeAgentError, isHomeAgentError } from './shared/errors.js';
import { EXIT_CODES } from './shared/exit-codes.js';
import type { Language } from './shared/language.js';
import { VERSION } from './shared/version.js';
import { runningOwner } from './supervisor/pid-lock.js';

/**
 * `homeagent help` in each language: the synopses are what one types, the same in both; the
 * text is the terminal's (LC_ALL, LC_MESSAGES, LANG, as homeagentctl reads it).
 */
const USAGE_LINES: readonly UsageLine[] = [
  {
    synopsis: 'run [--config FILE]',
    about: 'run the daemon (configuration: defaults < FILE, $HOMEAGENT_CONFIG\nor /etc/homeagent/config.yaml < HOMEAGENT_* environment)',
    zh: '运行守护进程（配置：默认值 < FILE、$HOMEAGENT_CONFIG\n或 /etc/homeagent/config.yaml < HOMEAGENT_* 环境变量）',
  },
  {
    synopsis: 'restore FILE [--db NAME] [--config FILE]',
    about: "replace a database by a backup (default state; a plugin's as\n<plugin>.<name>, e.g. seq.sequences); the daemon must be stopped",
    zh: '用备份替换一个数据库（默认 state；插件的写作 <插件>.<名称>，\n如 seq.sequences）；守护进程须已停止',
  },
  {
    synopsis: 'config-migrate [--config FILE] [--dry-run]',
    about: "write the configuration file at this release's version (a backup is kept)",
    zh: '把配置文件改写为本版本的格式（保留一份备份）',
  },
  {
    synopsis: 'memory-eval --locomo DIR | --household DIR',
    about: 'measure memory recall on LoCoMo-format conversations or household logs (--help)',
    zh: '在 LoCoMo 格式的对话或家庭日志上测量记忆召回（--help）',
  },
  {
    synopsis: 'intent-eval --tests DIR [--tests DIR ...] [--noise 0,0.05] [--json] [--failures N]',
    about: 'measure the local intent engine on Home Assistant-format intent tests',
    zh: '在 Home Assistant 格式的意图测试上测量本地意图引擎',
  },
  {
    synopsis: 'tracker-apply|tracker-recover --root DIR --state-dir DIR',
    about: 'commit or roll back the plugins overlay (run as root by systemd)',
    zh: '提交或回滚插件覆盖层（由 systemd 以 root 运行）',
  },
  { synopsis: 'version', about: 'print the version', zh: '显示版本' },
  { synopsis: 'help', about: 'print this text', zh: '显示本说明' },
];

/** The width of `homeagent help`'s first column (wider than homeagentctl's: its synopses are longer). */
const USAGE_COLUMN = 32;

function usage(language: Language): string {
  return `${language === 'zh' ? '用法：' : 'usage: '}homeagent <command>\n\n${formatUsage([{ usage: USAGE_LINES }], language, USAGE_COLUMN)}`;
}

/** A command line that does not fit, in both languages; the terminal's one is printed. */
class CommandLineError extends Error {
  constructor(
    message: string,
    readonly zh: string,
  ) {
    super(message);
  }
}

/** The refusal in `language` (parseArgs' own, an unknown option, has no Chinese text). */
function refusal(error: unknown, language: Language): string {
  return language === 'zh' && error instanceof CommandLineError ? error.zh : describeError(error);
}

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
  const language = cliLanguage(process.env);
  let parsed: ReturnType<typeof parseCommandLine>;
  try {
    parsed = parseCommandLine(argv);
  } catch (error) {
    process.stderr.write(`homeagent: ${refusal(error, language)}\n${usage(language)}\n`);
    return EXIT_CODES.USAGE;
  }
  const { command, file, config } = parsed;
  switch (command) {
    case 'run':
      return run(config);
    case 'restore':
      return await restore(file, config, parsed.db ?? 'state', language);
    case 'version':
      process.stdout.write(`homeagent ${VERSION}\n`);
      return EXIT_CODES.OK;
    default:
      process.stdout.write(`${usage(language)}\n`);
      return command === 'help' ? EXIT_CODES.OK : EXIT_CODES.USAGE;
  }
}

function parseCommandLine(argv: string[]) {
  const { values, positionals } = parseArgs({
    args: argv,
    options: { config: { type: 'string', short: 'c' }, db: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    allowPositionals: true,
  });
  const command = values.help ? 'help' : (positionals[0] ?? 'help');
  if (!['run', 'restore', 'version', 'help'].includes(command))
    throw new CommandLineError(`unknown command ${command}`, `未知命令 ${command}`);
  if (command === 'restore' && positionals.length !== 2)
    throw new CommandLineError('restore needs exactly one backup file', 'restore 需要恰好一个备份文件');
  if (command !== 'restore' && positionals.length > 1)
    throw new CommandLineError(`unexpected argument ${positionals[1]}`, `多余的参数 ${positionals[1]}`);
  if (command !== 'restore' && values.db !== undefined) throw new CommandLineError('--db belongs to restore', '--db 只用于 restore');
  return { command, file: positionals[1], config: values.config, db: values.db };
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

async function restore(file: string | undefined, configFile: string | undefined, database: string, language: Language): Promise<number> {
  const boot = await loadOrReport(configFile);
  if (!boot || file === undefined) return EXIT_CODES.CONFIG;
  const owner = runningOwner(boot.paths.pidFile);
  if (owner !== undefined) {
    process.stderr.write(`homeagent: the daemon is running (pid ${owner}); stop it first (systemctl stop homeagent)\n`);
    return EXIT_CODES.TEMP_FAIL;
  }
  const { restoreDatabase, restoreTarget } = await import('./store/restore.js');
  try {
    const target = restoreTarget(boot.paths, database);
    const result = restoreDatabase(file, target.file, systemClock, { component: target.component });
    const kept = result.previousMovedTo;
    process.stdout.write(
      language === 'zh'
        ? `已从 ${file} 恢复 ${result.restored}${kept ? `；原数据库保留在 ${kept}` : ''}\n`
        : `restored ${result.restored} from ${file}${kept ? `; the previous database is kept at ${kept}` : ''}\n`,
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

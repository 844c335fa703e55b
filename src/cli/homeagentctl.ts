#!/usr/bin/env node
/**
 * homeagentctl: the command line for a running HomeAgent, over its Unix socket. Readable text by
 * default, `--json` for scripts. Exit codes: 0 ok, 1 the daemon answered with an error (or health
 * failed), 64 usage, 69 the daemon is not running.
 */
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { HealthAnswer } from '../api/health.js';
import type { PluginStatus } from '../api/plugins.js';
import { describeError, isHomeAgentError } from '../shared/errors.js';
import { EXIT_CODES } from '../shared/exit-codes.js';
import { VERSION } from '../shared/version.js';
import { runChat } from './chat.js';
import { AGENT_TURN_TIMEOUT_MS, type CataloguedCommand, type CommandRunner, formatUsage, type ParsedFlags } from './command-module.js';
import { AGENT_COMMANDS, ALL_COMMANDS, DAEMON_COMMANDS, HOME_COMMANDS } from './commands.js';
import {
  formatHistory,
  formatPlugin,
  formatPluginHealth,
  formatPluginList,
  formatSetting,
  formatSettingList,
  formatStatus,
} from './format.js';
import { formatHealthAnswer, healthExitCode } from './health.js';
import {
  KB_LONG_COMMANDS,
  KB_LONG_TIMEOUT_MS,
  KB_OPTIONS,
  type KbCommand,
  type KbFlags,
  kbFlagsUsed,
  parseKbCommand,
  runKb,
} from './kb.js';
import { MEMORY_OPTIONS, type MemoryCommand, type MemoryFlags, memoryFlagsUsed, parseMemoryCommand, runMemory } from './memory.js';
import { runModels } from './models.js';
import { findSocket, RemoteError, RpcClient } from './rpc-client.js';

const USAGE = `usage: homeagentctl [--socket PATH] [--json] [--timeout MS] <command>

  status                    what the daemon is doing: services, plugins, databases, notices
  health                    each component's status (ok, degraded, failed), the worst first, and the
                            plugin change on trial (exit 1 when something failed, 0 when only degraded)
${formatUsage(DAEMON_COMMANDS)}
  config list [PREFIX]      settings with their values and sources
  config get KEY            one setting with its description, type, bounds and source
  config set KEY VALUE      change a setting (stored at once; some need a restart)
  config reset KEY          drop the run-time change; the file, environment or default applies
  config history [KEY]      recent setting changes
  plugins [list]            plugins with kind, origin, state (quarantined ones with the reason)
  plugins enable|disable NAME
                            turn a plugin on or off (remembered across restarts)
  plugins reload [NAME]     hot-reload one plugin, or all and pick up new folders
  plugins install FILE      install or upgrade a plugin from a .tgz or .zip archive
  plugins uninstall NAME    remove an installed plugin
  plugins health [NAME]     health ping of each plugin (exit 1 when one fails)
  backup [FILE] [--db NAME] online backup of a database (default: state, into <data>/backups)
  memory search TEXT [--limit N]
                            what memory recalls for TEXT (as the prompts get it), with sources
  memory stats              what memory holds: counts, embedder, maintenance, database size
  memory entity NAME        an entity with its facts, their history and where each came from
  memory forget --entity NAME [--hard [--yes]] | --event ID | --document ID
                            forget an entity (its facts end, kept as history; --hard deletes
                            them for good), a context event or a document
  memory export [--out FILE]
                            everything in memory as JSON Lines, to stdout or atomically to FILE
  kb tree [CATEGORY] [--depth N] [--items]
                            the knowledge library's categories with entry counts (--items: entries too)
  kb search TEXT [--category C] [--limit N]
                            search the knowledge library; hits with scores and snippets
  kb add NAME (--file F | --content TEXT | stdin) [--overwrite]
                            write an entry, e.g. recipes/soup/tomato_soup
  kb rm NAME                delete an entry and its attachments
  kb import DIR [--category C]
                            import the markdown and text files of DIR (read by the daemon)
  kb reindex                pick up edits made in <data>/knowledge
  kb stats                  entries, categories, media, index and vector state
  kb token                  the kbtree service's token and address
${formatUsage(HOME_COMMANDS)}
  models list|install SRC   local models (embedders, parsers) in <data>/models, without the daemon (models --help)
  chat [-m TEXT]            talk to the agent: one message with -m (or piped on stdin),
                            otherwise a conversation on the terminal
${formatUsage(AGENT_COMMANDS)}
  version                   client and daemon versions

The socket is --socket, $HOMEAGENT_SOCKET, or found under $HOMEAGENT_RUNTIME_DIR,
$HOMEAGENT_DATA_DIR/run, /run/homeagent or ./data/run.`;

class UsageError extends Error {}

/** Every catalogued command's flags, for parseArgs (commands that share a flag declare it alike). */
const COMMAND_OPTIONS = Object.fromEntries(ALL_COMMANDS.flatMap((c) => Object.entries(c.options)));
/** Their names in catalogue order, which decides the one named when several are given with the wrong command. */
const COMMAND_FLAGS = Object.keys(COMMAND_OPTIONS);

interface Invocation {
  method: string;
  params: Record<string, unknown>;
  render: (result: unknown) => string;
  exitCode?: (result: unknown) => number;
}

function plan(
  args: string[],
  options: { db?: string | undefined; memory: MemoryFlags; kb: KbFlags; modules: ParsedFlags },
):
  | Invocation
  | { memory: MemoryCommand }
  | { kb: KbCommand }
  | { module: CataloguedCommand; run: CommandRunner }
  | 'version'
  | 'help'
  | 'chat' {
  const [command, sub, ...rest] = args;
  const module = ALL_COMMANDS.find((c) => c.name === command);
  if (module) return { module, run: module.parse(args.slice(1), options.modules) };
  const arity = (n: number, what: string) => {
    if (rest.length !== n) throw new UsageError(`${what}`);
  };
  switch (command) {
    case undefined:
    case 'help':
      return 'help';
    case 'version':
      return 'version';
    case 'chat':
      if (sub !== undefined) throw new UsageError('chat takes its text with -m "TEXT" (or on stdin)');
      return 'chat';
    case 'status':
      if (sub !== undefined) throw new UsageError('status takes no arguments');
      return { method: 'status', params: {}, render: (r) => formatStatus(r as Parameters<typeof formatStatus>[0]) };
    case 'health':
      if (sub !== undefined) throw new UsageError('health takes no arguments');
      return {
        method: 'health',
        params: {},
        render: (r) => formatHealthAnswer(r as HealthAnswer),
        exitCode: (r) => healthExitCode(r as HealthAnswer),
      };
    case 'backup': {
      if (rest.length > 0) throw new UsageError('backup takes at most one file');
      const params: Record<string, unknown> = {};
      if (sub !== undefined) params.path = resolve(sub);
      if (options.db !== undefined) params.database = options.db;
      return {
        method: 'backup',
        params,
        render: (r) => {
          const b = r as { database: string; file: string; bytes: number; duration_ms: number };
          return `backed up ${b.database} database to ${b.file} (${b.bytes} bytes, ${b.duration_ms} ms)`;
        },
      };
    }
    case 'plugins':
      return planPlugins(sub, rest);
    case 'memory':
      return { memory: parseMemoryCommand(args.slice(1), options.memory) };
    case 'kb':
      return { kb: parseKbCommand(args.slice(1), options.kb, { stdinIsTty: process.stdin.isTTY === true }) };
    case 'config':
      switch (sub) {
        case 'list':
          if (rest.length > 1) throw new UsageError('config list takes at most one prefix');
          return {
            method: 'config.list',
            params: rest[0] === undefined ? {} : { prefix: rest[0] },
            render: (r) => formatSettingList(r as Parameters<typeof formatSettingList>[0]),
          };
        case 'get':
          arity(1, 'config get needs a KEY');
          return { method: 'config.get', params: { key: rest[0] }, render: (r) => formatSetting(r as Parameters<typeof formatSetting>[0]) };
        case 'set':
          arity(2, 'config set needs a KEY and a VALUE');
          return {
            method: 'config.set',
            params: { key: rest[0], value: rest[1] },
            render: (r) => formatSetting(r as Parameters<typeof formatSetting>[0]),
          };
        case 'reset':
          arity(1, 'config reset needs a KEY');
          return {
            method: 'config.reset',
            params: { key: rest[0] },
            render: (r) => formatSetting(r as Parameters<typeof formatSetting>[0]),
          };
        case 'history':
          if (rest.length > 1) throw new UsageError('config history takes at most one KEY');
          return {
            method: 'config.history',
            params: rest[0] === undefined ? {} : { key: rest[0] },
            render: (r) => formatHistory(r as Parameters<typeof formatHistory>[0]),
          };
        default:
          throw new UsageError(`unknown config command ${sub ?? '(none)'}; use list, get, set, reset or history`);
      }
    default:
      throw new UsageError(`unknown command ${command}`);
  }
}

function planPlugins(sub: string | undefined, rest: string[]): Invocation {
  const one = (what: string) => {
    if (rest.length !== 1) throw new UsageError(`plugins ${what} needs exactly one NAME`);
    return { name: rest[0] };
  };
  const optional = (what: string) => {
    if (rest.length > 1) throw new UsageError(`plugins ${what} takes at most one NAME`);
    return rest[0] === undefined ? {} : { name: rest[0] };
  };
  const single = (r: unknown) => formatPlugin(r as PluginStatus);
  switch (sub) {
    case undefined:
    case 'list':
      if (rest.length > 0) throw new UsageError('plugins list takes no arguments');
      return { method: 'plugins.list', params: {}, render: (r) => formatPluginList(r as Parameters<typeof formatPluginList>[0]) };
    case 'enable':
    case 'disable':
      return { method: `plugins.${sub}`, params: one(sub), render: single };
    case 'uninstall':
      return { method: 'plugins.uninstall', params: one(sub), render: () => `uninstalled ${rest[0]}` };
    case 'reload':
      return {
        method: 'plugins.reload',
        params: optional(sub),
        render: (r) => (r as { plugins: PluginStatus[] }).plugins.map(formatPlugin).join('\n'),
      };
    case 'install':
      if (rest.length !== 1 || rest[0] === undefined) throw new UsageError('plugins install needs exactly one archive FILE');
      return { method: 'plugins.install', params: { file: resolve(rest[0]) }, render: single };
    case 'health':
      return {
        method: 'plugins.health',
        params: optional(sub),
        render: (r) => formatPluginHealth(r as Parameters<typeof formatPluginHealth>[0]),
        exitCode: (r) => ((r as { plugins: Array<{ ok: boolean }> }).plugins.every((p) => p.ok) ? EXIT_CODES.OK : EXIT_CODES.FAILURE),
      };
    default:
      throw new UsageError(`unknown plugins command ${sub}; use list, enable, disable, reload, install, uninstall or health`);
  }
}

async function main(argv: string[]): Promise<number> {
  // Works on files without the daemon and has options of its own.
  if (argv[0] === 'models') return runModels(argv.slice(1));
  let values: {
    socket?: string | undefined;
    json?: boolean | undefined;
    timeout?: string | undefined;
    db?: string | undefined;
    message?: string | undefined;
    help?: boolean | undefined;
  };
  let invocation: ReturnType<typeof plan>;
  try {
    const parsed = parseArgs({
      args: argv,
      options: {
        socket: { type: 'string', short: 's' },
        json: { type: 'boolean' },
        timeout: { type: 'string' },
        db: { type: 'string' },
        message: { type: 'string', short: 'm' },
        help: { type: 'boolean', short: 'h' },
        ...MEMORY_OPTIONS,
        ...KB_OPTIONS,
        ...COMMAND_OPTIONS,
      },
      allowPositionals: true,
    });
    values = parsed.values;
    invocation = values.help
      ? 'help'
      : plan(parsed.positionals, { db: values.db, memory: parsed.values, kb: parsed.values, modules: parsed.values });
    if (values.message !== undefined && invocation !== 'chat') throw new UsageError('-m belongs to chat');
    const isMemory = typeof invocation === 'object' && 'memory' in invocation;
    const isKb = typeof invocation === 'object' && 'kb' in invocation;
    const chosen = typeof invocation === 'object' && 'module' in invocation ? invocation.module : undefined;
    const chosenTakes = (flag: string) => chosen !== undefined && Object.hasOwn(chosen.options, flag);
    // --limit is memory's, kb's and automations'; each parser has already refused the flags it does not take.
    const stray = memoryFlagsUsed(parsed.values).find((f) => !isMemory && !(isKb && f in KB_OPTIONS) && !chosenTakes(f));
    if (stray !== undefined) throw new UsageError(`--${stray} belongs to memory`);
    const strayKb = kbFlagsUsed(parsed.values).find((f) => !isKb && !(isMemory && f in MEMORY_OPTIONS) && !chosenTakes(f));
    if (strayKb !== undefined) throw new UsageError(`--${strayKb} belongs to kb`);
    const given: ParsedFlags = parsed.values;
    const strayCommandFlag = COMMAND_FLAGS.find(
      (f) => given[f] !== undefined && !chosenTakes(f) && !(f in MEMORY_OPTIONS) && !(f in KB_OPTIONS),
    );
    if (strayCommandFlag !== undefined) {
      const owners = ALL_COMMANDS.filter((c) => Object.hasOwn(c.options, strayCommandFlag)).map((c) => c.name);
      throw new UsageError(`--${strayCommandFlag} belongs to ${owners.join(' or ')}`);
    }
  } catch (error) {
    process.stderr.write(`homeagentctl: ${describeError(error)}\n\n${USAGE}\n`);
    return EXIT_CODES.USAGE;
  }
  if (invocation === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return EXIT_CODES.OK;
  }
  // A chat's agent turn with tools, or a kb import or reindex, can take minutes; other commands answer at once unless they say.
  const longKb = typeof invocation === 'object' && 'kb' in invocation && KB_LONG_COMMANDS.has(invocation.kb.command);
  const moduleTimeoutMs = typeof invocation === 'object' && 'module' in invocation ? invocation.module.defaultTimeoutMs : undefined;
  const defaultTimeoutMs = invocation === 'chat' ? AGENT_TURN_TIMEOUT_MS : longKb ? KB_LONG_TIMEOUT_MS : (moduleTimeoutMs ?? 30_000);
  const timeoutMs = values.timeout === undefined ? defaultTimeoutMs : Number(values.timeout);
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    process.stderr.write('homeagentctl: --timeout must be a positive number of milliseconds\n');
    return EXIT_CODES.USAGE;
  }
  const socket = findSocket(values.socket);

  let client: RpcClient | undefined;
  try {
    if (typeof invocation === 'object' && 'memory' in invocation) {
      // It may ask before connecting (forget --hard) and pages through exports itself.
      return await runMemory(invocation.memory, {
        connect: () => RpcClient.connect(socket, Math.min(timeoutMs, 5000)),
        json: values.json === true,
        timeoutMs,
      });
    }
    if (typeof invocation === 'object' && 'module' in invocation) {
      return await invocation.run({
        connect: () => RpcClient.connect(socket, Math.min(timeoutMs, 5000)),
        json: values.json === true,
        timeoutMs,
      });
    }
    if (typeof invocation === 'object' && 'kb' in invocation) {
      // kb add reads its text before connecting.
      return await runKb(invocation.kb, {
        connect: () => RpcClient.connect(socket, Math.min(timeoutMs, 5000)),
        json: values.json === true,
        timeoutMs,
      });
    }
    client = await RpcClient.connect(socket, Math.min(timeoutMs, 5000));
    if (invocation === 'version') {
      const daemon = (await client.call('version', {}, timeoutMs)) as { version: string; node: string; sqlite: string };
      if (values.json) print({ client: VERSION, daemon });
      else print(`homeagentctl ${VERSION}\nhomeagent ${daemon.version} (node ${daemon.node}, sqlite ${daemon.sqlite})`);
      return EXIT_CODES.OK;
    }
    if (invocation === 'chat') return await runChat(client, { message: values.message, json: values.json === true, timeoutMs });
    const result = await client.call(invocation.method, invocation.params, timeoutMs);
    print(values.json ? result : invocation.render(result));
    return invocation.exitCode?.(result) ?? EXIT_CODES.OK;
  } catch (error) {
    if (isHomeAgentError(error, 'HA_ERR_DAEMON_NOT_RUNNING')) {
      if (invocation === 'version' && !values.json) print(`homeagentctl ${VERSION} (daemon not reachable)`);
      report(values.json, { code: error.code, message: error.message });
      return EXIT_CODES.UNAVAILABLE;
    }
    const code = error instanceof RemoteError ? error.code : 'HA_ERR_INTERNAL';
    report(values.json, { code, message: describeError(error) });
    // A setting that does not exist or a value that does not fit is a configuration error, as at start.
    return CONFIG_ERRORS.has(code) ? EXIT_CODES.CONFIG : EXIT_CODES.FAILURE;
  } finally {
    client?.close();
  }
}

/** Answers that exit 78 (EX_CONFIG) like a configuration the daemon refuses at start. */
const CONFIG_ERRORS = new Set(['HA_ERR_SETTINGS_UNKNOWN_KEY', 'HA_ERR_SETTINGS_INVALID_VALUE', 'HA_ERR_SETTINGS_FILE_ONLY']);

function print(value: unknown): void {
  process.stdout.write(`${typeof value === 'string' ? value : JSON.stringify(value, null, 2)}\n`);
}

function report(json: boolean | undefined, error: { code: string; message: string }): void {
  if (json) process.stdout.write(`${JSON.stringify({ ok: false, error })}\n`);
  process.stderr.write(`homeagentctl: ${error.message}${json ? '' : ` (${error.code})`}\n`);
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`homeagentctl: ${describeError(error)}\n`);
    process.exitCode = EXIT_CODES.FAILURE;
  },
);

/**
 * homeagentctl's command line read without running anything: the global flags, which command is
 * meant, its arguments checked, and, when they do not fit, the short usage error that shows only
 * that command's lines of the help (issue 29: a mistyped option printed all 100 lines). It is its
 * own module so that homeagentctl.ts only runs what was read, and the doc check
 * (test/integration/doc-commands.test.ts) can ask whether a documented line is accepted without a
 * daemon and without printing anything.
 */
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { HealthAnswer } from '../api/health.js';
import type { PluginStatus } from '../api/plugins.js';
import { describeError } from '../shared/errors.js';
import { EXIT_CODES } from '../shared/exit-codes.js';
import type { Language } from '../shared/language.js';
import { type CataloguedCommand, type CommandRunner, formatUsage, type ParsedFlags, type UsageLine } from './command-module.js';
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
import { KB_OPTIONS, type KbCommand, type KbFlags, kbFlagsUsed, parseKbCommand } from './kb.js';
import { MEMORY_OPTIONS, type MemoryCommand, type MemoryFlags, memoryFlagsUsed, parseMemoryCommand } from './memory.js';

const SYNOPSIS = 'usage: homeagentctl [--socket PATH] [--json] [--timeout MS] <command>';

/** The help lines of the commands homeagentctl runs itself (the catalogued ones carry their own). */
const BUILT_IN_USAGE = {
  status: [{ synopsis: 'status', about: 'what the daemon is doing: services, plugins, databases, notices' }],
  health: [
    {
      synopsis: 'health',
      about:
        "each component's status (ok, degraded, failed), the worst first, and the\nplugin change on trial (exit 1 when something failed, 0 when only degraded)",
    },
  ],
  config: [
    { synopsis: 'config list [PREFIX]', about: 'settings with their values and sources' },
    { synopsis: 'config get KEY', about: 'one setting with its description, type, bounds and source' },
    { synopsis: 'config set KEY VALUE', about: 'change a setting (stored at once; some need a restart)' },
    { synopsis: 'config reset KEY', about: 'drop the run-time change; the file, environment or default applies' },
    { synopsis: 'config history [KEY]', about: 'recent setting changes' },
  ],
  plugins: [
    { synopsis: 'plugins [list]', about: 'plugins with kind, origin, state (quarantined ones with the reason)' },
    { synopsis: 'plugins enable|disable NAME', about: 'turn a plugin on or off (remembered across restarts)' },
    { synopsis: 'plugins reload [NAME]', about: 'hot-reload one plugin, or all and pick up new folders' },
    { synopsis: 'plugins install FILE', about: 'install or upgrade a plugin from a .tgz or .zip archive' },
    { synopsis: 'plugins uninstall NAME', about: 'remove an installed plugin' },
    { synopsis: 'plugins health [NAME]', about: 'health ping of each plugin (exit 1 when one fails)' },
  ],
  backup: [{ synopsis: 'backup [FILE] [--db NAME]', about: 'online backup of a database (default: state, into <data>/backups)' }],
  memory: [
    { synopsis: 'memory search TEXT [--limit N]', about: 'what memory recalls for TEXT (as the prompts get it), with sources' },
    { synopsis: 'memory stats', about: 'what memory holds: counts, embedder, maintenance, database size' },
    { synopsis: 'memory entity NAME', about: 'an entity with its facts, their history and where each came from' },
    {
      synopsis: 'memory forget --entity NAME [--hard [--yes]] | --event ID | --document ID',
      about: 'forget an entity (its facts end, kept as history; --hard deletes\nthem for good), a context event or a document',
    },
    { synopsis: 'memory export [--out FILE]', about: 'everything in memory as JSON Lines, to stdout or atomically to FILE' },
  ],
  kb: [
    {
      synopsis: 'kb tree [CATEGORY] [--depth N] [--items]',
      about: "the knowledge library's categories with entry counts (--items: entries too)",
    },
    { synopsis: 'kb search TEXT [--category C] [--limit N]', about: 'search the knowledge library; hits with scores and snippets' },
    { synopsis: 'kb add NAME (--file F | --content TEXT | stdin) [--overwrite]', about: 'write an entry, e.g. recipes/soup/tomato_soup' },
    { synopsis: 'kb rm NAME', about: 'delete an entry and its attachments' },
    { synopsis: 'kb import DIR [--category C]', about: 'import the markdown and text files of DIR (read by the daemon)' },
    { synopsis: 'kb reindex', about: 'pick up edits made in <data>/knowledge' },
    { synopsis: 'kb stats', about: 'entries, categories, media, index and vector state' },
    { synopsis: 'kb token', about: "the kbtree service's token and address" },
  ],
  models: [
    {
      synopsis: 'models list|install SRC',
      about: 'local models (embedders, parsers) in <data>/models, without the daemon (models --help)',
    },
  ],
  chat: [
    {
      synopsis: 'chat [-m TEXT]',
      about: 'talk to the agent: one message with -m (or piped on stdin),\notherwise a conversation on the terminal',
    },
  ],
  version: [{ synopsis: 'version', about: 'client and daemon versions' }],
} as const satisfies Record<string, readonly UsageLine[]>;

type BuiltInWord = keyof typeof BUILT_IN_USAGE;

const lines = (word: BuiltInWord) => ({ usage: BUILT_IN_USAGE[word] });

/** `homeagentctl --help`: every command, the built-in ones beside the catalogued ones they belong with. */
export const HELP = `${SYNOPSIS}

${formatUsage([lines('status'), lines('health'), ...DAEMON_COMMANDS])}
${formatUsage([lines('config'), lines('plugins'), lines('backup'), lines('memory'), lines('kb'), ...HOME_COMMANDS])}
${formatUsage([lines('models'), lines('chat'), ...AGENT_COMMANDS])}
${formatUsage([lines('version')])}

The socket is --socket, $HOMEAGENT_SOCKET, or found under $HOMEAGENT_RUNTIME_DIR,
$HOMEAGENT_DATA_DIR/run, /run/homeagent or ./data/run.`;

/** Every command word homeagentctl knows, in help order (an unknown one is answered with this list). */
export const COMMAND_WORDS: readonly string[] = [
  'status',
  'health',
  ...DAEMON_COMMANDS.map((c) => c.name),
  'config',
  'plugins',
  'backup',
  'memory',
  'kb',
  ...HOME_COMMANDS.map((c) => c.name),
  'models',
  'chat',
  ...AGENT_COMMANDS.map((c) => c.name),
  'version',
];

/** The help lines of one command word, as `--help` prints them; undefined for a word homeagentctl does not know. */
export function commandUsage(word: string): string | undefined {
  const module = ALL_COMMANDS.find((c) => c.name === word);
  if (module !== undefined) return formatUsage([module]);
  return Object.hasOwn(BUILT_IN_USAGE, word) ? formatUsage([lines(word as BuiltInWord)]) : undefined;
}

export class UsageError extends Error {}

/** Every catalogued command's flags, for parseArgs (commands that share a flag declare it alike). */
const COMMAND_OPTIONS = Object.fromEntries(ALL_COMMANDS.flatMap((c) => Object.entries(c.options)));
/** Their names in catalogue order, which decides the one named when several are given with the wrong command. */
const COMMAND_FLAGS = Object.keys(COMMAND_OPTIONS);

/** Every flag of the command line: the global ones, then each command's. */
const OPTIONS = {
  socket: { type: 'string', short: 's' },
  json: { type: 'boolean' },
  timeout: { type: 'string' },
  db: { type: 'string' },
  message: { type: 'string', short: 'm' },
  help: { type: 'boolean', short: 'h' },
  ...MEMORY_OPTIONS,
  ...KB_OPTIONS,
  ...COMMAND_OPTIONS,
} as const;

/** A call homeagentctl makes itself, and how it prints the answer. */
export interface Invocation {
  method: string;
  params: Record<string, unknown>;
  /** The answer as text in `language` (the terminal's, as run-homeagentctl reads it). */
  render: (result: unknown, language: Language) => string;
  exitCode?: (result: unknown) => number;
}

export type Plan =
  | Invocation
  | { memory: MemoryCommand }
  | { kb: KbCommand }
  | { module: CataloguedCommand; run: CommandRunner }
  | 'version'
  | 'help'
  | 'chat';

/** The global flags as read. */
export interface GlobalFlags {
  socket?: string | undefined;
  json?: boolean | undefined;
  timeout?: string | undefined;
  message?: string | undefined;
}

export interface CommandLine {
  flags: GlobalFlags;
  plan: Plan;
}

export interface ReadOptions {
  /** Whether stdin is a terminal: `kb add NAME` without --file or --content reads stdin only when it is not. */
  stdinIsTty: boolean;
  /** Relative paths (backup FILE, plugins install FILE, --out, --file, kb import DIR) resolve here; the process's by default. */
  cwd?: string;
}

/**
 * Reads a command line (`models` excepted: it reads its own) and plans what to run; throws a usage
 * error (UsageError, a command's own, or parseArgs') for one that does not fit. Nothing runs and
 * nothing is printed.
 */
export function readCommandLine(argv: readonly string[], options: ReadOptions): CommandLine {
  const parsed = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true });
  const values = parsed.values;
  const plan = values.help ? 'help' : planCommand(parsed.positionals, values, options);
  if (values.message !== undefined && plan !== 'chat') throw new UsageError('-m belongs to chat');
  const isMemory = typeof plan === 'object' && 'memory' in plan;
  const isKb = typeof plan === 'object' && 'kb' in plan;
  const chosen = typeof plan === 'object' && 'module' in plan ? plan.module : undefined;
  const chosenTakes = (flag: string) => chosen !== undefined && Object.hasOwn(chosen.options, flag);
  // --limit is memory's, kb's and automations'; each parser has already refused the flags it does not take.
  const stray = memoryFlagsUsed(values).find((f) => !isMemory && !(isKb && f in KB_OPTIONS) && !chosenTakes(f));
  if (stray !== undefined) throw new UsageError(`--${stray} belongs to memory`);
  const strayKb = kbFlagsUsed(values).find((f) => !isKb && !(isMemory && f in MEMORY_OPTIONS) && !chosenTakes(f));
  if (strayKb !== undefined) throw new UsageError(`--${strayKb} belongs to kb`);
  const given: ParsedFlags = values;
  const strayCommandFlag = COMMAND_FLAGS.find(
    (f) => given[f] !== undefined && !chosenTakes(f) && !(f in MEMORY_OPTIONS) && !(f in KB_OPTIONS),
  );
  if (strayCommandFlag !== undefined) {
    const owners = ALL_COMMANDS.filter((c) => Object.hasOwn(c.options, strayCommandFlag)).map((c) => c.name);
    throw new UsageError(`--${strayCommandFlag} belongs to ${owners.join(' or ')}`);
  }
  if (values.timeout !== undefined) {
    const timeoutMs = Number(values.timeout);
    if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) throw new UsageError('--timeout must be a positive number of milliseconds');
  }
  return { flags: { socket: values.socket, json: values.json, timeout: values.timeout, message: values.message }, plan };
}

/**
 * What homeagentctl writes to stderr for a refused command line: the problem, the lines of the
 * command it was meant for (or, for an unknown command, the commands there are), and where the
 * whole help is. It exits EXIT_CODES.USAGE.
 */
export function usageErrorText(error: unknown, argv: readonly string[]): string {
  const word = commandWord(argv);
  const usage = word === undefined ? undefined : commandUsage(word);
  const parts = [`homeagentctl: ${usageMessage(error, word)}`];
  if (usage !== undefined) parts.push(`\nusage / 用法:\n${usage}`);
  else if (word !== undefined) parts.push(`commands / 命令: ${COMMAND_WORDS.join(', ')}`);
  parts.push(`\n${SEE_HELP}`);
  return `${parts.join('\n')}\n`;
}

export const SEE_HELP = 'see homeagentctl --help for every command / 全部命令见 homeagentctl --help';

/** The flags each built-in command takes besides the global ones (the catalogued commands declare theirs). */
const BUILT_IN_FLAGS: Readonly<Record<string, readonly string[]>> = {
  backup: ['db'],
  memory: Object.keys(MEMORY_OPTIONS),
  kb: Object.keys(KB_OPTIONS),
  chat: ['message'],
};

const GLOBAL_FLAGS = '--socket, --json, --timeout';

/**
 * parseArgs' own messages are long and suggest `--`; the refusal and the flags the command does
 * take are what help.
 */
function usageMessage(error: unknown, word: string | undefined): string {
  const code = (error as { code?: unknown } | null)?.code;
  const message = describeError(error);
  if (code !== 'ERR_PARSE_ARGS_UNKNOWN_OPTION') return message;
  const option = /'([^']+)'/.exec(message)?.[1];
  if (option === undefined) return message;
  if (word === undefined || commandUsage(word) === undefined) return `unknown option ${option}; every command takes ${GLOBAL_FLAGS}`;
  const module = ALL_COMMANDS.find((c) => c.name === word);
  const flags = module !== undefined ? Object.keys(module.options) : (BUILT_IN_FLAGS[word] ?? []);
  const own = flags.length === 0 ? 'no options of its own' : flags.map((f) => `--${f}`).join(', ');
  return `unknown option ${option}; ${word} takes ${own} (and ${GLOBAL_FLAGS})`;
}

/** The command word of a command line parseArgs may have refused: its first positional. */
function commandWord(argv: readonly string[]): string | undefined {
  try {
    return parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: false }).positionals[0];
  } catch {
    return undefined;
  }
}

function planCommand(
  args: string[],
  values: ParsedFlags & MemoryFlags & KbFlags & { db?: string | undefined },
  options: ReadOptions,
): Plan {
  const [command, sub, ...rest] = args;
  const cwd = options.cwd ?? process.cwd();
  const module = ALL_COMMANDS.find((c) => c.name === command);
  if (module) return { module, run: module.parse(args.slice(1), values) };
  const arity = (n: number, what: string) => {
    if (rest.length !== n) throw new UsageError(`${what}`);
  };
  switch (command) {
    case undefined:
    case 'help':
      return 'help';
    case 'version':
      return 'version';
    case 'models':
      // homeagentctl hands `models …` to its own parser only when it comes first (it takes no global flags).
      throw new UsageError('models works without the daemon and reads its own options: put it first, homeagentctl models list|install …');
    case 'chat':
      if (sub !== undefined) throw new UsageError('chat takes its text with -m "TEXT" (or on stdin)');
      return 'chat';
    case 'status':
      if (sub !== undefined) throw new UsageError('status takes no arguments');
      return { method: 'status', params: {}, render: (r, language) => formatStatus(r as Parameters<typeof formatStatus>[0], language) };
    case 'health':
      if (sub !== undefined) throw new UsageError('health takes no arguments');
      return {
        method: 'health',
        params: {},
        render: (r, language) => formatHealthAnswer(r as HealthAnswer, language),
        exitCode: (r) => healthExitCode(r as HealthAnswer),
      };
    case 'backup': {
      if (rest.length > 0) throw new UsageError('backup takes at most one file');
      const params: Record<string, unknown> = {};
      if (sub !== undefined) params.path = resolve(cwd, sub);
      if (values.db !== undefined) params.database = values.db;
      return {
        method: 'backup',
        params,
        render: (r, language) => {
          const b = r as { database: string; file: string; bytes: number; duration_ms: number };
          return language === 'zh'
            ? `已将 ${b.database} 数据库备份到 ${b.file}（${b.bytes} 字节，${b.duration_ms} 毫秒）`
            : `backed up ${b.database} database to ${b.file} (${b.bytes} bytes, ${b.duration_ms} ms)`;
        },
      };
    }
    case 'plugins':
      return planPlugins(sub, rest, cwd);
    case 'memory':
      return { memory: parseMemoryCommand(args.slice(1), values, cwd) };
    case 'kb':
      return { kb: parseKbCommand(args.slice(1), values, { stdinIsTty: options.stdinIsTty, cwd }) };
    case 'config': {
      const renderSetting = (r: unknown, language: Language) => formatSetting(r as Parameters<typeof formatSetting>[0], language);
      switch (sub) {
        case 'list':
          if (rest.length > 1) throw new UsageError('config list takes at most one prefix');
          return {
            method: 'config.list',
            params: rest[0] === undefined ? {} : { prefix: rest[0] },
            render: (r, language) => formatSettingList(r as Parameters<typeof formatSettingList>[0], language),
          };
        case 'get':
          arity(1, 'config get needs a KEY');
          return {
            method: 'config.get',
            params: { key: rest[0] },
            render: renderSetting,
          };
        case 'set':
          arity(2, 'config set needs a KEY and a VALUE');
          return {
            method: 'config.set',
            params: { key: rest[0], value: rest[1] },
            render: renderSetting,
          };
        case 'reset':
          arity(1, 'config reset needs a KEY');
          return {
            method: 'config.reset',
            params: { key: rest[0] },
            render: renderSetting,
          };
        case 'history':
          if (rest.length > 1) throw new UsageError('config history takes at most one KEY');
          return {
            method: 'config.history',
            params: rest[0] === undefined ? {} : { key: rest[0] },
            render: (r, language) => formatHistory(r as Parameters<typeof formatHistory>[0], language),
          };
        case undefined:
          throw new UsageError('config needs a command: list, get, set, reset or history');
        default:
          throw new UsageError(`unknown config command ${sub}; use list, get, set, reset or history`);
      }
    }
    default:
      throw new UsageError(`unknown command ${command}`);
  }
}

function planPlugins(sub: string | undefined, rest: string[], cwd: string): Invocation {
  const one = (what: string) => {
    if (rest.length !== 1) throw new UsageError(`plugins ${what} needs exactly one NAME`);
    return { name: rest[0] };
  };
  const optional = (what: string) => {
    if (rest.length > 1) throw new UsageError(`plugins ${what} takes at most one NAME`);
    return rest[0] === undefined ? {} : { name: rest[0] };
  };
  const single = (r: unknown, language: Language) => formatPlugin(r as PluginStatus, language);
  switch (sub) {
    case undefined:
    case 'list':
      if (rest.length > 0) throw new UsageError('plugins list takes no arguments');
      return {
        method: 'plugins.list',
        params: {},
        render: (r, language) => formatPluginList(r as Parameters<typeof formatPluginList>[0], language),
      };
    case 'enable':
    case 'disable':
      return { method: `plugins.${sub}`, params: one(sub), render: single };
    case 'uninstall':
      return {
        method: 'plugins.uninstall',
        params: one(sub),
        render: (_r, language) => (language === 'zh' ? `已卸载 ${rest[0]}` : `uninstalled ${rest[0]}`),
      };
    case 'reload':
      return {
        method: 'plugins.reload',
        params: optional(sub),
        render: (r, language) => (r as { plugins: PluginStatus[] }).plugins.map((p) => formatPlugin(p, language)).join('\n'),
      };
    case 'install':
      if (rest.length !== 1 || rest[0] === undefined) throw new UsageError('plugins install needs exactly one archive FILE');
      return { method: 'plugins.install', params: { file: resolve(cwd, rest[0]) }, render: single };
    case 'health':
      return {
        method: 'plugins.health',
        params: optional(sub),
        render: (r, language) => formatPluginHealth(r as Parameters<typeof formatPluginHealth>[0], language),
        exitCode: (r) => ((r as { plugins: Array<{ ok: boolean }> }).plugins.every((p) => p.ok) ? EXIT_CODES.OK : EXIT_CODES.FAILURE),
      };
    default:
      throw new UsageError(`unknown plugins command ${sub}; use list, enable, disable, reload, install, uninstall or health`);
  }
}

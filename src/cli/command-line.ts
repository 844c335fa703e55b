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
import type { MemoryReport } from '../api/daemon-memory.js';
import type { HealthAnswer } from '../api/health.js';
import type { PluginStatus } from '../api/plugins.js';
import { describeError } from '../shared/errors.js';
import { EXIT_CODES } from '../shared/exit-codes.js';
import type { Language } from '../shared/language.js';
import {
  type CataloguedCommand,
  type CommandRunner,
  CommandUsageError,
  formatUsage,
  type ParsedFlags,
  type UsageLine,
} from './command-module.js';
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
import { formatMemoryReport } from './memory-report-format.js';

/**
 * The words of the help and of a usage error in each language. The synopses, flags and
 * placeholders (KEY, VALUE, <command>) are what one types, so they are the same in both.
 */
const WORDS = {
  en: {
    synopsis: 'usage: homeagentctl [--socket PATH] [--json] [--timeout MS] <command>',
    socket: `The socket is --socket, $HOMEAGENT_SOCKET, or found under $HOMEAGENT_RUNTIME_DIR,
$HOMEAGENT_DATA_DIR/run, /run/homeagent or ./data/run.`,
    usage: 'usage:',
    commands: (words: string) => `commands: ${words}`,
    seeHelp: 'see homeagentctl --help for every command',
    unknownOption: (option: string) => `unknown option ${option}`,
    everyCommandTakes: (option: string, flags: string) => `unknown option ${option}; every command takes ${flags}`,
    commandTakes: (option: string, word: string, own: string | undefined, flags: string) =>
      `unknown option ${option}; ${word} takes ${own ?? 'no options of its own'} (and ${flags})`,
    missingValue: (option: string) => `${option} needs a value`,
    noValue: (option: string) => `${option} takes no value`,
    dashValue: (option: string) => `${option}'s value starts with a dash; give it as ${option}=-…`,
  },
  zh: {
    synopsis: '用法：homeagentctl [--socket PATH] [--json] [--timeout MS] <command>',
    socket: `套接字由 --socket 或 $HOMEAGENT_SOCKET 指定，否则在 $HOMEAGENT_RUNTIME_DIR、
$HOMEAGENT_DATA_DIR/run、/run/homeagent 或 ./data/run 下查找。`,
    usage: '用法：',
    commands: (words: string) => `命令：${words}`,
    seeHelp: '全部命令见 homeagentctl --help',
    unknownOption: (option: string) => `未知选项 ${option}`,
    everyCommandTakes: (option: string, flags: string) => `未知选项 ${option}；所有命令都接受 ${flags}`,
    commandTakes: (option: string, word: string, own: string | undefined, flags: string) =>
      own === undefined ? `未知选项 ${option}；${word} 只接受 ${flags}` : `未知选项 ${option}；${word} 接受 ${own}（以及 ${flags}）`,
    missingValue: (option: string) => `${option} 需要一个值`,
    noValue: (option: string) => `${option} 不接受值`,
    dashValue: (option: string) => `${option} 的值以 - 开头，请写成 ${option}=-…`,
  },
} as const;

/** The help lines of the commands homeagentctl runs itself (the catalogued ones carry their own). */
const BUILT_IN_USAGE = {
  status: [
    {
      synopsis: 'status',
      about: 'what the daemon is doing: services, plugins, databases, notices',
      zh: '守护进程在做什么：服务、插件、数据库、通知',
    },
    {
      synopsis: 'status --memory',
      about: "where the daemon's memory goes: heap by space, native, threads, each child process",
      zh: '守护进程的内存用在哪里：按空间分的堆、原生内存、线程、每个子进程',
    },
  ],
  health: [
    {
      synopsis: 'health',
      about:
        "each component's status (ok, degraded, failed), the worst first, and the\nplugin change on trial (exit 1 when something failed, 0 when only degraded)",
      zh: '各组件的状态（正常、降级、失败），最差的在前，以及试用中的插件变更\n（有失败时退出码为 1，只有降级时为 0）',
    },
  ],
  config: [
    { synopsis: 'config list [PREFIX]', about: 'settings with their values and sources', zh: '设置及其值和来源' },
    {
      synopsis: 'config get KEY',
      about: 'one setting with its description, type, bounds and source',
      zh: '一项设置：说明、类型、范围和来源',
    },
    {
      synopsis: 'config set KEY VALUE',
      about: 'change a setting (stored at once; some need a restart)',
      zh: '修改一项设置（立即保存；部分需要重启）',
    },
    {
      synopsis: 'config reset KEY',
      about: 'drop the run-time change; the file, environment or default applies',
      zh: '撤销运行时的修改，改用配置文件、环境变量或默认值',
    },
    { synopsis: 'config history [KEY]', about: 'recent setting changes', zh: '最近的设置修改' },
  ],
  plugins: [
    {
      synopsis: 'plugins [list]',
      about: 'plugins with kind, origin, state (quarantined ones with the reason)',
      zh: '插件及其类型、来源、状态（已隔离的附原因）',
    },
    {
      synopsis: 'plugins enable|disable NAME',
      about: 'turn a plugin on or off (remembered across restarts)',
      zh: '启用或停用一个插件（重启后保持）',
    },
    {
      synopsis: 'plugins reload [NAME]',
      about: 'hot-reload one plugin, or all and pick up new folders',
      zh: '热重载一个插件，或全部重载并载入新目录',
    },
    {
      synopsis: 'plugins install FILE',
      about: 'install or upgrade a plugin from a .tgz or .zip archive',
      zh: '从 .tgz 或 .zip 压缩包安装或升级插件',
    },
    { synopsis: 'plugins uninstall NAME', about: 'remove an installed plugin', zh: '移除一个已安装的插件' },
    {
      synopsis: 'plugins health [NAME]',
      about: 'health ping of each plugin (exit 1 when one fails)',
      zh: '逐个探测插件的健康（有一个失败时退出码为 1）',
    },
  ],
  backup: [
    {
      synopsis: 'backup [FILE] [--db NAME]',
      about:
        "online backup of a database (default: state, into <data>/backups;\na plugin's own as <plugin>.<name>, e.g. seq.sequences; status lists them)",
      zh: '在线备份一个数据库（默认 state，存到 <data>/backups；\n插件自己的写作 <插件>.<名称>，如 seq.sequences；status 会列出）',
    },
  ],
  memory: [
    {
      synopsis: 'memory search TEXT [--limit N]',
      about: 'what memory recalls for TEXT (as the prompts get it), with sources',
      zh: '记忆对 TEXT 想起什么（与提示词所得相同），附来源',
    },
    {
      synopsis: 'memory stats',
      about: 'what memory holds: counts, embedder, maintenance, database size',
      zh: '记忆里有什么：数量、嵌入模型、维护、数据库大小',
    },
    {
      synopsis: 'memory entity NAME',
      about: 'an entity with its facts, their history and where each came from',
      zh: '一个实体及其事实、事实的历史和各自的来源',
    },
    {
      synopsis: 'memory forget --entity NAME [--hard [--yes]] | --event ID | --document ID',
      about: 'forget an entity (its facts end, kept as history; --hard deletes\nthem for good), a context event or a document',
      zh: '遗忘一个实体（其事实终止，留作历史；--hard 彻底\n删除），或一条上下文事件、一篇文档',
    },
    {
      synopsis: 'memory export [--out FILE]',
      about: 'everything in memory as JSON Lines, to stdout or atomically to FILE',
      zh: '以 JSON Lines 导出全部记忆，写到标准输出或原子地写入 FILE',
    },
  ],
  kb: [
    {
      synopsis: 'kb tree [CATEGORY] [--depth N] [--items]',
      about: "the knowledge library's categories with entry counts (--items: entries too)",
      zh: '知识库的分类及条目数（--items：连同条目）',
    },
    {
      synopsis: 'kb search TEXT [--category C] [--limit N]',
      about: 'search the knowledge library; hits with scores and snippets',
      zh: '搜索知识库；结果附得分和摘录',
    },
    {
      synopsis: 'kb add NAME (--file F | --content TEXT | stdin) [--overwrite]',
      about: 'write an entry, e.g. recipes/soup/tomato_soup',
      zh: '写入一个条目，例如 recipes/soup/tomato_soup',
    },
    { synopsis: 'kb rm NAME', about: 'delete an entry and its attachments', zh: '删除一个条目及其附件' },
    {
      synopsis: 'kb import DIR [--category C]',
      about: 'import the markdown and text files of DIR (read by the daemon)',
      zh: '导入 DIR 中的 Markdown 和文本文件（由守护进程读取）',
    },
    { synopsis: 'kb reindex', about: 'pick up edits made in <data>/knowledge', zh: '载入在 <data>/knowledge 中所做的修改' },
    { synopsis: 'kb stats', about: 'entries, categories, media, index and vector state', zh: '条目、分类、媒体、索引和向量的状态' },
    { synopsis: 'kb token', about: "the kbtree service's token and address", zh: 'kbtree 服务的令牌和地址' },
  ],
  models: [
    {
      synopsis: 'models list|install SRC',
      about: 'local models (embedders, parsers) in <data>/models, without the daemon (models --help)',
      zh: '<data>/models 中的本地模型（嵌入模型、句法分析模型），无需守护进程（models --help）',
    },
  ],
  chat: [
    {
      synopsis: 'chat [-m TEXT]',
      about: 'talk to the agent: one message with -m (or piped on stdin),\notherwise a conversation on the terminal',
      zh: '与智能体对话：-m 发一条消息（或从标准输入传入），\n否则在终端里连续对话',
    },
  ],
  version: [{ synopsis: 'version', about: 'client and daemon versions', zh: '客户端和守护进程的版本' }],
} as const satisfies Record<string, readonly UsageLine[]>;

type BuiltInWord = keyof typeof BUILT_IN_USAGE;

/** Every line of the help, the built-in commands' and the catalogued ones' (a test walks them for their Chinese). */
export const ALL_USAGE_LINES: readonly UsageLine[] = [...Object.values(BUILT_IN_USAGE).flat(), ...ALL_COMMANDS.flatMap((c) => c.usage)];

const lines = (word: BuiltInWord) => ({ usage: BUILT_IN_USAGE[word] });

/** `homeagentctl --help` in `language`: every command, the built-in ones beside the catalogued ones they belong with. */
export function helpText(language: Language): string {
  const words = WORDS[language];
  return `${words.synopsis}

${formatUsage([lines('status'), lines('health'), ...DAEMON_COMMANDS], language)}
${formatUsage([lines('config'), lines('plugins'), lines('backup'), lines('memory'), lines('kb'), ...HOME_COMMANDS], language)}
${formatUsage([lines('models'), lines('chat'), ...AGENT_COMMANDS], language)}
${formatUsage([lines('version')], language)}

${words.socket}`;
}

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

/** The help lines of one command word, as `--help` prints them in `language`; undefined for a word homeagentctl does not know. */
export function commandUsage(word: string, language: Language): string | undefined {
  const module = ALL_COMMANDS.find((c) => c.name === word);
  if (module !== undefined) return formatUsage([module], language);
  return Object.hasOwn(BUILT_IN_USAGE, word) ? formatUsage([lines(word as BuiltInWord)], language) : undefined;
}

/** A command line that does not fit homeagentctl's own commands, in both languages (as the catalogued commands' refusals). */
export class UsageError extends CommandUsageError {}

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
  // status's alone (refused with any other command below).
  memory: { type: 'boolean' },
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
  if (values.message !== undefined && plan !== 'chat') throw new UsageError('-m belongs to chat', '-m 是 chat 的选项');
  if (values.memory && parsed.positionals[0] !== 'status') throw new UsageError('--memory belongs to status', '--memory 是 status 的选项');
  const isMemory = typeof plan === 'object' && 'memory' in plan;
  const isKb = typeof plan === 'object' && 'kb' in plan;
  const chosen = typeof plan === 'object' && 'module' in plan ? plan.module : undefined;
  const chosenTakes = (flag: string) => chosen !== undefined && Object.hasOwn(chosen.options, flag);
  // --limit is memory's, kb's and automations'; each parser has already refused the flags it does not take.
  const stray = memoryFlagsUsed(values).find((f) => !isMemory && !(isKb && f in KB_OPTIONS) && !chosenTakes(f));
  if (stray !== undefined) throw new UsageError(`--${stray} belongs to memory`, `--${stray} 是 memory 的选项`);
  const strayKb = kbFlagsUsed(values).find((f) => !isKb && !(isMemory && f in MEMORY_OPTIONS) && !chosenTakes(f));
  if (strayKb !== undefined) throw new UsageError(`--${strayKb} belongs to kb`, `--${strayKb} 是 kb 的选项`);
  const given: ParsedFlags = values;
  const strayCommandFlag = COMMAND_FLAGS.find(
    (f) => given[f] !== undefined && !chosenTakes(f) && !(f in MEMORY_OPTIONS) && !(f in KB_OPTIONS),
  );
  if (strayCommandFlag !== undefined) {
    const owners = ALL_COMMANDS.filter((c) => Object.hasOwn(c.options, strayCommandFlag)).map((c) => c.name);
    throw new UsageError(
      `--${strayCommandFlag} belongs to ${owners.join(' or ')}`,
      `--${strayCommandFlag} 是 ${owners.join(' 或 ')} 的选项`,
    );
  }
  if (values.timeout !== undefined) {
    const timeoutMs = Number(values.timeout);
    if (!Number.isFinite(timeoutMs) || timeoutMs <= 0)
      throw new UsageError('--timeout must be a positive number of milliseconds', '--timeout 须为正数（毫秒）');
  }
  return { flags: { socket: values.socket, json: values.json, timeout: values.timeout, message: values.message }, plan };
}

/**
 * What homeagentctl writes to stderr for a refused command line: the problem, the lines of the
 * command it was meant for (or, for an unknown command, the commands there are), and where the
 * whole help is. It exits EXIT_CODES.USAGE.
 */
export function usageErrorText(error: unknown, argv: readonly string[], language: Language): string {
  const words = WORDS[language];
  const word = commandWord(argv);
  const usage = word === undefined ? undefined : commandUsage(word, language);
  const parts = [`homeagentctl: ${usageMessage(error, word, language)}`];
  if (usage !== undefined) parts.push(`\n${words.usage}\n${usage}`);
  else if (word !== undefined) parts.push(words.commands(COMMAND_WORDS.join(', ')));
  parts.push(`\n${words.seeHelp}`);
  return `${parts.join('\n')}\n`;
}

/** The flags each built-in command takes besides the global ones (the catalogued commands declare theirs). */
const BUILT_IN_FLAGS: Readonly<Record<string, readonly string[]>> = {
  backup: ['db'],
  memory: Object.keys(MEMORY_OPTIONS),
  kb: Object.keys(KB_OPTIONS),
  chat: ['message'],
};

const GLOBAL_FLAGS = '--socket, --json, --timeout';

/**
 * The refusal in `language`. parseArgs' own messages are long, English and suggest `--`; the
 * refusal and the flags the command does take are what help. Every command's own refusal is a
 * CommandUsageError with its Chinese; anything else is printed as it is.
 */
function usageMessage(error: unknown, word: string | undefined, language: Language): string {
  const words = WORDS[language];
  if (language === 'zh' && error instanceof CommandUsageError) return error.zh;
  const code = (error as { code?: unknown } | null)?.code;
  const message = describeError(error);
  const option = /'([^']+)'/.exec(message)?.[1];
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' && option !== undefined && language === 'zh') {
    // "Option '-s, --socket <value>' argument missing" / "Option '--json' does not take an argument"
    const name = /--[^\s<]+/.exec(option)?.[0] ?? option;
    if (/ambiguous/.test(message)) return words.dashValue(name);
    return /does not take/.test(message) ? words.noValue(name) : words.missingValue(name);
  }
  if (code !== 'ERR_PARSE_ARGS_UNKNOWN_OPTION' || option === undefined) return message;
  if (word === undefined || commandUsage(word, language) === undefined) return words.everyCommandTakes(option, GLOBAL_FLAGS);
  const module = ALL_COMMANDS.find((c) => c.name === word);
  const flags = module !== undefined ? Object.keys(module.options) : (BUILT_IN_FLAGS[word] ?? []);
  const own = flags.length === 0 ? undefined : flags.map((f) => `--${f}`).join(', ');
  return words.commandTakes(option, word, own, GLOBAL_FLAGS);
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
  const arity = (n: number, what: string, zh: string) => {
    if (rest.length !== n) throw new UsageError(what, zh);
  };
  switch (command) {
    case undefined:
    case 'help':
      return 'help';
    case 'version':
      return 'version';
    case 'models':
      // homeagentctl hands `models …` to its own parser only when it comes first (it takes no global flags).
      throw new UsageError(
        'models works without the daemon and reads its own options: put it first, homeagentctl models list|install …',
        'models 不经守护进程，自己读取选项：请把它放在最前，homeagentctl models list|install …',
      );
    case 'chat':
      if (sub !== undefined)
        throw new UsageError('chat takes its text with -m "TEXT" (or on stdin)', 'chat 的文字用 -m "TEXT" 给出（或从标准输入传入）');
      return 'chat';
    case 'status':
      if (sub !== undefined) throw new UsageError('status takes no arguments', 'status 不接受参数');
      if (values.memory)
        return { method: 'daemon.memory', params: {}, render: (r, language) => formatMemoryReport(r as MemoryReport, language) };
      return { method: 'status', params: {}, render: (r, language) => formatStatus(r as Parameters<typeof formatStatus>[0], language) };
    case 'health':
      if (sub !== undefined) throw new UsageError('health takes no arguments', 'health 不接受参数');
      return {
        method: 'health',
        params: {},
        render: (r, language) => formatHealthAnswer(r as HealthAnswer, language),
        exitCode: (r) => healthExitCode(r as HealthAnswer),
      };
    case 'backup': {
      if (rest.length > 0) throw new UsageError('backup takes at most one file', 'backup 最多接受一个文件');
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
          if (rest.length > 1) throw new UsageError('config list takes at most one prefix', 'config list 最多接受一个前缀');
          return {
            method: 'config.list',
            params: rest[0] === undefined ? {} : { prefix: rest[0] },
            render: (r, language) => formatSettingList(r as Parameters<typeof formatSettingList>[0], language),
          };
        case 'get':
          arity(1, 'config get needs a KEY', 'config get 需要一个 KEY');
          return {
            method: 'config.get',
            params: { key: rest[0] },
            render: renderSetting,
          };
        case 'set':
          arity(2, 'config set needs a KEY and a VALUE', 'config set 需要 KEY 和 VALUE');
          return {
            method: 'config.set',
            params: { key: rest[0], value: rest[1] },
            render: renderSetting,
          };
        case 'reset':
          arity(1, 'config reset needs a KEY', 'config reset 需要一个 KEY');
          return {
            method: 'config.reset',
            params: { key: rest[0] },
            render: renderSetting,
          };
        case 'history':
          if (rest.length > 1) throw new UsageError('config history takes at most one KEY', 'config history 最多接受一个 KEY');
          return {
            method: 'config.history',
            params: rest[0] === undefined ? {} : { key: rest[0] },
            render: (r, language) => formatHistory(r as Parameters<typeof formatHistory>[0], language),
          };
        case undefined:
          throw new UsageError(
            'config needs a command: list, get, set, reset or history',
            'config 需要一个子命令：list、get、set、reset 或 history',
          );
        default:
          throw new UsageError(
            `unknown config command ${sub}; use list, get, set, reset or history`,
            `未知的 config 子命令 ${sub}；可用 list、get、set、reset 或 history`,
          );
      }
    }
    default:
      throw new UsageError(`unknown command ${command}`, `未知命令 ${command}`);
  }
}

function planPlugins(sub: string | undefined, rest: string[], cwd: string): Invocation {
  const one = (what: string) => {
    if (rest.length !== 1) throw new UsageError(`plugins ${what} needs exactly one NAME`, `plugins ${what} 需要恰好一个 NAME`);
    return { name: rest[0] };
  };
  const optional = (what: string) => {
    if (rest.length > 1) throw new UsageError(`plugins ${what} takes at most one NAME`, `plugins ${what} 最多接受一个 NAME`);
    return rest[0] === undefined ? {} : { name: rest[0] };
  };
  const single = (r: unknown, language: Language) => formatPlugin(r as PluginStatus, language);
  switch (sub) {
    case undefined:
    case 'list':
      if (rest.length > 0) throw new UsageError('plugins list takes no arguments', 'plugins list 不接受参数');
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
      if (rest.length !== 1 || rest[0] === undefined)
        throw new UsageError('plugins install needs exactly one archive FILE', 'plugins install 需要恰好一个压缩包 FILE');
      return { method: 'plugins.install', params: { file: resolve(cwd, rest[0]) }, render: single };
    case 'health':
      return {
        method: 'plugins.health',
        params: optional(sub),
        render: (r, language) => formatPluginHealth(r as Parameters<typeof formatPluginHealth>[0], language),
        exitCode: (r) => ((r as { plugins: Array<{ ok: boolean }> }).plugins.every((p) => p.ok) ? EXIT_CODES.OK : EXIT_CODES.FAILURE),
      };
    default:
      throw new UsageError(
        `unknown plugins command ${sub}; use list, enable, disable, reload, install, uninstall or health`,
        `未知的 plugins 子命令 ${sub}；可用 list、enable、disable、reload、install、uninstall 或 health`,
      );
  }
}

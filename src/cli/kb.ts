/**
 * `homeagentctl kb tree|search|add|rm|import|reindex|stats|token`: the household knowledge library
 * of a running daemon (the `kb.*` control methods, and `kbtree.token` of the kbtree plugin).
 * `kb add` reads its file or stdin here, with the rights of the person typing; `kb import` hands an
 * absolute folder to the daemon, which reads it with its own rights (and audits it).
 */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { KbAddResult, KbRemoveResult, KbSearchResult } from '../api/knowledge.js';
import type { KbImportResult, KbReindexResult, KbStatsResult, KbTreeResult } from '../knowledge/knowledge-methods.js';
import type { TreeNode } from '../knowledge/types.js';
import { EXIT_CODES } from '../shared/exit-codes.js';
import type { Language } from '../shared/language.js';
import { cliLanguage } from './cli-language.js';
import { runLanguage, stateWord } from './cli-words.js';
import { CommandUsageError } from './command-module.js';
import { bytes, displayWidth } from './format.js';
import { RemoteError } from './rpc-client.js';

/** homeagentctl's option table entries for kb (merged into its parseArgs options; --limit is shared with memory). */
export const KB_OPTIONS = {
  category: { type: 'string', short: 'c' },
  depth: { type: 'string' },
  items: { type: 'boolean' },
  limit: { type: 'string' },
  file: { type: 'string', short: 'f' },
  content: { type: 'string' },
  overwrite: { type: 'boolean' },
} as const;

export type KbFlags = {
  [K in keyof typeof KB_OPTIONS]?: ((typeof KB_OPTIONS)[K]['type'] extends 'boolean' ? boolean : string) | undefined;
};

export type KbSource = { file: string } | { content: string } | { stdin: true };

export type KbCommand =
  | { command: 'tree'; category?: string; depth?: number; items: boolean }
  | { command: 'search'; query: string; category?: string; limit?: number }
  | { command: 'add'; name: string; source: KbSource; overwrite: boolean }
  | { command: 'rm'; name: string }
  | { command: 'import'; dir: string; category?: string }
  | { command: 'reindex' }
  | { command: 'stats' }
  | { command: 'token' };

/** Commands that can read or embed a whole library: they get a longer default timeout. */
export const KB_LONG_COMMANDS: ReadonlySet<KbCommand['command']> = new Set(['import', 'reindex']);
export const KB_LONG_TIMEOUT_MS = 600_000;

export class KbUsageError extends CommandUsageError {}

const COMMANDS = 'tree, search, add, rm, import, reindex, stats or token';
const COMMANDS_ZH = 'tree、search、add、rm、import、reindex、stats 或 token';

const ALLOWED: Record<KbCommand['command'], ReadonlyArray<keyof KbFlags>> = {
  tree: ['depth', 'items'],
  search: ['category', 'limit'],
  add: ['file', 'content', 'overwrite'],
  rm: [],
  import: ['category'],
  reindex: [],
  stats: [],
  token: [],
};

/** The kb flags given on the command line (homeagentctl refuses them on other commands). */
export function kbFlagsUsed(flags: KbFlags): Array<keyof KbFlags> {
  return (Object.keys(KB_OPTIONS) as Array<keyof KbFlags>).filter((k) => flags[k] !== undefined);
}

/**
 * Reads `kb <sub> …` (positionals after `kb`); throws KbUsageError. `stdinIsTty` decides whether
 * `kb add` without --file or --content may read stdin; `cwd` resolves --file and the import folder.
 */
export function parseKbCommand(
  positionals: readonly string[],
  flags: KbFlags,
  env: { cwd?: string; stdinIsTty?: boolean } = {},
): KbCommand {
  const cwd = env.cwd ?? process.cwd();
  const [sub, ...rest] = positionals;
  if (sub === undefined) throw new KbUsageError(`kb needs a command: ${COMMANDS}`, `kb 需要一个子命令：${COMMANDS_ZH}`);
  if (!Object.hasOwn(ALLOWED, sub))
    throw new KbUsageError(`unknown kb command ${sub}; use ${COMMANDS}`, `未知的 kb 子命令 ${sub}；可用 ${COMMANDS_ZH}`);
  const command = sub as KbCommand['command'];
  const stray = kbFlagsUsed(flags).filter((f) => !ALLOWED[command].includes(f));
  if (stray.length > 0) throw new KbUsageError(`--${stray[0]} does not belong to kb ${command}`, `--${stray[0]} 不属于 kb ${command}`);
  const one = (what: string): string => {
    if (rest.length !== 1 || (rest[0] ?? '').trim() === '') {
      throw new KbUsageError(
        `kb ${command} needs exactly one ${what} (quote it if it has spaces)`,
        `kb ${command} 需要恰好一个 ${what}（含空格时加引号）`,
      );
    }
    return (rest[0] as string).trim();
  };
  const none = () => {
    if (rest.length > 0) throw new KbUsageError(`kb ${command} takes no arguments`, `kb ${command} 不接受参数`);
  };
  const category =
    flags.category === undefined
      ? {}
      : { category: nonEmpty(flags.category, '--category needs a CATEGORY', '--category 需要一个 CATEGORY') };
  switch (command) {
    case 'tree': {
      if (rest.length > 1)
        throw new KbUsageError(
          'kb tree takes at most one CATEGORY (quote it if it has spaces)',
          'kb tree 最多接受一个 CATEGORY（含空格时加引号）',
        );
      const start = rest[0]?.trim();
      return {
        command,
        ...(start !== undefined && start !== '' && { category: start }),
        ...(flags.depth !== undefined && { depth: integer(flags.depth, '--depth', 0, 64) }),
        items: flags.items === true,
      };
    }
    case 'search': {
      // Words are joined so that `kb search tomato soup` needs no quotes.
      const query = rest.join(' ').trim();
      if (query === '') throw new KbUsageError('kb search needs the TEXT to look for', 'kb search 需要要查找的 TEXT');
      return {
        command,
        query,
        ...category,
        ...(flags.limit !== undefined && { limit: integer(flags.limit, '--limit', 1, 100) }),
      };
    }
    case 'add': {
      const name = one('NAME');
      if (flags.file !== undefined && flags.content !== undefined)
        throw new KbUsageError('kb add takes --file or --content, not both', 'kb add 接受 --file 或 --content，不能同时给出');
      let source: KbSource;
      if (flags.file !== undefined) source = { file: resolve(cwd, nonEmpty(flags.file, '--file needs a FILE', '--file 需要一个 FILE')) };
      else if (flags.content !== undefined)
        source = { content: nonEmpty(flags.content, '--content needs the TEXT of the entry', '--content 需要条目的 TEXT') };
      else if (env.stdinIsTty === true)
        throw new KbUsageError(
          'kb add needs the text: --file FILE, --content TEXT, or piped on stdin',
          'kb add 需要文字：--file FILE、--content TEXT，或从标准输入传入',
        );
      else source = { stdin: true };
      return { command, name, source, overwrite: flags.overwrite === true };
    }
    case 'rm':
      return { command, name: one('NAME') };
    case 'import':
      return { command, dir: resolve(cwd, one('DIR')), ...category };
    case 'reindex':
    case 'stats':
    case 'token':
      none();
      return { command };
  }
}

function nonEmpty(value: string, problem: string, problemZh: string): string {
  if (value.trim() === '') throw new KbUsageError(problem, problemZh);
  return value.trim();
}

function integer(text: string, flag: string, min: number, max: number): number {
  const n = Number(text);
  if (text.trim() === '' || !Number.isInteger(n) || n < min || n > max) {
    throw new KbUsageError(`${flag} must be a whole number from ${min} to ${max}`, `${flag} 须为 ${min} 到 ${max} 之间的整数`);
  }
  return n;
}

/** What runKb needs of a connection (RpcClient fits). */
export interface KbClient {
  call(method: string, params: object, timeoutMs: number): Promise<unknown>;
  close(): void;
}

export interface KbIo {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
  /** All of stdin, for `kb add` without --file or --content. */
  readStdin(): Promise<Uint8Array>;
}

export interface KbRunOptions {
  /** Opens the connection; called once the entry text (if any) has been read. */
  connect: () => Promise<KbClient>;
  json: boolean;
  timeoutMs: number;
  /** The language of the readable output; the terminal's by default. */
  language?: Language;
  io?: KbIo;
}

/** All of a stream's bytes (stdin for `kb add` without --file or --content). */
export async function readStream(stream: NodeJS.ReadableStream): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
  return Buffer.concat(chunks);
}

function processIo(): KbIo {
  return { stdout: process.stdout, stderr: process.stderr, readStdin: () => readStream(process.stdin) };
}

/** Runs a parsed kb command; resolves with the exit code. Daemon errors are thrown (homeagentctl reports them). */
export async function runKb(command: KbCommand, options: KbRunOptions): Promise<number> {
  const io = options.io ?? processIo();
  const language = runLanguage(options);
  const w = WORDS[language];
  // The text is read first: a missing file should not cost a connection, and fails as usage.
  let content: string | undefined;
  if (command.command === 'add') {
    const text = await entryText(command.source, io);
    if (typeof text !== 'string') {
      io.stderr.write(`homeagentctl: ${text.problem}\n`);
      return EXIT_CODES.USAGE;
    }
    content = text;
  }
  const client = await options.connect();
  try {
    const call = (method: string, params: object) => client.call(method, params, options.timeoutMs);
    const print = <R>(result: R, format: (r: R) => string) => {
      io.stdout.write(`${options.json ? JSON.stringify(result, null, 2) : format(result)}\n`);
      return EXIT_CODES.OK;
    };
    switch (command.command) {
      case 'tree': {
        const params = {
          ...(command.category !== undefined && { category: command.category }),
          ...(command.depth !== undefined && { depth: command.depth }),
          ...(command.items && { items: true }),
        };
        return print((await call('kb.tree', params)) as KbTreeResult, (r) => formatTree(r, language));
      }
      case 'search': {
        const params = {
          q: command.query,
          ...(command.category !== undefined && { category: command.category }),
          ...(command.limit !== undefined && { limit: command.limit }),
        };
        return print((await call('kb.search', params)) as KbSearchResult, (r) => formatSearch(r, language));
      }
      case 'add':
        return print(
          (await call('kb.add', { name: command.name, content, ...(command.overwrite && { overwrite: true }) })) as KbAddResult,
          (r) => formatAdd(r, language),
        );
      case 'rm':
        return print((await call('kb.rm', { name: command.name })) as KbRemoveResult, (r) => w.removed(r.name));
      case 'import': {
        const params = { dir: command.dir, ...(command.category !== undefined && { category: command.category }) };
        return print((await call('kb.import', params)) as KbImportResult, (r) => formatImport(r, language));
      }
      case 'reindex':
        return print((await call('kb.reindex', {})) as KbReindexResult, (r) => formatReindex(r, language));
      case 'stats':
        return print((await call('kb.stats', {})) as KbStatsResult, (r) => formatStats(r, language));
      case 'token':
        return print((await tokenCall(call)) as TokenResult, (r) => formatToken(r, language));
    }
  } finally {
    client.close();
  }
}

/** What `kbtree.token` answers (the kbtree plugin's TokenInfo; the CLI may not import plugins). */
interface TokenResult {
  token: string;
  url: string;
  source?: 'random' | 'configured';
}

export function formatToken(r: TokenResult, language: Language = cliLanguage()): string {
  const w = WORDS[language];
  const source = r.source === 'random' ? w.randomToken : r.source === 'configured' ? w.configuredToken : '';
  return `token  ${r.token}${source}\nurl    ${r.url}\n${w.sendToken}`;
}

async function tokenCall(call: (method: string, params: object) => Promise<unknown>): Promise<unknown> {
  try {
    return await call('kbtree.token', {});
  } catch (error) {
    if (error instanceof RemoteError && error.code === 'HA_ERR_RPC_UNKNOWN_METHOD') {
      throw new RemoteError({
        code: error.code,
        message: 'the kbtree service is not running: enable it with plugin.kbtree.enabled: true and restart HomeAgent',
      });
    }
    throw error;
  }
}

/** The entry text, or the problem reading it. */
async function entryText(source: KbSource, io: KbIo): Promise<string | { problem: string }> {
  let raw: Uint8Array;
  let from: string;
  if ('content' in source) return source.content;
  if ('file' in source) {
    from = source.file;
    try {
      raw = await readFile(source.file);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      return { problem: `kb add: cannot read ${source.file}${code === 'ENOENT' ? ': no such file' : ` (${code})`}` };
    }
  } else {
    from = 'stdin';
    raw = await io.readStdin();
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(raw);
  } catch {
    return { problem: `kb add: ${from} is not UTF-8 text` };
  }
  if (text.trim() === '') return { problem: `kb add: ${from} is empty` };
  return text;
}

// ---- readable output ----

function plural(n: number, word: string, many = `${word}s`): string {
  return `${n} ${n === 1 ? word : many}`;
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' / ').trim();
}

/** A count in Chinese: the number, then the measure word and the noun ("3 个附件"). */
const count = (n: number, noun: string): string => `${n} ${noun}`;

/** Every sentence the kb command prints around the library's contents, in both languages. */
const WORDS = {
  en: {
    removed: (name: string) => `removed ${name}`,
    randomToken: ' (random for this run)',
    configuredToken: ' (plugin.kbtree.token)',
    sendToken: 'send it as X-API-Key: TOKEN, Authorization: Bearer TOKEN, or ?token=TOKEN',
    library: 'knowledge library',
    entries: (n: number) => plural(n, 'entry', 'entries'),
    here: (n: number) => ` (${n} here)`,
    attachments: (n: number) => `  [${plural(n, 'attachment')}]`,
    empty: '  (empty: add entries with homeagentctl kb add or kb import)',
    noMatch: (where: string | null, query: string) => `no entries${where === null ? '' : ` in ${where}`} match ${query}`,
    added: (r: KbAddResult) =>
      `${r.replaced ? 'replaced' : 'added'} ${r.name} (${bytes(r.bytes)}${r.media > 0 ? `, ${plural(r.media, 'attachment')} kept` : ''})`,
    imported: (r: KbImportResult) =>
      `imported ${plural(r.imported.length, 'file')}${r.category === null ? '' : ` into ${r.category}`} from ${r.dir} in ${(r.ms / 1000).toFixed(1)} s` +
      (r.skipped.length > 0 ? `, skipped ${r.skipped.length}:` : ''),
    more: (n: number) => `  ... and ${n} more (--json lists them all)`,
    reindexed: (r: KbReindexResult, skipped: number) =>
      `reindexed: ${plural(r.indexed, 'entry', 'entries')} indexed, ${r.removed} removed, in ${r.ms} ms` +
      (skipped > 0 ? `; skipped ${skipped}:` : ''),
    statRows: (s: KbStatsResult): Array<[string, string]> => [
      ['entries', String(s.entries)],
      ['categories', String(s.categories)],
      ['media', `${plural(s.media.files, 'file')}, ${bytes(s.media.bytes)}`],
      ['index', `${s.index.state}, ${s.index.indexed} indexed`],
      [
        'vectors',
        s.dense.enabled ? `${s.dense.ready ? 'ready' : 'not ready'}, ${s.dense.total} of ${s.entries}` : 'off (no embedder: words only)',
      ],
    ],
    statsHead: 'knowledge library:',
  },
  zh: {
    removed: (name: string) => `已删除 ${name}`,
    randomToken: '（本次运行随机生成）',
    configuredToken: '（plugin.kbtree.token）',
    sendToken: '以 X-API-Key: TOKEN、Authorization: Bearer TOKEN 或 ?token=TOKEN 发送',
    library: '知识库',
    entries: (n: number) => count(n, '个条目'),
    here: (n: number) => `（本层 ${n} 个）`,
    attachments: (n: number) => `  [${count(n, '个附件')}]`,
    empty: '  （空的：用 homeagentctl kb add 或 kb import 添加条目）',
    noMatch: (where: string | null, query: string) => `${where === null ? '' : `${where} 里`}没有条目匹配 ${query}`,
    added: (r: KbAddResult) =>
      `${r.replaced ? '已替换' : '已添加'} ${r.name}（${bytes(r.bytes)}${r.media > 0 ? `，保留 ${count(r.media, '个附件')}` : ''}）`,
    imported: (r: KbImportResult) =>
      `已从 ${r.dir} 导入 ${count(r.imported.length, '个文件')}${r.category === null ? '' : `到 ${r.category}`}，用时 ${(r.ms / 1000).toFixed(1)} 秒` +
      (r.skipped.length > 0 ? `，跳过 ${r.skipped.length} 个：` : ''),
    more: (n: number) => `  ……还有 ${n} 个（--json 会全部列出）`,
    reindexed: (r: KbReindexResult, skipped: number) =>
      `已重建索引：索引 ${count(r.indexed, '个条目')}，移除 ${r.removed} 个，用时 ${r.ms} 毫秒` +
      (skipped > 0 ? `；跳过 ${skipped} 个：` : ''),
    statRows: (s: KbStatsResult): Array<[string, string]> => [
      ['条目', String(s.entries)],
      ['分类', String(s.categories)],
      ['媒体', `${count(s.media.files, '个文件')}，${bytes(s.media.bytes)}`],
      ['索引', `${stateWord(s.index.state, 'zh')}，已索引 ${s.index.indexed}`],
      [
        '向量',
        s.dense.enabled ? `${s.dense.ready ? '就绪' : '未就绪'}，${s.dense.total} / ${s.entries}` : '关闭（没有嵌入模型：只按词检索）',
      ],
    ],
    statsHead: '知识库：',
  },
} as const;

/** An indented tree: each category with its entry count (and those directly in it when some are), items under it. */
export function formatTree(root: TreeNode, language: Language = cliLanguage()): string {
  const w = WORDS[language];
  const lines = [`${root.path === '' ? w.library : root.path}${language === 'zh' ? '：' : ': '}${w.entries(root.total_count)}`];
  const walk = (node: TreeNode, indent: string) => {
    for (const child of node.children) {
      const here = child.item_count > 0 && child.item_count !== child.total_count ? w.here(child.item_count) : '';
      lines.push(`${indent}${child.name}/  ${child.total_count}${here}`);
      walk(child, `${indent}  `);
    }
    for (const item of node.items ?? []) {
      const media = item.media > 0 ? w.attachments(item.media) : '';
      const preview = oneLine(item.preview);
      lines.push(`${indent}- ${item.name}${preview === '' ? '' : `  ${preview}`}${media}`);
    }
  };
  walk(root, '  ');
  if (root.total_count === 0) lines.push(w.empty);
  return lines.join('\n');
}

export function formatSearch(r: KbSearchResult, language: Language = cliLanguage()): string {
  if (r.hits.length === 0) return WORDS[language].noMatch(r.category, JSON.stringify(r.query));
  const lines: string[] = [];
  r.hits.forEach((hit, i) => {
    lines.push(`${i + 1}. ${hit.name}  ${hit.score.toFixed(3)}`);
    const snippet = oneLine(hit.snippet);
    if (snippet !== '') lines.push(`   ${snippet}`);
  });
  return lines.join('\n');
}

function formatAdd(r: KbAddResult, language: Language): string {
  return WORDS[language].added(r);
}

/** Skip reasons listed at most in readable output (--json has them all). */
const SKIPS_SHOWN = 50;

export function formatImport(r: KbImportResult, language: Language = cliLanguage()): string {
  const w = WORDS[language];
  const lines = [w.imported(r)];
  for (const skip of r.skipped.slice(0, SKIPS_SHOWN)) lines.push(`  ${skip.file}: ${skip.reason}`);
  if (r.skipped.length > SKIPS_SHOWN) lines.push(w.more(r.skipped.length - SKIPS_SHOWN));
  return lines.join('\n');
}

export function formatReindex(r: KbReindexResult, language: Language = cliLanguage()): string {
  const w = WORDS[language];
  const skipped = r.skipped ?? [];
  const lines = [w.reindexed(r, skipped.length)];
  for (const skip of skipped.slice(0, SKIPS_SHOWN)) lines.push(`  ${skip.file}: ${skip.reason}`);
  if (skipped.length > SKIPS_SHOWN) lines.push(w.more(skipped.length - SKIPS_SHOWN));
  return lines.join('\n');
}

export function formatStats(s: KbStatsResult, language: Language = cliLanguage()): string {
  const w = WORDS[language];
  const rows = w.statRows(s);
  const width = Math.max(...rows.map(([k]) => displayWidth(k)));
  return [w.statsHead, ...rows.map(([k, v]) => `  ${k}${' '.repeat(width - displayWidth(k))}  ${v}`)].join('\n');
}

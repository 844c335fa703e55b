/**
 * `homeagentctl memory search|stats|entity|forget|export`: looks into and corrects the household
 * memory of a running daemon (the `memory.*` control methods). `export` pages through everything
 * and writes JSON Lines to stdout or, atomically, to a file: the daemon itself never writes files
 * for an export.
 */
import { randomBytes } from 'node:crypto';
import { type FileHandle, open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import type { EntityView as EntityResult, EntityRelationView as RelationView } from '../api/memory.js';
import type { ForgetResult, MemoryStats as StatsResult } from '../memory/memory-methods.js';
import { EXIT_CODES } from '../shared/exit-codes.js';
import type { Language } from '../shared/language.js';
import { cliLanguage } from './cli-language.js';
import { runLanguage } from './cli-words.js';
import { CommandUsageError } from './command-module.js';
import { bytes, displayWidth } from './format.js';

/** homeagentctl's option table entries for memory (merged into its parseArgs options). */
export const MEMORY_OPTIONS = {
  limit: { type: 'string' },
  entity: { type: 'string' },
  event: { type: 'string' },
  document: { type: 'string' },
  hard: { type: 'boolean' },
  yes: { type: 'boolean', short: 'y' },
  out: { type: 'string', short: 'o' },
} as const;

export type MemoryFlags = {
  [K in keyof typeof MEMORY_OPTIONS]?: ((typeof MEMORY_OPTIONS)[K]['type'] extends 'boolean' ? boolean : string) | undefined;
};

export type ForgetTarget = { entity: string } | { event: string } | { document: number };

export type MemoryCommand =
  | { command: 'search'; query: string; limit?: number }
  | { command: 'stats' }
  | { command: 'entity'; name: string }
  | { command: 'forget'; target: ForgetTarget; hard: boolean; yes: boolean }
  | { command: 'export'; out?: string };

export class MemoryUsageError extends CommandUsageError {}

/** The memory flags given on the command line (homeagentctl refuses them on other commands). */
export function memoryFlagsUsed(flags: MemoryFlags): Array<keyof MemoryFlags> {
  return (Object.keys(MEMORY_OPTIONS) as Array<keyof MemoryFlags>).filter((k) => flags[k] !== undefined);
}

const ALLOWED: Record<MemoryCommand['command'], ReadonlyArray<keyof MemoryFlags>> = {
  search: ['limit'],
  stats: [],
  entity: [],
  forget: ['entity', 'event', 'document', 'hard', 'yes'],
  export: ['out'],
};

/** Reads `memory <sub> …` (positionals after `memory`); throws MemoryUsageError. `cwd` resolves --out. */
export function parseMemoryCommand(positionals: readonly string[], flags: MemoryFlags, cwd: string = process.cwd()): MemoryCommand {
  const [sub, ...rest] = positionals;
  if (sub === undefined)
    throw new MemoryUsageError(
      'memory needs a command: search, stats, entity, forget or export',
      'memory 需要一个子命令：search、stats、entity、forget 或 export',
    );
  if (!Object.hasOwn(ALLOWED, sub)) {
    throw new MemoryUsageError(
      `unknown memory command ${sub}; use search, stats, entity, forget or export`,
      `未知的 memory 子命令 ${sub}；可用 search、stats、entity、forget 或 export`,
    );
  }
  const command = sub as MemoryCommand['command'];
  const stray = memoryFlagsUsed(flags).filter((f) => !ALLOWED[command].includes(f));
  if (stray.length > 0)
    throw new MemoryUsageError(`--${stray[0]} does not belong to memory ${command}`, `--${stray[0]} 不属于 memory ${command}`);
  // Words are joined so that `memory entity green tea` needs no quotes.
  const text = rest.join(' ').trim();
  switch (command) {
    case 'search': {
      if (text === '') throw new MemoryUsageError('memory search needs the TEXT to look for', 'memory search 需要要查找的 TEXT');
      if (flags.limit === undefined) return { command, query: text };
      const limit = Number(flags.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 50)
        throw new MemoryUsageError('--limit must be a whole number from 1 to 50', '--limit 须为 1 到 50 之间的整数');
      return { command, query: text, limit };
    }
    case 'stats':
      if (rest.length > 0) throw new MemoryUsageError('memory stats takes no arguments', 'memory stats 不接受参数');
      return { command };
    case 'entity':
      if (text === '') throw new MemoryUsageError('memory entity needs a NAME', 'memory entity 需要一个 NAME');
      return { command, name: text };
    case 'forget':
      return { command, target: forgetTarget(rest, flags), hard: flags.hard === true, yes: flags.yes === true };
    case 'export':
      if (rest.length > 0)
        throw new MemoryUsageError(
          'memory export takes no arguments; the file goes after --out',
          'memory export 不接受参数；文件写在 --out 之后',
        );
      return flags.out === undefined ? { command } : { command, out: resolve(cwd, flags.out) };
  }
}

function forgetTarget(rest: readonly string[], flags: MemoryFlags): ForgetTarget {
  if (rest.length > 0)
    throw new MemoryUsageError(
      'memory forget takes its target as --entity NAME, --event ID or --document ID',
      'memory forget 的对象用 --entity NAME、--event ID 或 --document ID 给出',
    );
  const given = (['entity', 'event', 'document'] as const).filter((k) => flags[k] !== undefined);
  if (given.length !== 1)
    throw new MemoryUsageError(
      'memory forget needs exactly one of --entity NAME, --event ID or --document ID',
      'memory forget 需要 --entity NAME、--event ID、--document ID 中的恰好一个',
    );
  if (flags.hard && given[0] !== 'entity') {
    throw new MemoryUsageError(
      '--hard applies to --entity only; events and documents are always deleted',
      '--hard 只用于 --entity；事件和文档总是直接删除',
    );
  }
  if (flags.entity !== undefined) {
    if (flags.entity.trim() === '') throw new MemoryUsageError('--entity needs a NAME', '--entity 需要一个 NAME');
    return { entity: flags.entity.trim() };
  }
  if (flags.event !== undefined) {
    if (flags.event.trim() === '') throw new MemoryUsageError('--event needs an ID', '--event 需要一个 ID');
    return { event: flags.event.trim() };
  }
  const id = Number(flags.document);
  if (!Number.isSafeInteger(id) || id < 1)
    throw new MemoryUsageError('--document needs a document id (a positive whole number)', '--document 需要一个文档 ID（正整数）');
  return { document: id };
}

/** What runMemory needs of a connection (RpcClient fits). */
export interface MemoryClient {
  call(method: string, params: object, timeoutMs: number): Promise<unknown>;
  close(): void;
}

export interface MemoryIo {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
  /** Whether a person can be asked (stdin is a terminal). */
  interactive: boolean;
  /** Asks a question and resolves with the answer line. */
  ask(question: string): Promise<string>;
}

export interface MemoryRunOptions {
  /** Opens the connection; called only once the command is sure to run (after any confirmation). */
  connect: () => Promise<MemoryClient>;
  json: boolean;
  timeoutMs: number;
  /** The language of the readable output and the --hard question; the terminal's by default. */
  language?: Language;
  io?: MemoryIo;
}

function processIo(): MemoryIo {
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    interactive: process.stdin.isTTY === true,
    ask: (question) =>
      new Promise((resolveAnswer) => {
        // The question goes to stderr so that stdout stays clean for --json.
        const lines = createInterface({ input: process.stdin, output: process.stderr });
        lines.question(question, (answer) => {
          lines.close();
          resolveAnswer(answer);
        });
      }),
  };
}

/** Runs a parsed memory command; resolves with the exit code. Daemon errors are thrown (homeagentctl reports them). */
export async function runMemory(command: MemoryCommand, options: MemoryRunOptions): Promise<number> {
  const io = options.io ?? processIo();
  const language = runLanguage(options);
  if (command.command === 'forget' && command.hard && !command.yes) {
    const refusal = await confirmHard(command.target, io, language);
    if (refusal !== undefined) return refusal;
  }
  const client = await options.connect();
  try {
    const call = (method: string, params: object) => client.call(method, params, options.timeoutMs);
    switch (command.command) {
      case 'search': {
        const result = (await call('memory.search', {
          query: command.query,
          ...(command.limit && { limit: command.limit }),
        })) as SearchResult;
        io.stdout.write(`${options.json ? JSON.stringify(result, null, 2) : formatSearch(result, language)}\n`);
        return EXIT_CODES.OK;
      }
      case 'stats': {
        const result = (await call('memory.stats', {})) as StatsResult;
        io.stdout.write(`${options.json ? JSON.stringify(result, null, 2) : formatStats(result, language)}\n`);
        return EXIT_CODES.OK;
      }
      case 'entity': {
        const result = (await call('memory.entity', { name: command.name })) as EntityResult;
        io.stdout.write(`${options.json ? JSON.stringify(result, null, 2) : formatEntity(result, language)}\n`);
        return EXIT_CODES.OK;
      }
      case 'forget': {
        const params = { ...command.target, ...('entity' in command.target && { hard: command.hard }) };
        const result = (await call('memory.forget', params)) as ForgetResult;
        io.stdout.write(`${options.json ? JSON.stringify(result, null, 2) : formatForget(result, language)}\n`);
        return EXIT_CODES.OK;
      }
      case 'export': {
        const pages = (cursor: string | undefined) =>
          call('memory.export', cursor === undefined ? {} : { cursor }) as Promise<{ records: ExportedRecord[]; next?: string }>;
        if (command.out === undefined) {
          await exportRecords(pages, (text) => writeStream(io.stdout, text));
          return EXIT_CODES.OK;
        }
        const summary = await exportToFile(pages, command.out);
        io.stdout.write(`${options.json ? JSON.stringify({ ok: true, ...summary }, null, 2) : formatExportSummary(summary, language)}\n`);
        return EXIT_CODES.OK;
      }
    }
  } finally {
    client.close();
  }
}

async function confirmHard(target: ForgetTarget, io: MemoryIo, language: Language): Promise<number | undefined> {
  const name = 'entity' in target ? target.entity : '';
  const w = WORDS[language];
  if (!io.interactive) {
    io.stderr.write(`homeagentctl: ${w.hardNeedsYes(JSON.stringify(name))}\n`);
    return EXIT_CODES.USAGE;
  }
  const answer = await io.ask(w.hardQuestion(JSON.stringify(name)));
  // y/yes in either language's habit: 是 and 确定 too.
  if (/^\s*(y(es)?|是|确定)\s*$/i.test(answer)) return undefined;
  io.stderr.write(`homeagentctl: ${w.nothingForgotten}\n`);
  return EXIT_CODES.FAILURE;
}

/** A record of `memory.export`. */
export type ExportedRecord = { type: string } & Record<string, unknown>;

export interface ExportSummary {
  records: number;
  bytes: number;
  /** Records per type. */
  counts: Record<string, number>;
  file?: string;
}

/**
 * Pages through `memory.export` from the start, handing each page to `write` as JSON Lines.
 * Stops with an error if the daemon hands back a cursor that does not move on.
 */
export async function exportRecords(
  page: (cursor: string | undefined) => Promise<{ records: ExportedRecord[]; next?: string }>,
  write: (text: string) => Promise<void>,
): Promise<ExportSummary> {
  const summary: ExportSummary = { records: 0, bytes: 0, counts: {} };
  let cursor: string | undefined;
  const seen = new Set<string>();
  for (;;) {
    const { records, next } = await page(cursor);
    if (records.length > 0) {
      const text = `${records.map((r) => JSON.stringify(r)).join('\n')}\n`;
      await write(text);
      summary.bytes += Buffer.byteLength(text);
      summary.records += records.length;
      for (const r of records) summary.counts[r.type] = (summary.counts[r.type] ?? 0) + 1;
    }
    if (next === undefined) return summary;
    if (seen.has(next)) throw new Error(`the export stopped moving at cursor ${next}; the file was not written`);
    seen.add(next);
    cursor = next;
  }
}

/**
 * Exports into `file` atomically: a temporary file next to it, flushed to disk, then renamed over
 * it, so `file` is either the previous version or the complete export, never half of one.
 */
export async function exportToFile(
  page: (cursor: string | undefined) => Promise<{ records: ExportedRecord[]; next?: string }>,
  file: string,
): Promise<ExportSummary & { file: string }> {
  const tmp = join(dirname(file), `.${basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  let handle: FileHandle | undefined = await open(tmp, 'wx', 0o600);
  try {
    const h = handle;
    const summary = await exportRecords(page, async (text) => {
      await h.write(text);
    });
    await h.sync();
    await h.close();
    handle = undefined;
    await rename(tmp, file);
    await syncDir(dirname(file));
    return { ...summary, file };
  } catch (error) {
    await handle?.close().catch(() => undefined);
    await rm(tmp, { force: true });
    throw error;
  }
}

async function syncDir(dir: string): Promise<void> {
  // The rename is durable once the directory entry is; some filesystems refuse fsync on a directory.
  const handle = await open(dir, 'r').catch(() => undefined);
  if (!handle) return;
  try {
    await handle.sync();
  } catch {
    // Not supported here: the rename still happened.
  } finally {
    await handle.close();
  }
}

/** Writes and waits for a full pipe to drain, so a large export to stdout stays within memory. */
function writeStream(stream: MemoryIo['stdout'], text: string): Promise<void> {
  const ok = stream.write(text);
  const emitter = stream as Partial<NodeJS.WritableStream>;
  if (ok !== false || typeof emitter.once !== 'function') return Promise.resolve();
  return new Promise((resolveDrain, reject) => {
    const onDrain = () => {
      emitter.off?.('error', onError);
      resolveDrain();
    };
    const onError = (error: Error) => {
      emitter.off?.('drain', onDrain);
      reject(error);
    };
    emitter.once?.('drain', onDrain);
    emitter.once?.('error', onError);
  });
}

// ---- readable output ----

interface SearchResult {
  abstain: boolean;
  items: Array<{ kind: string; text: string; line?: string; score: number; sources: string[]; at: string | null }>;
}

/** `2024-05-06 08:00` from an ISO time. */
function when(iso: string | null): string {
  return iso === null ? '?' : iso.slice(0, 16).replace('T', ' ');
}

function plural(n: number, word: string, many = `${word}s`): string {
  return `${n} ${n === 1 ? word : many}`;
}

const PLURALS: Record<string, string> = { entity: 'entities' };

/** A count in Chinese: the number, then the measure word and the noun ("3 条事实"). */
const count = (n: number, noun: string): string => `${n} ${noun}`;

/** The record types of an export, as the Chinese summary names them; others keep their own name. */
const RECORD_TYPES_ZH: Record<string, string> = {
  entity: '个实体',
  relation: '条关系',
  sentence: '个句子',
  event: '个事件',
  document: '份文档',
};

/** Every sentence the memory command prints around what memory holds, in both languages. */
const WORDS = {
  en: {
    hardNeedsYes: (name: string) =>
      `memory forget --hard deletes ${name} and all its relations for good; stdin is not a terminal, so add --yes to confirm`,
    hardQuestion: (name: string) => `Delete ${name} with all its relations and their history for good? [y/N] `,
    nothingForgotten: 'nothing was forgotten',
    noRecord: 'no record: nothing in memory relates to this (the prompt would say so)',
    from: (sources: string[]) => `   from ${sources.join(', ')}`,
    memory: 'memory:',
    waiting: (n: number) => `, ${n} waiting for vectors`,
    minutes: (ms: number) => (ms % 60_000 === 0 ? `${ms / 60_000} min` : `${(ms / 1000).toFixed(0)} s`),
    every: (loop: string, interval: string) => `${loop} every ${interval}`,
    statRows: (s: StatsResult, stale: (n: number) => string): Array<[string, string]> => [
      ['window', `${s.window.events} of ${s.window.max_size} events`],
      ['documents', `${s.documents.total}${stale(s.documents.vectors_stale)}`],
      ['entities', `${s.entities.total} (${plural(s.entities.aliases, 'alias', 'aliases')})${stale(s.entities.vectors_stale)}`],
      ['relations', `${s.relations.current} current, ${s.relations.history} history`],
      ['sentences', String(s.sentences)],
      ['no-merge marks', String(s.no_merge_marks)],
      ['embedder', `${s.embedder.fingerprint} (${s.embedder.dim} dims)`],
    ],
    maintenance: 'maintenance',
    database: 'database',
    relationTypes: 'relation types:',
    mostMentioned: 'most mentioned:',
    hotspot: (h: StatsResult['hotspots'][number]) =>
      `  ${h.name}${h.type ? ` (${h.type})` : ''}: ${plural(h.mentions, 'mention')}, ${plural(h.degree, 'fact')}`,
    since: (from: string) => `since ${from}`,
    relation: (r: RelationView, span: string) =>
      `  ${r.subject} ${r.relation} ${r.object}   ${span}, confidence ${r.confidence.toFixed(2)}, seen ${r.evidence_count}x`,
    eventOrigin: (id: string) => `event ${id}`,
    documentOrigin: (id: number) => `document ${id}`,
    entityHead: (e: EntityResult['entity']) =>
      `${e.name}${e.type ? ` (${e.type})` : ''}: ${plural(e.mention_count, 'mention')}${e.aliases.length ? `, also called ${e.aliases.join(', ')}` : ''}`,
    facts: 'facts:',
    noneCurrent: '  (none current)',
    history: 'history:',
    truncated: '(more relations exist than are shown; use memory export for all of them)',
    softForgot: (entity: string, n: number) => `${entity}: ${plural(n, 'current fact')} ended (kept as history; --hard deletes)`,
    hardForgot: (entity: string, relations: number, sentences: number) =>
      `${entity} deleted with ${plural(relations, 'relation')} and ${plural(sentences, 'sentence')}`,
    fromWindow: 'removed from the context window',
    archiveDeleted: (ids: number[]) => `archive document ${ids.join(', ')} deleted`,
    rawLog: (n: number) => `${plural(n, 'line')} removed from the raw conversation log`,
    factsKept: (n: number) =>
      `; ${plural(n, 'sentence')} read from it ${n === 1 ? 'stays' : 'stay'} in the graph (forget the entities to remove them)`,
    eventForgot: (event: string, parts: string) => `event ${event}: ${parts}`,
    documentForgot: (id: number) => `document ${id} deleted`,
    relationForgot: (r: Extract<ForgetResult, { target: 'relation' }>) =>
      `relation ${r.relation} (${r.fact}${r.was_current ? '' : ', history'}) deleted${r.sentences_removed > 0 ? ` with ${plural(r.sentences_removed, 'sentence')} nothing else cites` : ''}`,
    recordType: (type: string, n: number) => plural(n, type, PLURALS[type]),
    exported: (records: number, counts: string, size: string, file: string) =>
      `exported ${plural(records, 'record')}${counts ? ` (${counts})` : ''}, ${size}, to ${file}`,
    listSeparator: ', ',
  },
  zh: {
    hardNeedsYes: (name: string) => `memory forget --hard 会永久删除 ${name} 及其全部关系；标准输入不是终端，请加 --yes 确认`,
    hardQuestion: (name: string) => `永久删除 ${name} 及其全部关系和历史吗？[y/N] `,
    nothingForgotten: '什么都没有遗忘',
    noRecord: '没有记录：记忆里没有与此相关的内容（提示词也会这样说）',
    from: (sources: string[]) => `   来自 ${sources.join('、')}`,
    memory: '记忆：',
    waiting: (n: number) => `，${n} 个等待向量`,
    minutes: (ms: number) => (ms % 60_000 === 0 ? `${ms / 60_000} 分钟` : `${(ms / 1000).toFixed(0)} 秒`),
    every: (loop: string, interval: string) => `${loop} 每 ${interval}`,
    statRows: (s: StatsResult, stale: (n: number) => string): Array<[string, string]> => [
      ['上下文窗口', `${s.window.events} / ${s.window.max_size} 个事件`],
      ['文档', `${s.documents.total}${stale(s.documents.vectors_stale)}`],
      ['实体', `${s.entities.total}（${count(s.entities.aliases, '个别名')}）${stale(s.entities.vectors_stale)}`],
      ['关系', `当前 ${s.relations.current}，历史 ${s.relations.history}`],
      ['句子', String(s.sentences)],
      ['不合并标记', String(s.no_merge_marks)],
      ['嵌入模型', `${s.embedder.fingerprint}（${s.embedder.dim} 维）`],
    ],
    maintenance: '维护',
    database: '数据库',
    relationTypes: '关系类型：',
    mostMentioned: '提及最多：',
    hotspot: (h: StatsResult['hotspots'][number]) =>
      `  ${h.name}${h.type ? `（${h.type}）` : ''}：${count(h.mentions, '次提及')}，${count(h.degree, '条事实')}`,
    since: (from: string) => `自 ${from} 起`,
    relation: (r: RelationView, span: string) =>
      `  ${r.subject} ${r.relation} ${r.object}   ${span}，置信度 ${r.confidence.toFixed(2)}，见过 ${r.evidence_count} 次`,
    eventOrigin: (id: string) => `事件 ${id}`,
    documentOrigin: (id: number) => `文档 ${id}`,
    entityHead: (e: EntityResult['entity']) =>
      `${e.name}${e.type ? `（${e.type}）` : ''}：${count(e.mention_count, '次提及')}${e.aliases.length ? `，也叫 ${e.aliases.join('、')}` : ''}`,
    facts: '事实：',
    noneCurrent: '  （当前没有）',
    history: '历史：',
    truncated: '（关系比显示的多；用 memory export 查看全部）',
    softForgot: (entity: string, n: number) => `${entity}：${count(n, '条当前事实')}已结束（保留为历史；--hard 会删除）`,
    hardForgot: (entity: string, relations: number, sentences: number) =>
      `${entity} 已删除，连同 ${count(relations, '条关系')}和 ${count(sentences, '个句子')}`,
    fromWindow: '已从上下文窗口移除',
    archiveDeleted: (ids: number[]) => `归档文档 ${ids.join(', ')} 已删除`,
    rawLog: (n: number) => `已从原始对话日志删除 ${count(n, '行')}`,
    factsKept: (n: number) => `；从中读出的 ${count(n, '个句子')}仍留在图谱里（遗忘相应实体才会删除）`,
    eventForgot: (event: string, parts: string) => `事件 ${event}：${parts}`,
    documentForgot: (id: number) => `文档 ${id} 已删除`,
    relationForgot: (r: Extract<ForgetResult, { target: 'relation' }>) =>
      `关系 ${r.relation}（${r.fact}${r.was_current ? '' : '，历史'}）已删除${r.sentences_removed > 0 ? `，连同别处不再引用的 ${count(r.sentences_removed, '个句子')}` : ''}`,
    recordType: (type: string, n: number) => (RECORD_TYPES_ZH[type] ? count(n, RECORD_TYPES_ZH[type]) : `${type} ${n}`),
    exported: (records: number, counts: string, size: string, file: string) =>
      `已导出 ${count(records, '条记录')}${counts ? `（${counts}）` : ''}，${size}，到 ${file}`,
    listSeparator: '，',
  },
} as const;

export function formatSearch(r: SearchResult, language: Language = cliLanguage()): string {
  const w = WORDS[language];
  const lines: string[] = [];
  if (r.abstain || r.items.length === 0) lines.push(w.noRecord);
  r.items.forEach((item, i) => {
    // The prompt's own line (speaker, when, what) when the daemon gives it.
    const text = item.line ?? `${when(item.at)}  ${item.text.replace(/\s*\n\s*/g, ' / ')}`;
    lines.push(`${i + 1}. [${item.kind}] ${item.score.toFixed(2)}  ${text}`);
    if (item.sources.length > 0) lines.push(w.from(item.sources));
  });
  return lines.join('\n');
}

function pairs(rows: Array<[string, string]>): string[] {
  const width = Math.max(...rows.map(([k]) => displayWidth(k)));
  return rows.map(([k, v]) => `  ${k}${' '.repeat(width - displayWidth(k))}  ${v}`);
}

export function formatStats(s: StatsResult, language: Language = cliLanguage()): string {
  const w = WORDS[language];
  const stale = (n: number) => (n > 0 ? w.waiting(n) : '');
  const lines = [
    w.memory,
    ...pairs([
      ...w.statRows(s, stale),
      [
        w.maintenance,
        Object.entries(s.maintenance_intervals_ms)
          .map(([loop, ms]) => w.every(loop, w.minutes(ms)))
          .join(w.listSeparator),
      ],
      [w.database, bytes(s.database_bytes)],
    ]),
  ];
  if (s.relations.types.length > 0) {
    lines.push(w.relationTypes, `  ${s.relations.types.map((t) => `${t.type} ${t.count}`).join(w.listSeparator)}`);
  }
  if (s.hotspots.length > 0) lines.push(w.mostMentioned, ...s.hotspots.map(w.hotspot));
  return lines.join('\n');
}

function relationLines(r: RelationView, history: boolean, language: Language): string[] {
  const w = WORDS[language];
  const span = history ? `${when(r.valid_from)} .. ${when(r.valid_to)}` : w.since(when(r.valid_from));
  const lines = [w.relation(r, span)];
  for (const p of r.provenance) {
    const origin = [p.source_event_id && w.eventOrigin(p.source_event_id), p.document_id !== null && w.documentOrigin(p.document_id)]
      .filter(Boolean)
      .join(w.listSeparator);
    const quoted = `"${p.text.replace(/\s*\n\s*/g, ' / ')}"`;
    lines.push(`    ${quoted}${origin ? (language === 'zh' ? `（${origin}）` : ` (${origin})`) : ''}`);
  }
  return lines;
}

export function formatEntity(r: EntityResult, language: Language = cliLanguage()): string {
  const w = WORDS[language];
  const lines = [
    w.entityHead(r.entity),
    w.facts,
    ...(r.current.length ? r.current.flatMap((x) => relationLines(x, false, language)) : [w.noneCurrent]),
  ];
  if (r.history.length) lines.push(w.history, ...r.history.flatMap((x) => relationLines(x, true, language)));
  if (r.truncated) lines.push(w.truncated);
  return lines.join('\n');
}

export function formatForget(r: ForgetResult, language: Language = cliLanguage()): string {
  const w = WORDS[language];
  switch (r.target) {
    case 'entity':
      return r.mode === 'soft'
        ? w.softForgot(r.entity, r.relations_ended)
        : w.hardForgot(r.entity, r.relations_removed, r.sentences_removed);
    case 'event': {
      const parts = [
        r.from_window && w.fromWindow,
        r.documents_removed.length > 0 && w.archiveDeleted(r.documents_removed),
        r.raw_log_records_removed > 0 && w.rawLog(r.raw_log_records_removed),
      ];
      const facts = r.facts_kept > 0 ? w.factsKept(r.facts_kept) : '';
      return `${w.eventForgot(r.event, parts.filter(Boolean).join(w.listSeparator))}${facts}`;
    }
    case 'document':
      return w.documentForgot(r.document);
    case 'relation':
      return w.relationForgot(r);
  }
}

function formatExportSummary(s: ExportSummary & { file: string }, language: Language): string {
  const w = WORDS[language];
  const counts = Object.entries(s.counts)
    .map(([type, n]) => w.recordType(type, n))
    .join(w.listSeparator);
  return w.exported(s.records, counts, bytes(s.bytes), s.file);
}

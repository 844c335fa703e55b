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
import { bytes } from './format.js';

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

export class MemoryUsageError extends Error {}

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
  if (sub === undefined) throw new MemoryUsageError('memory needs a command: search, stats, entity, forget or export');
  if (!Object.hasOwn(ALLOWED, sub)) {
    throw new MemoryUsageError(`unknown memory command ${sub}; use search, stats, entity, forget or export`);
  }
  const command = sub as MemoryCommand['command'];
  const stray = memoryFlagsUsed(flags).filter((f) => !ALLOWED[command].includes(f));
  if (stray.length > 0) throw new MemoryUsageError(`--${stray[0]} does not belong to memory ${command}`);
  // Words are joined so that `memory entity green tea` needs no quotes.
  const text = rest.join(' ').trim();
  switch (command) {
    case 'search': {
      if (text === '') throw new MemoryUsageError('memory search needs the TEXT to look for');
      if (flags.limit === undefined) return { command, query: text };
      const limit = Number(flags.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 50) throw new MemoryUsageError('--limit must be a whole number from 1 to 50');
      return { command, query: text, limit };
    }
    case 'stats':
      if (rest.length > 0) throw new MemoryUsageError('memory stats takes no arguments');
      return { command };
    case 'entity':
      if (text === '') throw new MemoryUsageError('memory entity needs a NAME');
      return { command, name: text };
    case 'forget':
      return { command, target: forgetTarget(rest, flags), hard: flags.hard === true, yes: flags.yes === true };
    case 'export':
      if (rest.length > 0) throw new MemoryUsageError('memory export takes no arguments; the file goes after --out');
      return flags.out === undefined ? { command } : { command, out: resolve(cwd, flags.out) };
  }
}

function forgetTarget(rest: readonly string[], flags: MemoryFlags): ForgetTarget {
  if (rest.length > 0) throw new MemoryUsageError('memory forget takes its target as --entity NAME, --event ID or --document ID');
  const given = (['entity', 'event', 'document'] as const).filter((k) => flags[k] !== undefined);
  if (given.length !== 1) throw new MemoryUsageError('memory forget needs exactly one of --entity NAME, --event ID or --document ID');
  if (flags.hard && given[0] !== 'entity') {
    throw new MemoryUsageError('--hard applies to --entity only; events and documents are always deleted');
  }
  if (flags.entity !== undefined) {
    if (flags.entity.trim() === '') throw new MemoryUsageError('--entity needs a NAME');
    return { entity: flags.entity.trim() };
  }
  if (flags.event !== undefined) {
    if (flags.event.trim() === '') throw new MemoryUsageError('--event needs an ID');
    return { event: flags.event.trim() };
  }
  const id = Number(flags.document);
  if (!Number.isSafeInteger(id) || id < 1) throw new MemoryUsageError('--document needs a document id (a positive whole number)');
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
  if (command.command === 'forget' && command.hard && !command.yes) {
    const refusal = await confirmHard(command.target, io);
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
        io.stdout.write(`${options.json ? JSON.stringify(result, null, 2) : formatSearch(result)}\n`);
        return EXIT_CODES.OK;
      }
      case 'stats': {
        const result = (await call('memory.stats', {})) as StatsResult;
        io.stdout.write(`${options.json ? JSON.stringify(result, null, 2) : formatStats(result)}\n`);
        return EXIT_CODES.OK;
      }
      case 'entity': {
        const result = (await call('memory.entity', { name: command.name })) as EntityResult;
        io.stdout.write(`${options.json ? JSON.stringify(result, null, 2) : formatEntity(result)}\n`);
        return EXIT_CODES.OK;
      }
      case 'forget': {
        const params = { ...command.target, ...('entity' in command.target && { hard: command.hard }) };
        const result = (await call('memory.forget', params)) as ForgetResult;
        io.stdout.write(`${options.json ? JSON.stringify(result, null, 2) : formatForget(result)}\n`);
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
        io.stdout.write(`${options.json ? JSON.stringify({ ok: true, ...summary }, null, 2) : formatExportSummary(summary)}\n`);
        return EXIT_CODES.OK;
      }
    }
  } finally {
    client.close();
  }
}

async function confirmHard(target: ForgetTarget, io: MemoryIo): Promise<number | undefined> {
  const name = 'entity' in target ? target.entity : '';
  if (!io.interactive) {
    io.stderr.write(
      `homeagentctl: memory forget --hard deletes ${JSON.stringify(name)} and all its relations for good; ` +
        'stdin is not a terminal, so add --yes to confirm\n',
    );
    return EXIT_CODES.USAGE;
  }
  const answer = await io.ask(`Delete ${JSON.stringify(name)} with all its relations and their history for good? [y/N] `);
  if (/^\s*y(es)?\s*$/i.test(answer)) return undefined;
  io.stderr.write('homeagentctl: nothing was forgotten\n');
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

export function formatSearch(r: SearchResult): string {
  const lines: string[] = [];
  if (r.abstain || r.items.length === 0) lines.push('no record: nothing in memory relates to this (the prompt would say so)');
  r.items.forEach((item, i) => {
    // The prompt's own line (speaker, when, what) when the daemon gives it.
    const text = item.line ?? `${when(item.at)}  ${item.text.replace(/\s*\n\s*/g, ' / ')}`;
    lines.push(`${i + 1}. [${item.kind}] ${item.score.toFixed(2)}  ${text}`);
    if (item.sources.length > 0) lines.push(`   from ${item.sources.join(', ')}`);
  });
  return lines.join('\n');
}

function pairs(rows: Array<[string, string]>): string[] {
  const width = Math.max(...rows.map(([k]) => k.length));
  return rows.map(([k, v]) => `  ${k.padEnd(width)}  ${v}`);
}

export function formatStats(s: StatsResult): string {
  const stale = (n: number) => (n > 0 ? `, ${n} waiting for vectors` : '');
  const minutes = (ms: number) => (ms % 60_000 === 0 ? `${ms / 60_000} min` : `${(ms / 1000).toFixed(0)} s`);
  const lines = [
    'memory:',
    ...pairs([
      ['window', `${s.window.events} of ${s.window.max_size} events`],
      ['documents', `${s.documents.total}${stale(s.documents.vectors_stale)}`],
      ['entities', `${s.entities.total} (${plural(s.entities.aliases, 'alias', 'aliases')})${stale(s.entities.vectors_stale)}`],
      ['relations', `${s.relations.current} current, ${s.relations.history} history`],
      ['sentences', String(s.sentences)],
      ['no-merge marks', String(s.no_merge_marks)],
      ['embedder', `${s.embedder.fingerprint} (${s.embedder.dim} dims)`],
      [
        'maintenance',
        Object.entries(s.maintenance_intervals_ms)
          .map(([loop, ms]) => `${loop} every ${minutes(ms)}`)
          .join(', '),
      ],
      ['database', bytes(s.database_bytes)],
    ]),
  ];
  if (s.relations.types.length > 0) {
    lines.push('relation types:', `  ${s.relations.types.map((t) => `${t.type} ${t.count}`).join(', ')}`);
  }
  if (s.hotspots.length > 0) {
    lines.push(
      'most mentioned:',
      ...s.hotspots.map((h) => `  ${h.name}${h.type ? ` (${h.type})` : ''}: ${plural(h.mentions, 'mention')}, ${plural(h.degree, 'fact')}`),
    );
  }
  return lines.join('\n');
}

function relationLines(r: RelationView, history: boolean): string[] {
  const span = history ? `${when(r.valid_from)} .. ${when(r.valid_to)}` : `since ${when(r.valid_from)}`;
  const lines = [`  ${r.subject} ${r.relation} ${r.object}   ${span}, confidence ${r.confidence.toFixed(2)}, seen ${r.evidence_count}x`];
  for (const p of r.provenance) {
    const origin = [p.source_event_id && `event ${p.source_event_id}`, p.document_id !== null && `document ${p.document_id}`]
      .filter(Boolean)
      .join(', ');
    lines.push(`    "${p.text.replace(/\s*\n\s*/g, ' / ')}"${origin ? ` (${origin})` : ''}`);
  }
  return lines;
}

export function formatEntity(r: EntityResult): string {
  const e = r.entity;
  const lines = [
    `${e.name}${e.type ? ` (${e.type})` : ''}: ${plural(e.mention_count, 'mention')}${e.aliases.length ? `, also called ${e.aliases.join(', ')}` : ''}`,
    'facts:',
    ...(r.current.length ? r.current.flatMap((x) => relationLines(x, false)) : ['  (none current)']),
  ];
  if (r.history.length) lines.push('history:', ...r.history.flatMap((x) => relationLines(x, true)));
  if (r.truncated) lines.push('(more relations exist than are shown; use memory export for all of them)');
  return lines.join('\n');
}

export function formatForget(r: ForgetResult): string {
  switch (r.target) {
    case 'entity':
      return r.mode === 'soft'
        ? `${r.entity}: ${plural(r.relations_ended, 'current fact')} ended (kept as history; --hard deletes)`
        : `${r.entity} deleted with ${plural(r.relations_removed, 'relation')} and ${plural(r.sentences_removed, 'sentence')}`;
    case 'event': {
      const parts = [
        r.from_window && 'removed from the context window',
        r.documents_removed.length > 0 && `archive document ${r.documents_removed.join(', ')} deleted`,
        r.raw_log_records_removed > 0 && `${plural(r.raw_log_records_removed, 'line')} removed from the raw conversation log`,
      ];
      const facts =
        r.facts_kept > 0
          ? `; ${plural(r.facts_kept, 'sentence')} read from it ${r.facts_kept === 1 ? 'stays' : 'stay'} in the graph (forget the entities to remove them)`
          : '';
      return `event ${r.event}: ${parts.filter(Boolean).join(', ')}${facts}`;
    }
    case 'document':
      return `document ${r.document} deleted`;
    case 'relation':
      return `relation ${r.relation} (${r.fact}${r.was_current ? '' : ', history'}) deleted${r.sentences_removed > 0 ? ` with ${plural(r.sentences_removed, 'sentence')} nothing else cites` : ''}`;
  }
}

function formatExportSummary(s: ExportSummary & { file: string }): string {
  const counts = Object.entries(s.counts)
    .map(([type, n]) => plural(n, type, PLURALS[type]))
    .join(', ');
  return `exported ${plural(s.records, 'record')}${counts ? ` (${counts})` : ''}, ${bytes(s.bytes)}, to ${s.file}`;
}

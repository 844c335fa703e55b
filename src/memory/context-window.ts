/**
 * The context window: the recent events the agent keeps in its prompt, stored in SQLite so an
 * acknowledged event survives kill -9 and power loss (the daemon opens memory.db with
 * synchronous=FULL). Above its size the window is pruned: the most recent events are protected,
 * the rest are scored against the current input, the best are kept and the others become
 * documents with their original timestamps, in one transaction.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from '../log/logger.js';
import type { Clock } from '../shared/clock.js';
import { describeError, HomeAgentError } from '../shared/errors.js';
import { StatementCache } from '../store/statement-cache.js';
import type { SqlDatabase } from '../store/types.js';
import type { DocumentInput, DocumentStore, StoredDocument } from './document-store.js';
import {
  cleanChatText,
  isNoMemoryChannel,
  type MemoryTextOptions,
  memoryText,
  memoryToolResults,
  type PolicyLookup,
  type ToolResultRecord,
} from './memory-text.js';

export const DEFAULT_MAX_CONTEXT_SIZE = 30;
export const DEFAULT_PROTECTED_RECENT = 10;
const MAX_ID_LENGTH = 256;

export interface ContextEvent {
  id: string;
  /** When it happened (ms since the epoch). */
  timestamp: number;
  /** Where it came from: an input source, `agent`, `cold_storage`. */
  source: string;
  channel: string;
  /** Who is speaking (user, chat peer, speaker name). */
  peer: string;
  /** Decides the similarity text: `agent` → response, `cold_storage` → input + response, anything else → input. */
  branch: string;
  input: string;
  response: string;
  tools_used: string[];
  tool_results: ToolResultRecord[];
  media_refs: string[];
}

export interface NewContextEvent {
  /** Default: a random UUID. Must not already be in the window. */
  id?: string;
  /** Default: now. */
  timestamp?: number;
  source: string;
  channel?: string;
  peer?: string;
  /** Default `user`. */
  branch?: string;
  input?: string;
  response?: string;
  tools_used?: readonly string[];
  tool_results?: readonly ToolResultRecord[];
  media_refs?: readonly string[];
}

/** What the turn adds once it has finished. */
export type ContextEventUpdate = Partial<Pick<ContextEvent, 'input' | 'response' | 'tools_used' | 'tool_results' | 'media_refs'>>;

/**
 * Relevance of each text to the query, higher is more relevant (e.g. cosine of embeddings).
 * One number per text, in order.
 */
export type RelevanceScorer = (
  query: string,
  texts: readonly string[],
  signal?: AbortSignal,
) => Promise<readonly number[]> | readonly number[];

export interface PruneResult {
  /** Events in the window before and after. */
  before: number;
  after: number;
  /** Unprotected events kept for their relevance. */
  kept: string[];
  archived: Array<{ event_id: string; document_id: number }>;
  /** Left without a document: `no_memory` channels, or nothing left to remember after cleaning. */
  dropped: string[];
  /** Chosen to leave but changed or removed while the prune ran; they stay for the next prune. */
  skipped: string[];
}

export interface ContextWindowOptions {
  database: SqlDatabase;
  documents: DocumentStore;
  scorer: RelevanceScorer;
  clock: Clock;
  log: Logger;
  /** core.agent.max_context_size. Default 30. */
  maxSize?: number;
  /** The most recent events never pruned. Default 10. */
  protectedRecent?: number;
  channelPolicy?: PolicyLookup;
  toolPolicy?: PolicyLookup;
}

/** A row of context_events as SQLite returns it (lists still JSON text). */
export interface EventRow {
  seq: number;
  revision: number;
  id: string;
  timestamp: number;
  source: string;
  channel: string;
  peer: string;
  branch: string;
  input: string;
  response: string;
  tools_used: string;
  tool_results: string;
  media_refs: string;
}

interface StoredEvent {
  seq: number;
  revision: number;
  event: ContextEvent;
}

const EVENT_COLUMNS = 'seq, revision, id, timestamp, source, channel, peer, branch, input, response, tools_used, tool_results, media_refs';

export class ContextWindow {
  readonly #options: ContextWindowOptions;
  readonly #sql: StatementCache;
  readonly #text: MemoryTextOptions;

  constructor(options: ContextWindowOptions) {
    this.#options = options;
    this.#sql = new StatementCache(options.database);
    this.#text = {
      channelPolicy: options.channelPolicy,
      toolPolicy: options.toolPolicy,
      onCleanerError: (owner, error) => options.log.warn({ owner, error: describeError(error) }, 'memory cleaner failed; text left out'),
    };
  }

  get maxSize(): number {
    return this.#options.maxSize ?? DEFAULT_MAX_CONTEXT_SIZE;
  }

  get protectedRecent(): number {
    return this.#options.protectedRecent ?? DEFAULT_PROTECTED_RECENT;
  }

  /** Stores an event; durable when this returns (the acknowledgement point). */
  append(event: NewContextEvent): ContextEvent {
    const stored = normalise(event, this.#options.clock);
    this.#insert(stored);
    return stored;
  }

  /** Adds the response, tools and media once the turn is done. Undefined when the event has left the window. */
  complete(id: string, update: ContextEventUpdate): ContextEvent | undefined {
    const current = this.get(id);
    if (!current) return undefined;
    const next: ContextEvent = {
      ...current,
      ...(update.input !== undefined && { input: update.input }),
      ...(update.response !== undefined && { response: update.response }),
      ...(update.tools_used !== undefined && { tools_used: [...update.tools_used] }),
      ...(update.tool_results !== undefined && { tool_results: update.tool_results.map((r) => ({ tool: r.tool, text: r.text })) }),
      ...(update.media_refs !== undefined && { media_refs: [...update.media_refs] }),
    };
    this.#sql
      .get(
        'UPDATE context_events SET input = ?, response = ?, tools_used = ?, tool_results = ?, media_refs = ?, revision = revision + 1 WHERE id = ?',
      )
      .run(
        next.input,
        next.response,
        JSON.stringify(next.tools_used),
        JSON.stringify(next.tool_results),
        JSON.stringify(next.media_refs),
        id,
      );
    return next;
  }

  get(id: string): ContextEvent | undefined {
    const row = this.#sql.get(`SELECT ${EVENT_COLUMNS} FROM context_events WHERE id = ?`).get(id) as EventRow | undefined;
    return row ? toEvent(row) : undefined;
  }

  /** Every event in the window, oldest first (by timestamp, then arrival). */
  events(): ContextEvent[] {
    return this.#stored().map((s) => s.event);
  }

  size(): number {
    return (this.#sql.get('SELECT count(*) AS n FROM context_events').get() as { n: number }).n;
  }

  /** More than twice the window size: the maintenance loop prunes even without a new input. */
  overflowing(): boolean {
    return this.size() > 2 * this.maxSize;
  }

  /** The text the event is compared by (see memory-text.ts). */
  similarityText(event: ContextEvent): string {
    return memoryText(event, this.#text);
  }

  /**
   * Brings the window back to `maxSize` events if it is larger: the `protectedRecent` newest stay,
   * the best-scored of the rest fill the remaining places, the others become documents (source
   * `context_archived`, original timestamps and media) and leave the window in the same
   * transaction. Scoring and embedding run before that transaction; an event completed or removed
   * meanwhile is skipped and stays.
   */
  async prune(input: string, options: { maxSize?: number; signal?: AbortSignal } = {}): Promise<PruneResult> {
    const maxSize = options.maxSize ?? this.maxSize;
    const stored = this.#stored();
    const result: PruneResult = { before: stored.length, after: stored.length, kept: [], archived: [], dropped: [], skipped: [] };
    if (stored.length <= maxSize) return result;

    const protectedCount = Math.min(this.protectedRecent, stored.length);
    const candidates = stored.slice(0, stored.length - protectedCount);
    const keep = await this.#choose(input, candidates, Math.max(0, maxSize - protectedCount), options.signal);
    result.kept = candidates.filter((c) => keep.has(c.seq)).map((c) => c.event.id);
    const leaving = candidates.filter((c) => !keep.has(c.seq));

    const archives = leaving.map((c) => ({ candidate: c, document: this.#archiveInput(c.event) }));
    const documents = archives.flatMap((a) => (a.document ? [a.document] : []));
    const prepared = await this.#options.documents.prepare(documents, options.signal);

    try {
      this.#sql.transaction(() => {
        let next = 0;
        for (const { candidate, document } of archives) {
          const preparedDoc = document ? prepared[next++] : undefined;
          const removed = this.#sql.get('DELETE FROM context_events WHERE seq = ? AND revision = ?').run(candidate.seq, candidate.revision);
          if (removed.changes === 0) {
            result.skipped.push(candidate.event.id);
            continue;
          }
          if (!preparedDoc) {
            result.dropped.push(candidate.event.id);
            continue;
          }
          const [documentId] = this.#options.documents.insertPrepared([preparedDoc]);
          result.archived.push({ event_id: candidate.event.id, document_id: documentId as number });
        }
      });
    } catch (error) {
      this.#options.documents.invalidateVectorCache();
      throw error;
    }
    result.after = this.size();
    return result;
  }

  /**
   * doc_query's consume-on-read: removes the documents from the store and puts each back into the
   * timeline at its original time (source and branch `cold_storage`), in one transaction.
   */
  restoreDocuments(ids: readonly number[]): Array<{ document: StoredDocument; event: ContextEvent }> {
    try {
      return this.#sql.transaction(() =>
        this.#options.documents.take(ids).map((document) => {
          const event = this.#restoredEvent(document);
          this.#insert(event);
          return { document, event };
        }),
      );
    } catch (error) {
      this.#options.documents.invalidateVectorCache();
      throw error;
    }
  }

  async #choose(input: string, candidates: readonly StoredEvent[], slots: number, signal?: AbortSignal): Promise<Set<number>> {
    if (slots === 0 || candidates.length === 0) return new Set();
    if (candidates.length <= slots) return new Set(candidates.map((c) => c.seq));
    const texts = candidates.map((c) => this.similarityText(c.event));
    const scores = await this.#options.scorer(cleanChatText(input), texts, signal);
    if (scores.length !== candidates.length) {
      throw new HomeAgentError('HA_ERR_INTERNAL', `the relevance scorer returned ${scores.length} scores for ${candidates.length} texts`);
    }
    const ranked = candidates
      .map((c, i) => ({ seq: c.seq, position: i, score: Number.isFinite(scores[i]) ? (scores[i] as number) : -Infinity }))
      // Equal scores: the more recent event stays.
      .sort((a, b) => b.score - a.score || b.position - a.position);
    return new Set(ranked.slice(0, slots).map((r) => r.seq));
  }

  #archiveInput(event: ContextEvent): DocumentInput | undefined {
    if (isNoMemoryChannel(event.channel, this.#text)) return undefined;
    const content = memoryText({ ...event, branch: 'cold_storage' }, this.#text);
    if (content === '' && event.media_refs.length === 0) return undefined;
    return {
      content,
      source: 'context_archived',
      source_event_ids: [event.id],
      media_refs: event.media_refs,
      created_at: event.timestamp,
      origin: {
        event_id: event.id,
        source: event.source,
        channel: event.channel,
        peer: event.peer,
        branch: event.branch,
        input: event.input,
        response: event.response,
        tools_used: event.tools_used,
        tool_results: memoryToolResults(event.tool_results, this.#text),
      },
    };
  }

  #restoredEvent(document: StoredDocument): ContextEvent {
    const origin = document.origin;
    const wanted = origin?.event_id ?? (document.source_event_ids.length === 1 ? document.source_event_ids[0] : undefined);
    const id = wanted !== undefined && this.get(wanted) === undefined ? wanted : this.#freeId(`doc-${document.id}`);
    return {
      id,
      timestamp: document.created_at,
      source: 'cold_storage',
      channel: origin?.channel ?? '',
      peer: origin?.peer ?? '',
      branch: 'cold_storage',
      input: origin ? origin.input : document.content,
      response: origin?.response ?? '',
      tools_used: origin?.tools_used ?? [],
      tool_results: origin?.tool_results ?? [],
      media_refs: document.media_refs,
    };
  }

  #freeId(base: string): string {
    let id = base;
    for (let n = 2; this.get(id) !== undefined; n++) id = `${base}-${n}`;
    return id;
  }

  #insert(event: ContextEvent): void {
    try {
      this.#sql
        .get(
          `INSERT INTO context_events (id, timestamp, source, channel, peer, branch, input, response, tools_used, tool_results, media_refs)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(
          event.id,
          event.timestamp,
          event.source,
          event.channel,
          event.peer,
          event.branch,
          event.input,
          event.response,
          JSON.stringify(event.tools_used),
          JSON.stringify(event.tool_results),
          JSON.stringify(event.media_refs),
        );
    } catch (error) {
      if ((error as { code?: unknown }).code === 'SQLITE_CONSTRAINT_UNIQUE') {
        throw new HomeAgentError('HA_ERR_INPUT_INVALID', `event ${event.id} is already in the context window`, { cause: error });
      }
      throw error;
    }
  }

  #stored(): StoredEvent[] {
    const rows = this.#sql.get(`SELECT ${EVENT_COLUMNS} FROM context_events ORDER BY timestamp, seq`).all() as EventRow[];
    return rows.map((row) => ({ seq: row.seq, revision: row.revision, event: toEvent(row) }));
  }
}

function normalise(event: NewContextEvent, clock: Clock): ContextEvent {
  const id = event.id ?? randomUUID();
  if (id === '' || id.length > MAX_ID_LENGTH) {
    throw new HomeAgentError('HA_ERR_INPUT_INVALID', `a context event id must be 1-${MAX_ID_LENGTH} characters`);
  }
  if (event.source.trim() === '') throw new HomeAgentError('HA_ERR_INPUT_INVALID', `context event ${id} has no source`);
  const timestamp = event.timestamp ?? clock.now();
  if (!Number.isFinite(timestamp)) throw new HomeAgentError('HA_ERR_INPUT_INVALID', `context event ${id} has an invalid timestamp`);
  return {
    id,
    timestamp: Math.trunc(timestamp),
    source: event.source,
    channel: event.channel ?? '',
    peer: event.peer ?? '',
    branch: event.branch ?? 'user',
    input: event.input ?? '',
    response: event.response ?? '',
    tools_used: [...(event.tools_used ?? [])],
    tool_results: (event.tool_results ?? []).map((r) => ({ tool: r.tool, text: r.text })),
    media_refs: [...(event.media_refs ?? [])],
  };
}

function toEvent(row: EventRow): ContextEvent {
  return {
    id: row.id,
    timestamp: row.timestamp,
    source: row.source,
    channel: row.channel,
    peer: row.peer,
    branch: row.branch,
    input: row.input,
    response: row.response,
    tools_used: JSON.parse(row.tools_used) as string[],
    tool_results: JSON.parse(row.tool_results) as ToolResultRecord[],
    media_refs: JSON.parse(row.media_refs) as string[],
  };
}

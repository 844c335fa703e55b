/**
 * Documents: what left the context window (prune archives) and what the agent wrote on purpose
 * (doc_commit), searchable by BM25 over analyser tokens (FTS5), by vector, and by exact symbol.
 * Reading through {@link DocumentStore.take} consumes: doc_query hands the documents back to the
 * context timeline. Cold documents are distilled into the graph and then stay, marked distilled,
 * as the evidence of the facts read from them.
 */
import type { Embedder } from '../embed/embedder.js';
import { blobToVector, vectorToBlob } from '../embed/vector-blob.js';
import { VectorIndex } from '../embed/vector-index.js';
import type { Logger } from '../log/logger.js';
import type { Clock } from '../shared/clock.js';
import { describeError } from '../shared/errors.js';
import { ToolError } from '../shared/tool.js';
import { ftsMatchQuery } from '../store/fts-query.js';
import { StatementCache } from '../store/statement-cache.js';
import type { SqlDatabase } from '../store/types.js';
import type { ToolResultRecord } from './memory-text.js';
import { chunks, ID_CHUNK, placeholders, unique } from './sql-lists.js';
import { containsSymbol, likePattern } from './symbols.js';

/** Where an archived document came from, so that doc_query can put the event back as it was. */
export interface ArchivedEventOrigin {
  event_id: string;
  source: string;
  channel: string;
  peer: string;
  branch: string;
  input: string;
  response: string;
  tools_used: string[];
  /** Tool results as they entered memory: `no_memory` tools left out, tool cleaners applied. */
  tool_results: ToolResultRecord[];
}

export interface DocumentInput {
  content: string;
  summary?: string;
  tags?: readonly string[];
  /** `context_archived`, `doc_commit`, `plugin:<name>`. */
  source: string;
  /** Context events the content came from (provenance). */
  source_event_ids?: readonly string[];
  media_refs?: readonly string[];
  /** When the content was said or written (ms); the event time for archives. Default: now. */
  created_at?: number;
  origin?: ArchivedEventOrigin;
}

export interface StoredDocument {
  id: number;
  content: string;
  summary: string;
  tags: string[];
  source: string;
  source_event_ids: string[];
  media_refs: string[];
  origin: ArchivedEventOrigin | null;
  created_at: number;
  stored_at: number;
  last_access_at: number | null;
  access_count: number;
  /** When the distill loop read it into the graph (it stays as the facts' evidence); null before. */
  distilled_at: number | null;
}

/** A document ready to be written synchronously (inside another transaction if need be). */
export interface PreparedDocument {
  input: DocumentInput;
  indexText: string;
  /** Null when embedding failed: the vector is filled in later by {@link DocumentStore.refreshStaleVectors}. */
  vector: Float32Array | null;
}

export interface DocumentHit {
  id: number;
  /** Higher is better; comparable only within one search path. */
  score: number;
}

export interface SymbolHit extends DocumentHit {
  /** The query symbols the document contains. */
  symbols: string[];
}

/** What a distillation claims to have written for a document (the graph's commit result). */
export interface DistillationLink {
  sentence_ids: readonly number[];
}

/**
 * `linked`: the graph holds relations with evidence from the document; `nothing_written`: no
 * relation does (extraction found nothing); `not_linked`: a claimed sentence does not name the
 * document (left undistilled, tried again); `not_found`: the document is gone.
 */
export type DistillMark = 'linked' | 'nothing_written' | 'not_linked' | 'not_found';

export interface ColdDocumentQuery {
  /** Untouched (not stored, not accessed) for at least this long. Default 72 h. */
  untouchedForMs?: number;
  /** At most this many accesses. Default 2. */
  maxAccesses?: number;
  limit?: number;
}

export const COLD_UNTOUCHED_MS = 72 * 3600 * 1000;
export const COLD_MAX_ACCESSES = 2;
/** Candidate documents checked per exact symbol. */
export const SYMBOL_CANDIDATES = 500;

export interface DocumentStoreOptions {
  database: SqlDatabase;
  embedder: Embedder;
  /** The analyser's `indexText`: the tokens FTS5 indexes and queries. */
  indexText: (text: string) => string;
  clock: Clock;
  log: Logger;
}

interface DocumentRow {
  id: number;
  content: string;
  summary: string;
  tags: string;
  source: string;
  source_event_ids: string;
  media_refs: string;
  origin: string | null;
  created_at: number;
  stored_at: number;
  last_access_at: number | null;
  access_count: number;
  distilled_at: number | null;
}

const DOCUMENT_COLUMNS =
  'id, content, summary, tags, source, source_event_ids, media_refs, origin, created_at, stored_at, last_access_at, access_count, distilled_at';

export class DocumentStore {
  readonly #options: DocumentStoreOptions;
  readonly #sql: StatementCache;
  readonly #vectors: VectorIndex;

  constructor(options: DocumentStoreOptions) {
    this.#options = options;
    this.#sql = new StatementCache(options.database);
    this.#vectors = new VectorIndex(() => this.#loadVectors());
  }

  get fingerprint(): string {
    return this.#options.embedder.fingerprint;
  }

  /** Validates and embeds; nothing is written. */
  async prepare(inputs: readonly DocumentInput[], signal?: AbortSignal): Promise<PreparedDocument[]> {
    for (const input of inputs) checkInput(input);
    const vectors = await this.#embed(
      inputs.map((i) => vectorText(i.content, i.summary ?? '')),
      signal,
    );
    return inputs.map((input, i) => ({ input, indexText: this.#options.indexText(searchText(input)), vector: vectors[i] ?? null }));
  }

  /**
   * Writes prepared documents in one transaction (a savepoint inside the caller's). Returns their
   * ids in order. A caller whose own transaction around this fails must call
   * {@link DocumentStore.invalidateVectorCache}: the in-memory vectors cannot see that rollback.
   */
  insertPrepared(prepared: readonly PreparedDocument[]): number[] {
    const now = this.#options.clock.now();
    const fingerprint = this.fingerprint;
    return this.#write(() =>
      prepared.map(({ input, indexText, vector }) => {
        const result = this.#sql
          .get(
            `INSERT INTO documents (content, summary, tags, source, source_event_ids, media_refs, origin, created_at, stored_at, vector, fingerprint)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
          )
          .run(
            input.content,
            input.summary ?? '',
            JSON.stringify(input.tags ?? []),
            input.source,
            JSON.stringify(input.source_event_ids ?? []),
            JSON.stringify(input.media_refs ?? []),
            input.origin ? JSON.stringify(input.origin) : null,
            Math.trunc(input.created_at ?? now),
            now,
            vector ? vectorToBlob(vector) : null,
            vector ? fingerprint : null,
          );
        const id = Number(result.lastInsertRowid);
        this.#sql.get('INSERT INTO documents_fts (rowid, content) VALUES (?, ?)').run(id, indexText);
        for (const eventId of unique(input.source_event_ids ?? [])) {
          this.#sql.get('INSERT OR IGNORE INTO document_events (event_id, document_id) VALUES (?, ?)').run(eventId, id);
        }
        this.#sql.get('INSERT INTO documents_trigram (rowid, text) VALUES (?, ?)').run(id, symbolText(input.content, input.summary ?? ''));
        if (vector) this.#vectors.set(id, vector);
        return id;
      }),
    );
  }

  /** Validates, embeds and writes one document (doc_commit, plugins). */
  async insert(input: DocumentInput, signal?: AbortSignal): Promise<StoredDocument> {
    const [id] = this.insertPrepared(await this.prepare([input], signal));
    return this.get([id as number])[0] as StoredDocument;
  }

  /** The documents with these ids, in the order asked; missing ids are left out. */
  get(ids: readonly number[]): StoredDocument[] {
    const byId = new Map<number, StoredDocument>();
    for (const chunk of chunks(unique(ids), ID_CHUNK)) {
      const rows = this.#sql
        .get(`SELECT ${DOCUMENT_COLUMNS} FROM documents WHERE id IN (${placeholders(chunk.length)})`)
        .all(...chunk) as DocumentRow[];
      for (const row of rows) byId.set(row.id, toDocument(row));
    }
    return ids.flatMap((id) => byId.get(id) ?? []);
  }

  count(): number {
    return (this.#sql.get('SELECT count(*) AS n FROM documents').get() as { n: number }).n;
  }

  /** Documents in id order, for export and inspection. */
  list(options: { afterId?: number; limit?: number } = {}): StoredDocument[] {
    const rows = this.#sql
      .get(`SELECT ${DOCUMENT_COLUMNS} FROM documents WHERE id > ? ORDER BY id LIMIT ?`)
      .all(options.afterId ?? 0, options.limit ?? 100) as DocumentRow[];
    return rows.map(toDocument);
  }

  /**
   * The documents said just before and just after `doc` (by their original time) in the same
   * conversation (channel of the archived event, when known), nearest first.
   */
  adjacent(doc: StoredDocument, count: number): { before: StoredDocument[]; after: StoredDocument[] } {
    if (count <= 0) return { before: [], after: [] };
    const channel = doc.origin?.channel ?? null;
    const sameChannel = "(@channel IS NULL OR json_extract(origin, '$.channel') = @channel)";
    const before = this.#sql
      .get(
        `SELECT ${DOCUMENT_COLUMNS} FROM documents WHERE ${sameChannel} AND (created_at < @at OR (created_at = @at AND id < @id))
         ORDER BY created_at DESC, id DESC LIMIT @count`,
      )
      .all({ channel, at: doc.created_at, id: doc.id, count }) as DocumentRow[];
    const after = this.#sql
      .get(
        `SELECT ${DOCUMENT_COLUMNS} FROM documents WHERE ${sameChannel} AND (created_at > @at OR (created_at = @at AND id > @id))
         ORDER BY created_at, id LIMIT @count`,
      )
      .all({ channel, at: doc.created_at, id: doc.id, count }) as DocumentRow[];
    return { before: before.map(toDocument), after: after.map(toDocument) };
  }

  /** BM25 over the analyser's tokens of `query`; score = −bm25 (higher is better). */
  searchLexical(query: string, limit: number): DocumentHit[] {
    const match = ftsMatchQuery(this.#options.indexText(query));
    if (match === undefined || limit <= 0) return [];
    const rows = this.#sql
      .get('SELECT rowid AS id, bm25(documents_fts) AS rank FROM documents_fts WHERE documents_fts MATCH ? ORDER BY rank LIMIT ?')
      .all(match, limit) as Array<{ id: number; rank: number }>;
    return rows.map((r) => ({ id: r.id, score: -r.rank }));
  }

  /**
   * Cosine search among vectors of the current embedder's fingerprint only; `query` must come
   * from that embedder. Documents whose vector is missing or stale are not found this way.
   */
  searchVector(query: Float32Array, limit: number, minScore = -Infinity): DocumentHit[] {
    return this.#vectors.search(query, limit, minScore);
  }

  /**
   * Documents containing the exact symbols (see symbols.ts), most symbols first, then the most
   * recently stored; score = number of symbols found. Symbols of 3 or more characters use the
   * trigram index; two-character ones scan from the newest document; one-character ones are
   * ignored (they match almost everything). At most {@link SYMBOL_CANDIDATES} candidates per
   * symbol are checked, newest first.
   */
  searchSymbols(symbols: readonly string[], limit: number): SymbolHit[] {
    const found = new Map<number, string[]>();
    for (const symbol of unique(symbols.map((s) => s.trim()).filter((s) => [...s].length >= 2))) {
      const sql =
        [...symbol].length >= 3
          ? 'SELECT rowid AS id, text FROM documents_trigram WHERE text LIKE @pattern ORDER BY rowid DESC LIMIT @cap'
          : 'SELECT id, content || char(10) || summary AS text FROM documents WHERE content LIKE @pattern OR summary LIKE @pattern ORDER BY id DESC LIMIT @cap';
      const rows = this.#sql.get(sql).all({ pattern: likePattern(symbol), cap: SYMBOL_CANDIDATES }) as Array<{ id: number; text: string }>;
      for (const row of rows) {
        if (!containsSymbol(row.text, symbol)) continue;
        found.set(row.id, [...(found.get(row.id) ?? []), symbol]);
      }
    }
    return [...found]
      .map(([id, matched]) => ({ id, score: matched.length, symbols: matched }))
      .sort((a, b) => b.score - a.score || b.id - a.id)
      .slice(0, Math.max(0, limit));
  }

  /** Counts a read (e.g. injection into a prompt): access count + 1, last access = now. */
  recordAccess(ids: readonly number[]): void {
    const now = this.#options.clock.now();
    this.#write(() => {
      for (const id of unique(ids)) {
        this.#sql.get('UPDATE documents SET access_count = access_count + 1, last_access_at = ? WHERE id = ?').run(now, id);
      }
    });
  }

  /**
   * Removes and returns the documents (doc_query's consume-on-read). Call it inside the
   * transaction that puts them back into the timeline, so a crash loses neither.
   */
  take(ids: readonly number[]): StoredDocument[] {
    return this.#write(() => {
      const documents = this.get(ids);
      for (const doc of documents) this.#delete(doc.id);
      return documents;
    });
  }

  /**
   * Undistilled documents untouched for 72 h (since stored or last accessed) with at most 2
   * accesses, oldest first.
   */
  coldDocuments(query: ColdDocumentQuery = {}): StoredDocument[] {
    const cutoff = this.#options.clock.now() - (query.untouchedForMs ?? COLD_UNTOUCHED_MS);
    const rows = this.#sql
      .get(
        `SELECT ${DOCUMENT_COLUMNS} FROM documents
         WHERE distilled_at IS NULL AND coalesce(last_access_at, stored_at) <= ? AND access_count <= ?
         ORDER BY coalesce(last_access_at, stored_at), id LIMIT ?`,
      )
      .all(cutoff, query.maxAccesses ?? COLD_MAX_ACCESSES, query.limit ?? 50) as DocumentRow[];
    return rows.map(toDocument);
  }

  /**
   * Marks a document distilled once the distill loop has read it: it leaves the cold candidates
   * and stays as the evidence of its facts. A claimed sentence that does not name the document
   * leaves it undistilled (it is tried again); an extraction that found nothing still marks it, so
   * it is not re-read every tick, and never loses it.
   */
  markDistilled(id: number, link: DistillationLink): DistillMark {
    return this.#write((): DistillMark => {
      if (this.#sql.get('SELECT 1 FROM documents WHERE id = ?').get(id) === undefined) return 'not_found';
      const claimed = unique(link.sentence_ids);
      for (const chunk of chunks(claimed, ID_CHUNK)) {
        const linked = this.#sql
          .get(`SELECT count(*) AS n FROM graph_sentences WHERE document_id = ? AND id IN (${placeholders(chunk.length)})`)
          .get(id, ...chunk) as { n: number };
        if (linked.n !== chunk.length) return 'not_linked';
      }
      const evidence = this.#sql
        .get(
          `SELECT count(*) AS n FROM graph_relation_evidence e JOIN graph_sentences s ON s.id = e.sentence_id
           WHERE s.document_id = ?`,
        )
        .get(id) as { n: number };
      this.#sql.get('UPDATE documents SET distilled_at = ? WHERE id = ?').run(this.#options.clock.now(), id);
      return evidence.n > 0 ? 'linked' : 'nothing_written';
    });
  }

  /** The documents holding each event id (graph facts point at events). */
  documentsOfEvents(eventIds: readonly string[]): Map<string, number[]> {
    const out = new Map<string, number[]>();
    for (const chunk of chunks(unique(eventIds), ID_CHUNK)) {
      const rows = this.#sql
        .get(`SELECT event_id, document_id FROM document_events WHERE event_id IN (${placeholders(chunk.length)})`)
        .all(...chunk) as Array<{ event_id: string; document_id: number }>;
      for (const row of rows) out.set(row.event_id, [...(out.get(row.event_id) ?? []), row.document_id]);
    }
    return out;
  }

  /** Documents whose vector is missing or from another embedder, for background re-embedding. */
  staleVectors(limit: number): Array<{ id: number; text: string }> {
    const rows = this.#sql
      .get('SELECT id, content, summary FROM documents WHERE vector IS NULL OR fingerprint IS NOT ? ORDER BY id LIMIT ?')
      .all(this.fingerprint, limit) as Array<{ id: number; content: string; summary: string }>;
    return rows.map((r) => ({ id: r.id, text: vectorText(r.content, r.summary) }));
  }

  staleVectorCount(): number {
    return (
      this.#sql.get('SELECT count(*) AS n FROM documents WHERE vector IS NULL OR fingerprint IS NOT ?').get(this.fingerprint) as {
        n: number;
      }
    ).n;
  }

  /** Stores vectors of the current embedder. Returns how many documents were updated. */
  setVectors(entries: ReadonlyArray<{ id: number; vector: Float32Array }>): number {
    const fingerprint = this.fingerprint;
    return this.#write(() => {
      let updated = 0;
      for (const { id, vector } of entries) {
        if (vector.length !== this.#options.embedder.dim) continue;
        const result = this.#sql
          .get('UPDATE documents SET vector = ?, fingerprint = ? WHERE id = ?')
          .run(vectorToBlob(vector), fingerprint, id);
        if (result.changes > 0) {
          this.#vectors.set(id, vector);
          updated++;
        }
      }
      return updated;
    });
  }

  /** Re-embeds up to `limit` stale documents. Returns how many were updated. */
  async refreshStaleVectors(limit: number, signal?: AbortSignal): Promise<number> {
    const stale = this.staleVectors(limit);
    if (stale.length === 0) return 0;
    const vectors = await this.#options.embedder.embed(
      stale.map((s) => s.text),
      signal,
    );
    return this.setVectors(stale.flatMap((s, i) => (vectors[i] ? [{ id: s.id, vector: vectors[i] }] : [])));
  }

  /** Rebuilds the FTS index with the current analyser (after a tokenizer or dictionary change). */
  rebuildIndex(): number {
    return this.#write(() => {
      this.#sql.get('DELETE FROM documents_fts').run();
      let n = 0;
      let afterId = 0;
      for (;;) {
        const batch = this.list({ afterId, limit: 500 });
        if (batch.length === 0) break;
        for (const doc of batch) {
          this.#sql.get('INSERT INTO documents_fts (rowid, content) VALUES (?, ?)').run(doc.id, this.#options.indexText(searchText(doc)));
          n++;
        }
        afterId = (batch[batch.length - 1] as StoredDocument).id;
      }
      return n;
    });
  }

  /** Forgets the in-memory vector copy; call after a caller's transaction around this store failed. */
  invalidateVectorCache(): void {
    this.#vectors.invalidate();
  }

  #delete(id: number): void {
    this.#sql.get('DELETE FROM documents WHERE id = ?').run(id);
    this.#sql.get('DELETE FROM documents_fts WHERE rowid = ?').run(id);
    this.#sql.get('DELETE FROM documents_trigram WHERE rowid = ?').run(id);
    this.#sql.get('DELETE FROM document_events WHERE document_id = ?').run(id);
    this.#vectors.delete(id);
  }

  #write<T>(fn: () => T): T {
    try {
      return this.#sql.transaction(fn);
    } catch (error) {
      this.#vectors.invalidate();
      throw error;
    }
  }

  async #embed(texts: readonly string[], signal: AbortSignal | undefined): Promise<Array<Float32Array | null>> {
    if (texts.length === 0) return [];
    const { embedder, log } = this.#options;
    try {
      const vectors = await embedder.embed(texts, signal);
      return texts.map((_, i) => {
        const v = vectors[i];
        return v && v.length === embedder.dim ? v : null;
      });
    } catch (error) {
      if (signal?.aborted) throw error;
      // The documents are still written; the re-embedding loop fills in their vectors later.
      log.warn({ error: describeError(error), documents: texts.length }, 'embedding failed; storing documents without vectors');
      return texts.map(() => null);
    }
  }

  *#loadVectors(): Iterable<readonly [number, Float32Array]> {
    const rows = this.#sql
      .get('SELECT id, vector FROM documents WHERE fingerprint = ? AND vector IS NOT NULL')
      .all(this.fingerprint) as Array<{ id: number; vector: Uint8Array }>;
    for (const row of rows) yield [row.id, blobToVector(row.vector)] as const;
  }
}

function checkInput(input: DocumentInput): void {
  if (input.content.trim() === '' && (input.summary ?? '').trim() === '' && (input.media_refs ?? []).length === 0) {
    throw new ToolError({ reason: 'required', field: 'content', detail: 'a document needs content, a summary or media' });
  }
  if (input.source.trim() === '') throw new ToolError({ reason: 'required', field: 'source', detail: 'a document needs a source' });
}

/** What the lexical index sees: summary, content, tags and, for archives, who said it. */
function searchText(doc: { content: string; summary?: string; tags?: readonly string[]; origin?: { peer: string } | null }): string {
  return [doc.origin?.peer ?? '', doc.summary ?? '', doc.content, ...(doc.tags ?? [])].filter((p) => p !== '').join('\n');
}

function symbolText(content: string, summary: string): string {
  return summary === '' ? content : `${content}\n${summary}`;
}

function vectorText(content: string, summary: string): string {
  return summary === '' ? content : `${summary}\n${content}`;
}

function toDocument(row: DocumentRow): StoredDocument {
  return {
    id: row.id,
    content: row.content,
    summary: row.summary,
    tags: JSON.parse(row.tags) as string[],
    source: row.source,
    source_event_ids: JSON.parse(row.source_event_ids) as string[],
    media_refs: JSON.parse(row.media_refs) as string[],
    origin: row.origin === null ? null : (JSON.parse(row.origin) as ArchivedEventOrigin),
    created_at: row.created_at,
    stored_at: row.stored_at,
    last_access_at: row.last_access_at,
    access_count: row.access_count,
    distilled_at: row.distilled_at,
  };
}

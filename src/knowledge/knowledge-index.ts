/**
 * The knowledge index in SQLite: one row per entry (what change detection, the tree and search
 * need), BM25 over analyser tokens of the name and content (FTS5), and vectors of the current
 * embedder kept in memory for brute-force cosine search. Replacing an entry deletes its old rows
 * in the same transaction that writes the new ones, so no search ever sees both.
 */

import { blobToVector, vectorToBlob } from '../embed/vector-blob.js';
import { VectorIndex } from '../embed/vector-index.js';
import { ftsMatchQuery } from '../store/fts-query.js';
import { StatementCache } from '../store/statement-cache.js';
import type { SqlDatabase } from '../store/types.js';
import type { MediaRef } from './types.js';

/** BM25 column weights: a word of the entry's name says more than one in its body. */
const TITLE_WEIGHT = 3;
const BODY_WEIGHT = 1;

export interface IndexedEntry {
  name: string;
  category: string;
  signature: string;
  hash: string;
  updated_at: number;
  bytes: number;
  plain: string;
  media: MediaRef[];
  /** Analyser tokens of the name, space-separated. */
  title: string;
  /** Analyser tokens of the content, space-separated. */
  body: string;
  /** Null when there is no embedder or embedding failed (filled in later). */
  vector: Float32Array | null;
}

export interface IndexRow {
  id: number;
  name: string;
  category: string;
  signature: string;
  hash: string;
  updated_at: number;
  plain: string;
  media: MediaRef[];
}

export interface ScoredId {
  id: number;
  score: number;
}

interface RawRow {
  id: number;
  name: string;
  category: string;
  signature: string;
  hash: string;
  updated_at: number;
  plain: string;
  media: string;
}

const ROW_COLUMNS = 'id, name, category, signature, hash, updated_at, plain, media';

/** SQL for "this category or below": substr, because "_" in names is a LIKE wildcard. */
function inCategory(column: string): string {
  return `(@category = '' OR ${column} = @category OR substr(${column}, 1, length(@category) + 1) = @category || '/')`;
}

export class KnowledgeIndex {
  readonly #sql: StatementCache;
  readonly #vectors: VectorIndex;
  readonly #fingerprint: string | undefined;
  readonly #dim: number;

  /** `embedder`: fingerprint and dimension of the current vector space (undefined: no vectors). */
  constructor(db: SqlDatabase, embedder: { fingerprint: string; dim: number } | undefined) {
    this.#sql = new StatementCache(db);
    this.#fingerprint = embedder?.fingerprint;
    this.#dim = embedder?.dim ?? 0;
    this.#vectors = new VectorIndex(() => this.#loadVectors());
  }

  /** Runs `fn` in one transaction; the in-memory vectors are reloaded if it fails. */
  transaction<T>(fn: () => T): T {
    try {
      return this.#sql.transaction(fn);
    } catch (error) {
      this.#vectors.invalidate();
      throw error;
    }
  }

  /** Writes an entry, replacing whatever was indexed under its name. Call inside {@link KnowledgeIndex.transaction} for batches. */
  put(entry: IndexedEntry): number {
    return this.transaction(() => {
      this.#remove(entry.name);
      const vector = entry.vector && entry.vector.length === this.#dim ? entry.vector : null;
      const result = this.#sql
        .get(
          `INSERT INTO knowledge_entries (name, category, signature, hash, updated_at, bytes, plain, media, vector, fingerprint)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(
          entry.name,
          entry.category,
          entry.signature,
          entry.hash,
          entry.updated_at,
          entry.bytes,
          entry.plain,
          JSON.stringify(entry.media),
          vector ? vectorToBlob(vector) : null,
          vector ? (this.#fingerprint ?? null) : null,
        );
      const id = Number(result.lastInsertRowid);
      this.#sql.get('INSERT INTO knowledge_fts (rowid, title, body) VALUES (?, ?, ?)').run(id, entry.title, entry.body);
      if (vector) this.#vectors.set(id, vector);
      return id;
    });
  }

  /** Records a new signature (and media list) for an entry whose content did not change. */
  touch(name: string, signature: string, updatedAt: number, media: readonly MediaRef[]): void {
    this.transaction(() => {
      this.#sql
        .get('UPDATE knowledge_entries SET signature = ?, updated_at = ?, media = ? WHERE name = ?')
        .run(signature, updatedAt, JSON.stringify(media), name);
    });
  }

  /** False when nothing was indexed under the name. */
  remove(name: string): boolean {
    return this.transaction(() => this.#remove(name));
  }

  #remove(name: string): boolean {
    const row = this.#sql.get('SELECT id FROM knowledge_entries WHERE name = ?').get(name) as { id: number } | undefined;
    if (!row) return false;
    this.#sql.get('DELETE FROM knowledge_fts WHERE rowid = ?').run(row.id);
    this.#sql.get('DELETE FROM knowledge_entries WHERE id = ?').run(row.id);
    this.#vectors.delete(row.id);
    return true;
  }

  get(name: string): IndexRow | undefined {
    const row = this.#sql.get(`SELECT ${ROW_COLUMNS} FROM knowledge_entries WHERE name = ?`).get(name) as RawRow | undefined;
    return row ? toRow(row) : undefined;
  }

  /** Name and category of each id (ids no longer indexed are left out). */
  names(ids: readonly number[]): Map<number, { name: string; category: string }> {
    const out = new Map<number, { name: string; category: string }>();
    const statement = this.#sql.get('SELECT name, category FROM knowledge_entries WHERE id = ?');
    for (const id of new Set(ids)) {
      const row = statement.get(id) as { name: string; category: string } | undefined;
      if (row) out.set(id, row);
    }
    return out;
  }

  /** The entry's text without markdown noise ('' when it is gone). */
  plain(id: number): string {
    return (this.#sql.get('SELECT plain FROM knowledge_entries WHERE id = ?').get(id) as { plain: string } | undefined)?.plain ?? '';
  }

  /** name → signature and hash of every indexed entry (change detection). */
  signatures(): Map<string, { signature: string; hash: string }> {
    const rows = this.#sql.get('SELECT name, signature, hash FROM knowledge_entries').all() as Array<{
      name: string;
      signature: string;
      hash: string;
    }>;
    return new Map(rows.map((r) => [r.name, { signature: r.signature, hash: r.hash }]));
  }

  /** Entries in the category or below (all when empty), by name, with the first `chars` characters of their text. */
  list(category = '', chars = 0): Array<{ name: string; category: string; plain: string; media: number }> {
    return this.#sql
      .get(
        `SELECT name, category, substr(plain, 1, @chars) AS plain, json_array_length(media) AS media
         FROM knowledge_entries WHERE ${inCategory('category')} ORDER BY name`,
      )
      .all({ category, chars }) as Array<{ name: string; category: string; plain: string; media: number }>;
  }

  count(): number {
    return (this.#sql.get('SELECT count(*) AS n FROM knowledge_entries').get() as { n: number }).n;
  }

  /** The digests of every media file an entry refers to. */
  mediaDigests(): Set<string> {
    const rows = this.#sql
      .get(`SELECT DISTINCT json_extract(m.value, '$.digest') AS digest FROM knowledge_entries e, json_each(e.media) m`)
      .all() as Array<{ digest: unknown }>;
    return new Set(rows.map((r) => r.digest).filter((d): d is string => typeof d === 'string'));
  }

  /** Distinct media files referenced by entries, and their bytes. */
  mediaStats(): { files: number; bytes: number } {
    const row = this.#sql
      .get(
        `SELECT count(*) AS files, coalesce(sum(bytes), 0) AS bytes FROM (
           SELECT json_extract(m.value, '$.digest') AS digest, max(json_extract(m.value, '$.bytes')) AS bytes
           FROM knowledge_entries e, json_each(e.media) m GROUP BY digest)`,
      )
      .get() as { files: number; bytes: number };
    return { files: row.files, bytes: row.bytes };
  }

  categories(): string[] {
    return (this.#sql.get('SELECT path FROM knowledge_categories ORDER BY path').all() as Array<{ path: string }>).map((r) => r.path);
  }

  hasCategory(path: string): boolean {
    return this.#sql.get('SELECT 1 FROM knowledge_categories WHERE path = ?').get(path) !== undefined;
  }

  /** Adds a category and every level above it. */
  addCategory(path: string): void {
    if (path === '') return;
    const parts = path.split('/');
    this.transaction(() => {
      for (let i = 1; i <= parts.length; i++) {
        this.#sql.get('INSERT OR IGNORE INTO knowledge_categories (path) VALUES (?)').run(parts.slice(0, i).join('/'));
      }
    });
  }

  removeCategories(paths: readonly string[]): void {
    this.transaction(() => {
      for (const path of paths) this.#sql.get('DELETE FROM knowledge_categories WHERE path = ?').run(path);
    });
  }

  replaceCategories(paths: readonly string[]): void {
    this.transaction(() => {
      this.#sql.get('DELETE FROM knowledge_categories').run();
      for (const path of paths) this.#sql.get('INSERT OR IGNORE INTO knowledge_categories (path) VALUES (?)').run(path);
    });
  }

  /** BM25 over `indexedQuery` (analyser tokens); score = −bm25, higher is better. */
  searchLexical(indexedQuery: string, limit: number, category: string): ScoredId[] {
    const match = ftsMatchQuery(indexedQuery);
    if (match === undefined || limit <= 0) return [];
    const rank = `bm25(knowledge_fts, ${TITLE_WEIGHT}, ${BODY_WEIGHT})`;
    if (category === '') {
      // Without a category the join to the entries would only cost time.
      const rows = this.#sql
        .get(`SELECT rowid AS id, ${rank} AS rank FROM knowledge_fts WHERE knowledge_fts MATCH ? ORDER BY rank LIMIT ?`)
        .all(match, limit) as Array<{ id: number; rank: number }>;
      return rows.map((r) => ({ id: r.id, score: -r.rank }));
    }
    const rows = this.#sql
      .get(
        `SELECT f.rowid AS id, ${rank} AS rank
         FROM knowledge_fts f JOIN knowledge_entries e ON e.id = f.rowid
         WHERE knowledge_fts MATCH @match AND ${inCategory('e.category')}
         ORDER BY rank LIMIT @limit`,
      )
      .all({ match, category, limit }) as Array<{ id: number; rank: number }>;
    return rows.map((r) => ({ id: r.id, score: -r.rank }));
  }

  /** Cosine similarity to `query` (a vector of the current embedder), best first. */
  searchVector(query: Float32Array, limit: number, category: string): ScoredId[] {
    if (this.#fingerprint === undefined || limit <= 0) return [];
    if (category === '') return this.#vectors.search(query, limit);
    const ids = (
      this.#sql.get(`SELECT id FROM knowledge_entries WHERE ${inCategory('category')} AND fingerprint = @fp`).all({
        category,
        fp: this.#fingerprint,
      }) as Array<{ id: number }>
    ).map((r) => r.id);
    return this.vectorScores(query, ids)
      .sort((a, b) => b.score - a.score)
      .slice(0, limit);
  }

  /** Cosine similarity of the given entries to `query` (those without a current vector are left out). */
  vectorScores(query: Float32Array, ids: readonly number[]): ScoredId[] {
    const out: ScoredId[] = [];
    for (const id of ids) {
      const v = this.#vectors.get(id);
      if (!v || v.length !== query.length) continue;
      let dot = 0;
      for (let i = 0; i < v.length; i++) dot += (v[i] as number) * (query[i] as number);
      out.push({ id, score: dot });
    }
    return out;
  }

  /** Loads the in-memory vectors now, so that the first search does not pay for it. */
  warm(): void {
    void this.#vectors.size;
  }

  /** Entries without a vector of the current embedder, for (re-)embedding. */
  staleVectors(limit: number): Array<{ id: number; name: string; plain: string }> {
    if (this.#fingerprint === undefined) return [];
    return this.#sql
      .get('SELECT id, name, plain FROM knowledge_entries WHERE vector IS NULL OR fingerprint IS NOT ? ORDER BY id LIMIT ?')
      .all(this.#fingerprint, limit) as Array<{ id: number; name: string; plain: string }>;
  }

  staleVectorCount(): number {
    if (this.#fingerprint === undefined) return 0;
    return (
      this.#sql.get('SELECT count(*) AS n FROM knowledge_entries WHERE vector IS NULL OR fingerprint IS NOT ?').get(this.#fingerprint) as {
        n: number;
      }
    ).n;
  }

  currentVectorCount(): number {
    if (this.#fingerprint === undefined) return 0;
    return (this.#sql.get('SELECT count(*) AS n FROM knowledge_entries WHERE fingerprint = ?').get(this.#fingerprint) as { n: number }).n;
  }

  setVectors(entries: ReadonlyArray<{ id: number; vector: Float32Array }>): number {
    if (this.#fingerprint === undefined) return 0;
    return this.transaction(() => {
      let updated = 0;
      for (const { id, vector } of entries) {
        if (vector.length !== this.#dim) continue;
        const result = this.#sql
          .get('UPDATE knowledge_entries SET vector = ?, fingerprint = ? WHERE id = ?')
          .run(vectorToBlob(vector), this.#fingerprint, id);
        if (result.changes > 0) {
          this.#vectors.set(id, vector);
          updated++;
        }
      }
      return updated;
    });
  }

  *#loadVectors(): Iterable<readonly [number, Float32Array]> {
    if (this.#fingerprint === undefined) return;
    const rows = this.#sql
      .get('SELECT id, vector FROM knowledge_entries WHERE fingerprint = ? AND vector IS NOT NULL')
      .all(this.#fingerprint) as Array<{ id: number; vector: Uint8Array }>;
    for (const row of rows) yield [row.id, blobToVector(row.vector)] as const;
  }
}

function toRow(row: RawRow): IndexRow {
  return {
    id: row.id,
    name: row.name,
    category: row.category,
    signature: row.signature,
    hash: row.hash,
    updated_at: row.updated_at,
    plain: row.plain,
    media: JSON.parse(row.media) as MediaRef[],
  };
}

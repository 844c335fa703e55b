/**
 * The knowledge graph API: entities (unique by normalised name, with aliases and vectors),
 * relations with validity intervals and confidence, and the sentences they were read from. A
 * single-valued fact ("I moved to Shanghai") supersedes the old value, which stays as history;
 * every relation keeps the sentences and events that support it. The write rules live in
 * graph-core.ts, corrections in graph-curation.ts, maintenance data rules in graph-maintenance.ts.
 */
import {
  type CommitOptions,
  type CommitResult,
  type CommitTriple,
  type EntityKey,
  GraphCore,
  type GraphProvenance,
  type GraphStoreOptions,
  MAX_ENTITY_NAME_LENGTH,
} from './graph-core.js';
import {
  deleteEntity,
  editRelation,
  type MergeResult,
  mergeEntities,
  type PurgeCriteria,
  purgeRelations,
  type TripleRef,
} from './graph-curation.js';
import {
  cleanupOrphanSentences,
  expireNoMergeMarks,
  type GraphStats,
  introspect,
  isNoMerge,
  lowConfidenceRelations,
  markNoMerge,
  markReviewed,
  mergeExactDuplicates,
  type NoMergeMark,
  noMergeMarks,
  type SimilarEntityPair,
  similarEntityPairs,
} from './graph-maintenance.js';
import { normalizeName, normalizeRelationType } from './graph-names.js';
import {
  ENTITY_COLUMNS,
  type EntityRow,
  type GraphEntity,
  type GraphRelation,
  RELATION_ORDER,
  RELATION_SELECT,
  type RelationRow,
  type SentenceRef,
  toRelation,
} from './graph-types.js';
import { type WalkOptions, walkNeighbours } from './graph-walk.js';
import { chunks, escapeLike, placeholders, unique } from './sql-lists.js';
import { containsSymbol, likePattern } from './symbols.js';

/** Candidate sentences checked per exact symbol. */
export const SYMBOL_CANDIDATES = 500;

import { vectorToBlob } from '../embed/vector-blob.js';

export {
  type CommitOptions,
  type CommitResult,
  type CommitTriple,
  DEFAULT_COMMIT_CONFIDENCE,
  DEFAULT_SINGLE_VALUED_RELATIONS,
  type EntityKey,
  type GraphProvenance,
  type GraphStoreOptions,
  MAX_ENTITY_NAME_LENGTH,
  MAX_RELATION_TYPE_LENGTH,
} from './graph-core.js';
export type { MergeResult, PurgeCriteria } from './graph-curation.js';
export type { GraphStats, NoMergeMark, SimilarEntityPair } from './graph-maintenance.js';
export type { TripleRef } from './graph-types.js';

export interface Neighbourhood {
  entities: Array<GraphEntity & { depth: number }>;
  relations: GraphRelation[];
}

export interface SymbolMatch {
  sentence: SentenceRef;
  /** The query symbols the sentence contains. */
  symbols: string[];
  /** Relations this sentence is evidence for (current first). */
  relations: GraphRelation[];
}

export class GraphStore {
  readonly #core: GraphCore;

  constructor(options: GraphStoreOptions) {
    this.#core = new GraphCore(options);
  }

  get fingerprint(): string {
    return this.#core.fingerprint;
  }

  isSingleValued(relationType: string): boolean {
    return this.#core.isSingleValued(relationType);
  }

  entity(key: EntityKey): GraphEntity | undefined {
    return this.#core.entity(key);
  }

  entitiesById(ids: readonly number[]): GraphEntity[] {
    return this.#core.entitiesById(ids);
  }

  relationsById(ids: readonly number[]): GraphRelation[] {
    return this.#core.relationsById(ids);
  }

  staleVectorCount(): number {
    return this.#core.staleVectorCount();
  }

  /**
   * Upserts the triples' entities (mention count + 1 per mention), stores each distinct sentence
   * once with its provenance, and writes the relations: an identical current relation is
   * reinforced; a single-valued type supersedes the subject's other current value (valid_to = the
   * new fact's valid_from), unless the new fact is older than it, in which case it is stored as
   * history. New entities are embedded before the write transaction.
   */
  async commit(triples: readonly CommitTriple[], provenance: GraphProvenance = {}, options: CommitOptions = {}): Promise<CommitResult> {
    const vectors = await this.#core.embedNewNames(
      triples.flatMap((t) => [t.subject, t.object]),
      options.signal,
    );
    return this.#core.write(() => this.#core.commitNow(triples, provenance, options.singleValued === true, vectors));
  }

  /** Adds an alias; false when it is empty or already names another entity. */
  addAlias(entity: EntityKey, alias: string): boolean {
    const row = this.#core.resolveRow(entity);
    const norm = normalizeName(alias);
    if (!row || norm === '' || norm.length > MAX_ENTITY_NAME_LENGTH) return false;
    if (norm === row.norm_name) return true;
    const other = this.#core.resolveNorm(norm);
    if (other && other.id !== row.id) return false;
    this.#core.write(() => {
      this.#core.sql
        .get('INSERT OR IGNORE INTO graph_aliases (norm_alias, alias, entity_id) VALUES (?, ?, ?)')
        .run(norm, alias.trim(), row.id);
    });
    return true;
  }

  /**
   * Replaces one current relation (memory_edit): the old one is deleted and the new one written
   * with its evidence, session and valid_from; confidence as given or kept. Undefined when no
   * such current relation exists.
   */
  async editRelation(old: TripleRef, next: Partial<TripleRef> & { confidence?: number }): Promise<GraphRelation | undefined> {
    return editRelation(this.#core, old, next);
  }

  /**
   * Folds `source` into `target` (memory_merge): relations are redirected (a duplicate of one of
   * the target's current relations is folded into it, a relation between the two is dropped),
   * the source's name and aliases become aliases of the target, mention counts add up, and the
   * source is deleted. Single-valued types keep only the newest current value.
   */
  merge(source: EntityKey, target: EntityKey): MergeResult {
    return mergeEntities(this.#core, source, target);
  }

  /** Deletes an entity with all its relations (memory_delete_entity). */
  deleteEntity(entity: EntityKey): { deleted: false } | { deleted: true; entity: GraphEntity; relations_removed: number } {
    return deleteEntity(this.#core, entity);
  }

  /**
   * Bulk removal by criteria (memory_purge; all given criteria must match). `soft` ends current
   * relations (valid_to = now, kept as history); `hard` deletes matching relations, history
   * included. At least one criterion is required.
   */
  purge(criteria: PurgeCriteria, mode: 'soft' | 'hard'): { relations: number } {
    return purgeRelations(this.#core, criteria, mode);
  }

  /** The entities named (by name or alias) exactly by any of `names`, without duplicates. */
  resolve(names: readonly string[]): GraphEntity[] {
    const seen = new Set<number>();
    const out: GraphEntity[] = [];
    for (const name of names) {
      const row = this.#core.resolveRow(name);
      if (!row || seen.has(row.id)) continue;
      seen.add(row.id);
      out.push(this.#core.toEntity(row));
    }
    return out;
  }

  /** Entities whose name or an alias contains `text` (normalised): exact matches first, then by mentions. */
  searchEntities(text: string, limit: number): GraphEntity[] {
    const norm = normalizeName(text);
    if (norm === '' || limit <= 0) return [];
    const pattern = `%${escapeLike(norm)}%`;
    const rows = this.#core.sql
      .get(
        `SELECT ${ENTITY_COLUMNS} FROM graph_entities WHERE id IN (
           SELECT id FROM graph_entities WHERE norm_name LIKE @pattern ESCAPE '\\'
           UNION SELECT entity_id FROM graph_aliases WHERE norm_alias LIKE @pattern ESCAPE '\\')
         ORDER BY (norm_name = @norm) DESC, mention_count DESC, id LIMIT @limit`,
      )
      .all({ pattern, norm, limit }) as EntityRow[];
    return rows.map((r) => this.#core.toEntity(r));
  }

  /** Entities by cosine of their name vectors (current fingerprint only). */
  searchEntityVectors(query: Float32Array, limit: number, minScore = -Infinity): Array<{ entity: GraphEntity; score: number }> {
    const hits = this.#core.vectors.search(query, limit, minScore);
    const entities = new Map(this.entitiesById(hits.map((h) => h.id)).map((e) => [e.id, e]));
    return hits.flatMap((h) => {
      const entity = entities.get(h.id);
      return entity ? [{ entity, score: h.score }] : [];
    });
  }

  /** Relations of an entity in either direction: current only unless `history`. */
  relationsOf(entity: EntityKey, options: { history?: boolean; limit?: number } = {}): GraphRelation[] {
    const row = this.#core.resolveRow(entity);
    if (!row) return [];
    const rows = this.#core.sql
      .get(
        `${RELATION_SELECT} WHERE (r.source_id = @id OR r.target_id = @id) AND (@history = 1 OR r.valid_to IS NULL) ${RELATION_ORDER} LIMIT @limit`,
      )
      .all({ id: row.id, history: options.history ? 1 : 0, limit: options.limit ?? 200 }) as RelationRow[];
    return rows.map(toRelation);
  }

  /** The current and past values of a subject's relation type, newest first (supersession history). */
  history(subject: EntityKey, relationType: string): GraphRelation[] {
    const row = this.#core.resolveRow(subject);
    if (!row) return [];
    const rows = this.#core.sql
      .get(`${RELATION_SELECT} WHERE r.source_id = ? AND r.type = ? ORDER BY r.valid_from DESC, r.id DESC`)
      .all(row.id, normalizeRelationType(relationType)) as RelationRow[];
    return rows.map(toRelation);
  }

  /** Every sentence supporting each relation (its provenance), oldest first. */
  evidence(relationIds: readonly number[]): Map<number, SentenceRef[]> {
    const out = new Map<number, SentenceRef[]>();
    for (const chunk of chunks(unique(relationIds))) {
      const rows = this.#core.sql
        .get(
          `SELECT e.relation_id, s.id, s.text, s.source_event_id, s.document_id FROM graph_relation_evidence e
           JOIN graph_sentences s ON s.id = e.sentence_id WHERE e.relation_id IN (${placeholders(chunk.length)}) ORDER BY s.id`,
        )
        .all(...chunk) as Array<SentenceRef & { relation_id: number }>;
      for (const { relation_id, ...sentence } of rows) {
        const list = out.get(relation_id) ?? [];
        list.push(sentence);
        out.set(relation_id, list);
      }
    }
    return out;
  }

  /** Breadth-first neighbourhood of the seeds (see graph-walk.ts for depth and budget). */
  neighbours(seeds: readonly EntityKey[], options: WalkOptions = {}): Neighbourhood {
    const seedIds = seeds.flatMap((s) => {
      const row = this.#core.resolveRow(s);
      return row ? [row.id] : [];
    });
    const walk = walkNeighbours(this.#core.sql, seedIds, options);
    const entities = new Map(this.entitiesById(walk.nodes.map((n) => n.id)).map((e) => [e.id, e]));
    return {
      entities: walk.nodes.flatMap((n) => {
        const e = entities.get(n.id);
        return e ? [{ ...e, depth: n.depth }] : [];
      }),
      relations: this.relationsById(walk.relationIds),
    };
  }

  /**
   * Sentences containing the exact symbols (numbers, versions, identifiers; see symbols.ts), most
   * symbols first, then newest, with the relations they support. Symbols of 3 or more characters
   * use the trigram index; two-character ones scan from the newest sentence; at most
   * {@link SYMBOL_CANDIDATES} candidates per symbol are checked, newest first.
   */
  lookupSymbols(symbols: readonly string[], limit: number): SymbolMatch[] {
    const found = new Map<number, { sentence: SentenceRef; symbols: string[] }>();
    for (const symbol of unique(symbols.map((s) => s.trim()).filter((s) => [...s].length >= 2))) {
      const sql =
        [...symbol].length >= 3
          ? `SELECT s.id, s.text, s.source_event_id, s.document_id FROM graph_sentences s
             WHERE s.id IN (SELECT rowid FROM graph_sentences_trigram WHERE text LIKE @pattern ORDER BY rowid DESC LIMIT @cap)`
          : 'SELECT id, text, source_event_id, document_id FROM graph_sentences WHERE text LIKE @pattern ORDER BY id DESC LIMIT @cap';
      for (const row of this.#core.sql.get(sql).all({ pattern: likePattern(symbol), cap: SYMBOL_CANDIDATES }) as SentenceRef[]) {
        if (!containsSymbol(row.text, symbol)) continue;
        const entry = found.get(row.id) ?? { sentence: row, symbols: [] };
        entry.symbols.push(symbol);
        found.set(row.id, entry);
      }
    }
    const ranked = [...found.values()]
      .sort((a, b) => b.symbols.length - a.symbols.length || b.sentence.id - a.sentence.id)
      .slice(0, Math.max(0, limit));
    const bySentence = new Map<number, number[]>();
    for (const chunk of chunks(ranked.map((r) => r.sentence.id))) {
      const rows = this.#core.sql
        .get(`SELECT sentence_id, relation_id FROM graph_relation_evidence WHERE sentence_id IN (${placeholders(chunk.length)})`)
        .all(...chunk) as Array<{ sentence_id: number; relation_id: number }>;
      for (const r of rows) bySentence.set(r.sentence_id, [...(bySentence.get(r.sentence_id) ?? []), r.relation_id]);
    }
    const relations = new Map(this.relationsById([...bySentence.values()].flat()).map((r) => [r.id, r]));
    return ranked.map((r) => ({
      ...r,
      relations: (bySentence.get(r.sentence.id) ?? [])
        .flatMap((id) => relations.get(id) ?? [])
        .sort((a, b) => Number(a.valid_to !== null) - Number(b.valid_to !== null) || b.confidence - a.confidence),
    }));
  }

  /** Counts, relation types and the most mentioned entities (memory_introspect). */
  introspect(options: { hotspots?: number } = {}): GraphStats {
    return introspect(this.#core, options);
  }

  /** Marks a pair as "do not propose merging" until `expiresAt` (memory_block_merge). False when either is unknown or they are the same. */
  markNoMerge(a: EntityKey, b: EntityKey, expiresAt: number, reason = ''): boolean {
    return markNoMerge(this.#core, a, b, expiresAt, reason);
  }

  isNoMerge(a: EntityKey, b: EntityKey): boolean {
    return isNoMerge(this.#core, a, b);
  }

  noMergeMarks(): NoMergeMark[] {
    return noMergeMarks(this.#core);
  }

  /** Deletes expired no-merge marks; returns how many. */
  expireNoMergeMarks(): number {
    return expireNoMergeMarks(this.#core);
  }

  /**
   * Pairs of entities that may be one thing: bigram Jaccard of their normalised names or cosine of
   * their vectors strictly above `threshold` (0.75), entities of conflicting types and pairs with
   * an active no-merge mark left out, most similar first, at most `limit` (5). Partners are looked
   * for among the `scan` most recently updated entities.
   */
  similarEntityPairs(
    options: { threshold?: number; limit?: number; scan?: number; signal?: AbortSignal } = {},
  ): Promise<SimilarEntityPair[]> {
    return similarEntityPairs(this.#core, options);
  }

  /**
   * The merges that need no judgement: entities whose names normalise to the same key under the
   * current rules (the key changed since they were stored), and entities whose name is another
   * entity's alias. The one with more mentions is kept; no-merge marks are honoured. Returns the
   * number of merges.
   */
  mergeExactDuplicates(): number {
    return mergeExactDuplicates(this.#core);
  }

  /** Current relations below `below` confidence (default 0.6) not yet reviewed, least confident first (the review loop). */
  lowConfidenceRelations(options: { below?: number; limit?: number } = {}): GraphRelation[] {
    return lowConfidenceRelations(this.#core, options);
  }

  /** Records that the review loop has shown these relations, so they are not proposed again. */
  markReviewed(relationIds: readonly number[]): void {
    markReviewed(this.#core, relationIds);
  }

  /** Deletes sentences no relation refers to any more (after deletes and purges). Returns how many. */
  cleanupOrphanSentences(): number {
    return cleanupOrphanSentences(this.#core);
  }

  /** Entities whose vector is missing or from another embedder, for background re-embedding. */
  staleVectors(limit: number): Array<{ id: number; text: string }> {
    return (
      this.#core.sql
        .get('SELECT id, name FROM graph_entities WHERE vector IS NULL OR fingerprint IS NOT ? ORDER BY id LIMIT ?')
        .all(this.fingerprint, limit) as Array<{ id: number; name: string }>
    ).map((r) => ({ id: r.id, text: r.name }));
  }

  setVectors(entries: ReadonlyArray<{ id: number; vector: Float32Array }>): number {
    return this.#core.write(() => {
      let updated = 0;
      for (const { id, vector } of entries) {
        if (vector.length !== this.#core.options.embedder.dim) continue;
        if (
          this.#core.sql
            .get('UPDATE graph_entities SET vector = ?, fingerprint = ? WHERE id = ?')
            .run(vectorToBlob(vector), this.fingerprint, id).changes > 0
        ) {
          this.#core.vectors.set(id, vector);
          updated++;
        }
      }
      return updated;
    });
  }

  async refreshStaleVectors(limit: number, signal?: AbortSignal): Promise<number> {
    const stale = this.staleVectors(limit);
    if (stale.length === 0) return 0;
    const vectors = await this.#core.options.embedder.embed(
      stale.map((s) => s.text),
      signal,
    );
    return this.setVectors(stale.flatMap((s, i) => (vectors[i] ? [{ id: s.id, vector: vectors[i] }] : [])));
  }
}

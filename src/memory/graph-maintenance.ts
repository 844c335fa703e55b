/**
 * What the maintenance loops read and write in the graph: statistics, no-merge marks with expiry,
 * merge candidates, exact-duplicate merges, low-confidence relations to review, and cleanup of
 * sentences nothing refers to.
 */

import type { VectorHit } from '../embed/vector-index.js';
import type { EntityKey, GraphCore } from './graph-core.js';
import { mergeEntities } from './graph-curation.js';
import { normalizeName } from './graph-names.js';
import { findSimilarPairs } from './graph-similarity.js';
import {
  ENTITY_COLUMNS,
  type EntityRef,
  type EntityRow,
  type GraphRelation,
  RELATION_SELECT,
  type RelationRow,
  toRelation,
} from './graph-types.js';
import { unique } from './sql-lists.js';

export interface GraphStats {
  entities: number;
  aliases: number;
  relations_current: number;
  relations_history: number;
  sentences: number;
  no_merge_marks: number;
  stale_entity_vectors: number;
  relation_types: Array<{ type: string; count: number }>;
  /** Most mentioned entities with their current degree. */
  hotspots: Array<EntityRef & { mention_count: number; degree: number }>;
}

export interface SimilarEntityPair {
  a: EntityRef;
  b: EntityRef;
  similarity: number;
  method: 'bigram' | 'vector';
}

export interface NoMergeMark {
  a: EntityRef;
  b: EntityRef;
  expires_at: number;
  reason: string;
}

/** Counts, relation types and the most mentioned entities (memory_introspect). */
export function introspect(core: GraphCore, options: { hotspots?: number } = {}): GraphStats {
  const count = (sql: string, ...params: unknown[]) => (core.sql.get(sql).get(...params) as { n: number }).n;
  const hotspots = core.sql
    .get(
      `SELECT e.id, e.name, e.type, e.mention_count,
         (SELECT count(*) FROM graph_relations r WHERE r.source_id = e.id AND r.valid_to IS NULL)
         + (SELECT count(*) FROM graph_relations r WHERE r.target_id = e.id AND r.valid_to IS NULL) AS degree
       FROM graph_entities e ORDER BY e.mention_count DESC, e.id LIMIT ?`,
    )
    .all(options.hotspots ?? 10) as Array<EntityRef & { mention_count: number; degree: number }>;
  return {
    entities: count('SELECT count(*) AS n FROM graph_entities'),
    aliases: count('SELECT count(*) AS n FROM graph_aliases'),
    relations_current: count('SELECT count(*) AS n FROM graph_relations WHERE valid_to IS NULL'),
    relations_history: count('SELECT count(*) AS n FROM graph_relations WHERE valid_to IS NOT NULL'),
    sentences: count('SELECT count(*) AS n FROM graph_sentences'),
    no_merge_marks: count('SELECT count(*) AS n FROM graph_no_merge WHERE expires_at > ?', core.options.clock.now()),
    stale_entity_vectors: core.staleVectorCount(),
    relation_types: core.sql
      .get('SELECT type, count(*) AS count FROM graph_relations WHERE valid_to IS NULL GROUP BY type ORDER BY count DESC, type LIMIT 20')
      .all() as Array<{ type: string; count: number }>,
    hotspots,
  };
}

/** Marks a pair as "do not propose merging" until `expiresAt` (memory_block_merge). False when either is unknown or they are the same. */
export function markNoMerge(core: GraphCore, a: EntityKey, b: EntityKey, expiresAt: number, reason = ''): boolean {
  const ea = core.resolveRow(a);
  const eb = core.resolveRow(b);
  if (!ea || !eb || ea.id === eb.id) return false;
  const [lo, hi] = ea.id < eb.id ? [ea.id, eb.id] : [eb.id, ea.id];
  core.write(() => {
    core.sql
      .get('INSERT OR REPLACE INTO graph_no_merge (entity_a, entity_b, expires_at, reason) VALUES (?, ?, ?, ?)')
      .run(lo, hi, Math.trunc(expiresAt), reason);
  });
  return true;
}

export function isNoMerge(core: GraphCore, a: EntityKey, b: EntityKey): boolean {
  const ea = core.resolveRow(a);
  const eb = core.resolveRow(b);
  if (!ea || !eb) return false;
  return core.blocked(Math.min(ea.id, eb.id), Math.max(ea.id, eb.id), core.options.clock.now());
}

export function noMergeMarks(core: GraphCore): NoMergeMark[] {
  const rows = core.sql
    .get(
      `SELECT m.expires_at, m.reason, a.id AS a_id, a.name AS a_name, a.type AS a_type, b.id AS b_id, b.name AS b_name, b.type AS b_type
       FROM graph_no_merge m JOIN graph_entities a ON a.id = m.entity_a JOIN graph_entities b ON b.id = m.entity_b
       WHERE m.expires_at > ? ORDER BY m.expires_at`,
    )
    .all(core.options.clock.now()) as Array<Record<string, string | number>>;
  return rows.map((r) => ({
    a: { id: Number(r.a_id), name: String(r.a_name), type: String(r.a_type) },
    b: { id: Number(r.b_id), name: String(r.b_name), type: String(r.b_type) },
    expires_at: Number(r.expires_at),
    reason: String(r.reason),
  }));
}

/** Deletes expired no-merge marks; returns how many. */
export function expireNoMergeMarks(core: GraphCore): number {
  return core.write(() => core.sql.get('DELETE FROM graph_no_merge WHERE expires_at <= ?').run(core.options.clock.now()).changes);
}

/**
 * Pairs of entities that may be one thing: bigram Jaccard of their normalised names or cosine of
 * their vectors strictly above `threshold` (0.75), entities of conflicting types and pairs with
 * an active no-merge mark left out, most similar first, at most `limit` (5). Partners are looked
 * for among the `scan` most recently updated entities.
 */
export async function similarEntityPairs(
  core: GraphCore,
  options: { threshold?: number; limit?: number; scan?: number; signal?: AbortSignal } = {},
): Promise<SimilarEntityPair[]> {
  const threshold = options.threshold ?? 0.75;
  const now = core.options.clock.now();
  const entities = core.sql.get('SELECT id, norm_name, type, name FROM graph_entities').all() as Array<{
    id: number;
    norm_name: string;
    type: string;
    name: string;
  }>;
  const scan = (
    core.sql.get('SELECT id FROM graph_entities ORDER BY updated_at DESC, id DESC LIMIT ?').all(options.scan ?? 200) as Array<{
      id: number;
    }>
  ).map((r) => r.id);
  // Each vector search is a pass over every entity vector: yield between them so a large graph
  // never holds the event loop for the whole scan.
  const nearest = new Map<number, VectorHit[]>();
  for (const id of scan) {
    options.signal?.throwIfAborted();
    const vector = core.vectors.get(id);
    if (vector) nearest.set(id, core.vectors.search(vector, 6, threshold));
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  const pairs = findSimilarPairs({
    entities,
    scan,
    nearest: (id) => nearest.get(id) ?? [],
    blocked: (a, b) => core.blocked(a, b, now),
    threshold,
    limit: options.limit ?? 5,
  });
  const byId = new Map(entities.map((e) => [e.id, e]));
  const ref = (id: number): EntityRef => {
    const e = byId.get(id);
    return { id, name: e?.name ?? '', type: e?.type ?? '' };
  };
  return pairs.map((p) => ({ a: ref(p.a), b: ref(p.b), similarity: p.similarity, method: p.method }));
}

/**
 * The merges that need no judgement: entities whose names normalise to the same key under the
 * current rules (the key changed since they were stored), and entities whose name is another
 * entity's alias. The one with more mentions is kept; no-merge marks are honoured. Returns the
 * number of merges.
 */
export function mergeExactDuplicates(core: GraphCore): number {
  const now = core.options.clock.now();
  let merges = 0;
  const rows = core.sql.get(`SELECT ${ENTITY_COLUMNS} FROM graph_entities ORDER BY mention_count DESC, id`).all() as EntityRow[];
  const keeper = new Map<string, EntityRow>();
  for (const row of rows) {
    const key = normalizeName(row.name);
    const kept = keeper.get(key);
    if (!kept) {
      keeper.set(key, row);
      if (key !== row.norm_name && key !== '') {
        core.write(() =>
          core.sql
            .get('UPDATE graph_entities SET norm_name = ? WHERE id = ? AND NOT EXISTS (SELECT 1 FROM graph_entities WHERE norm_name = ?)')
            .run(key, row.id, key),
        );
      }
      continue;
    }
    if (core.blocked(Math.min(kept.id, row.id), Math.max(kept.id, row.id), now)) continue;
    if (mergeEntities(core, row.id, kept.id).merged) merges++;
  }
  const aliasClashes = core.sql
    .get(
      `SELECT a.entity_id AS keep, e.id AS fold FROM graph_aliases a JOIN graph_entities e ON e.norm_name = a.norm_alias
       WHERE e.id <> a.entity_id`,
    )
    .all() as Array<{ keep: number; fold: number }>;
  for (const clash of aliasClashes) {
    if (core.blocked(Math.min(clash.keep, clash.fold), Math.max(clash.keep, clash.fold), now)) continue;
    if (mergeEntities(core, clash.fold, clash.keep).merged) merges++;
  }
  return merges;
}

/** Current relations below `below` confidence (default 0.6) not yet reviewed, least confident first (the review loop). */
export function lowConfidenceRelations(core: GraphCore, options: { below?: number; limit?: number } = {}): GraphRelation[] {
  const rows = core.sql
    .get(`${RELATION_SELECT} WHERE r.valid_to IS NULL AND r.reviewed_at IS NULL AND r.confidence < ? ORDER BY r.confidence, r.id LIMIT ?`)
    .all(options.below ?? 0.6, options.limit ?? 5) as RelationRow[];
  return rows.map(toRelation);
}

/** Records that the review loop has shown these relations, so they are not proposed again. */
export function markReviewed(core: GraphCore, relationIds: readonly number[]): void {
  const now = core.options.clock.now();
  core.write(() => {
    for (const id of unique(relationIds)) core.sql.get('UPDATE graph_relations SET reviewed_at = ? WHERE id = ?').run(now, id);
  });
}

/** Deletes sentences no relation refers to any more (after deletes and purges). Returns how many. */
export function cleanupOrphanSentences(core: GraphCore): number {
  return core.write(() => {
    const ids = (
      core.sql
        .get(
          `SELECT s.id FROM graph_sentences s
           WHERE NOT EXISTS (SELECT 1 FROM graph_relation_evidence e WHERE e.sentence_id = s.id)
             AND NOT EXISTS (SELECT 1 FROM graph_relations r WHERE r.sentence_id = s.id)`,
        )
        .all() as Array<{ id: number }>
    ).map((r) => r.id);
    for (const id of ids) {
      core.sql.get('DELETE FROM graph_sentences WHERE id = ?').run(id);
      core.sql.get('DELETE FROM graph_sentences_trigram WHERE rowid = ?').run(id);
      core.sql.get('DELETE FROM graph_sentences_fts WHERE rowid = ?').run(id);
    }
    return ids.length;
  });
}

/**
 * The graph's write rules, shared by the GraphStore API and the curation and maintenance
 * operations: entities are unique by normalised name (or alias); an identical current relation
 * is reinforced; a single-valued relation type supersedes the subject's current value, which
 * stays as history; every relation links the sentences that support it.
 */
import type { Embedder } from '../embed/embedder.js';
import { blobToVector, vectorToBlob } from '../embed/vector-blob.js';
import { VectorIndex } from '../embed/vector-index.js';
import type { Logger } from '../log/logger.js';
import type { Clock } from '../shared/clock.js';
import { describeError } from '../shared/errors.js';
import { ToolError } from '../shared/tool.js';
import { StatementCache } from '../store/statement-cache.js';
import type { SqlDatabase } from '../store/types.js';
import { normalizeName, normalizeRelationType } from './graph-names.js';
import {
  ENTITY_COLUMNS,
  type EntityRow,
  type GraphEntity,
  type GraphRelation,
  RELATION_SELECT,
  type RelationRow,
  type TripleRef,
  toRelation,
} from './graph-types.js';
import { chunks, placeholders, unique } from './sql-lists.js';

/** Relation types where a subject has one current value; configurable. */
// located_in: a thing is in one place at a time, so "the key is in the drawer now" supersedes
// "the key is under the flower pot" (kept as history).
export const DEFAULT_SINGLE_VALUED_RELATIONS: readonly string[] = ['lives_in', 'age', 'name', 'occupation', 'located_in'];
/** Confidence of a committed triple that does not say. */
export const DEFAULT_COMMIT_CONFIDENCE = 0.8;
export const MAX_ENTITY_NAME_LENGTH = 200;
export const MAX_RELATION_TYPE_LENGTH = 64;

/** A fact to commit; nlp's Triple fits. */
export interface CommitTriple {
  subject: string;
  relation: string;
  object: string;
  /** 0..1; default 0.8. */
  confidence?: number;
  subject_type?: string;
  object_type?: string;
  /** The exact source text; stored as the relation's sentence (provenance, exact-symbol lookup). */
  sentence?: string;
}

export interface GraphProvenance {
  /** The context event the facts were said in. */
  source_event_id?: string;
  /** The document they were distilled from. */
  document_id?: number;
  /** Conversation or maintenance run that wrote them. */
  session?: string;
  /** When they were said (ms); the relations' valid_from. Default: now. */
  timestamp?: number;
  /** Who said them (a person's name, or 'someone'); kept with the sentence. */
  speaker?: string;
  /** The date the sentence's time words point at (ms), when it names one. */
  refers_to?: number;
}

export interface CommitOptions {
  /** Treat every triple as single-valued (person traits overwrite). */
  singleValued?: boolean;
  signal?: AbortSignal;
}

export interface CommitResult {
  /** Entities the committed triples touched, in first-seen order. */
  entity_ids: number[];
  entities_created: number;
  /** One per written triple, in order (skipped triples have none). */
  relation_ids: number[];
  relations_created: number;
  /** Already current: confidence raised, evidence added. */
  relations_reinforced: number;
  /** Current values that the new facts ended (valid_to set). */
  relations_superseded: number;
  /** Facts older than the current value, stored directly as history. */
  relations_as_history: number;
  /** Sentence rows of this commit (a document's distillation link). */
  sentence_ids: number[];
  skipped: Array<{ index: number; reason: 'empty' | 'too_long' | 'self_reference' }>;
}

export interface GraphStoreOptions {
  database: SqlDatabase;
  embedder: Embedder;
  clock: Clock;
  log: Logger;
  /** Relation types with one current value per subject. Default {@link DEFAULT_SINGLE_VALUED_RELATIONS}. */
  singleValuedRelations?: Iterable<string>;
}

/** An entity given by name (or alias) or by id. */
export type EntityKey = string | number;

interface CurrentRelation {
  id: number;
  target_id: number;
  valid_from: number;
}

/**
 * The graph's shared state and the write rules every operation goes through (entity upsert,
 * relation supersession, evidence links). Internal to src/memory: {@link GraphStore} is the API.
 */
export class GraphCore {
  readonly options: GraphStoreOptions;
  readonly sql: StatementCache;
  readonly vectors: VectorIndex;
  readonly singleValued: ReadonlySet<string>;

  constructor(options: GraphStoreOptions) {
    this.options = options;
    this.sql = new StatementCache(options.database);
    this.vectors = new VectorIndex(() => this.loadVectors());
    this.singleValued = new Set([...(options.singleValuedRelations ?? DEFAULT_SINGLE_VALUED_RELATIONS)].map(normalizeRelationType));
  }

  get fingerprint(): string {
    return this.options.embedder.fingerprint;
  }

  isSingleValued(relationType: string): boolean {
    return this.singleValued.has(normalizeRelationType(relationType));
  }

  entity(key: EntityKey): GraphEntity | undefined {
    const row = this.resolveRow(key);
    return row ? this.toEntity(row) : undefined;
  }

  entitiesById(ids: readonly number[]): GraphEntity[] {
    const rows = new Map<number, EntityRow>();
    for (const chunk of chunks(unique(ids))) {
      for (const row of this.sql
        .get(`SELECT ${ENTITY_COLUMNS} FROM graph_entities WHERE id IN (${placeholders(chunk.length)})`)
        .all(...chunk) as EntityRow[]) {
        rows.set(row.id, row);
      }
    }
    return ids.flatMap((id) => {
      const row = rows.get(id);
      return row ? [this.toEntity(row)] : [];
    });
  }

  relationsById(ids: readonly number[]): GraphRelation[] {
    const rows = new Map<number, RelationRow>();
    for (const chunk of chunks(unique(ids))) {
      for (const row of this.sql.get(`${RELATION_SELECT} WHERE r.id IN (${placeholders(chunk.length)})`).all(...chunk) as RelationRow[]) {
        rows.set(row.id, row);
      }
    }
    return ids.flatMap((id) => {
      const row = rows.get(id);
      return row ? [toRelation(row)] : [];
    });
  }

  staleVectorCount(): number {
    return (
      this.sql.get('SELECT count(*) AS n FROM graph_entities WHERE vector IS NULL OR fingerprint IS NOT ?').get(this.fingerprint) as {
        n: number;
      }
    ).n;
  }

  /** The transaction body of GraphStore.commit; `vectors` holds the new names' vectors, embedded beforehand. */
  commitNow(
    triples: readonly CommitTriple[],
    provenance: GraphProvenance,
    forceSingle: boolean,
    vectors: Map<string, Float32Array>,
  ): CommitResult {
    const now = this.options.clock.now();
    const validFrom = Math.trunc(provenance.timestamp ?? now);
    const result: CommitResult = {
      entity_ids: [],
      entities_created: 0,
      relation_ids: [],
      relations_created: 0,
      relations_reinforced: 0,
      relations_superseded: 0,
      relations_as_history: 0,
      sentence_ids: [],
      skipped: [],
    };
    const touched = new Set<number>();
    const sentences = new Map<string, number>();
    triples.forEach((triple, index) => {
      const subject = triple.subject.trim();
      const object = triple.object.trim();
      const type = normalizeRelationType(triple.relation);
      const sNorm = normalizeName(subject);
      const oNorm = normalizeName(object);
      if (sNorm === '' || oNorm === '' || type === '') {
        result.skipped.push({ index, reason: 'empty' });
        return;
      }
      if (subject.length > MAX_ENTITY_NAME_LENGTH || object.length > MAX_ENTITY_NAME_LENGTH || type.length > MAX_RELATION_TYPE_LENGTH) {
        result.skipped.push({ index, reason: 'too_long' });
        return;
      }
      if (sNorm === oNorm) {
        result.skipped.push({ index, reason: 'self_reference' });
        return;
      }
      let sentenceId: number | undefined;
      const text = triple.sentence?.trim() ?? '';
      if (text !== '') {
        sentenceId = sentences.get(text);
        if (sentenceId === undefined) {
          sentenceId = this.sentence(text, provenance, now);
          sentences.set(text, sentenceId);
          result.sentence_ids.push(sentenceId);
        }
      }
      const onCreate = () => result.entities_created++;
      const s = this.upsertEntity(subject, triple.subject_type, now, vectors, onCreate, 1);
      const o = this.upsertEntity(object, triple.object_type, now, vectors, onCreate, 1);
      for (const id of [s, o]) {
        if (!touched.has(id)) {
          touched.add(id);
          result.entity_ids.push(id);
        }
      }
      const written = this.writeRelation({
        sourceId: s,
        targetId: o,
        type,
        confidence: clampConfidence(triple.confidence ?? DEFAULT_COMMIT_CONFIDENCE),
        session: provenance.session ?? '',
        sentenceId,
        validFrom,
        now,
        singleValued: forceSingle || this.singleValued.has(type),
      });
      result.relation_ids.push(written.id);
      if (written.outcome === 'created') result.relations_created++;
      else if (written.outcome === 'reinforced') result.relations_reinforced++;
      else result.relations_as_history++;
      result.relations_superseded += written.superseded;
    });
    return result;
  }

  /** The sentence row for this text and provenance, created if needed. */
  sentence(text: string, provenance: GraphProvenance, now: number): number {
    const eventId = provenance.source_event_id ?? '';
    const documentId = provenance.document_id ?? null;
    const existing = this.sql
      .get('SELECT id FROM graph_sentences WHERE source_event_id = ? AND document_id IS ? AND text = ?')
      .get(eventId, documentId, text) as { id: number } | undefined;
    if (existing) return existing.id;
    const id = Number(
      this.sql
        .get('INSERT INTO graph_sentences (text, source_event_id, document_id, created_at, speaker, refers_to) VALUES (?, ?, ?, ?, ?, ?)')
        .run(text, eventId, documentId, now, provenance.speaker ?? '', provenance.refers_to ?? null).lastInsertRowid,
    );
    this.sql.get('INSERT INTO graph_sentences_trigram (rowid, text) VALUES (?, ?)').run(id, text);
    return id;
  }

  upsertEntity(
    name: string,
    type: string | undefined,
    now: number,
    vectors: Map<string, Float32Array>,
    onCreate: (() => void) | undefined,
    mentions: number,
  ): number {
    const trimmed = name.trim();
    const norm = normalizeName(trimmed);
    const existing = this.resolveNorm(norm);
    if (existing) {
      this.sql
        .get(
          "UPDATE graph_entities SET mention_count = mention_count + ?, type = CASE WHEN type = '' THEN ? ELSE type END, updated_at = ? WHERE id = ?",
        )
        .run(mentions, type ?? '', now, existing.id);
      return existing.id;
    }
    const vector = vectors.get(norm);
    const id = Number(
      this.sql
        .get(
          'INSERT INTO graph_entities (name, norm_name, type, mention_count, vector, fingerprint, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
        )
        .run(
          trimmed,
          norm,
          type ?? '',
          Math.max(1, mentions),
          vector ? vectorToBlob(vector) : null,
          vector ? this.fingerprint : null,
          now,
          now,
        ).lastInsertRowid,
    );
    if (vector) this.vectors.set(id, vector);
    onCreate?.();
    return id;
  }

  writeRelation(p: {
    sourceId: number;
    targetId: number;
    type: string;
    confidence: number;
    session: string;
    sentenceId: number | undefined;
    validFrom: number;
    now: number;
    singleValued: boolean;
  }): { id: number; outcome: 'created' | 'reinforced' | 'history'; superseded: number } {
    const same = this.sql
      .get('SELECT id FROM graph_relations WHERE source_id = ? AND type = ? AND target_id = ? AND valid_to IS NULL')
      .get(p.sourceId, p.type, p.targetId) as { id: number } | undefined;
    if (same) {
      this.reinforce(same.id, p);
      return { id: same.id, outcome: 'reinforced', superseded: 0 };
    }
    const others = this.sql
      .get('SELECT id, target_id, valid_from, single_valued FROM graph_relations WHERE source_id = ? AND type = ? AND valid_to IS NULL')
      .all(p.sourceId, p.type) as Array<CurrentRelation & { single_valued: number }>;
    // Once a type was written as single-valued for this subject (a person trait), it stays so.
    const single = p.singleValued || others.some((o) => o.single_valued === 1);
    let validTo: number | null = null;
    let superseded = 0;
    if (single && others.length > 0) {
      const later = others.filter((o) => o.valid_from > p.validFrom);
      if (later.length > 0) {
        // Said before the current value began (a late distillation): it is history, not news.
        validTo = Math.min(...later.map((o) => o.valid_from));
        const covering = this.sql
          .get(
            'SELECT id FROM graph_relations WHERE source_id = ? AND type = ? AND target_id = ? AND valid_to IS NOT NULL AND valid_from <= ? AND valid_to > ?',
          )
          .get(p.sourceId, p.type, p.targetId, p.validFrom, p.validFrom) as { id: number } | undefined;
        if (covering) {
          this.reinforce(covering.id, p);
          return { id: covering.id, outcome: 'reinforced', superseded: 0 };
        }
      } else {
        for (const o of others) {
          this.sql.get('UPDATE graph_relations SET valid_to = ?, updated_at = ? WHERE id = ?').run(p.validFrom, p.now, o.id);
          superseded++;
        }
      }
    }
    const id = Number(
      this.sql
        .get(
          `INSERT INTO graph_relations (source_id, target_id, type, confidence, session, sentence_id, evidence_count, single_valued, valid_from, valid_to, created_at, updated_at)
           VALUES (?, ?, ?, ?, ?, ?, 1, ?, ?, ?, ?, ?)`,
        )
        .run(
          p.sourceId,
          p.targetId,
          p.type,
          p.confidence,
          p.session,
          p.sentenceId ?? null,
          single ? 1 : 0,
          p.validFrom,
          validTo,
          p.now,
          p.now,
        ).lastInsertRowid,
    );
    this.linkEvidence(id, p.sentenceId);
    return { id, outcome: validTo === null ? 'created' : 'history', superseded };
  }

  reinforce(id: number, p: { confidence: number; sentenceId: number | undefined; validFrom: number; now: number }): void {
    this.sql
      .get(
        `UPDATE graph_relations SET confidence = max(confidence, ?), evidence_count = evidence_count + 1, valid_from = min(valid_from, ?),
           sentence_id = coalesce(sentence_id, ?), updated_at = ? WHERE id = ?`,
      )
      .run(p.confidence, p.validFrom, p.sentenceId ?? null, p.now, id);
    this.linkEvidence(id, p.sentenceId);
  }

  linkEvidence(relationId: number, sentenceId: number | undefined): void {
    if (sentenceId === undefined) return;
    this.sql.get('INSERT OR IGNORE INTO graph_relation_evidence (relation_id, sentence_id) VALUES (?, ?)').run(relationId, sentenceId);
  }

  /** Moves `fromId`'s evidence and counts into `intoId` and deletes `fromId`. */
  foldInto(intoId: number, fromId: number, now: number): void {
    this.sql
      .get(
        `UPDATE graph_relations SET
           confidence = max(confidence, (SELECT confidence FROM graph_relations WHERE id = @from)),
           evidence_count = evidence_count + (SELECT evidence_count FROM graph_relations WHERE id = @from),
           valid_from = min(valid_from, (SELECT valid_from FROM graph_relations WHERE id = @from)),
           sentence_id = coalesce(sentence_id, (SELECT sentence_id FROM graph_relations WHERE id = @from)),
           updated_at = @now
         WHERE id = @into`,
      )
      .run({ from: fromId, now, into: intoId });
    this.sql
      .get(
        'INSERT OR IGNORE INTO graph_relation_evidence (relation_id, sentence_id) SELECT ?, sentence_id FROM graph_relation_evidence WHERE relation_id = ?',
      )
      .run(intoId, fromId);
    this.sql.get('DELETE FROM graph_relations WHERE id = ?').run(fromId);
  }

  /** After a merge: one current value per single-valued type, the newest. */
  resolveSingleValued(entityId: number, now: number): void {
    const groups = this.sql
      .get(
        'SELECT type FROM graph_relations WHERE source_id = ? AND valid_to IS NULL GROUP BY type HAVING count(*) > 1 AND (max(single_valued) = 1 OR type IN (SELECT value FROM json_each(?)))',
      )
      .all(entityId, JSON.stringify([...this.singleValued])) as Array<{ type: string }>;
    for (const { type } of groups) {
      const current = this.sql
        .get(
          'SELECT id, valid_from FROM graph_relations WHERE source_id = ? AND type = ? AND valid_to IS NULL ORDER BY valid_from DESC, id DESC',
        )
        .all(entityId, type) as Array<{ id: number; valid_from: number }>;
      const [newest, ...older] = current;
      if (!newest) continue;
      for (const o of older)
        this.sql.get('UPDATE graph_relations SET valid_to = ?, updated_at = ? WHERE id = ?').run(newest.valid_from, now, o.id);
    }
  }

  findCurrent(triple: TripleRef): GraphRelation | undefined {
    const s = this.resolveRow(triple.subject);
    const o = this.resolveRow(triple.object);
    if (!s || !o) return undefined;
    const row = this.sql
      .get(`${RELATION_SELECT} WHERE r.source_id = ? AND r.type = ? AND r.target_id = ? AND r.valid_to IS NULL`)
      .get(s.id, normalizeRelationType(triple.relation), o.id) as RelationRow | undefined;
    return row ? toRelation(row) : undefined;
  }

  checkedType(relation: string): string {
    const type = normalizeRelationType(relation);
    if (type === '' || type.length > MAX_RELATION_TYPE_LENGTH) {
      throw new ToolError({
        reason: 'format',
        field: 'relation',
        detail: `a relation type must be 1-${MAX_RELATION_TYPE_LENGTH} characters`,
      });
    }
    return type;
  }

  deleteEntityRow(id: number): void {
    this.sql.get('DELETE FROM graph_entities WHERE id = ?').run(id);
    this.vectors.delete(id);
  }

  blocked(lo: number, hi: number, now: number): boolean {
    return (
      this.sql.get('SELECT 1 FROM graph_no_merge WHERE entity_a = ? AND entity_b = ? AND expires_at > ?').get(lo, hi, now) !== undefined
    );
  }

  resolveRow(key: EntityKey): EntityRow | undefined {
    if (typeof key === 'number')
      return this.sql.get(`SELECT ${ENTITY_COLUMNS} FROM graph_entities WHERE id = ?`).get(key) as EntityRow | undefined;
    return this.resolveNorm(normalizeName(key));
  }

  resolveNorm(norm: string): EntityRow | undefined {
    if (norm === '') return undefined;
    return (this.sql.get(`SELECT ${ENTITY_COLUMNS} FROM graph_entities WHERE norm_name = ?`).get(norm) ??
      this.sql
        .get(`SELECT ${ENTITY_COLUMNS} FROM graph_entities WHERE id = (SELECT entity_id FROM graph_aliases WHERE norm_alias = ?)`)
        .get(norm)) as EntityRow | undefined;
  }

  toEntity(row: EntityRow): GraphEntity {
    const aliases = (
      this.sql.get('SELECT alias FROM graph_aliases WHERE entity_id = ? ORDER BY alias').all(row.id) as Array<{ alias: string }>
    ).map((a) => a.alias);
    return {
      id: row.id,
      name: row.name,
      type: row.type,
      aliases,
      mention_count: row.mention_count,
      created_at: row.created_at,
      updated_at: row.updated_at,
    };
  }

  /** Vectors for names not in the graph yet, keyed by normalised name; empty when embedding fails. */
  async embedNewNames(names: readonly string[], signal?: AbortSignal): Promise<Map<string, Float32Array>> {
    const missing = new Map<string, string>();
    for (const name of names) {
      const trimmed = name.trim();
      const norm = normalizeName(trimmed);
      if (norm === '' || trimmed.length > MAX_ENTITY_NAME_LENGTH || missing.has(norm) || this.resolveNorm(norm)) continue;
      missing.set(norm, trimmed);
    }
    const out = new Map<string, Float32Array>();
    if (missing.size === 0) return out;
    const { embedder, log } = this.options;
    try {
      const vectors = await embedder.embed([...missing.values()], signal);
      [...missing.keys()].forEach((norm, i) => {
        const v = vectors[i];
        if (v && v.length === embedder.dim) out.set(norm, v);
      });
    } catch (error) {
      if (signal?.aborted) throw error;
      // The entities are still written; the re-embedding loop fills in their vectors later.
      log.warn({ error: describeError(error), entities: missing.size }, 'embedding failed; storing entities without vectors');
    }
    return out;
  }

  write<T>(fn: () => T): T {
    try {
      return this.sql.transaction(fn);
    } catch (error) {
      this.vectors.invalidate();
      throw error;
    }
  }

  *loadVectors(): Iterable<readonly [number, Float32Array]> {
    const rows = this.sql
      .get('SELECT id, vector FROM graph_entities WHERE fingerprint = ? AND vector IS NOT NULL')
      .all(this.fingerprint) as Array<{ id: number; vector: Uint8Array }>;
    for (const row of rows) yield [row.id, blobToVector(row.vector)] as const;
  }
}

/** Confidence within 0..1; the default when it is not a number. */
export function clampConfidence(value: number): number {
  if (!Number.isFinite(value)) return DEFAULT_COMMIT_CONFIDENCE;
  return Math.min(1, Math.max(0, value));
}

/**
 * Read-only views of the household memory for the memory inspector (the web page, `homeagentctl
 * memory`): entities and relations listed with where each fact came from, documents, the original
 * text of an input event, and a summary of what memory holds (shared with the memory_introspect
 * tool, so the owner sees what the model sees). Times are ISO strings; every list is bounded.
 */
import { createReadStream } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { EntityListResult, EntitySummary, EventView } from '../api/memory.js';
import { cut } from '../shared/tool-args.js';
import type { GraphStats } from './graph-maintenance.js';
import { normalizeName } from './graph-names.js';
import { type GraphRelation, RELATION_SELECT, type RelationRow, type SentenceRef, toRelation } from './graph-types.js';
import type { MemoryStores } from './memory-stores.js';
import { escapeLike, placeholders } from './sql-lists.js';

export type { EntitySummary, EventView };

/** Supporting sentences (and their events) listed per relation. */
export const EVIDENCE_PER_RELATION = 10;
/** Characters of a document's text in a listing. */
export const DOCUMENT_TEXT_CHARS = 500;
/** How the relations of a listing are ordered: current first, then the newest. */
const LISTING_ORDER = 'ORDER BY (r.valid_to IS NULL) DESC, r.valid_from DESC, r.id DESC';

export function iso(ms: number | null): string | null {
  return ms !== null && Number.isFinite(ms) ? new Date(ms).toISOString() : null;
}

export interface Page {
  limit: number;
  offset: number;
}

/**
 * Entities whose name or an alias contains `q` (compared normalised, so case and full-width forms
 * do not matter), an exact name first, then the most mentioned; all entities without `q`.
 */
export function listEntities(stores: MemoryStores, query: Page & { q?: string }): EntityListResult {
  const norm = query.q === undefined ? undefined : normalizeName(query.q);
  const params = { pattern: norm === undefined ? null : `%${escapeLike(norm)}%`, norm: norm ?? null };
  const where = `@pattern IS NULL OR e.norm_name LIKE @pattern ESCAPE '\\'
    OR e.id IN (SELECT entity_id FROM graph_aliases WHERE norm_alias LIKE @pattern ESCAPE '\\')`;
  const total = (stores.db.prepare(`SELECT count(*) AS n FROM graph_entities e WHERE ${where}`).get(params) as { n: number }).n;
  const rows = stores.db
    .prepare(
      `SELECT e.id, e.name, e.type, e.mention_count, e.updated_at,
         (SELECT count(*) FROM graph_relations r WHERE r.source_id = e.id AND r.valid_to IS NULL)
         + (SELECT count(*) FROM graph_relations r WHERE r.target_id = e.id AND r.valid_to IS NULL) AS relation_count
       FROM graph_entities e WHERE ${where}
       ORDER BY (e.norm_name = @norm) DESC, e.mention_count DESC, e.id LIMIT @limit OFFSET @offset`,
    )
    .all({ ...params, limit: query.limit, offset: query.offset }) as Array<{
    id: number;
    name: string;
    type: string;
    mention_count: number;
    updated_at: number;
    relation_count: number;
  }>;
  const aliases = new Map<number, string[]>();
  if (rows.length > 0) {
    const found = stores.db
      .prepare(`SELECT entity_id, alias FROM graph_aliases WHERE entity_id IN (${placeholders(rows.length)}) ORDER BY alias`)
      .all(...rows.map((r) => r.id)) as Array<{ entity_id: number; alias: string }>;
    for (const a of found) aliases.set(a.entity_id, [...(aliases.get(a.entity_id) ?? []), a.alias]);
  }
  return {
    entities: rows.map((r) => ({
      name: r.name,
      type: r.type,
      aliases: aliases.get(r.id) ?? [],
      relation_count: r.relation_count,
      mention_count: r.mention_count,
      updated_at: iso(r.updated_at),
    })),
    total,
  };
}

/** A relation with its provenance: the sentence that established it and the inputs that said it. */
export interface RelationView {
  id: number;
  subject: string;
  relation: string;
  object: string;
  confidence: number;
  valid_from: string | null;
  /** Null while current; when it ended (superseded, forgotten) otherwise. */
  valid_to: string | null;
  /** The conversation or maintenance run that wrote it, when known. */
  session?: string;
  /** The words it was first read from, when kept. */
  sentence?: string;
  /** The input events it was said in (memory.event shows each one's text), first sentence first. */
  source_event_ids: string[];
  /** The documents it was distilled from. */
  document_ids: number[];
  /** How many times it was committed. */
  evidence_count: number;
}

export function relationView(r: GraphRelation, evidence: readonly SentenceRef[]): RelationView {
  // The first sentence stays first even when later evidence would push it past the cap.
  const sentences = [...(r.sentence ? [r.sentence] : []), ...evidence.filter((s) => s.id !== r.sentence?.id)].slice(
    0,
    EVIDENCE_PER_RELATION,
  );
  return {
    id: r.id,
    subject: r.source.name,
    relation: r.type,
    object: r.target.name,
    confidence: r.confidence,
    valid_from: iso(r.valid_from),
    valid_to: iso(r.valid_to),
    ...(r.session !== '' && { session: r.session }),
    ...(r.sentence && { sentence: r.sentence.text }),
    source_event_ids: [...new Set(sentences.flatMap((s) => (s.source_event_id === '' ? [] : [s.source_event_id])))],
    document_ids: [...new Set(sentences.flatMap((s) => (s.document_id === null ? [] : [s.document_id])))],
    evidence_count: r.evidence_count,
  };
}

/** Views of these relations, their evidence read in one go. */
export function relationViews(stores: MemoryStores, relations: readonly GraphRelation[]): RelationView[] {
  const evidence = stores.graph.evidence(relations.map((r) => r.id));
  return relations.map((r) => relationView(r, evidence.get(r.id) ?? []));
}

/**
 * Relations (of one entity, in either direction, when `entityId` is given), current only unless
 * `history`; current first, then the newest.
 */
export function listRelations(
  stores: MemoryStores,
  query: Page & { entityId?: number; history: boolean },
): { relations: RelationView[]; total: number } {
  const where = `(@history = 1 OR r.valid_to IS NULL)${query.entityId === undefined ? '' : ' AND (r.source_id = @entity OR r.target_id = @entity)'}`;
  const params = { history: query.history ? 1 : 0, entity: query.entityId ?? null };
  const total = (stores.db.prepare(`SELECT count(*) AS n FROM graph_relations r WHERE ${where}`).get(params) as { n: number }).n;
  const rows = stores.db
    .prepare(`${RELATION_SELECT} WHERE ${where} ${LISTING_ORDER} LIMIT @limit OFFSET @offset`)
    .all({ ...params, limit: query.limit, offset: query.offset }) as RelationRow[];
  return { relations: relationViews(stores, rows.map(toRelation)), total };
}

/** One document in the `memory.documents` listing. */
export interface DocumentSummary {
  id: number;
  /** The content (or the summary when it has none), cut to {@link DOCUMENT_TEXT_CHARS} characters. */
  text: string;
  /** `context_archived`, `doc_commit`, `plugin:<name>`. */
  source: string;
  /** When it was said or written. */
  at: string | null;
  access_count: number;
  /** When the distill loop read its facts into the graph; null before. */
  distilled_at: string | null;
  source_event_ids: string[];
}

/** Documents whose content or summary contains `q` (ASCII letters ignoring case), newest first. */
export function listDocuments(stores: MemoryStores, query: Page & { q?: string }): { documents: DocumentSummary[]; total: number } {
  const params = { pattern: query.q === undefined ? null : `%${escapeLike(query.q)}%` };
  const where = "@pattern IS NULL OR content LIKE @pattern ESCAPE '\\' OR summary LIKE @pattern ESCAPE '\\'";
  const total = (stores.db.prepare(`SELECT count(*) AS n FROM documents WHERE ${where}`).get(params) as { n: number }).n;
  const ids = (
    stores.db
      .prepare(`SELECT id FROM documents WHERE ${where} ORDER BY created_at DESC, id DESC LIMIT @limit OFFSET @offset`)
      .all({ ...params, limit: query.limit, offset: query.offset }) as Array<{ id: number }>
  ).map((r) => r.id);
  return {
    documents: stores.documents.get(ids).map((d) => ({
      id: d.id,
      text: cut(d.content.trim() === '' ? d.summary : d.content, DOCUMENT_TEXT_CHARS),
      source: d.source,
      at: iso(d.created_at),
      access_count: d.access_count,
      distilled_at: iso(d.distilled_at),
      source_event_ids: d.source_event_ids,
    })),
    total,
  };
}

/**
 * The event as stored: in the context window, else in the document it was archived into, else in
 * the raw conversation log (newest file first). Undefined when none has it.
 */
export async function findEvent(stores: MemoryStores, id: string, rawLog?: RawLogFiles): Promise<EventView | undefined> {
  const live = stores.window.get(id);
  if (live) {
    return {
      id,
      text: live.input,
      ...(live.response !== '' && { response: live.response }),
      channel: live.channel,
      source: live.source,
      at: iso(live.timestamp),
      ...(live.peer !== '' && { speaker: live.peer }),
      stored_in: 'window',
    };
  }
  const archived = stores.db.prepare("SELECT id FROM documents WHERE json_extract(origin, '$.event_id') = ? ORDER BY id LIMIT 1").get(id) as
    | { id: number }
    | undefined;
  const [doc] = archived ? stores.documents.get([archived.id]) : [];
  if (doc?.origin) {
    const origin = doc.origin;
    return {
      id,
      text: origin.input,
      ...(origin.response !== '' && { response: origin.response }),
      channel: origin.channel,
      source: origin.source,
      at: iso(doc.created_at),
      ...(origin.peer !== '' && { speaker: origin.peer }),
      stored_in: 'document',
      document_id: doc.id,
    };
  }
  return rawLog ? findInRawLog(rawLog, id) : undefined;
}

/** The raw conversation log's files (ConversationLog.files() fits) and their directory. */
export interface RawLogFiles {
  directory: string;
  /** Oldest first. */
  files(): Array<{ name: string }>;
}

async function findInRawLog(rawLog: RawLogFiles, id: string): Promise<EventView | undefined> {
  // Records are written by JSON.stringify, so the key and value appear exactly like this.
  const needle = `"event_id":${JSON.stringify(id)}`;
  for (const file of [...rawLog.files()].reverse()) {
    let said: Record<string, unknown> | undefined;
    let answer: string | undefined;
    const lines = createInterface({ input: createReadStream(join(rawLog.directory, file.name), 'utf8'), crlfDelay: Infinity });
    try {
      for await (const line of lines) {
        if (!line.includes(needle)) continue;
        const record = parseRecord(line);
        if (record?.event_id !== id) continue;
        if (record.role === 'user' && said === undefined) said = record;
        else if (record.role === 'assistant' && typeof record.content === 'string') answer = record.content;
      }
    } catch {
      // A file removed by the retention sweep while it was read: look in the older ones.
      continue;
    } finally {
      lines.close();
    }
    if (said === undefined) continue;
    const at = typeof said.timestamp === 'string' ? Date.parse(said.timestamp) : Number.NaN;
    return {
      id,
      text: String(said.content ?? ''),
      ...(answer !== undefined && answer !== '' && { response: answer }),
      channel: String(said.channel ?? ''),
      source: null,
      at: iso(Number.isFinite(at) ? at : null),
      ...(typeof said.peer === 'string' && said.peer !== '' && { speaker: said.peer }),
      stored_in: 'raw_log',
    };
  }
  return undefined;
}

function parseRecord(line: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(line);
    return value !== null && typeof value === 'object' ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** What the memory_introspect tool tells the model. */
export interface MemorySummary {
  entities: number;
  relations_current: number;
  relations_history: number;
  documents: number;
  window_events: number;
  relation_types: Array<{ type: string; count: number }>;
  hotspots: Array<{ name: string; type: string; mentions: number; degree: number }>;
}

export function memorySummary(stores: MemoryStores, stats: GraphStats = stores.graph.introspect({ hotspots: 10 })): MemorySummary {
  return {
    entities: stats.entities,
    relations_current: stats.relations_current,
    relations_history: stats.relations_history,
    documents: stores.documents.count(),
    window_events: stores.window.size(),
    relation_types: stats.relation_types.slice(0, 15),
    hotspots: stats.hotspots.map((h) => ({ name: h.name, type: h.type, mentions: h.mention_count, degree: h.degree })),
  };
}

/** The answer of `memory.introspect`: the model's summary, plus sizes, time spans and maintenance state. */
export interface MemoryIntrospection extends MemorySummary {
  aliases: number;
  sentences: number;
  /** Pages in use × page size of memory.db (the WAL file not counted). */
  database_bytes: number;
  window_max_size: number;
  /** Oldest and newest times held by each layer (null when it is empty). */
  span: Record<'window' | 'documents' | 'relations', { oldest: string | null; newest: string | null }>;
  maintenance: {
    intervals_ms: Record<string, number>;
    /** Documents the distill loop has not read yet. */
    undistilled_documents: number;
    /** Vectors missing or from another embedder, waiting for the archive loop to re-embed them. */
    stale_vectors: { documents: number; entities: number };
    /** The window holds more than twice its size: the next archive pass prunes it. */
    window_overflowing: boolean;
  };
  embedder: { fingerprint: string; dim: number };
}

/** The parts of a running MemoryService (MemoryParts fits) introspection reads. */
export interface IntrospectedParts {
  stores: MemoryStores;
  embedder: { fingerprint: string; dim: number };
  maintenance: { intervals: Readonly<Record<string, number>> };
}

export function memoryIntrospection(parts: IntrospectedParts): MemoryIntrospection {
  const { stores, embedder, maintenance } = parts;
  const graph = stores.graph.introspect({ hotspots: 10 });
  const count = (sql: string) => (stores.db.prepare(sql).get() as { n: number }).n;
  const span = (sql: string) => {
    const row = stores.db.prepare(sql).get() as { oldest: number | null; newest: number | null };
    return { oldest: iso(row.oldest), newest: iso(row.newest) };
  };
  const pages = Number(stores.db.pragma('page_count', { simple: true }));
  const pageSize = Number(stores.db.pragma('page_size', { simple: true }));
  return {
    ...memorySummary(stores, graph),
    aliases: graph.aliases,
    sentences: graph.sentences,
    database_bytes: Number.isFinite(pages * pageSize) ? pages * pageSize : 0,
    window_max_size: stores.window.maxSize,
    span: {
      window: span('SELECT min(timestamp) AS oldest, max(timestamp) AS newest FROM context_events'),
      documents: span('SELECT min(created_at) AS oldest, max(created_at) AS newest FROM documents'),
      relations: span('SELECT min(valid_from) AS oldest, max(valid_from) AS newest FROM graph_relations'),
    },
    maintenance: {
      intervals_ms: { ...maintenance.intervals },
      undistilled_documents: count('SELECT count(*) AS n FROM documents WHERE distilled_at IS NULL'),
      stale_vectors: { documents: stores.documents.staleVectorCount(), entities: graph.stale_entity_vectors },
      window_overflowing: stores.window.overflowing(),
    },
    embedder: { fingerprint: embedder.fingerprint, dim: embedder.dim },
  };
}

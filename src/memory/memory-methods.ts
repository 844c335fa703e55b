/**
 * Control methods for the household memory (`memory.search`, `memory.stats`, `memory.entity`,
 * `memory.forget`, `memory.export`), used by `homeagentctl memory`. They work on the running
 * MemoryService's parts, so a stopped service answers HA_ERR_UNAVAILABLE. Forgetting is audited
 * with the caller as actor.
 */
import { Type } from '@sinclair/typebox';
import type { AuditRecord } from '../log/logger.js';
import type { Clock } from '../shared/clock.js';
import type { ControlMethodRegistrar } from '../shared/control-method.js';
import { HomeAgentError } from '../shared/errors.js';
import type { GraphEntity, GraphRelation, SentenceRef } from './graph-types.js';
import { DEFAULT_EXPORT_LIMIT, exportPage, MAX_EXPORT_LIMIT } from './memory-export.js';
import type { MemoryParts } from './memory-service.js';
import type { MemoryStores } from './memory-stores.js';

/** The control registry, as far as these methods need it. */
export type MemoryControl = ControlMethodRegistrar;

export interface MemoryMethodOptions {
  /** The LogManager: forgetting writes an audit record. */
  logs: { audit(record: AuditRecord): void };
  /** The end time of relations a soft forget closes. */
  clock: Clock;
}

/** Relations listed by `memory.entity`, current ones first. */
export const ENTITY_RELATIONS_LIMIT = 500;
/** Supporting sentences listed per relation. */
export const EVIDENCE_PER_RELATION = 10;

const Name = Type.String({ minLength: 1, maxLength: 200 });
const EventId = Type.String({ minLength: 1, maxLength: 256 });

export function registerMemoryMethods(control: MemoryControl, memory: { parts(): MemoryParts }, options: MemoryMethodOptions): void {
  control.register({
    name: 'memory.search',
    description:
      'What memory recalls for a text, exactly as the prompts get it: items with kind, score, source event ids and date, and abstain when nothing relates.',
    params: Type.Object({
      query: Type.String({ minLength: 1, maxLength: 1000 }),
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 50 })),
    }),
    handler: async ({ query, limit }) => {
      const result = await memory.parts().recall.recall(query, limit ?? 10);
      return {
        abstain: result.abstain,
        items: result.items.map((item) => ({
          kind: item.kind,
          text: item.text,
          score: item.score,
          sources: item.sources,
          at: iso(item.at),
        })),
      };
    },
  });

  control.register({
    name: 'memory.stats',
    description:
      'What memory holds: window events, documents and entities (with vectors of the current embedder or stale), relations current and superseded, sentences, the embedder, maintenance intervals and the database size.',
    params: Type.Object({}),
    handler: () => memoryStats(memory.parts()),
  });

  control.register({
    name: 'memory.entity',
    description:
      'One entity by name or alias: type, aliases, mentions, its current relations and superseded history, each with the sentences and events it came from.',
    params: Type.Object({ name: Name }),
    handler: ({ name }) => describeEntity(memory.parts().stores, name),
  });

  control.register({
    name: 'memory.forget',
    description:
      'Forget one thing: an entity (soft: its current relations end and stay as history; hard: the entity and all its relations are deleted), a context event (and the document archived from it), or a document by id.',
    params: Type.Object({
      entity: Type.Optional(Name),
      event: Type.Optional(EventId),
      document: Type.Optional(Type.Integer({ minimum: 1 })),
      hard: Type.Optional(Type.Boolean()),
    }),
    handler: (params, caller) => {
      const targets = [params.entity, params.event, params.document].filter((t) => t !== undefined);
      if (targets.length !== 1) {
        throw new HomeAgentError('HA_ERR_RPC_INVALID_PARAMS', 'memory.forget: give exactly one of entity, event or document');
      }
      if (params.hard !== undefined && params.entity === undefined) {
        throw new HomeAgentError(
          'HA_ERR_RPC_INVALID_PARAMS',
          'memory.forget: hard applies to entities only; events and documents are always deleted',
        );
      }
      const { stores } = memory.parts();
      const result =
        params.entity !== undefined
          ? forgetEntity(stores, params.entity, params.hard === true, options.clock.now())
          : params.event !== undefined
            ? forgetEvent(stores, params.event)
            : forgetDocument(stores, params.document as number);
      options.logs.audit({ actor: caller.actor, action: 'memory.forget', ...result });
      return result;
    },
  });

  control.register({
    name: 'memory.export',
    description:
      'One page of every event, document, entity, sentence and relation in a stable order (times in ms since the epoch, no vectors); pass next back as cursor until it is absent.',
    params: Type.Object({
      cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_EXPORT_LIMIT })),
    }),
    handler: ({ cursor, limit }) =>
      exportPage(memory.parts().stores, { limit: limit ?? DEFAULT_EXPORT_LIMIT, ...(cursor !== undefined && { cursor }) }),
  });
}

function iso(ms: number): string | null {
  return Number.isFinite(ms) ? new Date(ms).toISOString() : null;
}

/** The answer of `memory.stats`. */
export interface MemoryStats {
  window: { events: number; max_size: number };
  documents: { total: number; vectors_current: number; vectors_stale: number };
  entities: { total: number; aliases: number; vectors_current: number; vectors_stale: number };
  relations: { current: number; history: number; types: Array<{ type: string; count: number }> };
  sentences: number;
  no_merge_marks: number;
  hotspots: Array<{ name: string; type: string; mentions: number; degree: number }>;
  embedder: { fingerprint: string; dim: number };
  maintenance_intervals_ms: Record<string, number>;
  /** Pages in use × page size of memory.db (the WAL file not counted). */
  database_bytes: number;
}

function memoryStats(parts: MemoryParts): MemoryStats {
  const { stores, embedder, maintenance } = parts;
  // The graph's own introspection (memory_introspect) already counts what the graph holds.
  const graph = stores.graph.introspect({ hotspots: 10 });
  const documents = stores.documents.count();
  const staleDocuments = stores.documents.staleVectorCount();
  const pages = Number(stores.db.pragma('page_count', { simple: true }));
  const pageSize = Number(stores.db.pragma('page_size', { simple: true }));
  return {
    window: { events: stores.window.size(), max_size: stores.window.maxSize },
    documents: { total: documents, vectors_current: documents - staleDocuments, vectors_stale: staleDocuments },
    entities: {
      total: graph.entities,
      aliases: graph.aliases,
      vectors_current: graph.entities - graph.stale_entity_vectors,
      vectors_stale: graph.stale_entity_vectors,
    },
    relations: { current: graph.relations_current, history: graph.relations_history, types: graph.relation_types },
    sentences: graph.sentences,
    no_merge_marks: graph.no_merge_marks,
    hotspots: graph.hotspots.map((h) => ({ name: h.name, type: h.type, mentions: h.mention_count, degree: h.degree })),
    embedder: { fingerprint: embedder.fingerprint, dim: embedder.dim },
    maintenance_intervals_ms: { ...maintenance.intervals },
    database_bytes: Number.isFinite(pages * pageSize) ? pages * pageSize : 0,
  };
}

function unknownEntity(name: string): HomeAgentError {
  // No generic "not found" code exists; the name is what the caller got wrong.
  return new HomeAgentError('HA_ERR_RPC_INVALID_PARAMS', `memory has no entity named ${JSON.stringify(name)} (by name or alias)`);
}

/** A relation as `memory.entity` shows it, seen from the entity (`out`: the entity is the subject). */
export interface EntityRelationView {
  id: number;
  direction: 'out' | 'in';
  subject: string;
  relation: string;
  object: string;
  confidence: number;
  session: string;
  valid_from: string | null;
  valid_to: string | null;
  evidence_count: number;
  provenance: Array<{ sentence_id: number; text: string; source_event_id: string; document_id: number | null }>;
}

export interface EntityView {
  entity: {
    id: number;
    name: string;
    type: string;
    aliases: string[];
    mention_count: number;
    created_at: string | null;
    updated_at: string | null;
  };
  current: EntityRelationView[];
  history: EntityRelationView[];
  /** More relations exist than {@link ENTITY_RELATIONS_LIMIT}. */
  truncated: boolean;
}

function describeEntity(stores: MemoryStores, name: string): EntityView {
  const entity = stores.graph.entity(name);
  if (!entity) throw unknownEntity(name);
  const relations = stores.graph.relationsOf(entity.id, { history: true, limit: ENTITY_RELATIONS_LIMIT + 1 });
  const shown = relations.slice(0, ENTITY_RELATIONS_LIMIT);
  const evidence = stores.graph.evidence(shown.map((r) => r.id));
  const views = shown.map((r) => relationView(entity, r, evidence.get(r.id) ?? []));
  return {
    entity: {
      id: entity.id,
      name: entity.name,
      type: entity.type,
      aliases: entity.aliases,
      mention_count: entity.mention_count,
      created_at: iso(entity.created_at),
      updated_at: iso(entity.updated_at),
    },
    current: views.filter((v) => v.valid_to === null),
    history: views.filter((v) => v.valid_to !== null),
    truncated: relations.length > ENTITY_RELATIONS_LIMIT,
  };
}

function relationView(entity: GraphEntity, r: GraphRelation, sentences: readonly SentenceRef[]): EntityRelationView {
  // The first sentence stays first even when later evidence would push it past the cap.
  const first = r.sentence ? [r.sentence] : [];
  const provenance = [...first, ...sentences.filter((s) => s.id !== r.sentence?.id)].slice(0, EVIDENCE_PER_RELATION);
  return {
    id: r.id,
    direction: r.source.id === entity.id ? 'out' : 'in',
    subject: r.source.name,
    relation: r.type,
    object: r.target.name,
    confidence: r.confidence,
    session: r.session,
    valid_from: iso(r.valid_from),
    valid_to: r.valid_to === null ? null : iso(r.valid_to),
    evidence_count: r.evidence_count,
    provenance: provenance.map((s) => ({
      sentence_id: s.id,
      text: s.text,
      source_event_id: s.source_event_id,
      document_id: s.document_id,
    })),
  };
}

/** What `memory.forget` removed (also the audit record's fields). */
export type ForgetResult =
  | { target: 'entity'; mode: 'soft'; entity: string; relations_ended: number }
  | { target: 'entity'; mode: 'hard'; entity: string; relations_removed: number; sentences_removed: number }
  | { target: 'event'; event: string; from_window: boolean; documents_removed: number[]; facts_kept: number }
  | { target: 'document'; document: number };

function forgetEntity(stores: MemoryStores, name: string, hard: boolean, now: number): ForgetResult {
  const entity = stores.graph.entity(name);
  if (!entity) throw unknownEntity(name);
  if (hard) {
    // What memory_delete_entity does: the entity, every relation, then sentences nothing cites.
    const result = stores.graph.deleteEntity(entity.id);
    if (!result.deleted) throw unknownEntity(name);
    const sentences = stores.graph.cleanupOrphanSentences();
    return {
      target: 'entity',
      mode: 'hard',
      entity: entity.name,
      relations_removed: result.relations_removed,
      sentences_removed: sentences,
    };
  }
  // memory_purge's soft mode, but for exactly this entity (purge matches name substrings): current
  // relations end and stay as history, so recall no longer offers them and the record remains.
  // A fact dated after now (ingested with its own time) ends where it began, never before.
  const ended = stores.db
    .prepare(
      `UPDATE graph_relations SET valid_to = max(valid_from, @now), updated_at = @now
       WHERE (source_id = @id OR target_id = @id) AND valid_to IS NULL`,
    )
    .run({ id: entity.id, now });
  return { target: 'entity', mode: 'soft', entity: entity.name, relations_ended: ended.changes };
}

function forgetEvent(stores: MemoryStores, id: string): ForgetResult {
  const run = stores.db.transaction(() => {
    const fromWindow = stores.db.prepare('DELETE FROM context_events WHERE id = ?').run(id).changes > 0;
    // Once pruned, the event lives on as the document archived from it; documents that merely cite
    // the event among others (doc_commit) are the agent's own notes and stay.
    const archived = (
      stores.db.prepare("SELECT id FROM documents WHERE json_extract(origin, '$.event_id') = ? ORDER BY id").all(id) as Array<{
        id: number;
      }>
    ).map((r) => r.id);
    const removed = stores.documents.take(archived).map((d) => d.id);
    return { fromWindow, removed };
  });
  let outcome: { fromWindow: boolean; removed: number[] };
  try {
    outcome = run();
  } catch (error) {
    stores.documents.invalidateVectorCache();
    throw error;
  }
  if (!outcome.fromWindow && outcome.removed.length === 0) {
    throw new HomeAgentError('HA_ERR_RPC_INVALID_PARAMS', `memory has no context event ${JSON.stringify(id)} (in the window or archived)`);
  }
  const facts = stores.db.prepare('SELECT count(*) AS n FROM graph_sentences WHERE source_event_id = ?').get(id) as { n: number };
  return { target: 'event', event: id, from_window: outcome.fromWindow, documents_removed: outcome.removed, facts_kept: facts.n };
}

function forgetDocument(stores: MemoryStores, id: number): ForgetResult {
  const [removed] = stores.documents.take([id]);
  if (!removed) throw new HomeAgentError('HA_ERR_RPC_INVALID_PARAMS', `memory has no document ${id}`);
  return { target: 'document', document: id };
}

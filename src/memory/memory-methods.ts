/**
 * Control methods for the household memory, used by `homeagentctl memory` and the web page's
 * memory inspector: search, stats, one entity, listings of entities, relations and documents with
 * their provenance, the original text of an input event, introspection, correcting one fact, and
 * forgetting. They work on the running MemoryService's parts (the raw conversation log included:
 * memory.event reads it, forgetting an event removes it there too), so a stopped service answers
 * HA_ERR_UNAVAILABLE. Every change is audited with the caller as actor.
 */

import { Type } from '@sinclair/typebox';
import type { EntityRelationView, EntityView, MemorySearchResult } from '../api/memory.js';
import type { AuditRecord } from '../log/logger.js';
import type { Clock } from '../shared/clock.js';
import type { ControlMethodRegistrar } from '../shared/control-method.js';
import { HomeAgentError } from '../shared/errors.js';
import { ToolError } from '../shared/tool.js';
import type { ConversationLog } from './conversation-log.js';
import { MAX_RELATION_TYPE_LENGTH } from './graph-core.js';
import { normalizeName, normalizeRelationType } from './graph-names.js';
import type { GraphEntity, GraphRelation, SentenceRef } from './graph-types.js';
import { DEFAULT_EXPORT_LIMIT, exportPage, MAX_EXPORT_LIMIT } from './memory-export.js';
import {
  EVIDENCE_PER_RELATION,
  findEvent,
  listDocuments,
  listEntities,
  listRelations,
  memoryIntrospection,
  type RelationView,
  relationViews,
} from './memory-inspector.js';
import type { MemoryParts } from './memory-service.js';
import type { MemoryStores } from './memory-stores.js';
import { recallLine } from './recall-lines.js';

export { EVIDENCE_PER_RELATION } from './memory-inspector.js';
export type { EntityRelationView, EntityView };

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
/** Items of one listing (memory.entities, memory.relations, memory.documents) at most. */
export const MAX_LISTING_LIMIT = 500;
/** Items of a listing when the caller does not say. */
export const DEFAULT_LISTING_LIMIT = 50;

const Name = Type.String({ minLength: 1, maxLength: 200 });
const EventId = Type.String({ minLength: 1, maxLength: 256 });
const RelationId = Type.Integer({ minimum: 1 });
const Limit = Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_LISTING_LIMIT }));
const Offset = Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000_000 }));

export function registerMemoryMethods(control: MemoryControl, memory: { parts(): MemoryParts }, options: MemoryMethodOptions): void {
  control.register({
    name: 'memory.search',
    description:
      'What memory recalls for a text, exactly as the prompts get it: items with kind, the prompt line (speaker, when, what), facts, score, source event ids and date, and abstain when nothing relates.',
    params: Type.Object({
      query: Type.String({ minLength: 1, maxLength: 1000 }),
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 50 })),
    }),
    handler: async ({ query, limit }): Promise<MemorySearchResult> => {
      const result = await memory.parts().recall.recall(query, limit ?? 10);
      return {
        abstain: result.abstain,
        items: result.items.map((item) => ({
          kind: item.kind,
          text: item.text,
          // The line the prompt gets: who said it, when, and what.
          line: recallLine(item, options.clock.now()),
          ...(item.speaker !== undefined && { speaker: item.speaker }),
          ...(item.facts !== undefined && { facts: item.facts }),
          ...(item.superseded === true && { superseded: true }),
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
      'Forget one thing: an entity (soft: its current relations end and stay as history; hard: the entity and all its relations are deleted), a context event (and the document archived from it and its lines in the raw conversation log), a document by id, or one relation by id (history rows too).',
    params: Type.Object({
      entity: Type.Optional(Name),
      event: Type.Optional(EventId),
      document: Type.Optional(Type.Integer({ minimum: 1 })),
      relation: Type.Optional(RelationId),
      hard: Type.Optional(Type.Boolean()),
    }),
    handler: (params, caller) => {
      const targets = [params.entity, params.event, params.document, params.relation].filter((t) => t !== undefined);
      if (targets.length !== 1) {
        throw new HomeAgentError('HA_ERR_RPC_INVALID_PARAMS', 'memory.forget: give exactly one of entity, event, document or relation');
      }
      if (params.hard !== undefined && params.entity === undefined) {
        throw new HomeAgentError(
          'HA_ERR_RPC_INVALID_PARAMS',
          'memory.forget: hard applies to entities only; events, documents and relations are always deleted',
        );
      }
      const { stores, rawLog } = memory.parts();
      const result =
        params.entity !== undefined
          ? forgetEntity(stores, params.entity, params.hard === true, options.clock.now())
          : params.event !== undefined
            ? forgetEvent(stores, rawLog, params.event)
            : params.document !== undefined
              ? forgetDocument(stores, params.document)
              : forgetRelation(stores, params.relation as number);
      options.logs.audit({ actor: caller.actor, action: 'memory.forget', ...result });
      return result;
    },
  });

  control.register({
    name: 'memory.entities',
    description: `Entities whose name or an alias contains q (case-insensitive; all without q), an exact name first, then the most mentioned: name, type, aliases, current relations, mentions; limit 1–${MAX_LISTING_LIMIT}, default ${DEFAULT_LISTING_LIMIT}; total counts every match.`,
    params: Type.Object({ q: Type.Optional(Name), limit: Limit, offset: Offset }),
    handler: ({ q, limit, offset }) => {
      if (q !== undefined && normalizeName(q) === '') throw invalid('memory.entities: q has no letters or digits to look for');
      return listEntities(memory.parts().stores, { ...(q !== undefined && { q }), ...page(limit, offset) });
    },
  });

  control.register({
    name: 'memory.relations',
    description: `Relations (of one entity when given, in either direction), current only unless history, current first then newest, each with its provenance: the sentence it was read from and the input events that said it (memory.event shows their text); limit 1–${MAX_LISTING_LIMIT}, default ${DEFAULT_LISTING_LIMIT}.`,
    params: Type.Object({ entity: Type.Optional(Name), history: Type.Optional(Type.Boolean()), limit: Limit, offset: Offset }),
    handler: ({ entity, history, limit, offset }) => {
      const { stores } = memory.parts();
      let entityId: number | undefined;
      if (entity !== undefined) {
        const found = stores.graph.entity(entity);
        if (!found) throw unknownEntity(entity);
        entityId = found.id;
      }
      return listRelations(stores, { ...(entityId !== undefined && { entityId }), history: history === true, ...page(limit, offset) });
    },
  });

  control.register({
    name: 'memory.documents',
    description: `Documents (archived conversation and notes) whose text contains q, newest first: text cut to 500 characters, source, date, accesses, when distilled, source events; limit 1–${MAX_LISTING_LIMIT}, default ${DEFAULT_LISTING_LIMIT}; total counts every match.`,
    params: Type.Object({ q: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })), limit: Limit, offset: Offset }),
    handler: ({ q, limit, offset }) => listDocuments(memory.parts().stores, { ...(q !== undefined && { q }), ...page(limit, offset) }),
  });

  control.register({
    name: 'memory.event',
    description:
      'The original input of an event id (as memory.relations and memory.search cite them): its text, answer, channel, source, time and speaker, from the context window, the document it was archived into, or the raw conversation log.',
    params: Type.Object({ id: EventId }),
    handler: async ({ id }) => {
      const { stores, rawLog } = memory.parts();
      const event = await findEvent(stores, id, rawLog);
      if (!event) {
        throw notFound(`memory has no event ${JSON.stringify(id)} (not in the context window, its archive or the raw conversation log)`);
      }
      return event;
    },
  });

  control.register({
    name: 'memory.introspect',
    description:
      'What memory_introspect tells the model (counts, relation types, the most mentioned entities), plus sizes, the oldest and newest time of each layer, the embedder and the maintenance state.',
    params: Type.Object({}),
    handler: () => memoryIntrospection(memory.parts()),
  });

  control.register({
    name: 'memory.edit',
    description:
      'Correct one current fact by relation id, as memory_edit does: give the parts that change (subject, relation, object); the fact keeps its evidence and start, a single-valued relation supersedes the old value (kept as history). Answers the corrected relation.',
    params: Type.Object({
      relation_id: RelationId,
      subject: Type.Optional(Name),
      relation: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_RELATION_TYPE_LENGTH })),
      object: Type.Optional(Name),
    }),
    handler: async ({ relation_id, subject, relation, object }, caller) => {
      const { stores } = memory.parts();
      const { before, after } = await editRelation(stores, relation_id, {
        ...(subject !== undefined && { subject }),
        ...(relation !== undefined && { relation }),
        ...(object !== undefined && { object }),
      });
      options.logs.audit({
        actor: caller.actor,
        action: 'memory.edit',
        relation_id,
        before: `${before.source.name} ${before.type} ${before.target.name}`,
        after: `${after.subject} ${after.relation} ${after.object}`,
        new_relation_id: after.id,
      });
      return after;
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

function page(limit: number | undefined, offset: number | undefined): { limit: number; offset: number } {
  return { limit: limit ?? DEFAULT_LISTING_LIMIT, offset: offset ?? 0 };
}

function invalid(message: string): HomeAgentError {
  return new HomeAgentError('HA_ERR_RPC_INVALID_PARAMS', message);
}

/** Something asked for by id or name that memory does not hold. */
function notFound(message: string): HomeAgentError {
  return new HomeAgentError('HA_ERR_MEMORY_NOT_FOUND', message);
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
  return notFound(`memory has no entity named ${JSON.stringify(name)} (by name or alias)`);
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
  | {
      target: 'event';
      event: string;
      from_window: boolean;
      documents_removed: number[];
      /** Lines (the input, tool results, the answer) cut out of the raw conversation log. */
      raw_log_records_removed: number;
      facts_kept: number;
    }
  | { target: 'document'; document: number }
  | { target: 'relation'; relation: number; fact: string; was_current: boolean; sentences_removed: number };

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

/**
 * The event leaves the window, the document archived from it, and the raw conversation log, so
 * memory.event cannot show it again. The raw log goes first: when a file cannot be rewritten the
 * call fails with the window and archive untouched, and forgetting again finishes the job.
 */
function forgetEvent(stores: MemoryStores, rawLog: ConversationLog | undefined, id: string): ForgetResult {
  const raw = rawLog?.forgetEvent(id) ?? { files_rewritten: 0, records_removed: 0 };
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
  if (!outcome.fromWindow && outcome.removed.length === 0 && raw.records_removed === 0) {
    throw new HomeAgentError(
      'HA_ERR_RPC_INVALID_PARAMS',
      `memory has no context event ${JSON.stringify(id)} (in the window, archived or in the raw conversation log)`,
    );
  }
  const facts = stores.db.prepare('SELECT count(*) AS n FROM graph_sentences WHERE source_event_id = ?').get(id) as { n: number };
  return {
    target: 'event',
    event: id,
    from_window: outcome.fromWindow,
    documents_removed: outcome.removed,
    raw_log_records_removed: raw.records_removed,
    facts_kept: facts.n,
  };
}

function forgetDocument(stores: MemoryStores, id: number): ForgetResult {
  const [removed] = stores.documents.take([id]);
  if (!removed) throw notFound(`memory has no document ${id}`);
  return { target: 'document', document: id };
}

/** Deletes one relation row, current or history (its evidence links go with it), then sentences nothing cites any more. */
function forgetRelation(stores: MemoryStores, id: number): ForgetResult {
  const [relation] = stores.graph.relationsById([id]);
  if (!relation) throw notFound(`memory has no relation ${id}`);
  stores.db.prepare('DELETE FROM graph_relations WHERE id = ?').run(id);
  // What memory_purge's hard mode and a hard entity forget do afterwards.
  const sentences = stores.graph.cleanupOrphanSentences();
  return {
    target: 'relation',
    relation: id,
    fact: `${relation.source.name} ${relation.type} ${relation.target.name}`,
    was_current: relation.valid_to === null,
    sentences_removed: sentences,
  };
}

/**
 * memory.edit: the relation named by id, corrected through GraphStore.editRelation, which
 * memory_edit uses (the old row is replaced; its evidence, session and start move to the new one;
 * a single-valued type supersedes the subject's other current value). Only a current fact can be
 * corrected: a history row records what was true then.
 */
async function editRelation(
  stores: MemoryStores,
  id: number,
  next: { subject?: string; relation?: string; object?: string },
): Promise<{ before: GraphRelation; after: RelationView }> {
  const [current] = stores.graph.relationsById([id]);
  if (!current) throw notFound(`memory has no relation ${id}`);
  const fact = `${current.source.name} ${current.type} ${current.target.name}`;
  if (current.valid_to !== null) {
    throw invalid(
      `memory.edit: relation ${id} (${fact}) is history, ended ${iso(current.valid_to)}; only a current fact can be corrected (see memory.relations for the current one)`,
    );
  }
  for (const field of ['subject', 'object'] as const) {
    const name = next[field];
    if (name !== undefined && normalizeName(name) === '') throw invalid(`memory.edit: ${field} has no letters or digits`);
  }
  if (next.relation !== undefined && normalizeRelationType(next.relation) === '') throw invalid('memory.edit: relation is empty');
  const changes =
    (next.subject !== undefined && normalizeName(next.subject) !== normalizeName(current.source.name)) ||
    (next.relation !== undefined && normalizeRelationType(next.relation) !== current.type) ||
    (next.object !== undefined && normalizeName(next.object) !== normalizeName(current.target.name));
  if (!changes) throw invalid(`memory.edit: nothing to change; give a subject, relation or object different from ${fact}`);
  let edited: GraphRelation | undefined;
  try {
    edited = await stores.graph.editRelation({ subject: current.source.name, relation: current.type, object: current.target.name }, next);
  } catch (error) {
    // The graph states its rules (no self-reference, type length) as tool errors for the model.
    if (error instanceof ToolError) throw invalid(`memory.edit: ${error.info.detail}`);
    throw error;
  }
  if (!edited) throw invalid(`memory.edit: relation ${id} (${fact}) changed while it was being corrected; read it again`);
  const [view] = relationViews(stores, [edited]);
  return { before: current, after: view as RelationView };
}

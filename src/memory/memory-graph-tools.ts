/**
 * The memory_* tools: recall for the model, and the graph corrections it may make (commit, merge,
 * edit, purge, delete) plus a look at what the graph holds. See memory-tools.ts for the set.
 */
import type { TextAnalyzer } from '../nlp/types.js';
import { type ToolContext, type ToolDefinition, ToolError } from '../shared/tool.js';
import { cut, enumArg, integerArg, isoDate, notFound, optionalText, requiredText, type ToolArgs } from '../shared/tool-args.js';
import { MAX_RELATION_TYPE_LENGTH } from './graph-core.js';
import { normalizeName, normalizeRelationType } from './graph-names.js';
import type { CommitTriple, GraphProvenance } from './graph-store.js';
import type { GraphRelation } from './graph-types.js';
import { memorySummary } from './memory-inspector.js';
import type { MemoryStores } from './memory-stores.js';
import type { MemoryRecall } from './recall.js';

export const MEMORY_OWNER = 'memory';
/** What the model says when recall abstains, so it does not invent an answer. */
export const NO_RECORD_SENTENCE = 'I have no record of that.';
/** Longest text of one recalled item in a tool result. */
const ITEM_CHARS = 600;
const MAX_TRIPLES = 50;
/** The graph's own limit, repeated in the schemas so the registry rejects long types before a call. */
const MAX_RELATION_TYPE = MAX_RELATION_TYPE_LENGTH;
const HINT_FIND_ENTITY = 'call memory_introspect for the most mentioned entities, or person_query / memory_recall with a likely name';

export interface MemoryToolDeps {
  stores: MemoryStores;
  recall: MemoryRecall;
  /** Reads triples from `sentence_text` when memory_commit gets no triples (src/nlp TextAnalyzer). */
  analyzer: Pick<TextAnalyzer, 'extract'>;
  clock: { now(): number };
}

/**
 * Provenance of what a tool writes: the agent's task id is the id of the input event when the
 * event is still in the window, which links the fact to what was said; otherwise only the session.
 */
export function toolProvenance(deps: MemoryToolDeps, context: ToolContext | undefined): GraphProvenance & { speaker?: string } {
  const provenance: GraphProvenance & { speaker?: string } = { timestamp: deps.clock.now() };
  if (!context) return provenance;
  provenance.session = context.task_id;
  // The turn's input is in the window from the moment it arrived (Agent recordInput).
  const event = deps.stores.window.get(context.input_id ?? context.task_id);
  if (event) {
    provenance.source_event_id = event.id;
    if (event.peer !== '') provenance.speaker = event.peer;
  }
  return provenance;
}

/** A relation as the model reads it. */
export function compactRelation(r: GraphRelation): Record<string, unknown> {
  return {
    subject: r.source.name,
    relation: r.type,
    object: r.target.name,
    since: isoDate(r.valid_from),
    ...(r.valid_to !== null && { until: isoDate(r.valid_to) }),
    ...(r.sentence && { said: cut(r.sentence.text, 160) }),
    ...(r.sentence?.source_event_id && { source: r.sentence.source_event_id }),
  };
}

function relationTypeArg(args: ToolArgs, field: string, hint: string, required: boolean): string | undefined {
  const text = required ? requiredText(args, field, hint) : optionalText(args, field, hint);
  if (text === undefined) return undefined;
  const type = normalizeRelationType(text);
  if (type.length > MAX_RELATION_TYPE) {
    throw new ToolError({ reason: 'range', field, detail: `${field} is longer than ${MAX_RELATION_TYPE} characters`, hint });
  }
  return type;
}

/** A name that still names something once quotes and punctuation are stripped. */
function nameArg(args: ToolArgs, field: string, hint: string, required: true): string;
function nameArg(args: ToolArgs, field: string, hint: string, required: false): string | undefined;
function nameArg(args: ToolArgs, field: string, hint: string, required: boolean): string | undefined {
  const text = required ? requiredText(args, field, hint) : optionalText(args, field, hint);
  if (text !== undefined && normalizeName(text) === '') {
    throw new ToolError({ reason: 'format', field, detail: `${field} has no letters or digits`, hint });
  }
  return text;
}

const TRIPLE_HINT = 'each triple is {"subject": "Anna", "relation": "lives_in", "object": "Oslo"}';

/** Runs `check`, reporting a failing field inside an array item by its full path (`triples[2].object`). */
function withFieldPrefix<T>(prefix: string, check: () => T): T {
  try {
    return check();
  } catch (error) {
    if (error instanceof ToolError && error.info.field !== undefined) {
      throw new ToolError({ ...error.info, field: `${prefix}${error.info.field}` });
    }
    throw error;
  }
}

function triplesArg(args: ToolArgs): Array<{ subject: string; relation: string; object: string }> {
  const value = args.triples;
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value))
    throw new ToolError({ reason: 'type', field: 'triples', detail: 'triples must be an array', hint: TRIPLE_HINT });
  if (value.length > MAX_TRIPLES) {
    throw new ToolError({
      reason: 'range',
      field: 'triples',
      detail: `at most ${MAX_TRIPLES} triples per call`,
      hint: 'split the facts over several calls',
    });
  }
  return value.map((item, i) => {
    if (typeof item !== 'object' || item === null || Array.isArray(item)) {
      throw new ToolError({ reason: 'type', field: `triples[${i}]`, detail: 'a triple must be an object', hint: TRIPLE_HINT });
    }
    const triple = item as ToolArgs;
    const { subject, object } = withFieldPrefix(`triples[${i}].`, () => {
      relationTypeArg(triple, 'relation', TRIPLE_HINT, true);
      return { subject: nameArg(triple, 'subject', TRIPLE_HINT, true), object: nameArg(triple, 'object', TRIPLE_HINT, true) };
    });
    if (normalizeName(subject) === normalizeName(object)) {
      throw new ToolError({
        reason: 'format',
        field: `triples[${i}].object`,
        detail: 'a triple cannot link an entity to itself',
        hint: TRIPLE_HINT,
      });
    }
    return { subject, relation: (triple.relation as string).trim(), object };
  });
}

export function graphTools(deps: MemoryToolDeps): ToolDefinition[] {
  const { graph } = deps.stores;
  return [
    {
      name: 'memory_recall',
      owner: MEMORY_OWNER,
      tier: 'read',
      parallel_safe: true,
      no_memory: true,
      description:
        'Recall what the household said before: facts, archived conversation and recent turns, each with its source event ids and date. ' +
        `Returns no_record when nothing relevant exists; then say "${NO_RECORD_SENTENCE}" instead of guessing.`,
      parameters: {
        type: 'object',
        properties: {
          query_intent: {
            type: 'string',
            minLength: 1,
            maxLength: 500,
            description: 'What to recall: a question or comma-separated keywords.',
          },
          limit: { type: 'integer', minimum: 1, maximum: 20, default: 5, description: 'Most items returned (default 5).' },
        },
        required: ['query_intent'],
        additionalProperties: false,
      },
      execute: async (args: ToolArgs, context?: ToolContext) => {
        const hint = 'describe what to recall, e.g. "where does Anna live" or "Anna, address"';
        // Commas separate keywords; the analyser tokenises words, so they become plain spaces.
        const query = requiredText(args, 'query_intent', hint, 500).replace(/[,，、;；]+/g, ' ');
        const limit = integerArg(args, 'limit', { min: 1, max: 20, fallback: 5 });
        // The input being answered is in the window already; it is not a memory of itself.
        const result = await deps.recall.recall(query, limit, context ? { signal: context.signal, exclude: [context.task_id] } : {});
        if (result.abstain || result.items.length === 0) return { items: [], no_record: true, say: NO_RECORD_SENTENCE };
        return {
          items: result.items.map((item) => ({
            text: cut(item.text, ITEM_CHARS),
            sources: item.sources.slice(0, 10),
            when: isoDate(item.at),
            kind: item.kind,
          })),
        };
      },
    },
    {
      name: 'memory_commit',
      owner: MEMORY_OWNER,
      tier: 'act',
      description:
        'Store facts in the knowledge graph as subject-relation-object triples (e.g. Anna lives_in Oslo). A new value of a single-valued ' +
        'relation (lives_in, works_as, ...) replaces the old one, kept as history. Pass sentence_text, the words the facts came from; ' +
        'with sentence_text alone the facts are read from it.',
      parameters: {
        type: 'object',
        properties: {
          triples: {
            type: 'array',
            maxItems: MAX_TRIPLES,
            items: {
              type: 'object',
              properties: {
                subject: { type: 'string', minLength: 1, maxLength: 200 },
                relation: { type: 'string', minLength: 1, maxLength: MAX_RELATION_TYPE },
                object: { type: 'string', minLength: 1, maxLength: 200 },
              },
              required: ['subject', 'relation', 'object'],
              additionalProperties: false,
            },
          },
          sentence_text: { type: 'string', maxLength: 2000, description: 'The sentence the facts come from (provenance).' },
        },
        additionalProperties: false,
      },
      execute: async (args: ToolArgs, context?: ToolContext) => {
        const sentence = optionalText(args, 'sentence_text', 'the exact words the facts were read from', 2000);
        let triples: CommitTriple[] = triplesArg(args).map((t) => ({ ...t, confidence: 0.9, ...(sentence && { sentence }) }));
        const provenance = toolProvenance(deps, context);
        let extracted = false;
        if (triples.length === 0) {
          if (sentence === undefined) {
            throw new ToolError({ reason: 'required', field: 'triples', detail: 'pass triples or sentence_text', hint: TRIPLE_HINT });
          }
          triples = await deps.analyzer.extract(sentence, provenance.speaker !== undefined ? { speaker: provenance.speaker } : {});
          extracted = true;
          if (triples.length === 0) {
            throw new ToolError({
              reason: 'rejected',
              field: 'sentence_text',
              detail: 'no facts could be read from sentence_text',
              hint: `pass the facts as triples: ${TRIPLE_HINT}`,
            });
          }
        }
        const { speaker: _speaker, ...graphProvenance } = provenance;
        const result = await graph.commit(triples, graphProvenance, context ? { signal: context.signal } : {});
        return {
          stored: result.relation_ids.length,
          created: result.relations_created,
          reinforced: result.relations_reinforced,
          superseded: result.relations_superseded,
          ...(extracted && { facts: triples.slice(0, 10).map((t) => `${t.subject} ${normalizeRelationType(t.relation)} ${t.object}`) }),
          ...(result.skipped.length > 0 && { skipped: result.skipped.slice(0, 10) }),
        };
      },
    },
    {
      name: 'memory_merge',
      owner: MEMORY_OWNER,
      tier: 'act',
      description: 'Fold one entity into another that names the same thing: relations move to target, source becomes an alias of target.',
      parameters: {
        type: 'object',
        properties: {
          source: { type: 'string', minLength: 1, maxLength: 200, description: 'The entity that disappears.' },
          target: { type: 'string', minLength: 1, maxLength: 200, description: 'The entity that stays.' },
        },
        required: ['source', 'target'],
        additionalProperties: false,
      },
      execute: (args: ToolArgs) => {
        const source = nameArg(args, 'source', HINT_FIND_ENTITY, true);
        const target = nameArg(args, 'target', HINT_FIND_ENTITY, true);
        if (!graph.entity(source)) throw notFound('source', source, HINT_FIND_ENTITY);
        if (!graph.entity(target)) throw notFound('target', target, HINT_FIND_ENTITY);
        const result = graph.merge(source, target);
        if (!result.merged) {
          throw result.reason === 'same_entity'
            ? new ToolError({
                reason: 'rejected',
                field: 'target',
                detail: `${source} and ${target} are already one entity`,
                hint: 'nothing to merge',
              })
            : notFound('source', source, HINT_FIND_ENTITY);
        }
        return {
          merged: true,
          target: result.target.name,
          aliases: result.target.aliases.slice(0, 10),
          relations_moved: result.relations_moved + result.relations_folded,
        };
      },
    },
    {
      name: 'memory_purge',
      owner: MEMORY_OWNER,
      tier: 'dangerous',
      description:
        'Remove many relations at once by criteria (all given must match; at least one). mode soft ends them (kept as history), ' +
        'hard deletes them with their history.',
      parameters: {
        type: 'object',
        properties: {
          subject_contains: { type: 'string', maxLength: 200 },
          relation_type: { type: 'string', maxLength: MAX_RELATION_TYPE },
          target_contains: { type: 'string', maxLength: 200 },
          mode: { type: 'string', enum: ['soft', 'hard'] },
        },
        required: ['mode'],
        additionalProperties: false,
      },
      execute: (args: ToolArgs) => {
        const hint =
          'give at least one of subject_contains, relation_type, target_contains, e.g. {"relation_type": "likes", "mode": "soft"}';
        const mode = enumArg(args, 'mode', ['soft', 'hard'] as const);
        const subject = optionalText(args, 'subject_contains', hint);
        const type = relationTypeArg(args, 'relation_type', hint, false);
        const object = optionalText(args, 'target_contains', hint);
        if (subject === undefined && type === undefined && object === undefined) {
          throw new ToolError({ reason: 'required', field: 'subject_contains', detail: 'memory_purge needs at least one criterion', hint });
        }
        const { relations } = graph.purge(
          {
            ...(subject && { subject_contains: subject }),
            ...(type && { relation_type: type }),
            ...(object && { target_contains: object }),
          },
          mode,
        );
        if (mode === 'hard') graph.cleanupOrphanSentences();
        return { mode, relations };
      },
    },
    {
      name: 'memory_edit',
      owner: MEMORY_OWNER,
      tier: 'act',
      description: 'Correct one current fact: name it by old_subject, old_relation, old_object and give the parts that change (new_*).',
      parameters: {
        type: 'object',
        properties: {
          old_subject: { type: 'string', minLength: 1, maxLength: 200 },
          old_relation: { type: 'string', minLength: 1, maxLength: MAX_RELATION_TYPE },
          old_object: { type: 'string', minLength: 1, maxLength: 200 },
          new_subject: { type: 'string', minLength: 1, maxLength: 200 },
          new_relation: { type: 'string', minLength: 1, maxLength: MAX_RELATION_TYPE },
          new_object: { type: 'string', minLength: 1, maxLength: 200 },
        },
        required: ['old_subject', 'old_relation', 'old_object'],
        additionalProperties: false,
      },
      execute: async (args: ToolArgs) => {
        const hint = 'name the fact exactly as person_query or memory_recall shows it';
        const old = {
          subject: nameArg(args, 'old_subject', hint, true),
          relation: relationTypeArg(args, 'old_relation', hint, true) as string,
          object: nameArg(args, 'old_object', hint, true),
        };
        const changeHint = 'give at least one of new_subject, new_relation, new_object';
        const next = {
          subject: nameArg(args, 'new_subject', changeHint, false),
          relation: relationTypeArg(args, 'new_relation', changeHint, false),
          object: nameArg(args, 'new_object', changeHint, false),
        };
        if (next.subject === undefined && next.relation === undefined && next.object === undefined) {
          throw new ToolError({ reason: 'required', field: 'new_object', detail: 'nothing to change', hint: changeHint });
        }
        if (!graph.entity(old.subject)) throw notFound('old_subject', old.subject, HINT_FIND_ENTITY);
        if (!graph.entity(old.object)) throw notFound('old_object', old.object, HINT_FIND_ENTITY);
        const edited = await graph.editRelation(old, {
          ...(next.subject !== undefined && { subject: next.subject }),
          ...(next.relation !== undefined && { relation: next.relation }),
          ...(next.object !== undefined && { object: next.object }),
        });
        if (!edited) {
          throw new ToolError({
            reason: 'not_found',
            field: 'old_relation',
            detail: `no current fact ${old.subject} ${old.relation} ${old.object}`,
            hint: `call person_query with ${JSON.stringify(old.subject)} to see its current facts`,
          });
        }
        return { edited: compactRelation(edited) };
      },
    },
    {
      name: 'memory_delete_entity',
      owner: MEMORY_OWNER,
      tier: 'dangerous',
      description: 'Delete an entity and every relation it has, history included. Cannot be undone.',
      parameters: {
        type: 'object',
        properties: { name: { type: 'string', minLength: 1, maxLength: 200 } },
        required: ['name'],
        additionalProperties: false,
      },
      execute: (args: ToolArgs) => {
        const name = nameArg(args, 'name', HINT_FIND_ENTITY, true);
        const result = graph.deleteEntity(name);
        if (!result.deleted) throw notFound('name', name, HINT_FIND_ENTITY);
        graph.cleanupOrphanSentences();
        return { deleted: result.entity.name, relations_removed: result.relations_removed };
      },
    },
    {
      name: 'memory_introspect',
      owner: MEMORY_OWNER,
      tier: 'read',
      parallel_safe: true,
      no_memory: true,
      description:
        'What memory holds: counts of entities, relations, documents and window events, relation types and the most mentioned entities.',
      parameters: { type: 'object', properties: {}, additionalProperties: false },
      // The same summary memory.introspect shows the owner (memory-inspector.ts).
      execute: () => memorySummary(deps.stores),
    },
  ];
}

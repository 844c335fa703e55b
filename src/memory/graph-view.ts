/**
 * The memory graph view's read-only query: a bounded neighbourhood of one entity (the entities
 * within N hops, strongest relations first, and the relations between them), filtered by entity
 * type, relation type and time, for the web page's graph view. The graph may hold tens of
 * thousands of entities and a hub (the home, the speaker) thousands of relations, so nothing here
 * ever reads "the whole graph": every walk stops at a node cap, every node's scan at a row cap,
 * every count at a count cap. Registered as `memory.graph` and `memory.graph_types` (owner only:
 * it shows what the household said).
 *
 * The caps are constants, not settings: they bound one request of an owner-only view (as the
 * inspector's listing limits in memory-methods.ts do), the caller picks within them, and the
 * ceiling is what the page can lay out and draw on a phone (its force layout costs nodes² per
 * step), not something a household tunes.
 */
import { Type } from '@sinclair/typebox';
import type { GraphNeighbourhoodResult, GraphTypesResult, GraphViewEdge, GraphViewNode } from '../api/memory-graph.js';
import type { ControlMethodRegistrar } from '../shared/control-method.js';
import { HomeAgentError } from '../shared/errors.js';
import { normalizeRelationType } from './graph-names.js';
import type { GraphEntity } from './graph-types.js';
import type { MemoryStores } from './memory-stores.js';

export type { GraphNeighbourhoodResult, GraphTypesResult, GraphViewEdge, GraphViewNode };

/** Hops from the centre when the caller does not say. */
export const DEFAULT_GRAPH_DEPTH = 2;
/** Beyond 4 hops in a household graph nearly everything is connected to everything. */
export const MAX_GRAPH_DEPTH = 4;
/** Entities drawn when the caller does not say: readable on a phone. */
export const DEFAULT_GRAPH_NODES = 60;
/** The most entities one answer holds: what the page lays out smoothly on a Pi's browser. */
export const MAX_GRAPH_NODES = 200;
/** Relations between the drawn entities at most (about two per entity keeps a drawing legible). */
export const MAX_GRAPH_EDGES = 400;
/** A node's relations are counted up to this ("1000+"): a hub is not counted row by row. */
export const RELATION_COUNT_CAP = 1000;
/** Types listed by memory.graph_types, the most used first. */
export const MAX_TYPES_LISTED = 50;
/** Entity or relation types one filter may name. */
export const MAX_FILTER_TYPES = 20;

export interface GraphViewQuery {
  /** The centre, by name or alias, or by id. */
  entity: string | number;
  depth?: number;
  maxNodes?: number;
  /** Only walk into entities of these types ('' is an entity without a type); the centre is always shown. */
  entityTypes?: readonly string[];
  /** Only follow relations of these types. */
  relationTypes?: readonly string[];
  /** Only relations said (valid_from) at or after / at or before these times (ms). */
  since?: number;
  until?: number;
  /** Only relations true at this time (ms): begun by then and not ended by then; includes history. */
  at?: number;
  /** Also relations no longer current (superseded or forgotten softly). */
  history?: boolean;
}

interface RelationRow {
  id: number;
  other: number;
}

interface EdgeRow {
  id: number;
  source_id: number;
  target_id: number;
  type: string;
  confidence: number;
  evidence_count: number;
  valid_from: number;
  valid_to: number | null;
  sentence: string | null;
}

/** The conditions on a relation `x` (with `x.other` joined as entity `e`), bound by name. */
const RELATION_FILTER = `(@history = 1 OR x.valid_to IS NULL)
  AND (@at IS NULL OR (x.valid_from <= @at AND (x.valid_to IS NULL OR x.valid_to > @at)))
  AND (@since IS NULL OR x.valid_from >= @since)
  AND (@until IS NULL OR x.valid_from <= @until)
  AND (@relation_types IS NULL OR x.type IN (SELECT value FROM json_each(@relation_types)))
  AND (@entity_types IS NULL OR e.type IN (SELECT value FROM json_each(@entity_types)))`;

/** One node's relations in both directions, each with the entity at its other end. */
const NODE_RELATIONS = `FROM (
    SELECT id, target_id AS other, type, confidence, evidence_count, valid_from, valid_to FROM graph_relations WHERE source_id = @node
    UNION ALL
    SELECT id, source_id AS other, type, confidence, evidence_count, valid_from, valid_to FROM graph_relations WHERE target_id = @node
  ) x JOIN graph_entities e ON e.id = x.other
  WHERE ${RELATION_FILTER}`;

const NEIGHBOURS_SQL = `SELECT x.id, x.other ${NODE_RELATIONS}
  ORDER BY (x.valid_to IS NULL) DESC, x.confidence DESC, x.evidence_count DESC, x.id LIMIT @limit`;

const COUNT_SQL = `SELECT count(*) AS n FROM (SELECT 1 ${NODE_RELATIONS} LIMIT @limit)`;

/** Relations with both ends in the chosen set (the entity filter was applied when choosing them). */
const EDGES_SQL = `SELECT x.id, x.source_id, x.target_id, x.type, x.confidence, x.evidence_count, x.valid_from, x.valid_to,
    s.text AS sentence
  FROM graph_relations x
  LEFT JOIN graph_sentences s ON s.id = x.sentence_id
  WHERE x.source_id IN (SELECT value FROM json_each(@ids)) AND x.target_id IN (SELECT value FROM json_each(@ids))
    AND (@history = 1 OR x.valid_to IS NULL)
    AND (@at IS NULL OR (x.valid_from <= @at AND (x.valid_to IS NULL OR x.valid_to > @at)))
    AND (@since IS NULL OR x.valid_from >= @since)
    AND (@until IS NULL OR x.valid_from <= @until)
    AND (@relation_types IS NULL OR x.type IN (SELECT value FROM json_each(@relation_types)))
  ORDER BY (x.valid_to IS NULL) DESC, x.confidence DESC, x.evidence_count DESC, x.id LIMIT @limit`;

function iso(ms: number | null): string | null {
  return ms !== null && Number.isFinite(ms) ? new Date(ms).toISOString() : null;
}

function notFound(entity: string | number): HomeAgentError {
  return new HomeAgentError(
    'HA_ERR_MEMORY_NOT_FOUND',
    typeof entity === 'number'
      ? `memory has no entity with id ${entity}`
      : `memory has no entity named ${JSON.stringify(entity)} (by name or alias)`,
  );
}

function invalid(message: string): HomeAgentError {
  return new HomeAgentError('HA_ERR_RPC_INVALID_PARAMS', message);
}

function clamp(value: number | undefined, fallback: number, max: number): number {
  if (value === undefined || !Number.isFinite(value)) return fallback;
  return Math.max(1, Math.min(max, Math.trunc(value)));
}

/**
 * The neighbourhood of `query.entity`: a breadth-first walk that takes each node's strongest
 * relations first (current, then confident, then often said) until `maxNodes` entities are
 * reached, then the relations among them (at most {@link MAX_GRAPH_EDGES}). Throws
 * HA_ERR_MEMORY_NOT_FOUND when the centre is unknown.
 */
export function graphNeighbourhood(stores: MemoryStores, query: GraphViewQuery): GraphNeighbourhoodResult {
  const center: GraphEntity | undefined = stores.graph.entity(query.entity);
  if (!center) throw notFound(query.entity);
  const depth = Math.max(1, Math.min(MAX_GRAPH_DEPTH, Math.trunc(query.depth ?? DEFAULT_GRAPH_DEPTH)));
  const maxNodes = clamp(query.maxNodes, DEFAULT_GRAPH_NODES, MAX_GRAPH_NODES);
  const maxEdges = MAX_GRAPH_EDGES;
  const filter = {
    history: query.history === true || query.at !== undefined ? 1 : 0,
    at: query.at ?? null,
    since: query.since ?? null,
    until: query.until ?? null,
    relation_types: query.relationTypes?.length ? JSON.stringify([...new Set(query.relationTypes.map(normalizeRelationType))]) : null,
    entity_types: query.entityTypes?.length ? JSON.stringify([...new Set(query.entityTypes.map((t) => t.trim()))]) : null,
  };
  const neighbours = stores.db.prepare(NEIGHBOURS_SQL);
  // Enough rows per node to fill the budget even when many lead back into the visited set.
  const scanLimit = maxNodes * 2 + 10;
  const visited = new Map<number, number>([[center.id, 0]]);
  let nodesTruncated = false;
  let frontier = [center.id];
  for (let d = 1; d <= depth && frontier.length > 0; d++) {
    const next: number[] = [];
    for (const node of frontier) {
      for (const row of neighbours.all({ ...filter, node, limit: scanLimit }) as RelationRow[]) {
        if (visited.has(row.other)) continue;
        if (visited.size >= maxNodes) {
          nodesTruncated = true;
          break;
        }
        visited.set(row.other, d);
        next.push(row.other);
      }
    }
    frontier = next;
  }

  const ids = [...visited.keys()];
  const edgeRows = stores.db.prepare(EDGES_SQL).all({ ...filter, ids: JSON.stringify(ids), limit: maxEdges + 1 }) as EdgeRow[];
  const edgesTruncated = edgeRows.length > maxEdges;
  const edges: GraphViewEdge[] = edgeRows.slice(0, maxEdges).map((r) => ({
    id: r.id,
    source: r.source_id,
    target: r.target_id,
    type: r.type,
    confidence: r.confidence,
    evidence_count: r.evidence_count,
    valid_from: iso(r.valid_from),
    valid_to: iso(r.valid_to),
    ...(r.sentence !== null && { sentence: r.sentence }),
  }));
  const drawn = new Map<number, number>();
  for (const e of edges) {
    drawn.set(e.source, (drawn.get(e.source) ?? 0) + 1);
    drawn.set(e.target, (drawn.get(e.target) ?? 0) + 1);
  }

  const count = stores.db.prepare(COUNT_SQL);
  const entities = new Map(stores.graph.entitiesById(ids).map((e) => [e.id, e]));
  const nodes: GraphViewNode[] = ids.flatMap((id) => {
    const e = entities.get(id);
    if (!e) return [];
    const n = (count.get({ ...filter, node: id, limit: RELATION_COUNT_CAP }) as { n: number }).n;
    return [
      {
        id,
        name: e.name,
        type: e.type,
        mention_count: e.mention_count,
        depth: visited.get(id) ?? 0,
        relation_count: n,
        relation_count_capped: n >= RELATION_COUNT_CAP,
        hidden_relations: Math.max(0, n - (drawn.get(id) ?? 0)),
        updated_at: iso(e.updated_at),
      },
    ];
  });
  return {
    center: { id: center.id, name: center.name },
    depth,
    max_nodes: maxNodes,
    max_edges: maxEdges,
    nodes,
    edges,
    truncated: { nodes: nodesTruncated, edges: edgesTruncated },
  };
}

/** Entity and relation types, the most used first, for the view's filters. */
export function graphTypes(stores: MemoryStores): GraphTypesResult {
  const list = (sql: string) => stores.db.prepare(sql).all({ limit: MAX_TYPES_LISTED }) as Array<{ type: string; count: number }>;
  return {
    entity_types: list('SELECT type, count(*) AS count FROM graph_entities GROUP BY type ORDER BY count DESC, type LIMIT @limit'),
    relation_types: list('SELECT type, count(*) AS count FROM graph_relations GROUP BY type ORDER BY count DESC, type LIMIT @limit'),
  };
}

/** An ISO date-time (or a date) as ms; refused with the parameter's name when it does not read. */
export function parseTime(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const ms = Date.parse(value);
  if (!Number.isFinite(ms)) throw invalid(`memory.graph: ${name} must be an ISO date or date-time, got ${JSON.stringify(value)}`);
  return ms;
}

const TypeList = Type.Optional(Type.Array(Type.String({ maxLength: 64 }), { maxItems: MAX_FILTER_TYPES }));
const Time = Type.Optional(Type.String({ minLength: 4, maxLength: 40 }));

/** `memory.graph` and `memory.graph_types`, on the running memory's stores. */
export function registerGraphViewMethods(control: ControlMethodRegistrar, memory: { parts(): { stores: MemoryStores } }): void {
  control.register({
    name: 'memory.graph',
    description: `The neighbourhood of one entity (by name or alias, or id) for the graph view: the entities within depth hops (1–${MAX_GRAPH_DEPTH}, default ${DEFAULT_GRAPH_DEPTH}), strongest relations first, at most max_nodes (1–${MAX_GRAPH_NODES}, default ${DEFAULT_GRAPH_NODES}), and up to ${MAX_GRAPH_EDGES} relations between them; filtered by entity_types, relation_types, since/until (when said) or at (true then), history for ended relations. Each node says how many of its relations are not drawn.`,
    owner_only: true,
    params: Type.Object({
      entity: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
      id: Type.Optional(Type.Integer({ minimum: 1 })),
      depth: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_GRAPH_DEPTH })),
      max_nodes: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_GRAPH_NODES })),
      entity_types: TypeList,
      relation_types: TypeList,
      since: Time,
      until: Time,
      at: Time,
      history: Type.Optional(Type.Boolean()),
    }),
    handler: (params) => {
      if ((params.entity === undefined) === (params.id === undefined)) throw invalid('memory.graph: give exactly one of entity or id');
      const since = parseTime(params.since, 'since');
      const until = parseTime(params.until, 'until');
      if (since !== undefined && until !== undefined && since > until) throw invalid('memory.graph: since is after until');
      const at = parseTime(params.at, 'at');
      return graphNeighbourhood(memory.parts().stores, {
        entity: params.entity ?? (params.id as number),
        ...(params.depth !== undefined && { depth: params.depth }),
        ...(params.max_nodes !== undefined && { maxNodes: params.max_nodes }),
        ...(params.entity_types !== undefined && { entityTypes: params.entity_types }),
        ...(params.relation_types !== undefined && { relationTypes: params.relation_types }),
        ...(since !== undefined && { since }),
        ...(until !== undefined && { until }),
        ...(at !== undefined && { at }),
        ...(params.history !== undefined && { history: params.history }),
      });
    },
  });

  control.register({
    name: 'memory.graph_types',
    description: `The entity and relation types the graph holds, the most used first (at most ${MAX_TYPES_LISTED} each), for the graph view's filters.`,
    owner_only: true,
    params: Type.Object({}),
    handler: () => graphTypes(memory.parts().stores),
  });
}

/**
 * Breadth-first walk from seed entities, strongest relations first, within a depth limit and a
 * node budget: a hub entity (the speaker, the home) must not pull thousands of nodes into a
 * prompt.
 */
import type { StatementCache } from '../store/statement-cache.js';

export const DEFAULT_WALK_DEPTH = 2;
export const MAX_WALK_DEPTH = 3;
export const DEFAULT_NODE_BUDGET = 60;

export interface WalkOptions {
  /** Hops from the seeds; default 2, at most 3. */
  depth?: number;
  /** Most entities in the result, seeds included; default 60. */
  nodeBudget?: number;
  /** Also follow superseded and soft-purged relations. */
  includeHistory?: boolean;
  /** Only walk into entities of this type (e.g. `person` for a social network). */
  entityType?: string;
}

export interface WalkResult {
  /** Entity ids with their distance from the nearest seed, in the order reached. */
  nodes: Array<{ id: number; depth: number }>;
  /** Relations between entities of the result that the walk went through or saw. */
  relationIds: number[];
}

interface Edge {
  id: number;
  other: number;
  other_type: string;
}

const EDGES_SQL = `SELECT id, other, other_type FROM (
  SELECT r.id, r.target_id AS other, e.type AS other_type, r.confidence, r.evidence_count
    FROM graph_relations r JOIN graph_entities e ON e.id = r.target_id
    WHERE r.source_id = @node AND (@history = 1 OR r.valid_to IS NULL)
  UNION ALL
  SELECT r.id, r.source_id AS other, e.type AS other_type, r.confidence, r.evidence_count
    FROM graph_relations r JOIN graph_entities e ON e.id = r.source_id
    WHERE r.target_id = @node AND (@history = 1 OR r.valid_to IS NULL)
) ORDER BY confidence DESC, evidence_count DESC, id LIMIT @limit`;

export function walkNeighbours(sql: StatementCache, seeds: readonly number[], options: WalkOptions = {}): WalkResult {
  const depth = Math.max(0, Math.min(MAX_WALK_DEPTH, Math.trunc(options.depth ?? DEFAULT_WALK_DEPTH)));
  const budget = Math.max(1, Math.trunc(options.nodeBudget ?? DEFAULT_NODE_BUDGET));
  const visited = new Map<number, number>();
  const relations = new Set<number>();
  let frontier: number[] = [];
  for (const seed of seeds) {
    if (visited.size >= budget || visited.has(seed)) continue;
    visited.set(seed, 0);
    frontier.push(seed);
  }
  const edges = sql.get(EDGES_SQL);
  // Enough edges per node to fill the budget and to see the links back into the visited set.
  const edgeLimit = budget * 2 + 10;
  for (let d = 1; d <= depth && frontier.length > 0; d++) {
    const next: number[] = [];
    for (const node of frontier) {
      for (const edge of edges.all({ node, history: options.includeHistory ? 1 : 0, limit: edgeLimit }) as Edge[]) {
        if (visited.has(edge.other)) {
          relations.add(edge.id);
          continue;
        }
        if (options.entityType !== undefined && edge.other_type !== options.entityType) continue;
        if (visited.size >= budget) continue;
        visited.set(edge.other, d);
        next.push(edge.other);
        relations.add(edge.id);
      }
    }
    frontier = next;
  }
  return { nodes: [...visited].map(([id, depthOf]) => ({ id, depth: depthOf })), relationIds: [...relations] };
}

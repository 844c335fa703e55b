/**
 * The wire shapes of the memory graph view (`memory.graph`, `memory.graph_types`): a bounded
 * neighbourhood of one entity — the entities within N hops and the relations between them — as
 * the web page's graph view draws it. One home for the daemon that answers and the page that reads.
 */

/** One entity of the neighbourhood. */
export interface GraphViewNode {
  id: number;
  name: string;
  type: string;
  mention_count: number;
  /** Hops from the centre (0 for the centre itself). */
  depth: number;
  /** Relations of this entity that pass the filters, in either direction, counted up to `relation_count_cap`. */
  relation_count: number;
  /** True when there were at least `relation_count_cap` of them (the count stopped there). */
  relation_count_capped: boolean;
  /** Of those, how many are not drawn (they lead beyond the depth or the node cap): "+N" on the page. */
  hidden_relations: number;
  updated_at: string | null;
}

/** One relation between two entities of the neighbourhood. */
export interface GraphViewEdge {
  id: number;
  /** Entity ids (`source` is the subject). */
  source: number;
  target: number;
  type: string;
  confidence: number;
  evidence_count: number;
  valid_from: string | null;
  /** Null while current. */
  valid_to: string | null;
  /** The sentence it was first read from, when kept. */
  sentence?: string;
}

/** The answer of `memory.graph`. */
export interface GraphNeighbourhoodResult {
  center: { id: number; name: string };
  /** The bounds the answer was computed with (the caller's, or the defaults). */
  depth: number;
  max_nodes: number;
  max_edges: number;
  /** Nodes in the order the walk reached them, the centre first. */
  nodes: GraphViewNode[];
  /** Current first, then the most confident. */
  edges: GraphViewEdge[];
  /** The node cap stopped the walk (`nodes`) or the edge cap dropped relations (`edges`). */
  truncated: { nodes: boolean; edges: boolean };
}

/** The answer of `memory.graph_types`: what the graph view's filters offer. */
export interface GraphTypesResult {
  /** Entity types by how many entities have them ('' is an entity without a type). */
  entity_types: Array<{ type: string; count: number }>;
  relation_types: Array<{ type: string; count: number }>;
}

/**
 * The wire shapes of memory's control methods (memory.*): what recall answers, the graph's
 * entities and relations with their provenance, and stored events, as the CLI and the web page's
 * memory inspector read them.
 */

/** One entity in the `memory.entities` listing. */
export interface EntitySummary {
  name: string;
  type: string;
  aliases: string[];
  /** Current relations in either direction. */
  relation_count: number;
  mention_count: number;
  updated_at: string | null;
}

/** The original input of an event, wherever memory still keeps it. */
export interface EventView {
  id: string;
  /** What was said or sent, as it arrived. */
  text: string;
  /** The agent's answer, when kept. */
  response?: string;
  channel: string;
  /** The input source (`cli`, `webui`, a plugin); null when only the raw log has the event. */
  source: string | null;
  at: string | null;
  /** Who said it, when known. */
  speaker?: string;
  /** `window`: the context window; `document`: the document it was archived into; `raw_log`: the raw conversation log. */
  stored_in: 'window' | 'document' | 'raw_log';
  /** The archive document (stored_in `document`). */
  document_id?: number;
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
  /** More relations exist than `memory.entity` lists (ENTITY_RELATIONS_LIMIT in src/memory/memory-methods.ts). */
  truncated: boolean;
}

/** The answer of `memory.entities`. */
export interface EntityListResult {
  entities: EntitySummary[];
  /** Every match, beyond the page returned. */
  total: number;
}

/** One thing memory recalls, as `memory.search` shows it. */
export interface RecalledItem {
  /** Which layer it came from (a fact of the graph, a document, a context event, ...). */
  kind: string;
  text: string;
  /** The line the prompt gets: who said it, when, and what. */
  line: string;
  speaker?: string;
  facts?: string[];
  /** A newer fact replaced it. */
  superseded?: true;
  score: number;
  /** The ids of the events it came from (memory.event shows them). */
  sources: string[];
  at: string | null;
}

/** The answer of `memory.search`: exactly what the prompts get; `abstain` when nothing relates. */
export interface MemorySearchResult {
  abstain: boolean;
  items: RecalledItem[];
}

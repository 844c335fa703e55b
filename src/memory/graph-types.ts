/** The knowledge graph's public shapes and the SQL that reads them. */

export interface EntityRef {
  id: number;
  name: string;
  type: string;
}

export interface GraphEntity extends EntityRef {
  aliases: string[];
  mention_count: number;
  created_at: number;
  updated_at: number;
}

/** The source text of a relation, with where it came from. */
export interface SentenceRef {
  id: number;
  text: string;
  /** The context event it was said in ('' when unknown). */
  source_event_id: string;
  /** The document it was distilled from, if any (the document may since have been removed). */
  document_id: number | null;
}

export interface GraphRelation {
  id: number;
  source: EntityRef;
  target: EntityRef;
  type: string;
  confidence: number;
  session: string;
  /** The sentence that first established it. */
  sentence: SentenceRef | null;
  /** How many times it was committed. */
  evidence_count: number;
  single_valued: boolean;
  valid_from: number;
  /** Null while current; set when superseded or soft-purged (kept as history). */
  valid_to: number | null;
  created_at: number;
  updated_at: number;
}

/** A relation named by its ends and type. */
export interface TripleRef {
  subject: string;
  relation: string;
  object: string;
}

export interface RelationRow {
  id: number;
  source_id: number;
  target_id: number;
  type: string;
  confidence: number;
  session: string;
  sentence_id: number | null;
  evidence_count: number;
  single_valued: number;
  valid_from: number;
  valid_to: number | null;
  created_at: number;
  updated_at: number;
  s_name: string;
  s_type: string;
  t_name: string;
  t_type: string;
  se_text: string | null;
  se_event: string | null;
  se_document: number | null;
}

/** Selects {@link RelationRow}s; append a WHERE clause on `r`, `s` (source), `t` (target). */
export const RELATION_SELECT = `SELECT r.id, r.source_id, r.target_id, r.type, r.confidence, r.session, r.sentence_id, r.evidence_count,
  r.single_valued, r.valid_from, r.valid_to, r.created_at, r.updated_at,
  s.name AS s_name, s.type AS s_type, t.name AS t_name, t.type AS t_type,
  se.text AS se_text, se.source_event_id AS se_event, se.document_id AS se_document
FROM graph_relations r
JOIN graph_entities s ON s.id = r.source_id
JOIN graph_entities t ON t.id = r.target_id
LEFT JOIN graph_sentences se ON se.id = r.sentence_id`;

/** Current relations first, then the most confident, then the newest. */
export const RELATION_ORDER = 'ORDER BY (r.valid_to IS NULL) DESC, r.confidence DESC, r.valid_from DESC, r.id DESC';

export function toRelation(row: RelationRow): GraphRelation {
  return {
    id: row.id,
    source: { id: row.source_id, name: row.s_name, type: row.s_type },
    target: { id: row.target_id, name: row.t_name, type: row.t_type },
    type: row.type,
    confidence: row.confidence,
    session: row.session,
    sentence:
      row.sentence_id === null || row.se_text === null
        ? null
        : { id: row.sentence_id, text: row.se_text, source_event_id: row.se_event ?? '', document_id: row.se_document },
    evidence_count: row.evidence_count,
    single_valued: row.single_valued === 1,
    valid_from: row.valid_from,
    valid_to: row.valid_to,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export interface EntityRow {
  id: number;
  name: string;
  norm_name: string;
  type: string;
  mention_count: number;
  created_at: number;
  updated_at: number;
}

export const ENTITY_COLUMNS = 'id, name, norm_name, type, mention_count, created_at, updated_at';

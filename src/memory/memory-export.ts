/**
 * One page of a full memory export (`memory.export`, `homeagentctl memory export`): every context
 * event, document, entity, sentence and relation as a flat record, section by section in id order,
 * with a cursor for the next page. Keyset paging on ids that only grow means a row present for the
 * whole export is returned exactly once, however long the client takes between pages. Vectors are
 * left out: they belong to one embedder and are rebuilt from the text.
 */
import { HomeAgentError } from '../shared/errors.js';
import type { EventRow as ContextEventRow } from './context-window.js';
import type { MemoryStores } from './memory-stores.js';

export const EXPORT_SECTIONS = ['event', 'document', 'entity', 'sentence', 'relation'] as const;
export type ExportSection = (typeof EXPORT_SECTIONS)[number];

/** One exported row; `type` names its section, so the rows' own type columns are renamed. */
export type ExportRecord = { type: ExportSection } & Record<string, unknown>;

export interface ExportPage {
  records: ExportRecord[];
  /** Pass it back for the next page; absent after the last one. */
  next?: string;
}

export const DEFAULT_EXPORT_LIMIT = 500;
export const MAX_EXPORT_LIMIT = 2000;
/** Half the CLI socket's default frame limit, so a page stays far from any transport's limit. */
export const DEFAULT_EXPORT_MAX_BYTES = 512 * 1024;

const CURSOR = /^(event|document|entity|sentence|relation):(\d{1,15})$/;

interface Row {
  key: number;
  record: ExportRecord;
}

type SectionReader = (stores: MemoryStores, after: number, limit: number) => Row[];

type EventRow = Omit<ContextEventRow, 'revision'>;

const READERS: Record<ExportSection, SectionReader> = {
  event: (stores, after, limit) =>
    (
      stores.db
        .prepare(
          `SELECT seq, id, timestamp, source, channel, peer, branch, input, response, tools_used, tool_results, media_refs
           FROM context_events WHERE seq > ? ORDER BY seq LIMIT ?`,
        )
        .all(after, limit) as EventRow[]
    ).map(({ seq, tools_used, tool_results, media_refs, ...row }) => ({
      key: seq,
      record: {
        type: 'event',
        ...row,
        tools_used: JSON.parse(tools_used) as unknown,
        tool_results: JSON.parse(tool_results) as unknown,
        media_refs: JSON.parse(media_refs) as unknown,
      },
    })),
  document: (stores, after, limit) =>
    stores.documents.list({ afterId: after, limit }).map((doc) => ({ key: doc.id, record: { type: 'document', ...doc } })),
  entity: (stores, after, limit) =>
    stores.graph.entitiesById(ids(stores, 'graph_entities', after, limit)).map(({ type, ...entity }) => ({
      key: entity.id,
      record: { type: 'entity', ...entity, entity_type: type },
    })),
  sentence: (stores, after, limit) =>
    (
      stores.db
        .prepare('SELECT id, text, source_event_id, document_id, created_at FROM graph_sentences WHERE id > ? ORDER BY id LIMIT ?')
        .all(after, limit) as Array<{ id: number }>
    ).map((row) => ({ key: row.id, record: { type: 'sentence', ...row } })),
  relation: (stores, after, limit) => {
    const relations = stores.graph.relationsById(ids(stores, 'graph_relations', after, limit));
    const evidence = stores.graph.evidence(relations.map((r) => r.id));
    return relations.map((r) => ({
      key: r.id,
      record: {
        type: 'relation',
        id: r.id,
        source_id: r.source.id,
        source: r.source.name,
        relation: r.type,
        target_id: r.target.id,
        target: r.target.name,
        confidence: r.confidence,
        session: r.session,
        sentence_id: r.sentence?.id ?? null,
        evidence_sentence_ids: (evidence.get(r.id) ?? []).map((s) => s.id),
        evidence_count: r.evidence_count,
        single_valued: r.single_valued,
        valid_from: r.valid_from,
        valid_to: r.valid_to,
        created_at: r.created_at,
        updated_at: r.updated_at,
      },
    }));
  },
};

function ids(stores: MemoryStores, table: 'graph_entities' | 'graph_relations', after: number, limit: number): number[] {
  return (stores.db.prepare(`SELECT id FROM ${table} WHERE id > ? ORDER BY id LIMIT ?`).all(after, limit) as Array<{ id: number }>).map(
    (r) => r.id,
  );
}

function parseCursor(cursor: string | undefined): { section: number; after: number } {
  if (cursor === undefined) return { section: 0, after: 0 };
  const match = CURSOR.exec(cursor);
  if (!match) {
    throw new HomeAgentError(
      'HA_ERR_RPC_INVALID_PARAMS',
      `memory.export: cursor ${JSON.stringify(cursor)} is not one this daemon handed out; start again without a cursor`,
    );
  }
  return { section: EXPORT_SECTIONS.indexOf(match[1] as ExportSection), after: Number(match[2]) };
}

/**
 * Up to `limit` records after `cursor`, and fewer once they add up to `maxBytes` of JSON (always at
 * least one, so every page makes progress).
 */
export function exportPage(stores: MemoryStores, options: { cursor?: string; limit?: number; maxBytes?: number } = {}): ExportPage {
  const limit = Math.min(Math.max(Math.trunc(options.limit ?? DEFAULT_EXPORT_LIMIT), 1), MAX_EXPORT_LIMIT);
  const maxBytes = options.maxBytes ?? DEFAULT_EXPORT_MAX_BYTES;
  let { section, after } = parseCursor(options.cursor);
  const records: ExportRecord[] = [];
  let bytes = 0;
  while (section < EXPORT_SECTIONS.length) {
    const name = EXPORT_SECTIONS[section] as ExportSection;
    const want = limit - records.length;
    const rows = READERS[name](stores, after, want);
    for (const row of rows) {
      const size = Buffer.byteLength(JSON.stringify(row.record)) + 1;
      if (records.length > 0 && bytes + size > maxBytes) return { records, next: `${name}:${after}` };
      records.push(row.record);
      bytes += size;
      after = row.key;
    }
    if (records.length >= limit) return { records, next: `${name}:${after}` };
    // Fewer rows than asked for: this section is done.
    section++;
    after = 0;
  }
  return { records };
}

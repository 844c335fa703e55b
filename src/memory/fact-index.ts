/**
 * The facts recall can answer with: each sentence the graph read facts from, found by BM25 over
 * the analyser's tokens (graph_sentences_fts), with who said it, when, and whether any fact it
 * holds is still current. A sentence whose facts were all superseded ("the key is under the flower
 * pot" after "the key is in the drawer now") is history: recall keeps it away from questions about
 * the present and brings it to questions about the past.
 *
 * The index follows graph_sentences by id (they only grow; deleted ones drop out of the join), so
 * {@link FactIndex.sync} indexes what is new since the last call, also sentences written before
 * the index existed (migration 4) and those committed by tools.
 */

import { ftsMatchTerms, ftsTerms } from '../store/fts-query.js';
import { StatementCache } from '../store/statement-cache.js';
import type { SqlDatabase } from '../store/types.js';
import { chunks, placeholders } from './sql-lists.js';

/** One sentence with the facts read from it. */
export interface FactHit {
  sentence_id: number;
  text: string;
  source_event_id: string;
  /** Who said it ('' when not known: sentences from before speakers were kept). */
  speaker: string;
  /** When it was said (the earliest valid_from of its facts), ms. */
  said_at: number;
  /** The date its time words point at, ms; null when none. */
  refers_to: number | null;
  /** Its facts as `subject relation object`, current ones first. */
  facts: string[];
  /** At least one of its facts is current. */
  current: boolean;
  /** When the last of its facts was superseded (ms); null while current. */
  superseded_at: number | null;
  confidence: number;
  /** BM25 (higher is better), comparable within one search only. */
  score: number;
}

export interface FactIndexOptions {
  database: SqlDatabase;
  /** The analyser's `indexText`. */
  indexText: (text: string) => string;
}

/** Sentences indexed per {@link FactIndex.sync} call at most (a first start over a large graph continues at the next). */
const SYNC_BATCH = 5000;

/**
 * A word held by more sentences than this is common: BM25 has to score every sentence a query
 * word matches, and a word in thousands of them ("lamp" in a large graph) costs milliseconds while
 * telling little about which one answers (its idf is low). A search leaves common words out while
 * it has a rarer word that matches; with only common words it ranks their newest matches.
 * Lucene's high-frequency term cutoff does the same for the same reason.
 */
const COMMON_WORD_SENTENCES = 1000;

/** A term the tokenizer splits into several tokens (a phrase such as "1.2.3"): not one vocabulary word. */
const PHRASE = /[^\p{L}\p{N}]/u;

/** A word as the table's tokenizer (unicode61, remove_diacritics 2) stores it: case-folded, without accents. */
function vocabularyForm(word: string): string {
  return word
    .normalize('NFD')
    .replace(/\p{M}+/gu, '')
    .normalize('NFC')
    .toLowerCase();
}

export class FactIndex {
  readonly #o: FactIndexOptions;
  readonly #sql: StatementCache;
  /** The newest sentence id indexed (undefined until first read). */
  #indexed: number | undefined;

  constructor(options: FactIndexOptions) {
    this.#o = options;
    this.#sql = new StatementCache(options.database);
  }

  /** Indexes sentences newer than the newest indexed one. Returns how many were added. */
  sync(): number {
    // The high-water mark is read once (ORDER BY rowid DESC LIMIT 1 walks the FTS index from its
    // end; max() would scan it), then kept: recall calls this before every search.
    this.#indexed ??=
      (this.#sql.get('SELECT rowid AS id FROM graph_sentences_fts ORDER BY rowid DESC LIMIT 1').get() as { id: number } | undefined)?.id ??
      0;
    const last = this.#indexed;
    const rows = this.#sql.get('SELECT id, text FROM graph_sentences WHERE id > ? ORDER BY id LIMIT ?').all(last, SYNC_BATCH) as Array<{
      id: number;
      text: string;
    }>;
    if (rows.length === 0) return 0;
    const insert = this.#sql.get('INSERT INTO graph_sentences_fts (rowid, content) VALUES (?, ?)');
    this.#sql.transaction(() => {
      for (const row of rows) insert.run(row.id, this.#o.indexText(row.text));
    });
    this.#indexed = rows.at(-1)?.id ?? last;
    return rows.length;
  }

  /**
   * The sentences best matching `query`, with their facts. `history`: also sentences whose facts
   * are all superseded (questions about the past); otherwise only current ones.
   */
  search(query: string, limit: number, options: { history?: boolean } = {}): FactHit[] {
    const terms = ftsTerms(this.#o.indexText(query));
    if (terms.length === 0 || limit <= 0) return [];
    const { words, newestFrom } = this.#informative(terms);
    const match = ftsMatchTerms(words);
    if (match === undefined) return [];
    // Over-fetch: superseded sentences are filtered after the join.
    const rows = this.#sql
      .get(
        'SELECT rowid AS id, bm25(graph_sentences_fts) AS rank FROM graph_sentences_fts WHERE graph_sentences_fts MATCH ? AND rowid >= ? ORDER BY rank LIMIT ?',
      )
      .all(match, newestFrom, limit * 3) as Array<{ id: number; rank: number }>;
    const scores = new Map(rows.map((r) => [r.id, -r.rank]));
    const hits = this.sentences([...scores.keys()]);
    return hits
      .filter((h) => options.history === true || h.current)
      .map((h) => ({ ...h, score: scores.get(h.sentence_id) ?? 0 }))
      .sort((a, b) => b.score - a.score || b.said_at - a.said_at)
      .slice(0, limit);
  }

  /**
   * The words worth ranking by (see COMMON_WORD_SENTENCES), and the lowest sentence id to rank
   * (0: all; with only common words, the newest COMMON_WORD_SENTENCES of their matches). A term
   * that is a phrase of several tokens ("1.2.3") is not in the vocabulary and counts as rare: a
   * phrase matches no more sentences than its rarest token.
   */
  #informative(terms: readonly string[]): { words: readonly string[]; newestFrom: number } {
    const counts = terms.map((term) => ({
      term,
      sentences: PHRASE.test(term)
        ? undefined
        : ((this.#sql.get('SELECT doc FROM graph_sentences_vocab WHERE term = ?').get(vocabularyForm(term)) as { doc: number } | undefined)
            ?.doc ?? 0),
    }));
    const rare = counts.filter((c) => c.sentences === undefined || c.sentences <= COMMON_WORD_SENTENCES);
    // Words no sentence holds match nothing; they decide nothing either.
    if (counts.every((c) => c.sentences === 0)) return { words: [], newestFrom: 0 };
    if (rare.some((c) => c.sentences !== 0)) return { words: rare.map((c) => c.term), newestFrom: 0 };
    const match = ftsMatchTerms(terms) as string;
    const floor = this.#sql
      .get('SELECT rowid AS id FROM graph_sentences_fts WHERE graph_sentences_fts MATCH ? ORDER BY rowid DESC LIMIT 1 OFFSET ?')
      .get(match, COMMON_WORD_SENTENCES - 1) as { id: number } | undefined;
    return { words: terms, newestFrom: floor?.id ?? 0 };
  }

  /** The sentences (by id) with their facts; a sentence no fact refers to any more is left out. */
  sentences(ids: readonly number[]): FactHit[] {
    const out: FactHit[] = [];
    for (const chunk of chunks(ids)) {
      const rows = this.#sql
        .get(
          `SELECT se.id AS sid, se.text, se.source_event_id, se.speaker, se.refers_to,
                  r.valid_from, r.valid_to, r.confidence, r.type, s.name AS s_name, t.name AS t_name
           FROM graph_sentences se
           JOIN graph_relation_evidence e ON e.sentence_id = se.id
           JOIN graph_relations r ON r.id = e.relation_id
           JOIN graph_entities s ON s.id = r.source_id
           JOIN graph_entities t ON t.id = r.target_id
           WHERE se.id IN (${placeholders(chunk.length)})
           ORDER BY se.id, (r.valid_to IS NULL) DESC, r.confidence DESC`,
        )
        .all(...chunk) as FactRow[];
      const bySentence = new Map<number, FactRow[]>();
      for (const row of rows) bySentence.set(row.sid, [...(bySentence.get(row.sid) ?? []), row]);
      for (const [id, facts] of bySentence) {
        const first = facts[0] as FactRow;
        const current = facts.some((f) => f.valid_to === null);
        out.push({
          sentence_id: id,
          text: first.text,
          source_event_id: first.source_event_id,
          speaker: first.speaker,
          said_at: Math.min(...facts.map((f) => f.valid_from)),
          refers_to: first.refers_to,
          facts: facts.map((f) => `${f.s_name} ${f.type.replace(/_/g, ' ')} ${f.t_name}`),
          current,
          superseded_at: current ? null : Math.max(...facts.map((f) => f.valid_to ?? 0)),
          confidence: Math.max(...facts.map((f) => f.confidence)),
          score: 0,
        });
      }
    }
    return out;
  }

  /**
   * Of these events, the ones whose every fact has been superseded: what they said is no longer
   * so, and a transcript of them must not outrank the current fact.
   */
  supersededEvents(eventIds: readonly string[]): Set<string> {
    const out = new Set<string>();
    for (const chunk of chunks([...new Set(eventIds)])) {
      // First the candidates with any superseded fact, from the superseded facts' own index (most
      // turns have none, and a turn may hold many facts); then whether any of theirs is current.
      const touched = (
        this.#sql
          .get(
            `SELECT DISTINCT se.source_event_id AS event
             FROM graph_relations r INDEXED BY graph_relations_superseded
             JOIN graph_relation_evidence e ON e.relation_id = r.id
             JOIN graph_sentences se ON se.id = e.sentence_id
             WHERE r.valid_to IS NOT NULL AND se.source_event_id IN (${placeholders(chunk.length)})`,
          )
          .all(...chunk) as Array<{ event: string }>
      ).map((row) => row.event);
      if (touched.length === 0) continue;
      const rows = this.#sql
        .get(
          `SELECT se.source_event_id AS event, max(r.valid_to IS NULL) AS current
           FROM graph_sentences se
           JOIN graph_relation_evidence e ON e.sentence_id = se.id
           JOIN graph_relations r ON r.id = e.relation_id
           WHERE se.source_event_id IN (${placeholders(touched.length)})
           GROUP BY se.source_event_id`,
        )
        .all(...touched) as Array<{ event: string; current: number }>;
      for (const row of rows) if (row.current === 0) out.add(row.event);
    }
    return out;
  }
}

interface FactRow {
  sid: number;
  text: string;
  source_event_id: string;
  speaker: string;
  refers_to: number | null;
  valid_from: number;
  valid_to: number | null;
  confidence: number;
  type: string;
  s_name: string;
  t_name: string;
}

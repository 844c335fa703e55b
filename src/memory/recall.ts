/**
 * Recall for prompts: the memory items most relevant to a query, each with its provenance (the ids
 * of the events it came from), fused from several paths: lexical (FTS5 BM25 over documents),
 * vector (cosine over document vectors of the current embedder), exact symbols (numbers, versions,
 * identifiers), the knowledge graph (entities named in the query, walked to depth 2, back to the
 * sentences and events the facts came from), and the events still in the context window. Paths are
 * fused by a weighted sum of per-path normalised scores (or by reciprocal rank); a document hit is
 * widened with its neighbours in time when the character budget allows (what was said just before
 * and after is usually what answers the question). When no path finds anything convincing, the
 * result abstains so the prompt can say there is no record instead of inviting an invention.
 */
import type { Embedder } from '../embed/embedder.js';
import { cosine } from '../embed/embedder.js';
import type { ContextEvent, ContextWindow } from './context-window.js';
import type { DocumentStore, StoredDocument } from './document-store.js';
import type { FactHit, FactIndex } from './fact-index.js';
import type { GraphStore } from './graph-store.js';
import { isPersonName } from './household-people.js';
import { type QuerySubject, subjectCoverage, subjectWords } from './query-subject.js';
import { rankByScene, type SceneRanking } from './scene-recall.js';
import { extractSymbols } from './symbols.js';

export type FusionMethod = 'rrf' | 'weighted';

export interface RecallItem {
  kind: 'document' | 'event' | 'fact';
  text: string;
  /** Who said it, when memory knows a person ('someone' when nobody known did). */
  speaker?: string;
  /** A fact item: its facts as `subject relation object`. */
  facts?: string[];
  /** A fact no longer so (superseded): only questions about the past get it. */
  superseded?: boolean;
  /** The date its time words point at (ms), when it names one. */
  refers_to?: number;
  score: number;
  /** Ids of the context events the item came from (provenance). */
  sources: string[];
  /** When it was said (ms). */
  at: number;
}

export interface RecallResult {
  items: RecallItem[];
  /** Nothing relevant was found: the prompt should say there is no record. */
  abstain: boolean;
}

export interface RecallOptions {
  window: ContextWindow;
  documents: DocumentStore;
  graph: GraphStore;
  /** The graph's sentences by word (fact-first recall); absent: facts only through the graph walk. */
  facts?: FactIndex;
  embedder: Embedder;
  /** The analyser's search tokens and keywords (graph seeds). */
  tokens: (text: string) => string[];
  /**
   * The analyser's part-of-speech tags: the query's nouns are what it asks about (its subject).
   * Absent: no subject check (ranking by the paths alone, abstention only when nothing matches).
   */
  tag?: (text: string) => ReadonlyArray<{ word: string; tag: string }>;
  fusion?: FusionMethod;
  /** Candidates taken from each path. Default 30. */
  perPath?: number;
  /** Neighbouring documents in time added to a document hit. Default 3 on each side. */
  neighbours?: number;
  /** Neighbours further apart in time than this (from the hit or the previous neighbour) are another conversation. Default 30 minutes. */
  neighbourGapMs?: number;
  /** Largest text of one item (neighbours included). Default 1,000 characters. */
  itemChars?: number;
  /**
   * The whole list's character budget is this times the number of items asked for (default 390:
   * 3,900 characters for 10 items). Items are widened in rank order within what is left.
   */
  charsPerItem?: number;
  /** Below this best cosine, with no lexical, symbol or graph hit, recall abstains. Default 0.2. */
  minVectorScore?: number;
  /** The paths used (all by default); fewer for ablation runs of the evaluation. */
  paths?: readonly RecallPath[];
}

/** RRF's constant: ranks deeper than about this count for little. */
const RRF_K = 60;
// The window's events are scored among themselves only (their best is always 1 after scaling),
// so the window counts for less than the document index that holds everything older.
// A turn holding a fact that matches the question's words gains on one that merely shares words;
// measured on locomo-dev (conversation 26, k 10): fact weight 1.2 → 0.643, 0.5 → 0.738, 0.2–0.3 →
// 0.75 (no fact path: 0.749). Above that, short fact sentences crowd out the turns that answer.
const PATH_WEIGHTS = { lexical: 1, vector: 0.3, symbol: 1.2, graph: 0.3, window: 0.3, fact: 0.3 } as const;
export type RecallPath = keyof typeof PATH_WEIGHTS;
type PathName = RecallPath;
export const RECALL_PATHS = Object.keys(PATH_WEIGHTS) as RecallPath[];

interface Candidate {
  key: string;
  item: RecallItem;
  /** Document id when the item is a document (for neighbour widening). */
  document?: StoredDocument;
  /** The fact found for the same turn: the item states it, attributed and dated. */
  fact?: FactHit;
}

/** Fused candidates checked for superseded facts. */
const DEMOTION_DEPTH = 40;

/** How much a transcript of facts since superseded still counts, for a question about the present. */
const STALE_FACTOR = 0.1;

/** How much more a transcript of superseded facts counts for a question about the past. */
const PAST_PREFERENCE = 2;

/** Questions about the past reach superseded facts ("where was the key last week", "以前钥匙放哪"). */
const PAST_QUESTION =
  /\b(?:last (?:week|month|year|time|winter|summer|spring|autumn)|before|used to|previously|originally|earlier|formerly|ago|back then|at first|in the past|had been)\b|以前|之前|原来|上周|上个月|上次|去年|过去|曾经|那时|当时|起初|本来/i;

export function asksAboutThePast(query: string): boolean {
  return PAST_QUESTION.test(query);
}

/** One key per turn: a document of one event, the event in the window and its facts are one item. */
function documentKey(doc: StoredDocument): string {
  return doc.source_event_ids.length === 1 ? `e${doc.source_event_ids[0]}` : `d${doc.id}`;
}

export class MemoryRecall {
  readonly #o: Required<Omit<RecallOptions, 'fusion' | 'facts' | 'tag'>> & {
    fusion: FusionMethod;
    facts?: FactIndex;
    tag?: RecallOptions['tag'];
  };

  constructor(options: RecallOptions) {
    this.#o = {
      // Measured on locomo-dev (homeagent memory-eval): weighted fusion, up to three neighbours each
      // side, items up to 1,000 characters within 390 per item overall recall the most under the
      // 4,000-character goal for k = 10.
      fusion: 'weighted',
      perPath: 30,
      neighbours: 3,
      neighbourGapMs: 30 * 60 * 1000,
      itemChars: 1000,
      charsPerItem: 390,
      minVectorScore: 0.2,
      paths: RECALL_PATHS,
      ...options,
    };
  }

  /**
   * The `limit` most relevant items for `query`. `exclude` names events never to return: the input
   * being answered is already in the window when its prompt is built, and it is no memory of itself.
   */
  async recall(
    query: string,
    limit: number,
    options: { signal?: AbortSignal; exclude?: readonly string[]; scene?: SceneRanking } = {},
  ): Promise<RecallResult> {
    const { signal } = options;
    const excluded = new Set(options.exclude ?? []);
    const { documents, window, embedder, perPath } = this.#o;
    const [queryVector] = await embedder.embed([query], signal);
    const ranked = new Map<PathName, Array<{ key: string; score: number }>>();
    const candidates = new Map<string, Candidate>();
    const history = asksAboutThePast(query);
    /** Adds a candidate, or fills in what the one of the same turn lacks (its document, its fact). */
    const add = (c: Candidate) => {
      const known = candidates.get(c.key);
      if (!known) candidates.set(c.key, c);
      else {
        if (!known.document && c.document) known.document = c.document;
        if (!known.fact && c.fact) known.fact = c.fact;
      }
    };

    const lexical = documents.searchLexical(query, perPath);
    const vector = queryVector ? documents.searchVector(queryVector, perPath) : [];
    const symbols = extractSymbols(query);
    const symbolHits = symbols.length > 0 ? documents.searchSymbols(symbols, perPath) : [];
    const hitDocs = new Map(documents.get([...new Set([...lexical, ...vector, ...symbolHits].map((h) => h.id))]).map((d) => [d.id, d]));
    const docKey = (id: number) => {
      const doc = hitDocs.get(id);
      return doc ? documentKey(doc) : `d${id}`;
    };
    ranked.set(
      'lexical',
      lexical.map((h) => ({ key: docKey(h.id), score: h.score })),
    );
    ranked.set(
      'vector',
      vector.map((h) => ({ key: docKey(h.id), score: h.score })),
    );
    ranked.set(
      'symbol',
      symbolHits.map((h) => ({ key: docKey(h.id), score: h.score })),
    );
    for (const doc of hitDocs.values()) add({ key: documentKey(doc), item: documentItem(doc), document: doc });

    const factHits = this.#factPath(query, history, excluded);
    ranked.set(
      'fact',
      factHits.map((c) => ({ key: c.key, score: c.item.score })),
    );
    for (const c of factHits) add(c);

    const graphHits = this.#graphPath(query);
    ranked.set(
      'graph',
      graphHits.map((c, i) => ({ key: c.key, score: graphHits.length - i })),
    );
    for (const c of graphHits) add(c);

    const windowEvents = window.events().filter((e) => !excluded.has(e.id));
    const windowHits = queryVector ? await this.#windowPath(windowEvents, query, queryVector, signal) : [];
    ranked.set(
      'window',
      windowHits.map((c) => ({ key: c.key, score: c.item.score })),
    );
    for (const c of windowHits) add(c);

    const bestVector = vector[0]?.score ?? -1;
    const bestWindow = windowHits[0]?.item.score ?? -1;
    const abstain =
      lexical.length === 0 &&
      symbolHits.length === 0 &&
      graphHits.length === 0 &&
      factHits.length === 0 &&
      Math.max(bestVector, bestWindow) < this.#o.minVectorScore;
    if (abstain) return { items: [], abstain: true };

    for (const path of RECALL_PATHS) if (!this.#o.paths.includes(path)) ranked.delete(path);
    const merged = this.#o.fusion === 'rrf' ? fuseRrf(ranked) : fuseWeighted(ranked);
    const subject = this.#o.tag ? subjectWords(query, this.#o.tag, this.#o.tokens, (word) => PAST_QUESTION.test(word)) : [];
    const weighed = this.#weighSubject(merged, candidates, subject);
    if (weighed === undefined) return { items: [], abstain: true };
    const demoted = this.#demoteSuperseded(weighed, candidates, history);
    const { stale } = demoted;
    // The current scene (src/memory/scene-recall.ts) reorders or narrows; it never edits an item.
    const fused = options.scene
      ? rankByScene(demoted.fused, (key) => candidates.get(key)?.item.sources ?? [], options.scene)
      : demoted.fused;
    // Items never repeat what an earlier item already carries (widening makes neighbours overlap).
    const items: RecallItem[] = [];
    const covered = new Set<string>();
    // One character budget for the whole list: the best hits get the widest context, and enough
    // stays for each later item to carry at least its own text.
    const budget = this.#o.charsPerItem * limit;
    let used = 0;
    for (const [key, score] of fused) {
      if (items.length >= limit) break;
      const candidate = candidates.get(key);
      if (!candidate) continue;
      if (candidate.item.sources.length > 0 && candidate.item.sources.every((id) => covered.has(id))) continue;
      const reserve = (limit - items.length - 1) * RESERVED_ITEM_CHARS;
      const allowance = Math.max(RESERVED_ITEM_CHARS, Math.min(this.#o.itemChars, budget - used - reserve));
      const item = candidate.fact
        ? this.#factItem(candidate, score, covered, allowance, history)
        : candidate.document
          ? this.#widen(candidate.document, score, covered, allowance, history)
          : { ...candidate.item, score, text: cut(candidate.item.text, allowance) };
      for (const id of item.sources) covered.add(id);
      used += item.text.length;
      // A transcript of what is no longer so is history, shown as such, like a superseded fact.
      items.push(stale.has(key) ? { ...item, superseded: true } : item);
    }
    return { items, abstain: false };
  }

  /**
   * A fact found for a turn: the sentence it was read from, with who said it and when (the turn's
   * document, when there is one, still widens it with what was said around it).
   */
  #factItem(candidate: Candidate, score: number, covered: ReadonlySet<string>, allowance: number, history: boolean): RecallItem {
    const fact = candidate.fact as FactHit;
    const base = factItem(fact);
    if (!candidate.document) return { ...base, score, text: cut(base.text, allowance) };
    const widened = this.#widen(candidate.document, score, covered, allowance, history, base);
    // The fact's own sentence first, then what was said around it.
    const around = widened.text
      .split('\n')
      .filter((line) => line !== base.text)
      .join('\n');
    return { ...base, score, text: around === '' ? base.text : `${base.text}\n${around}`, sources: widened.sources };
  }

  /** Sentences matching the query's words that hold facts: current ones, and superseded ones for the past. */
  #factPath(query: string, history: boolean, excluded: ReadonlySet<string>): Candidate[] {
    const facts = this.#o.facts;
    if (!facts) return [];
    facts.sync();
    return facts
      .search(query, this.#o.perPath, { history })
      .filter((hit) => !excluded.has(hit.source_event_id))
      .map((hit) => {
        const item = factItem(hit);
        // For the present the current fact comes first; for the past ("where was it before") the superseded one.
        return {
          key: item.sources[0] ? `e${item.sources[0]}` : `s${hit.sentence_id}`,
          item: { ...item, score: hit.score * (hit.current === !history ? 1 : 0.5) },
          fact: hit,
        };
      });
  }

  /**
   * What the question asks about decides: an item naming all of its subject ("car charger") ranks
   * above one sharing part of it ("phone charger", "car boot"), and when no candidate names any of
   * its noun phrases whole, memory holds nothing about what is asked (undefined: abstain) — loosely
   * related hits are not an answer.
   */
  #weighSubject(
    fused: Array<[string, number]>,
    candidates: ReadonlyMap<string, Candidate>,
    subject: readonly QuerySubject[],
  ): Array<[string, number]> | undefined {
    if (subject.length === 0) return fused;
    let best = 0;
    // Only the head of the ranking can reach the list (as for superseded facts); the rest keeps its order below it.
    const head = fused.slice(0, DEMOTION_DEPTH);
    const tail = fused.slice(DEMOTION_DEPTH).map(([key, score]): [string, number] => [key, score * SUBJECT_FLOOR]);
    const weighed = head.map(([key, score]): [string, number] => {
      const candidate = candidates.get(key);
      const text = candidate ? coreText(candidate) : '';
      const { said, named, phrases } = subjectCoverage(text, subject, this.#o.tokens);
      best = Math.max(best, phrases);
      const covered = said + SPEAKER_SHARE * (named - said);
      return [key, score * (SUBJECT_FLOOR + (1 - SUBJECT_FLOOR) * covered ** 2)];
    });
    if (best === 0) return undefined;
    return [...weighed, ...tail].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  }

  /**
   * Turns whose every fact has been superseded count for little; for a question about the past they
   * count for more. Returns the keys of such turns too: their items are marked as history.
   */
  #demoteSuperseded(
    fused: Array<[string, number]>,
    candidates: ReadonlyMap<string, Candidate>,
    history: boolean,
  ): { fused: Array<[string, number]>; stale: Set<string> } {
    const facts = this.#o.facts;
    const staleKeys = new Set<string>();
    if (!facts) return { fused, stale: staleKeys };
    // Only the head of the ranking can reach the list; checking every candidate costs more than it decides.
    const events = fused.slice(0, DEMOTION_DEPTH).flatMap(([key]) => candidates.get(key)?.item.sources ?? []);
    const stale = facts.supersededEvents(events);
    if (stale.size === 0) return { fused, stale: staleKeys };
    const demoted = fused
      .map(([key, score]): [string, number] => {
        const sources = candidates.get(key)?.item.sources ?? [];
        const isStale = sources.length > 0 && sources.every((id) => stale.has(id));
        if (!isStale) return [key, score];
        staleKeys.add(key);
        // "Where was the key before": the superseded value is the answer, ahead of the correction.
        return [key, history ? score * PAST_PREFERENCE : score * STALE_FACTOR];
      })
      .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
    return { fused: demoted, stale: staleKeys };
  }

  /**
   * A document with its neighbours in time, while the item stays within the character budget. For a
   * question about the present, a neighbour whose every fact was superseded is left out: it would
   * bring the old value back as context of a current item.
   */
  #widen(
    doc: StoredDocument,
    score: number,
    covered: ReadonlySet<string>,
    itemChars: number,
    history: boolean,
    centre?: RecallItem,
  ): RecallItem {
    const base = centre ? { ...documentItem(doc), text: centre.text } : documentItem(doc);
    const { neighbours } = this.#o;
    if (neighbours <= 0 || base.text.length >= itemChars) return { ...base, score, text: cut(base.text, itemChars) };
    const around = this.#o.documents.adjacent(doc, neighbours);
    const facts = this.#o.facts;
    const stale =
      history || !facts
        ? new Set<string>()
        : facts.supersededEvents([...around.before, ...around.after].flatMap((d) => d.source_event_ids));
    const fresh = (d: StoredDocument) =>
      !d.source_event_ids.some((id) => covered.has(id)) &&
      !(d.source_event_ids.length > 0 && d.source_event_ids.every((id) => stale.has(id)));
    const sides = { before: around.before.filter(fresh), after: around.after.filter(fresh) };
    let text = base.text;
    const sources = [...base.sources];
    // Only what was said in the same sitting: a turn an hour away is another conversation.
    const edge = { before: doc.created_at, after: doc.created_at };
    // Alternate after/before, after first: the answer usually follows the question. A side whose
    // next neighbour does not fit is closed (skipping it would join words said apart).
    let side: 'before' | 'after' = 'after';
    while (sides.before.length + sides.after.length > 0) {
      if (sides[side].length === 0) side = side === 'after' ? 'before' : 'after';
      const next = sides[side].shift();
      if (!next) break;
      const piece = documentText(next);
      if (text.length + piece.length + 1 > itemChars || Math.abs(next.created_at - edge[side]) > this.#o.neighbourGapMs) sides[side] = [];
      else {
        edge[side] = next.created_at;
        text = side === 'before' ? `${piece}\n${text}` : `${text}\n${piece}`;
        sources.push(...next.source_event_ids);
      }
      side = side === 'after' ? 'before' : 'after';
    }
    return { ...base, score, text, sources };
  }

  /**
   * Facts about the entities the query names, walked to depth 2. A fact whose sentence came from
   * a stored document votes for that document (it is ranked, widened and cited like any other
   * document hit); a fact without one is an item of its own.
   */
  #graphPath(query: string): Candidate[] {
    const { graph, tokens, documents } = this.#o;
    const words = [...new Set(tokens(query))].filter((w) => w.length >= 2);
    if (words.length === 0) return [];
    const seeds = graph.resolve(words);
    if (seeds.length === 0) return [];
    const walk = graph.neighbours(
      seeds.map((s) => s.id),
      { depth: 2, nodeBudget: 40 },
    );
    const relations = walk.relations.slice(0, this.#o.perPath);
    const eventIds = relations.flatMap((r) => (r.sentence?.source_event_id ? [r.sentence.source_event_id] : []));
    const byEvent = eventIds.length > 0 ? documents.documentsOfEvents(eventIds) : new Map<string, number[]>();
    const docIds = relations.map((r) => {
      const sentence = r.sentence;
      if (!sentence) return undefined;
      return sentence.source_event_id ? (byEvent.get(sentence.source_event_id)?.[0] ?? undefined) : (sentence.document_id ?? undefined);
    });
    const docs = new Map(documents.get(docIds.filter((id): id is number => id !== undefined)).map((d) => [d.id, d]));
    const out: Candidate[] = [];
    const seen = new Set<string>();
    for (const [i, relation] of relations.entries()) {
      const doc = docs.get(docIds[i] ?? -1);
      if (doc) {
        const key = documentKey(doc);
        if (!seen.has(key)) out.push({ key, item: documentItem(doc), document: doc });
        seen.add(key);
        continue;
      }
      const sentence = relation.sentence;
      const fact = `${relation.source.name} ${relation.type.replace(/_/g, ' ')} ${relation.target.name}`;
      const key = sentence?.source_event_id ? `e${sentence.source_event_id}` : `r${relation.id}`;
      if (seen.has(key)) continue;
      seen.add(key);
      out.push({
        key,
        item: {
          kind: 'fact',
          text: sentence ? `${fact} ("${sentence.text}")` : fact,
          score: relation.confidence,
          sources: sentence?.source_event_id ? [sentence.source_event_id] : [],
          at: relation.valid_from,
        },
      });
    }
    return out;
  }

  /**
   * The events still in the window, ranked by BM25 over their own tokens (they are not in the
   * document index yet) plus their cosine to the query.
   */
  async #windowPath(events: readonly ContextEvent[], query: string, queryVector: Float32Array, signal?: AbortSignal): Promise<Candidate[]> {
    if (events.length === 0) return [];
    const texts = events.map((e) => this.#o.window.similarityText(e));
    const vectors = await this.#o.embedder.embed(texts, signal);
    const lexical = bm25Scores(
      this.#o.tokens(query),
      texts.map((t) => this.#o.tokens(t)),
    );
    const maxLexical = Math.max(0, ...lexical);
    return (
      events
        .map((event, i) => {
          const vector = vectors[i] ? cosine(queryVector, vectors[i] as Float32Array) : 0;
          const lexicalScore = maxLexical > 0 ? (lexical[i] ?? 0) / maxLexical : 0;
          return {
            key: `e${event.id}`,
            item: {
              kind: 'event' as const,
              text: cut(texts[i] ?? '', this.#o.itemChars),
              score: lexicalScore + WINDOW_VECTOR_SHARE * vector,
              sources: [event.id],
              at: event.timestamp,
              ...(isPersonName(event.peer, event) && { speaker: event.peer }),
            },
          };
        })
        // An event that shares no word with the query needs a clear cosine to count at all.
        .filter((c, i) => c.item.text !== '' && ((lexical[i] ?? 0) > 0 || c.item.score >= WINDOW_VECTOR_SHARE * this.#o.minVectorScore * 2))
        .sort((a, b) => b.item.score - a.item.score)
        .slice(0, this.#o.perPath)
    );
  }
}

/** How much an item naming none of the question's subject still counts (of one naming all of it). */
const SUBJECT_FLOOR = 0.1;

/**
 * How much speaking of oneself in a turn ("Anna: I love hiking") counts towards naming the subject
 * "Anna" (of naming it in the words): asked about a person, what that person said of themselves is
 * the evidence. Measured on LoCoMo locomo-dev (the tuning conversations; 383 questions), recall@10
 * / multi-hop@10 / x BM25: 0 -> 0.751 / 0.419 / 1.19; 0.5 -> 0.747 / 0.423 / 1.19; 1 -> 0.766 /
 * 0.496 / 1.22 (before speakers had to speak of themselves, at 0.5: 0.759 / 0.439 / 1.21); the
 * household evaluation unchanged at all three (held-out fact@1 0.955, fact@3 1.000). Counting every
 * speaker label fully instead hurt it (held-out fact@1 0.929): a question or command is by its
 * speaker, not about them.
 */
const SPEAKER_SHARE = 1;

/** The text a candidate itself holds (its turn, its fact's sentence), before widening with neighbours. */
function coreText(candidate: Candidate): string {
  const parts = [candidate.item.text];
  if (candidate.fact) parts.push(candidate.fact.text);
  if (candidate.document) parts.push(documentText(candidate.document));
  return parts.join('\n');
}

/** What each item still to come is guaranteed of the list's budget (a turn is about 150 characters). */
const RESERVED_ITEM_CHARS = 150;

/** How much the cosine counts next to the (0..1 scaled) BM25 score when ranking window events. */
const WINDOW_VECTOR_SHARE = 0.5;

/** BM25 (k1 1.2, b 0.75) of each token list against the query tokens, the lists being the corpus. */
export function bm25Scores(query: readonly string[], corpus: readonly (readonly string[])[]): number[] {
  const n = corpus.length;
  if (n === 0 || query.length === 0) return corpus.map(() => 0);
  const avg = corpus.reduce((sum, d) => sum + d.length, 0) / n || 1;
  const df = new Map<string, number>();
  for (const doc of corpus) for (const term of new Set(doc)) df.set(term, (df.get(term) ?? 0) + 1);
  const terms = [...new Set(query)];
  return corpus.map((doc) => {
    const tf = new Map<string, number>();
    for (const term of doc) tf.set(term, (tf.get(term) ?? 0) + 1);
    let score = 0;
    for (const term of terms) {
      const f = tf.get(term) ?? 0;
      if (f === 0) continue;
      const d = df.get(term) ?? 0;
      const idf = Math.log(1 + (n - d + 0.5) / (d + 0.5));
      score += (idf * f * 2.2) / (f + 1.2 * (0.25 + (0.75 * doc.length) / avg));
    }
    return score;
  });
}

function documentText(doc: StoredDocument): string {
  return doc.content || doc.summary;
}

function documentItem(doc: StoredDocument): RecallItem {
  const origin = doc.origin;
  const speaker = origin && isPersonName(origin.peer, origin) ? origin.peer : undefined;
  return {
    kind: 'document',
    text: documentText(doc),
    score: 0,
    sources: [...doc.source_event_ids],
    at: doc.created_at,
    ...(speaker && { speaker }),
  };
}

/** A sentence with facts, as an item: its text, who said it, when, and whether it is still so. */
function factItem(hit: FactHit): RecallItem {
  return {
    kind: 'fact',
    text: hit.text,
    score: hit.score,
    sources: hit.source_event_id ? [hit.source_event_id] : [],
    at: hit.said_at,
    facts: hit.facts,
    ...(hit.speaker !== '' && { speaker: hit.speaker }),
    ...(!hit.current && { superseded: true }),
    ...(hit.refers_to !== null && { refers_to: hit.refers_to }),
  };
}

function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** Reciprocal-rank fusion: Σ weight / (k + rank) over the paths that found the key. */
export function fuseRrf(ranked: ReadonlyMap<PathName, ReadonlyArray<{ key: string; score: number }>>): Array<[string, number]> {
  const total = new Map<string, number>();
  for (const [path, list] of ranked) {
    for (const [index, hit] of list.entries()) total.set(hit.key, (total.get(hit.key) ?? 0) + PATH_WEIGHTS[path] / (RRF_K + index + 1));
  }
  return [...total].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
}

/** Weighted fusion: each path's scores scaled to 0..1 by its best hit, then summed with weights. */
export function fuseWeighted(ranked: ReadonlyMap<PathName, ReadonlyArray<{ key: string; score: number }>>): Array<[string, number]> {
  const total = new Map<string, number>();
  for (const [path, list] of ranked) {
    const max = Math.max(0, ...list.map((h) => h.score));
    if (max === 0) continue;
    for (const hit of list) total.set(hit.key, (total.get(hit.key) ?? 0) + PATH_WEIGHTS[path] * (Math.max(0, hit.score) / max));
  }
  return [...total].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
}

/**
 * The retrieval evaluation (`homeagent memory-eval --locomo <dir>`): feeds every LoCoMo turn into
 * a memory, lets it settle, asks each question of categories 1–4, and scores the answers against
 * the question's evidence turns — for the memory under test and, in the same run, for a plain
 * BM25 baseline over the raw turns.
 */
import { type Clock, systemClock } from '../../shared/clock.js';
import { Bm25Memory, type Tokenizer } from './bm25.js';
import { evalError } from './eval-error.js';
import type { EvalEvent, EvalMemory, EvalMemoryFactory, EvalScope, RecalledItem } from './eval-memory.js';
import { type LocomoConversation, type LocomoQuestion, loadLocomo, type QuestionCategory } from './locomo.js';
import { type Figures, promptChars, type QuestionScore, ratio, recallOf, summarise } from './metrics.js';

export const DEFAULT_KS: readonly number[] = [5, 10];

export interface MemoryEvalOptions {
  /** A directory of LoCoMo conversation files (or one file). */
  dir: string;
  /** Cut-offs to score; default 5 and 10. */
  ks?: readonly number[];
  /** Builds the memory under test, fresh and empty, once per scope. */
  memoryFactory: EvalMemoryFactory;
  /** Label of the memory in the report; default "memory". */
  memoryName?: string;
  /** Tokenizer of the BM25 baseline; default lower-cased Unicode words. */
  baselineTokens?: Tokenizer;
  /**
   * true (default): each conversation goes into its own fresh memory, as a household has one;
   * false: all conversations share one memory, which then must keep them apart.
   */
  perConversation?: boolean;
  /** Times recall calls; default the system clock. */
  clock?: Pick<Clock, 'monotonic'>;
  /** Receives one line per finished step, for a progress display. */
  onProgress?: (line: string) => void;
}

/** One question's outcome at one k. */
export interface QuestionOutcome extends QuestionScore {
  /** Evidence ids found among the sources of the k items. */
  found: string[];
}

export interface QuestionResult {
  id: string;
  conversation_id: string;
  category: QuestionCategory;
  question: string;
  evidence: string[];
  /** Keyed by k. */
  memory: Record<string, QuestionOutcome>;
  baseline: Record<string, QuestionOutcome>;
}

export interface FiguresAtK {
  overall: Figures;
  /** Keyed by category number; only categories that have questions. */
  by_category: Record<string, Figures>;
}

export interface SystemResult {
  name: string;
  /** Events ingested (summed over scopes) and the time it took. */
  ingest: { events: number; ms: number };
  settle_ms: number;
  /** Keyed by k. */
  by_k: Record<string, FiguresAtK>;
}

export interface RatioFigures {
  recall: number | null;
  mean_chars: number | null;
  p50_ms: number | null;
  p95_ms: number | null;
}

export interface MemoryEvalResult {
  path: string;
  per_conversation: boolean;
  ks: number[];
  conversations: Array<{
    id: string;
    file: string;
    sessions: number;
    turns: number;
    questions: number;
    skipped: LocomoConversation['skipped'];
  }>;
  questions: number;
  warnings: string[];
  memory: SystemResult;
  baseline: SystemResult;
  /** memory ÷ baseline per k, overall and per category; null where the baseline figure is 0. */
  ratio: Record<string, { overall: RatioFigures; by_category: Record<string, RatioFigures> }>;
  /** Every question with its outcome per system and k. */
  details: QuestionResult[];
}

/** Validated cut-offs: positive integers, ascending, without duplicates. */
export function normaliseKs(ks: readonly number[]): number[] {
  if (ks.length === 0) throw evalError('no k given: expected positive whole numbers such as 5,10');
  for (const k of ks) {
    if (!Number.isInteger(k) || k < 1) throw evalError(`k ${k} is not a positive whole number`, { k });
  }
  return [...new Set(ks)].sort((a, b) => a - b);
}

/** Cut-offs from a command-line list such as "5,10". */
export function parseKs(text: string): number[] {
  const parts = text.split(',').map((part) => part.trim());
  for (const part of parts) {
    if (!/^\d+$/.test(part))
      throw evalError(`k ${JSON.stringify(part)} is not a positive whole number (expected a list such as 5,10)`, { k: part });
  }
  return normaliseKs(parts.map(Number));
}

interface Scope {
  scope: EvalScope;
  events: EvalEvent[];
  questions: LocomoQuestion[];
}

interface SystemRun {
  ingestMs: number;
  settleMs: number;
  events: number;
  /** question id → k → outcome. */
  outcomes: Map<string, Map<number, QuestionOutcome>>;
}

/** Loads the conversations, runs the memory and the baseline on them, and scores both. */
export async function runMemoryEval(options: MemoryEvalOptions): Promise<MemoryEvalResult> {
  const ks = normaliseKs(options.ks ?? DEFAULT_KS);
  const perConversation = options.perConversation ?? true;
  const clock = options.clock ?? systemClock;
  const progress = options.onProgress ?? (() => {});
  const dataset = await loadLocomo(options.dir);
  const scopes = perConversation ? dataset.conversations.map((c) => scopeOf(c.id, [c])) : [scopeOf('all', dataset.conversations)];
  const memoryName = options.memoryName ?? 'memory';
  const memoryRuns: SystemRun[] = [];
  const baselineRuns: SystemRun[] = [];
  for (const scope of scopes) {
    const memory = await options.memoryFactory(scope.scope);
    memoryRuns.push(await runSystem(memory, scope, ks, clock));
    progress(describeRun(scope, memoryName, memoryRuns.at(-1) as SystemRun));
    const baseline = new Bm25Memory(options.baselineTokens === undefined ? {} : { tokens: options.baselineTokens });
    baselineRuns.push(await runSystem(baseline, scope, ks, clock));
    progress(describeRun(scope, 'bm25', baselineRuns.at(-1) as SystemRun));
  }

  const questions = scopes.flatMap((s) => s.questions);
  const details: QuestionResult[] = questions.map((q) => ({
    id: q.id,
    conversation_id: q.conversation_id,
    category: q.category,
    question: q.question,
    evidence: q.evidence,
    memory: outcomesOf(memoryRuns, q.id, ks),
    baseline: outcomesOf(baselineRuns, q.id, ks),
  }));
  const memory = summariseSystem(memoryName, memoryRuns, details, ks, 'memory');
  const baseline = summariseSystem('bm25', baselineRuns, details, ks, 'baseline');
  return {
    path: dataset.path,
    per_conversation: perConversation,
    ks,
    conversations: dataset.conversations.map((c) => ({
      id: c.id,
      file: c.file,
      sessions: c.sessions,
      turns: c.events.length,
      questions: c.questions.length,
      skipped: c.skipped,
    })),
    questions: questions.length,
    warnings: dataset.warnings,
    memory,
    baseline,
    ratio: ratios(memory, baseline, ks),
    details,
  };
}

function scopeOf(label: string, conversations: LocomoConversation[]): Scope {
  // Sharing one memory, conversations interleave on one timeline, as they would have happened.
  const events = conversations.flatMap((c) => c.events);
  if (conversations.length > 1) events.sort((a, b) => a.timestamp - b.timestamp);
  let first = Number.POSITIVE_INFINITY;
  let last = Number.NEGATIVE_INFINITY;
  for (const event of events) {
    first = Math.min(first, event.timestamp);
    last = Math.max(last, event.timestamp);
  }
  return {
    scope: {
      label,
      conversation_ids: conversations.map((c) => c.id),
      event_count: events.length,
      first_timestamp: events.length === 0 ? 0 : first,
      last_timestamp: events.length === 0 ? 0 : last,
    },
    events,
    questions: conversations.flatMap((c) => c.questions),
  };
}

async function runSystem(memory: EvalMemory, scope: Scope, ks: number[], clock: Pick<Clock, 'monotonic'>): Promise<SystemRun> {
  const outcomes = new Map<string, Map<number, QuestionOutcome>>();
  try {
    const ingestStart = clock.monotonic();
    for (const event of scope.events) await memory.ingest(event);
    const settleStart = clock.monotonic();
    await memory.settle();
    const settleEnd = clock.monotonic();
    for (const question of scope.questions) {
      const byK = new Map<number, QuestionOutcome>();
      // One call per k: a memory may choose differently when it has room for fewer items.
      for (const k of ks) {
        const start = clock.monotonic();
        const answer = await memory.recall(question.question, k);
        const ms = clock.monotonic() - start;
        byK.set(k, score(question.evidence, answer.slice(0, k), ms));
      }
      outcomes.set(question.id, byK);
    }
    return { ingestMs: settleStart - ingestStart, settleMs: settleEnd - settleStart, events: scope.events.length, outcomes };
  } finally {
    await memory.close();
  }
}

function score(evidence: readonly string[], items: readonly RecalledItem[], ms: number): QuestionOutcome {
  const sources = new Set(items.flatMap((item) => item.sources));
  return { recall: recallOf(evidence, items), chars: promptChars(items), ms, found: evidence.filter((id) => sources.has(id)) };
}

function describeRun(scope: Scope, name: string, run: SystemRun): string {
  return `${scope.scope.label}: ${name} ingested ${run.events} turns in ${Math.round(run.ingestMs)} ms, settled in ${Math.round(run.settleMs)} ms, answered ${scope.questions.length} questions`;
}

function outcomesOf(runs: SystemRun[], questionId: string, ks: number[]): Record<string, QuestionOutcome> {
  const byK = runs.map((run) => run.outcomes.get(questionId)).find((found) => found !== undefined);
  const result: Record<string, QuestionOutcome> = {};
  for (const k of ks) {
    const outcome = byK?.get(k);
    if (outcome !== undefined) result[String(k)] = outcome;
  }
  return result;
}

function summariseSystem(
  name: string,
  runs: SystemRun[],
  details: QuestionResult[],
  ks: number[],
  side: 'memory' | 'baseline',
): SystemResult {
  const by_k: Record<string, FiguresAtK> = {};
  for (const k of ks) {
    const scoresOf = (list: QuestionResult[]) => list.map((d) => d[side][String(k)]).filter((s): s is QuestionOutcome => s !== undefined);
    const by_category: Record<string, Figures> = {};
    for (const category of categoriesOf(details)) {
      by_category[String(category)] = summarise(scoresOf(details.filter((d) => d.category === category)));
    }
    by_k[String(k)] = { overall: summarise(scoresOf(details)), by_category };
  }
  return {
    name,
    ingest: { events: sum(runs.map((r) => r.events)), ms: sum(runs.map((r) => r.ingestMs)) },
    settle_ms: sum(runs.map((r) => r.settleMs)),
    by_k,
  };
}

function categoriesOf(details: QuestionResult[]): QuestionCategory[] {
  return [...new Set(details.map((d) => d.category))].sort((a, b) => a - b);
}

function sum(values: number[]): number {
  return values.reduce((total, v) => total + v, 0);
}

function ratioOf(memory: Figures, baseline: Figures): RatioFigures {
  return {
    recall: ratio(memory.recall, baseline.recall),
    mean_chars: ratio(memory.mean_chars, baseline.mean_chars),
    p50_ms: ratio(memory.p50_ms, baseline.p50_ms),
    p95_ms: ratio(memory.p95_ms, baseline.p95_ms),
  };
}

function ratios(memory: SystemResult, baseline: SystemResult, ks: number[]): MemoryEvalResult['ratio'] {
  const result: MemoryEvalResult['ratio'] = {};
  for (const k of ks) {
    const m = memory.by_k[String(k)] as FiguresAtK;
    const b = baseline.by_k[String(k)] as FiguresAtK;
    const by_category: Record<string, RatioFigures> = {};
    for (const [category, figures] of Object.entries(m.by_category)) {
      const base = b.by_category[category];
      if (base !== undefined) by_category[category] = ratioOf(figures, base);
    }
    result[String(k)] = { overall: ratioOf(m.overall, b.overall), by_category };
  }
  return result;
}

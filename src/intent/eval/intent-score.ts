/**
 * Scores a recogniser against intent test cases (see intent-tests.ts): a sentence counts as right
 * when the recognised intent name equals the expected one and every slot the file states has an
 * equal value. Extra recognised slots are allowed, because the files state only the slots their
 * authors checked. The recogniser is passed in, so the scorer exists before the engine does.
 */
import type { IntentCase, IntentContext, SlotValue } from './intent-tests.js';

export interface RecognisedIntent {
  name: string;
  slots: Record<string, unknown>;
}

/** The engine under test; `context` says what the satellite knows (its area, a domain filter). */
export type Recognise = (sentence: string, language: string, context: IntentContext) => RecognisedIntent | undefined;

export interface IntentFailure {
  file: string;
  sentence: string;
  expected: { name: string; slots: Record<string, SlotValue> };
  got: RecognisedIntent | null;
}

export interface IntentScore {
  total: number;
  correct: number;
  /** correct / total; 0 when there are no cases. */
  accuracy: number;
  per_intent: Record<string, { total: number; correct: number }>;
  failures: IntentFailure[];
}

type Comparable = string | number | boolean;

/** Strings compare without case or surrounding spaces, and a numeric string equals its number ("50" = 50). */
export function normaliseSlotValue(value: unknown): Comparable | undefined {
  if (typeof value === 'number' || typeof value === 'boolean') return value;
  if (typeof value !== 'string') return undefined;
  const text = value.trim();
  if (text !== '' && Number.isFinite(Number(text))) return Number(text);
  return text.toLowerCase();
}

function alternatives(value: unknown): Comparable[] {
  const list = Array.isArray(value) ? value : [value];
  return list.map(normaliseSlotValue).filter((v): v is Comparable => v !== undefined);
}

/**
 * An expected list means "any one of these" (the data lists two spellings of one name); a
 * recognised list matches when it shares a value with the expected ones.
 */
export function slotMatches(expected: SlotValue, got: unknown): boolean {
  const wanted = alternatives(expected);
  return alternatives(got).some((g) => wanted.includes(g));
}

export function caseMatches(expected: IntentCase['expected'], got: RecognisedIntent | undefined): boolean {
  if (got === undefined || got.name !== expected.name) return false;
  return Object.entries(expected.slots).every(([key, value]) => slotMatches(value, got.slots[key]));
}

/** Runs every case through `recognise` in order; a throwing recogniser counts as no answer. */
export function scoreIntents(cases: readonly IntentCase[], recognise: Recognise): IntentScore {
  const perIntent: IntentScore['per_intent'] = {};
  const failures: IntentFailure[] = [];
  let correct = 0;
  for (const c of cases) {
    const bucket = perIntent[c.expected.name] ?? { total: 0, correct: 0 };
    perIntent[c.expected.name] = bucket;
    bucket.total += 1;
    let got: RecognisedIntent | undefined;
    try {
      got = recognise(c.sentence, c.language, c.context);
    } catch {
      got = undefined;
    }
    if (caseMatches(c.expected, got)) {
      bucket.correct += 1;
      correct += 1;
    } else {
      failures.push({ file: c.file, sentence: c.sentence, expected: c.expected, got: got ?? null });
    }
  }
  const total = cases.length;
  return { total, correct, accuracy: total === 0 ? 0 : correct / total, per_intent: perIntent, failures };
}

const percent = (correct: number, total: number) => (total === 0 ? '-' : `${((100 * correct) / total).toFixed(1)}%`);

/** A plain-text table: one line per intent (name order), then the totals. The JSON form is the score itself. */
export function formatReport(score: IntentScore, title = 'intent recognition'): string {
  const names = Object.keys(score.per_intent).sort();
  const width = Math.max(6, ...names.map((n) => n.length));
  const lines = [`${title}`, `${'intent'.padEnd(width)}  correct/total  accuracy`];
  for (const name of names) {
    const { correct, total } = score.per_intent[name] ?? { correct: 0, total: 0 };
    lines.push(`${name.padEnd(width)}  ${`${correct}/${total}`.padStart(13)}  ${percent(correct, total).padStart(8)}`);
  }
  lines.push(
    `${'total'.padEnd(width)}  ${`${score.correct}/${score.total}`.padStart(13)}  ${percent(score.correct, score.total).padStart(8)}`,
  );
  return lines.join('\n');
}

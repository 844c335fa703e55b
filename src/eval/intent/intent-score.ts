/**
 * Scores a recogniser against intent test cases (see intent-tests.ts): a sentence counts as right
 * when it produced what the case expects — the expected intents in order (each with the expected
 * name and every slot the file states equal; extra recognised slots are allowed, the files state
 * only what their authors checked), no intent for `none`, a question back for `ask`. Given the
 * fixture home, two writings of the same act count as equal (intent-effect.ts: the same entities,
 * the same duration, the shopping list by either intent). Beside
 * accuracy it counts wrong actions (issue 26: a recognised intent that would change something and
 * is not what was expected, the worst outcome) and refusals (no intent and no question). The
 * recogniser is passed in, so the scorer exists before the engine does.
 */
import { QUERY_INTENTS } from '../../intent/query-intents.js';
import { canonicalIntent, type EffectHome, isTargetKey, sameTargets } from './intent-effect.js';
import type { Expectation, IntentCase, IntentContext, SlotValue } from './intent-tests.js';

export interface RecognisedIntent {
  name: string;
  slots: Record<string, unknown>;
}

/** What the engine made of one sentence, when it says more than one intent or nothing. */
export type Understood = { kind: 'intents'; intents: RecognisedIntent[] } | { kind: 'ask' } | { kind: 'none' };

/** The case's context plus, on conversation steps, the conversation they belong to. */
export type EvalContext = IntentContext & { conversation?: string };

/**
 * The engine under test; `context` says what the satellite knows (its area) and, for a step of a
 * conversation, which conversation (earlier steps were given first, in order). A bare intent is
 * one intent; undefined is no intent.
 */
export type Recognise = (sentence: string, language: string, context: EvalContext) => RecognisedIntent | Understood | undefined;

export interface IntentFailure {
  file: string;
  sentence: string;
  expected: { name: string; slots: Record<string, SlotValue> };
  /** What was expected in full (intents, none, ask). */
  expect: Expectation;
  /** One intent, several (a compound), {name: '(ask)'} for a question back, null for none. */
  got: RecognisedIntent | RecognisedIntent[] | null;
  wrong_action: boolean;
}

export interface IntentScore {
  total: number;
  correct: number;
  /** correct / total; 0 when there are no cases. */
  accuracy: number;
  /** Sentences whose recognised intents would change something other than what was expected. */
  wrong_actions: number;
  wrong_action_rate: number;
  /** Sentences that produced no intent and no question. */
  refused: number;
  refusal_rate: number;
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

/**
 * The expected intent's name and every slot it states, compared literally; with `home`, target
 * slots that differ in writing still match when they act on the same entities.
 */
export function caseMatches(expected: IntentCase['expected'], got: RecognisedIntent | undefined, home?: EffectHome): boolean {
  if (got === undefined) return false;
  const want = canonicalIntent(expected.name, expected.slots, home?.shoppingList);
  const have = canonicalIntent(got.name, got.slots, home?.shoppingList);
  if (want.name !== have.name) return false;
  const wanted = Object.entries(want.slots as Record<string, SlotValue>);
  if (wanted.every(([key, value]) => slotMatches(value, have.slots[key]))) return true;
  if (home === undefined) return false;
  return (
    wanted.every(([key, value]) => isTargetKey(key) || slotMatches(value, have.slots[key])) &&
    sameTargets(want.slots as Record<string, SlotValue>, have.slots, home)
  );
}

/** Any answer of the recogniser in the scorer's one shape. */
export function understood(got: RecognisedIntent | Understood | undefined): Understood {
  if (got === undefined) return { kind: 'none' };
  if ('kind' in got && (got.kind === 'intents' || got.kind === 'ask' || got.kind === 'none')) return got as Understood;
  return { kind: 'intents', intents: [got as RecognisedIntent] };
}

/** Whether `got` is exactly what `expect` asks for. */
export function expectationMet(expect: Expectation, got: Understood, home?: EffectHome): boolean {
  if (expect.kind !== 'intents' || got.kind !== 'intents') return expect.kind === got.kind;
  return got.intents.length === expect.intents.length && expect.intents.every((e, i) => caseMatches(e, got.intents[i], home));
}

/**
 * A recognised intent that changes something and matches none of the expected intents; with
 * none or ask expected, any acting intent is one.
 */
export function isWrongAction(expect: Expectation, got: Understood, home?: EffectHome): boolean {
  if (got.kind !== 'intents') return false;
  const wanted = expect.kind === 'intents' ? expect.intents : [];
  return got.intents.some((intent) => !QUERY_INTENTS.has(intent.name) && !wanted.some((e) => caseMatches(e, intent, home)));
}

function shownGot(got: Understood): IntentFailure['got'] {
  if (got.kind === 'none') return null;
  if (got.kind === 'ask') return { name: '(ask)', slots: {} };
  return got.intents.length === 1 ? (got.intents[0] as RecognisedIntent) : got.intents;
}

/**
 * Runs every case through `recognise` in order; a throwing recogniser counts as no answer. With
 * `home` (the fixture home the recogniser was built on) answers are compared by effect.
 */
export function scoreIntents(cases: readonly IntentCase[], recognise: Recognise, home?: EffectHome): IntentScore {
  const perIntent: IntentScore['per_intent'] = {};
  const failures: IntentFailure[] = [];
  let correct = 0;
  let wrongActions = 0;
  let refused = 0;
  for (const c of cases) {
    const bucket = perIntent[c.expected.name] ?? { total: 0, correct: 0 };
    perIntent[c.expected.name] = bucket;
    bucket.total += 1;
    let got: Understood;
    try {
      const context: EvalContext = c.conversation === undefined ? c.context : { ...c.context, conversation: c.conversation.id };
      got = understood(recognise(c.sentence, c.language, context));
    } catch {
      got = { kind: 'none' };
    }
    // Legacy cases built by hand carry only `expected`.
    const expect: Expectation = c.expect ?? { kind: 'intents', intents: [c.expected] };
    const wrong = isWrongAction(expect, got, home);
    if (wrong) wrongActions += 1;
    if (got.kind === 'none') refused += 1;
    if (expectationMet(expect, got, home)) {
      bucket.correct += 1;
      correct += 1;
    } else {
      failures.push({ file: c.file, sentence: c.sentence, expected: c.expected, expect, got: shownGot(got), wrong_action: wrong });
    }
  }
  const total = cases.length;
  const rate = (n: number) => (total === 0 ? 0 : n / total);
  return {
    total,
    correct,
    accuracy: rate(correct),
    wrong_actions: wrongActions,
    wrong_action_rate: rate(wrongActions),
    refused,
    refusal_rate: rate(refused),
    per_intent: perIntent,
    failures,
  };
}

/** Adds `part` into `into` (counts, buckets, failures in order) and recomputes the rates. */
export function mergeScore(into: IntentScore, part: IntentScore): IntentScore {
  into.total += part.total;
  into.correct += part.correct;
  into.wrong_actions += part.wrong_actions;
  into.refused += part.refused;
  into.failures.push(...part.failures);
  for (const [intent, counts] of Object.entries(part.per_intent)) {
    const bucket = into.per_intent[intent] ?? { total: 0, correct: 0 };
    bucket.total += counts.total;
    bucket.correct += counts.correct;
    into.per_intent[intent] = bucket;
  }
  const rate = (n: number) => (into.total === 0 ? 0 : n / into.total);
  into.accuracy = rate(into.correct);
  into.wrong_action_rate = rate(into.wrong_actions);
  into.refusal_rate = rate(into.refused);
  return into;
}

export function emptyScore(): IntentScore {
  return {
    total: 0,
    correct: 0,
    accuracy: 0,
    wrong_actions: 0,
    wrong_action_rate: 0,
    refused: 0,
    refusal_rate: 0,
    per_intent: {},
    failures: [],
  };
}

const percent = (correct: number, total: number) => (total === 0 ? '-' : `${((100 * correct) / total).toFixed(1)}%`);

/** A plain-text table: one line per intent (name order), then the totals and the two rates. The JSON form is the score itself. */
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
  lines.push(
    `wrong-action rate ${percent(score.wrong_actions, score.total)} (${score.wrong_actions}), refusal rate ${percent(score.refused, score.total)} (${score.refused})`,
  );
  return lines.join('\n');
}

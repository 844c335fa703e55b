/**
 * The Verify stage: what extraction produced is checked against the sentence before anything
 * reaches memory. Rejected: entity names outside 2–50 characters (the speaker token and plain
 * numbers excepted), template text, objects that are not in the sentence, pronouns nobody can
 * resolve later (他, it, they, this…; the speaker is resolved, so 我 / I / my stay), self-loops.
 * Duplicates keep their best score.
 */
import type { Candidate, SpeakerContext } from './candidate.js';
import { SPEAKER_TOKENS } from './candidate.js';
import { isStopWord } from './stop-words.js';
import type { Triple } from './types.js';

const MIN_NAME = 2;
const MAX_NAME = 50;
const MAX_RELATION = 30;

const CHINESE_PRONOUNS = new Set(
  '他 她 它 他们 她们 它们 你 您 你们 这 那 这个 那个 这些 那些 这里 那里 这儿 那儿 谁 什么 哪 哪里 哪个 自己 大家 人家 别人 我们 咱们 某人 对方 其 之'.split(
    ' ',
  ),
);
/** 他的车, 她女儿, 你家: owned by someone unresolved. */
const CHINESE_UNRESOLVED_OWNER = /^(?:他|她|它|你|您)/u;
const CHINESE_DEMONSTRATIVE = /^[这那][个只台些里儿位件条种样]/u;
const ENGLISH_PRONOUNS = new Set(
  'he him his she her hers it its they them their theirs you your yours this that these those someone somebody something anyone anything everyone everything we us one who what which there here'.split(
    ' ',
  ),
);
const ENGLISH_UNRESOLVED_OWNER = /^(?:his|her|its|their|your|this|that|these|those)\s/i;
const TEMPLATE_CHARS = /[[\]【】<>{}|]/u;
const NUMBER = /^\p{N}+$/u;

function length(text: string): number {
  return Array.from(text).length;
}

function isUnresolved(name: string): boolean {
  const lower = name.toLowerCase();
  if (CHINESE_PRONOUNS.has(name) || ENGLISH_PRONOUNS.has(lower)) return true;
  return CHINESE_UNRESOLVED_OWNER.test(name) || CHINESE_DEMONSTRATIVE.test(name) || ENGLISH_UNRESOLVED_OWNER.test(name);
}

function normalise(text: string): string {
  return text.toLowerCase().replace(/\s+/gu, ' ').trim();
}

export class TripleVerifier {
  private readonly speakerNames: ReadonlySet<string>;

  constructor(context: SpeakerContext) {
    const names = new Set<string>([SPEAKER_TOKENS.zh, SPEAKER_TOKENS.en]);
    if (context.speaker !== undefined) names.add(context.speaker);
    this.speakerNames = names;
  }

  private nameIsValid(name: string): boolean {
    if (this.speakerNames.has(name)) return true;
    const size = length(name);
    if (size > MAX_NAME || name.trim() !== name) return false;
    if (size < MIN_NAME && !NUMBER.test(name)) return false;
    if (TEMPLATE_CHARS.test(name) || isUnresolved(name)) return false;
    return !isStopWord(name.toLowerCase());
  }

  /** Why a candidate is rejected, or undefined when it passes. */
  rejection(candidate: Candidate, sentence: string): string | undefined {
    if (!this.nameIsValid(candidate.subject)) return 'subject';
    if (!this.nameIsValid(candidate.object)) return 'object';
    if (candidate.relation === '' || length(candidate.relation) > MAX_RELATION) return 'relation';
    if (!normalise(sentence).includes(normalise(candidate.objectSurface))) return 'object not in sentence';
    if (normalise(candidate.subject) === normalise(candidate.object)) return 'self-reference';
    return undefined;
  }

  /** The candidates that pass, as triples, best score per (subject, relation, object). */
  verify(candidates: readonly Candidate[], sentence: string): Triple[] {
    const best = new Map<string, Triple>();
    for (const candidate of candidates) {
      if (this.rejection(candidate, sentence) !== undefined) continue;
      const key = `${normalise(candidate.subject)}\u0000${candidate.relation}\u0000${normalise(candidate.object)}`;
      const existing = best.get(key);
      if (existing !== undefined && existing.confidence >= candidate.confidence) continue;
      const triple: Triple = {
        subject: candidate.subject,
        relation: candidate.relation,
        object: candidate.object,
        confidence: candidate.confidence,
        sentence,
        method: candidate.method,
      };
      if (candidate.subjectType !== undefined) triple.subject_type = candidate.subjectType;
      if (candidate.objectType !== undefined) triple.object_type = candidate.objectType;
      best.set(key, triple);
    }
    return [...best.values()];
  }
}

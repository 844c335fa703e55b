/**
 * The English rule path (method `english`), the counterpart of the Chinese template parser:
 * clauses of the shape [subject NP] [aux/negation] verb [preposition] [object NP], with copulas
 * ("X is Y", "X is in Y", "X is allergic to Y", "X is called Y", "X is N years old") and
 * possessives ("my X is Y", "Emma's X is Y" → owner, X, Y). Scores stay in the template range:
 * canonical relations 0.7, possessive attributes 0.65, other verbs and places 0.6, plain "is" 0.55.
 */
import type { Candidate, SpeakerContext } from './candidate.js';
import { objectTypeFor, SPEAKER_TOKENS } from './candidate.js';
import { tagEnglish, verbLemma } from './english-tagger.js';
import { CANONICAL_RELATIONS, englishAttribute, englishRelation, isEnglishOccupation } from './relation-lexicon.js';
import type { TaggedWord } from './types.js';

const SCORE_CANONICAL = 0.7;
const SCORE_ATTRIBUTE = 0.65;
const SCORE_VERB = 0.6;
const SCORE_COPULA = 0.55;
const CANONICAL: ReadonlySet<string> = new Set(CANONICAL_RELATIONS);

const PLACE_PREPOSITIONS = new Set(['in', 'on', 'at', 'under', 'near', 'behind', 'inside', 'outside', 'beside', 'above', 'below', 'by']);
const TIME_NOUNS = new Set(
  'year years month months week weeks weekend weekends day days morning mornings afternoon afternoons evening evenings night nights time summer winter spring autumn fall monday tuesday wednesday thursday friday saturday sunday'.split(
    ' ',
  ),
);
const TIME_MODIFIERS = new Set(['last', 'next', 'this', 'every', 'each', 'all']);
const ARTICLES = new Set(['the', 'a', 'an']);
const NEGATIONS = new Set(['not', "n't", 'never']);
const SPEAKER_PRONOUNS = new Set(['i', 'me']);
const NAMING_VERBS = new Set(['call', 'name']);
const NP_TAGS = /^(?:DT|PRP\$|JJ|NN|NNS|NNP|CD|POS|VBG)$/;
/** Verbs that report thoughts, speech, wishes or requests: what follows is no fact about the subject. */
const NO_FACT_VERBS = new Set(
  'think believe know guess hope say tell feel wish suppose mean ask remind want need wonder seem plan try let help remember forget'.split(
    ' ',
  ),
);
/** Family words that an appositive name may follow (my daughter Lily). */
const KIN_NOUNS = new Set(
  'daughter son wife husband brother sister mother father mom dad mum grandma grandpa grandmother grandfather aunt uncle cousin niece nephew friend neighbor neighbour boss partner dog cat puppy kitten'.split(
    ' ',
  ),
);
/** Possessive attributes whose value may be an adjective (my favorite color is blue). */
const ADJECTIVE_ATTRIBUTE = /\b(?:favou?rite|colou?r)\b/i;
const HEAD_TAGS = /^(?:NN|NNS|NNP|CD|PRP)$/;

interface Token extends TaggedWord {
  lower: string;
}

/** Joins words the way they were written: no space before 's or n't. */
function joinWords(tokens: readonly Token[]): string {
  let text = '';
  for (const token of tokens) {
    const glued = token.tag === 'POS' || token.word.startsWith("'");
    text += text === '' || glued ? token.word : ` ${token.word}`;
  }
  return text;
}

/** The noun phrase starting at `start`: its tokens and where it ends. */
function nounPhrase(tokens: readonly Token[], start: number): { phrase: Token[]; end: number } {
  const first = tokens[start];
  if (first === undefined) return { phrase: [], end: start };
  if (first.tag === 'PRP') return { phrase: [first], end: start + 1 };
  let end = start;
  let sawHead = false;
  while (end < tokens.length) {
    const token = tokens[end] as Token;
    if (!NP_TAGS.test(token.tag)) break;
    if (TIME_MODIFIERS.has(token.lower) && TIME_NOUNS.has(tokens[end + 1]?.lower ?? '')) break;
    if (TIME_NOUNS.has(token.lower) && sawHead && !/^(?:NNP)$/.test(token.tag)) break;
    if ((token.tag === 'DT' || token.tag === 'PRP$') && sawHead) break;
    if (token.tag === 'VBG' && sawHead) break;
    if (HEAD_TAGS.test(token.tag)) sawHead = true;
    end++;
  }
  // "Mrs. Lee", "May 3rd": keep going through proper-name continuations only.
  const phrase = tokens.slice(start, end);
  while (phrase.length > 0 && !HEAD_TAGS.test(phrase[phrase.length - 1]?.tag ?? '') && phrase[phrase.length - 1]?.tag !== 'VBG') {
    phrase.pop();
  }
  return { phrase, end: start + phrase.length };
}

function withoutArticle(phrase: readonly Token[]): Token[] {
  return ARTICLES.has(phrase[0]?.lower ?? '') ? phrase.slice(1) : phrase.slice();
}

class ClauseReader {
  constructor(
    private readonly tokens: readonly Token[],
    private readonly context: SpeakerContext,
  ) {}

  speakerName(): string {
    return this.context.speaker ?? SPEAKER_TOKENS.en;
  }

  /** I → the speaker; my X → the speaker's X. */
  entity(phrase: readonly Token[]): string {
    const bare = withoutArticle(phrase);
    const first = bare[0];
    if (first === undefined) return '';
    if (bare.length === 1 && SPEAKER_PRONOUNS.has(first.lower)) return this.speakerName();
    if (first.lower === 'my' && bare.length > 1) {
      const owned = joinWords(bare.slice(1));
      return this.context.speaker === undefined ? `my ${owned}` : `${this.context.speaker}'s ${owned}`;
    }
    return joinWords(bare);
  }

  /** my X → [speaker, X]; Emma's X → [Emma, X]; undefined otherwise. */
  possessive(phrase: readonly Token[]): [string, string] | undefined {
    const bare = withoutArticle(phrase);
    // The last 's decides: "my son's teacher" is the son's teacher, owned by "my son".
    const mark = bare.map((t) => t.tag).lastIndexOf('POS');
    if (mark > 0 && mark < bare.length - 1) return [this.entity(bare.slice(0, mark)), joinWords(bare.slice(mark + 1))];
    if (bare[0]?.lower === 'my' && bare.length > 1) return [this.speakerName(), joinWords(bare.slice(1))];
    return undefined;
  }

  extract(): Candidate[] {
    const { tokens } = this;
    const verbAt = tokens.findIndex((t) => t.tag.startsWith('VB') && t.tag !== 'VBG');
    const modalAt = tokens.findIndex((t) => t.tag === 'MD');
    const groupStart = modalAt >= 0 && (verbAt < 0 || modalAt < verbAt) ? modalAt : verbAt;
    if (groupStart <= 0) return [];
    // The subject is the noun phrase right before the verb group (adverbs such as "really" skipped);
    // "My wife and I", "Both Mom and Dad" give one subject each.
    let subjectEnd = groupStart;
    while (subjectEnd > 0 && tokens[subjectEnd - 1]?.tag === 'RB') subjectEnd--;
    const subjects: Token[][] = [];
    let cursor = subjectEnd;
    for (;;) {
      let subjectStart = cursor;
      while (subjectStart > 0 && NP_TAGS.test(tokens[subjectStart - 1]?.tag ?? '') && tokens[subjectStart - 1]?.tag !== 'VBG')
        subjectStart--;
      if (tokens[cursor - 1]?.tag === 'PRP') subjectStart = cursor - 1;
      const phrase = tokens.slice(subjectStart, cursor).filter((t) => !(t.lower === 'both' || t.lower === 'either'));
      if (phrase.length === 0 || !HEAD_TAGS.test(phrase[phrase.length - 1]?.tag ?? '')) return [];
      subjects.unshift(phrase);
      if (tokens[subjectStart - 1]?.tag !== 'CC' || subjectStart < 2) {
        // "The temperature at home is…": a subject after a preposition is part of a longer phrase.
        if (subjectStart > 0 && /^(?:IN|TO)$/.test(tokens[subjectStart - 1]?.tag ?? '')) return [];
        break;
      }
      cursor = subjectStart - 1;
    }

    // Verb group: modals, do-support, negation, adverbs, auxiliaries; the last verb is the main one.
    let negated = false;
    let main = -1;
    let passive = false;
    let i = groupStart;
    while (i < tokens.length) {
      const token = tokens[i] as Token;
      if (NEGATIONS.has(token.lower)) negated = true;
      else if (token.tag === 'RB' || token.tag === 'MD') {
        // adverbs and modals belong to the group
      } else if (token.tag.startsWith('VB') && token.tag !== 'VBG') {
        if (main >= 0 && verbLemma(tokens[main]?.word ?? '') === 'be' && token.tag === 'VBN') passive = true;
        else if (main >= 0 && token.tag === 'VBD' && verbLemma(tokens[main]?.word ?? '') === 'be') passive = true;
        main = i;
      } else if (token.tag === 'VBG' && main >= 0 && verbLemma(tokens[main]?.word ?? '') === 'be' && tokens[i + 1]?.tag !== 'NN') {
        main = i;
      } else break;
      i++;
    }
    if (main < 0) return [];
    const lemma = verbLemma(tokens[main]?.word ?? '');
    if (NO_FACT_VERBS.has(lemma)) return [];
    return subjects.flatMap((phrase) => {
      const { subjectPhrase, named } = this.apposition(phrase);
      return [...named, ...this.predicate(subjectPhrase, lemma, i, negated, passive)];
    });
  }

  /** "my daughter Lily": Lily is the subject, and the daughter's name is Lily. */
  private apposition(phrase: Token[]): { subjectPhrase: Token[]; named: Candidate[] } {
    const nameStart = phrase.findIndex((t, k) => t.tag === 'NNP' && k > 0 && KIN_NOUNS.has(phrase[k - 1]?.lower ?? ''));
    if (nameStart < 0 || phrase.slice(nameStart).some((t) => t.tag !== 'NNP')) return { subjectPhrase: phrase, named: [] };
    const name = phrase.slice(nameStart);
    return {
      subjectPhrase: name,
      named: [this.candidate(this.entity(phrase.slice(0, nameStart)), 'name', joinWords(name), SCORE_CANONICAL)],
    };
  }

  private predicate(subjectPhrase: Token[], lemma: string, rest: number, negated: boolean, passive: boolean): Candidate[] {
    const { tokens } = this;
    const subject = this.entity(subjectPhrase);

    if (passive) {
      // "is called Emma" names; other passives ("was bought last year") state no relation we keep.
      const name = NAMING_VERBS.has(lemma) ? nounPhrase(tokens, rest).phrase : [];
      return name.length === 0 ? [] : [this.candidate(subject, 'name', joinWords(name), SCORE_CANONICAL)];
    }
    if (lemma === 'be') return this.copula(subject, subjectPhrase, rest, negated);
    if (lemma === 'do' || (lemma === 'have' && tokens[rest]?.tag === 'TO')) return [];

    // "live in X", "go to X": a preposition right after the verb joins the relation.
    let preposition: string | undefined;
    let objectStart = rest;
    const next = tokens[rest];
    if (next !== undefined && (next.tag === 'IN' || next.tag === 'TO') && NP_TAGS.test(tokens[rest + 1]?.tag ?? '')) {
      preposition = next.lower;
      objectStart = rest + 1;
    }
    const object = this.objectPhrase(objectStart);
    if (object.length === 0) return [];
    let relation = englishRelation(lemma, preposition, negated);
    // "The piano lesson moved to Saturday": only people and pets live somewhere.
    if (relation === 'lives_in' && !this.isAnimate(subjectPhrase)) relation = `${lemma} ${preposition ?? ''}`.trim();
    const score = CANONICAL.has(relation) ? SCORE_CANONICAL : SCORE_VERB;
    return [this.candidate(subject, relation, this.entity(object), score, joinWords(withoutArticle(object)))];
  }

  /** A person or pet: a pronoun, a name, or a family word at the head. */
  private isAnimate(phrase: readonly Token[]): boolean {
    const head = phrase[phrase.length - 1];
    if (head === undefined) return false;
    if (head.tag === 'PRP' || head.tag === 'NNP') return true;
    const noun = head.lower.replace(/s$/, '');
    return (
      KIN_NOUNS.has(noun) ||
      /^(?:parent|kid|child|children|people|family|grandparent)$/.test(head.lower) ||
      /^(?:parent|kid|grandparent)$/.test(noun)
    );
  }

  /** An object phrase; a gerund takes its own object along (enjoy [cooking Italian food]). */
  private objectPhrase(start: number): Token[] {
    const first = this.tokens[start];
    if (first?.tag === 'VBG') {
      const after = nounPhrase(this.tokens, start + 1).phrase;
      return [first, ...after];
    }
    return nounPhrase(this.tokens, start).phrase;
  }

  private copula(subject: string, subjectPhrase: readonly Token[], start: number, negated: boolean): Candidate[] {
    const { tokens } = this;
    const first = tokens[start];
    if (first === undefined) return [];
    if (first.lower === 'allergic' && tokens[start + 1]?.lower === 'to') {
      const object = this.objectPhrase(start + 2);
      return object.length === 0 ? [] : [this.candidate(subject, 'allergic_to', joinWords(withoutArticle(object)), SCORE_CANONICAL)];
    }
    if (PLACE_PREPOSITIONS.has(first.lower) && first.tag === 'IN') {
      const object = nounPhrase(tokens, start + 1).phrase;
      return object.length === 0 ? [] : [this.candidate(subject, 'located_in', joinWords(withoutArticle(object)), SCORE_VERB)];
    }
    if (first.tag === 'CD' && /^years?$/i.test(tokens[start + 1]?.word ?? '') && tokens[start + 2]?.lower === 'old') {
      return [this.candidate(subject, 'age', first.word, SCORE_CANONICAL)];
    }
    if (negated) return [];
    let object = nounPhrase(tokens, start).phrase;
    // "a vegetarian", "blue": adjectives as the whole complement.
    let adjectival = false;
    if (object.length === 0) {
      let end = start;
      while (end < tokens.length && /^(?:DT|JJ)$/.test(tokens[end]?.tag ?? '')) end++;
      object = tokens.slice(start, end);
      adjectival = true;
    }
    const bare = withoutArticle(object);
    if (bare.length === 0) return [];
    const objectText = joinWords(bare);
    const hasArticle = bare.length < object.length;
    const owned = this.possessive(subjectPhrase);
    // "Our cat is cute", "Grandpa is 80": a bare adjective, or a bare number about a person, is no
    // fact we can name a relation for ("the password is 12345678" is).
    const bareNumber = bare.every((t) => t.tag === 'CD');
    if (owned === undefined && !hasArticle && (adjectival || (bareNumber && this.isAnimate(subjectPhrase)))) return [];
    // "Mom's pot roast is delicious" is an opinion; "my favorite color is blue" is a fact.
    if (adjectival && !hasArticle && !ADJECTIVE_ATTRIBUTE.test(owned?.[1] ?? '')) return [];
    if (object[0]?.lower !== 'the' && isEnglishOccupation(objectText) && bare.every((t) => t.tag !== 'NNP' && t.tag !== 'PRP$')) {
      return [this.candidate(subject, 'occupation', objectText, SCORE_CANONICAL)];
    }
    if (owned !== undefined) {
      const relation = englishAttribute(owned[1]);
      return [
        this.candidate(owned[0], relation, this.entity(object), CANONICAL.has(relation) ? SCORE_CANONICAL : SCORE_ATTRIBUTE, objectText),
      ];
    }
    // A bare singular noun after "is" is usually an adjective the tagger did not know (is dim).
    const determined = hasArticle || object[0]?.tag === 'PRP$' || /^(?:NNP|NNS|CD)$/.test(bare[bare.length - 1]?.tag ?? '');
    if (!determined) return [];
    return [this.candidate(subject, 'is', this.entity(object), SCORE_COPULA, objectText)];
  }

  private candidate(subject: string, relation: string, object: string, confidence: number, surface = object): Candidate {
    const found: Candidate = { subject, relation, object, objectSurface: surface, confidence, method: 'english' };
    const objectType = objectTypeFor(relation);
    if (objectType !== undefined) found.objectType = objectType;
    return found;
  }
}

/** Splits at , ; : and at "and"/"but" when a new subject follows (My name is Carol and I am 35). */
function clauses(tokens: readonly Token[]): Token[][] {
  const out: Token[][] = [];
  let current: Token[] = [];
  tokens.forEach((token, i) => {
    const next = tokens[i + 1];
    const newSubject = next !== undefined && (next.tag === 'PRP' || next.tag === 'PRP$' || next.tag === 'NNP');
    if (token.tag === '.' || (token.tag === 'CC' && newSubject && current.some((t) => t.tag.startsWith('VB')))) {
      if (current.length > 0) out.push(current);
      current = [];
      return;
    }
    current.push(token);
  });
  if (current.length > 0) out.push(current);
  return out;
}

/** Candidates from one English sentence. */
export function extractEnglish(sentence: string, context: SpeakerContext): Candidate[] {
  const tokens = tagEnglish(sentence).map((t) => ({ ...t, lower: t.word.toLowerCase() }));
  return clauses(tokens).flatMap((clause) => new ClauseReader(clause, context).extract());
}

/**
 * Near-name resolution for the intent recogniser: when no template matches exactly because a name
 * was misheard or misspelt ("kitchen lihgt", "厨房等"), the recogniser matches again with the name
 * and area lists open, and this module says which registered name or alias the words were closest
 * to, how alike they are (0..1), and whether that choice is clear enough to act on. Text is compared
 * whole (character edit distance, a swap of neighbours counting one edit) and, when both sides have
 * as many words, word by word in any order (Latin words by spaces, Chinese words by jieba), so a
 * dropped or swapped character and an alias said in another word order both come out close, while
 * an unrelated word or half a name does not. Similarity is 1 - edits / the longer length.
 */
import { jiebaSegmenter } from '../nlp/jieba-runtime.js';
import { bagDistance, CharacterBag, EditDistancePattern, editDistance } from './edit-distance.js';
import { isCjk, normalizeText } from './text-normalize.js';

/** Splits normalised text into words; Chinese has no spaces, so it needs a segmenter. */
export type WordSplitter = (text: string) => readonly string[];

export interface NearCandidate {
  value: string;
  phrases: readonly string[];
}

export interface NearResolution {
  value: string;
  /** The phrase (name or alias, normalised) the words were closest to. */
  phrase: string;
  similarity: number;
}

/**
 * How much the best name must beat the next different name by (or by one edit, if less): "desk
 * lamx" is as close to "Desk Lamp" as to "Desk Lamb", and a guess would switch the wrong device.
 */
export const NEAR_MARGIN = 0.05;

/**
 * Latin words this short are near too much ("it" is one edit from "kit", "all" from "hall"): said
 * names shorter than this many letters only ever match exactly. A Chinese character carries more,
 * and two characters with one wrong are already too far (0.5).
 */
const MIN_LATIN_LETTERS = 4;

/**
 * An alias said with its words in another order ("light kitchen") is close but not the same text;
 * this keeps it below an in-order near miss of the same size.
 */
const ANY_ORDER_WEIGHT = 0.95;

/**
 * The most a near name is trusted when one of its words was replaced rather than misspelt: "dining
 * room blinds" is close to "Living Room Blinds" letter by letter (0.89) but names another room. A
 * slip changes a letter or two of a word; a different word changes more. Below the engine's
 * min_confidence (0.85), so such a guess is asked about ("did you mean …?"), never acted on.
 */
export const REPLACED_WORD_SIMILARITY = 0.8;

/**
 * Whether `said` has a Latin word that is no slip of the word of `phrase` it stands for: with as
 * many words on both sides, some said word is neither in the phrase nor within one edit per four
 * letters (at least one) of any phrase word. Chinese text is left alone (a near-homophone changes a
 * whole character and is a real slip).
 */
export function replacesAWord(said: string, phrase: string): boolean {
  if ([...said, ...phrase].some((ch) => isCjk(ch))) return false;
  const saidWords = said.split(/\s+/u).filter((w) => w !== '');
  const phraseWords = phrase.split(/\s+/u).filter((w) => w !== '');
  if (saidWords.length !== phraseWords.length || saidWords.length < 2) return false;
  return saidWords.some((word) => {
    if (phraseWords.includes(word)) return false;
    const allowed = Math.max(1, Math.floor(word.length / 4));
    return !phraseWords.some((other) => editDistance(word, other, allowed) <= allowed);
  });
}

/**
 * Words matched in any order: each word of `a` pairs with the most alike unused word of `b`, each
 * pair counts its similarity times its longer word's length, and the sum is taken over the longer
 * side's letters, so a missing or extra word costs its whole length ("garage" is far from "garage
 * door" and "kitchen" from "kitchen light": half a name is not the name).
 */
export function wordSimilarity(a: readonly string[], b: readonly string[]): number {
  const letters = (words: readonly string[]): number => words.reduce((sum, word) => sum + word.length, 0);
  const total = Math.max(letters(a), letters(b));
  if (total === 0) return 1;
  const pairs: Array<{ i: number; j: number; similarity: number }> = [];
  a.forEach((x, i) => {
    const pattern = new EditDistancePattern(x);
    b.forEach((y, j) => {
      const longer = Math.max(x.length, y.length);
      const similarity = longer === 0 ? 1 : 1 - pattern.distanceTo(y) / longer;
      if (similarity > 0) pairs.push({ i, j, similarity });
    });
  });
  pairs.sort((p, q) => q.similarity - p.similarity);
  const usedA = new Set<number>();
  const usedB = new Set<number>();
  let matched = 0;
  for (const { i, j, similarity } of pairs) {
    if (usedA.has(i) || usedB.has(j)) continue;
    usedA.add(i);
    usedB.add(j);
    matched += similarity * Math.max((a[i] as string).length, (b[j] as string).length);
  }
  return matched / total;
}

/** Text's length with and without its spaces (the word measure does not count them). */
interface Lengths {
  chars: number;
  letters: number;
}

function lengthsOf(text: string): Lengths {
  let spaces = 0;
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 32) spaces += 1;
  return { chars: text.length, letters: text.length - spaces };
}

/** Neither measure can exceed the shorter length over the longer one. */
function lengthRatio(a: Lengths, b: Lengths): number {
  return Math.max(ratio(a.chars, b.chars), ratio(a.letters, b.letters));
}

function ratio(x: number, y: number): number {
  return x === y ? 1 : x < y ? x / y : y / x;
}

/** The index of the first phrase at least `chars` long (phrases sorted by length). */
function firstAtLeast(phrases: readonly Phrase[], chars: number): number {
  let lo = 0;
  let hi = phrases.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((phrases[mid] as Phrase).lengths.chars < chars) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Latin text splits at spaces; text with Chinese characters goes through jieba. */
export const defaultWordSplitter: WordSplitter = (text) => {
  if (![...text].some((ch) => isCjk(ch))) return text.split(' ').filter((word) => word !== '');
  return jiebaSegmenter()
    .cut(text, false)
    .map((word) => word.trim())
    .filter((word) => word !== '');
};

/**
 * The registered names (or areas) of one home, ready to be compared with what was said. Phrases
 * are normalised once; their words are split the first time they are needed (jieba loads lazily).
 */
/** A registered phrase, with what comparing it needs worked out once per home. */
interface Phrase {
  value: string;
  phrase: string;
  lengths: Lengths;
  pattern: EditDistancePattern;
}

export class NearNameIndex {
  /** Shortest first, so a said text's length window is one slice (see resolve). */
  private readonly phrases: readonly Phrase[];
  private readonly mostSpaces: number;
  private readonly words = new Map<string, readonly string[]>();
  private readonly splitWords: WordSplitter;

  constructor(candidates: readonly NearCandidate[], splitWords: WordSplitter = defaultWordSplitter) {
    this.splitWords = splitWords;
    const seen = new Set<string>();
    const phrases: Phrase[] = [];
    for (const { value, phrases: said } of candidates) {
      for (const raw of said.length > 0 ? said : [value]) {
        const phrase = normalizeText(raw);
        const key = `${value}\u0001${phrase}`;
        if (phrase === '' || seen.has(key)) continue;
        seen.add(key);
        phrases.push({ value, phrase, lengths: lengthsOf(phrase), pattern: new EditDistancePattern(phrase) });
      }
    }
    this.phrases = phrases.sort((x, y) => x.lengths.chars - y.lengths.chars);
    this.mostSpaces = Math.max(0, ...phrases.map((p) => p.lengths.chars - p.lengths.letters));
  }

  /**
   * How alike the normalised `said` and `phrase` are, 0..1 (1 only for the same text). Anything
   * below `floor` may come back as 0: the work to tell 0.3 from 0.4 is wasted on a name not meant.
   */
  similarity(said: string, phrase: string, floor = 0, bagged = bagDistance(said, phrase), pattern?: EditDistancePattern): number {
    const longer = Math.max(said.length, phrase.length);
    const atMost = Math.floor((1 - floor) * longer + 1e-9);
    // `pattern` is the phrase's: the distance is the same both ways round.
    const distance = bagged > atMost ? longer : (pattern?.distanceTo(said, atMost) ?? editDistance(said, phrase, atMost));
    const whole = 1 - Math.min(longer, distance) / longer;
    if (whole === 1 || !(said.includes(' ') || isCjk(said[0]))) return whole;
    // Words paired in any order share at most the letters the two texts share (bagDistance), so
    // when even that cannot beat what is known, the words are not compared.
    const letters = Math.max(lengthsOf(said).letters, lengthsOf(phrase).letters);
    if (letters === 0 || ANY_ORDER_WEIGHT * (1 - bagged / letters) <= Math.max(whole, floor)) return whole;
    // The same words in another order ("lamp living room"); extra or missing words are edits above.
    const saidWords = this.wordsOf(said);
    const phraseWords = this.wordsOf(phrase);
    if (saidWords.length < 2 || saidWords.length !== phraseWords.length) return whole;
    return Math.max(whole, ANY_ORDER_WEIGHT * wordSimilarity(saidWords, phraseWords));
  }

  /**
   * The registered value `said` is closest to, when it is at least `minSimilarity` alike and
   * clearly closer than any other value (by NEAR_MARGIN, or by one edit for a name so long that an
   * edit weighs less: "kitchen lihgt 1" is one swap from Kitchen Light 1 and two edits from
   * Kitchen Light 2); undefined otherwise (nothing close, or two names equally so).
   */
  resolve(said: string, minSimilarity: number): NearResolution | undefined {
    const text = normalizeText(said);
    if (text === '') return undefined;
    const lengths = lengthsOf(text);
    if (lengths.letters < MIN_LATIN_LETTERS && ![...text].some((ch) => isCjk(ch))) {
      // Short words still count when said exactly (the area in "turn on the lihgt in the den").
      const same = new Set(this.phrases.filter((p) => p.phrase === text).map((p) => p.value));
      const [value] = same;
      return same.size === 1 && value !== undefined ? { value, phrase: text, similarity: 1 } : undefined;
    }
    const bestByValue = new Map<string, NearResolution>();
    // A rival within the margin of a winner at minSimilarity can be this far down, and no lower.
    const floor = minSimilarity - NEAR_MARGIN;
    // Cheap upper bounds first (lengths, then shared letters), then the edit distances in the order
    // of those bounds: once the best so far is found, what cannot come within the margin is skipped.
    const hopeful: Array<{ entry: Phrase; bagged: number; bound: number }> = [];
    const bag = new CharacterBag(text);
    // Only phrases this long can pass lengthRatio (a phrase's letters are at most its length, and
    // at least its length less its spaces).
    const shortest = lengths.letters * floor;
    const longest = lengths.chars / Math.max(floor, 1e-9) + this.mostSpaces;
    for (let i = firstAtLeast(this.phrases, shortest); i < this.phrases.length; i++) {
      const entry = this.phrases[i] as Phrase;
      const { phrase, lengths: phraseLengths } = entry;
      if (phraseLengths.chars > longest) break;
      if (lengthRatio(phraseLengths, lengths) < floor) continue;
      const bagged = bag.distanceTo(phrase);
      const bound = Math.max(
        1 - bagged / Math.max(lengths.chars, phraseLengths.chars),
        ANY_ORDER_WEIGHT * (1 - bagged / Math.max(1, lengths.letters, phraseLengths.letters)),
      );
      if (bound >= floor) hopeful.push({ entry, bagged, bound });
    }
    hopeful.sort((a, b) => b.bound - a.bound);
    let cutoff = floor;
    for (const { entry, bagged, bound } of hopeful) {
      if (bound < cutoff) break;
      const { value, phrase, pattern } = entry;
      const similarity = this.similarity(text, phrase, cutoff, bagged, pattern);
      if (similarity < cutoff) continue;
      const known = bestByValue.get(value);
      if (!known || similarity > known.similarity) bestByValue.set(value, { value, phrase, similarity });
      cutoff = Math.max(cutoff, similarity - NEAR_MARGIN);
    }
    const ranked = [...bestByValue.values()].sort((a, b) => b.similarity - a.similarity);
    const [best, second] = ranked;
    if (best === undefined || best.similarity < minSimilarity) return undefined;
    const margin = Math.min(NEAR_MARGIN, 1 / Math.max(text.length, best.phrase.length)) - 1e-9;
    if (second !== undefined && best.similarity - second.similarity < margin) return undefined;
    if (replacesAWord(text, best.phrase)) return { ...best, similarity: Math.min(best.similarity, REPLACED_WORD_SIMILARITY) };
    return best;
  }

  private wordsOf(text: string): readonly string[] {
    let words = this.words.get(text);
    if (words === undefined) {
      words = this.splitWords(text);
      // Said text varies without end; only the registered phrases (and a bounded tail) are kept.
      if (this.words.size < this.phrases.length * 4 + 256) this.words.set(text, words);
    }
    return words;
  }
}

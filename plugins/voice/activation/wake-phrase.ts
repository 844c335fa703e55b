/**
 * Decides whether an utterance is for HomeAgent by the wake phrase its transcript starts with, and
 * cuts the command that follows. Speech-to-text writes the same spoken phrase many ways (case,
 * punctuation, spaces, full-width letters, a homophone, a filler before it, the phrase said twice),
 * so both sides are reduced to a key of letters and digits first; ordinary speech must still not
 * trigger, so the phrase has to sit at the start and English near forms are accepted only above a
 * similarity threshold and on word boundaries.
 */
import { HomeAgentError } from '../../../src/sdk/index.js';

export interface WakePhraseMatch {
  /** The configured phrase that matched. */
  phrase: string;
  /** The part of the transcript that matched it (repeats included). */
  heard: string;
  /** The rest of the transcript, leading spaces and punctuation removed; empty when only the phrase was said. */
  command: string;
  /** 1 for an exact match of the normalised phrase, lower for a near form. */
  similarity: number;
}

export const DEFAULT_WAKE_PHRASES: readonly string[] = ['小宅', '你好小宅', '嘿小宅', 'hey home', 'hi home', 'ok home', 'hello home'];
export const DEFAULT_MIN_SIMILARITY = 0.8;
const SETTING_KEY = 'plugin.voice.activation.wake_phrases';
const MAX_PHRASE_CHARS = 64;
/** At most this many fillers ("嗯", "um") are skipped before the phrase. */
const MAX_FILLERS = 3;

/**
 * Recognisers write 宅 (zhái) as one of its homophones or near homophones when the context does not
 * favour it, and "小宅" is a made-up name with no context: these are the ones seen in transcripts.
 */
const HOMOPHONES: ReadonlyMap<string, string> = new Map([
  ['寨', '宅'],
  ['窄', '宅'],
  ['摘', '宅'],
  ['斋', '宅'],
  ['翟', '宅'],
]);

/** Spelling variants of a whole English word that recognisers choose freely. */
const WORD_VARIANTS: ReadonlyMap<string, string> = new Map([['okay', 'ok']]);

const CHINESE_FILLERS = new Set(['嗯', '呃', '额', '啊', '哦', '唔']);
const ENGLISH_FILLERS = new Set(['um', 'umm', 'uh', 'uhh', 'oh', 'er', 'erm', 'ah', 'hmm', 'mm']);

/** One kept character of a text: its normalised form and where it came from. */
interface KeyChar {
  char: string;
  /** Code unit range in the original text. */
  start: number;
  end: number;
  /** True when it begins a word (text start, or after a separator or a non-ASCII character). */
  wordStart: boolean;
}

const LETTER_OR_DIGIT = /[\p{L}\p{N}]/u;
const ASCII_WORD = /[a-z0-9]/;

/** The letters and digits of `text`, full-width folded, lower-cased, homophones and variants replaced. */
function keyChars(text: string): KeyChar[] {
  const out: KeyChar[] = [];
  let at = 0;
  let afterSeparator = true;
  for (const codePoint of text) {
    const start = at;
    at += codePoint.length;
    for (const folded of codePoint.normalize('NFKC').toLowerCase()) {
      if (!LETTER_OR_DIGIT.test(folded)) {
        afterSeparator = true;
        continue;
      }
      const previous = out[out.length - 1];
      const wordStart = afterSeparator || !ASCII_WORD.test(folded) || previous === undefined || !ASCII_WORD.test(previous.char);
      out.push({ char: HOMOPHONES.get(folded) ?? folded, start, end: at, wordStart });
      afterSeparator = false;
    }
  }
  return replaceWordVariants(out);
}

function replaceWordVariants(chars: KeyChar[]): KeyChar[] {
  const out: KeyChar[] = [];
  for (let i = 0; i < chars.length; ) {
    const end = wordEnd(chars, i);
    const word = chars.slice(i, end);
    const variant = WORD_VARIANTS.get(word.map((c) => c.char).join(''));
    if (variant === undefined) out.push(...word);
    else out.push(...[...variant].map((char, j) => ({ ...(word[Math.min(j, word.length - 1)] as KeyChar), char })));
    // The last replacement character covers the rest of the original word.
    if (variant !== undefined) (out[out.length - 1] as KeyChar).end = (word[word.length - 1] as KeyChar).end;
    i = end;
  }
  return out;
}

/** The index after the word that starts at `i` (a non-ASCII character is a word by itself). */
function wordEnd(chars: readonly KeyChar[], i: number): number {
  let end = i + 1;
  while (end < chars.length && !(chars[end] as KeyChar).wordStart) end++;
  return end;
}

function keyOf(text: string): string {
  return keyChars(text)
    .map((c) => c.char)
    .join('');
}

/** Checks and normalises the configured phrases (NFKC, lower case, single spaces); HA_ERR_CONFIG_INVALID naming the bad one. */
export function checkWakePhrases(phrases: readonly string[]): string[] {
  const out: string[] = [];
  const keys = new Set<string>();
  for (const raw of phrases) {
    const phrase = raw.normalize('NFKC').toLowerCase().replace(/\s+/gu, ' ').trim();
    const bad = (problem: string) =>
      new HomeAgentError('HA_ERR_CONFIG_INVALID', `${SETTING_KEY}: ${JSON.stringify(raw)} ${problem}`, { details: { key: SETTING_KEY } });
    if (phrase === '') throw bad('is empty');
    if (phrase.length > MAX_PHRASE_CHARS) throw bad(`is longer than ${MAX_PHRASE_CHARS} characters`);
    const key = keyOf(phrase);
    if (key === '') throw bad('has no letters or digits');
    // One character would match the start of far too much ordinary speech.
    if ([...key].length < 2) throw bad('is too short to tell from ordinary speech (at least 2 letters)');
    if (keys.has(key)) continue;
    keys.add(key);
    out.push(phrase);
  }
  return out;
}

/** The position after the fillers at the start of `chars`. */
function skipFillers(chars: readonly KeyChar[]): number {
  let at = 0;
  for (let n = 0; n < MAX_FILLERS && at < chars.length; n++) {
    const first = chars[at] as KeyChar;
    if (CHINESE_FILLERS.has(first.char)) {
      at++;
      continue;
    }
    const end = wordEnd(chars, at);
    const word = chars
      .slice(at, end)
      .map((c) => c.char)
      .join('');
    if (!ENGLISH_FILLERS.has(word)) break;
    at = end;
  }
  return at;
}

interface PrefixMatch {
  end: number;
  similarity: number;
}

/** The best near match of `key` at `from`, ending on a word boundary, at or above `minSimilarity`. */
function matchAt(chars: readonly KeyChar[], from: number, key: readonly string[], minSimilarity: number): PrefixMatch | undefined {
  const maxEdits = Math.floor(key.length * (1 - minSimilarity) + 1e-9);
  const first = chars[from];
  if (first === undefined || !first.wordStart) return undefined;
  // One row of edit distances per transcript character: row[j] = distance(transcript[from..i), key[0..j)).
  let row = Array.from({ length: key.length + 1 }, (_, j) => j);
  let best: PrefixMatch | undefined;
  const last = Math.min(chars.length, from + key.length + maxEdits);
  for (let i = from; i < last; i++) {
    const char = (chars[i] as KeyChar).char;
    const next = [i - from + 1];
    for (let j = 1; j <= key.length; j++) {
      const cost = key[j - 1] === char ? 0 : 1;
      next[j] = Math.min((row[j] as number) + 1, (next[j - 1] as number) + 1, (row[j - 1] as number) + cost);
    }
    row = next;
    const length = i - from + 1;
    const edits = row[key.length] as number;
    const similarity = 1 - edits / Math.max(length, key.length);
    const boundary = i + 1 === chars.length || (chars[i + 1] as KeyChar).wordStart;
    if (similarity >= minSimilarity && boundary && (best === undefined || similarity > best.similarity)) {
      best = { end: i + 1, similarity };
    }
  }
  return best;
}

interface PhraseKey {
  phrase: string;
  key: string[];
}

const keyCache = new Map<string, PhraseKey>();

function phraseKey(phrase: string): PhraseKey {
  let cached = keyCache.get(phrase);
  if (cached === undefined) {
    cached = { phrase, key: [...keyOf(phrase)] };
    if (keyCache.size > 256) keyCache.clear();
    keyCache.set(phrase, cached);
  }
  return cached;
}

/** The best phrase at `from`: highest similarity, then the longest phrase ("你好小宅" over "小宅"). */
function bestAt(chars: readonly KeyChar[], from: number, phrases: readonly PhraseKey[], minSimilarity: number) {
  let best: (PrefixMatch & { phrase: PhraseKey }) | undefined;
  for (const phrase of phrases) {
    if (phrase.key.length < 2) continue;
    const match = matchAt(chars, from, phrase.key, minSimilarity);
    if (match === undefined) continue;
    if (
      best === undefined ||
      match.similarity > best.similarity ||
      (match.similarity === best.similarity && phrase.key.length > best.phrase.key.length)
    ) {
      best = { ...match, phrase };
    }
  }
  return best;
}

/** The wake phrase an utterance's transcript starts with, and the command after it; undefined when none. */
export function matchWakePhrase(
  transcript: string,
  phrases: readonly string[],
  options: { minSimilarity?: number } = {},
): WakePhraseMatch | undefined {
  const minSimilarity = options.minSimilarity ?? DEFAULT_MIN_SIMILARITY;
  const chars = keyChars(transcript);
  const keys = phrases.map(phraseKey);
  // A configured phrase may itself begin like a filler ("oh home"), so the very start is tried first.
  let from = 0;
  let found = bestAt(chars, from, keys, minSimilarity);
  if (found === undefined) {
    from = skipFillers(chars);
    found = from === 0 ? undefined : bestAt(chars, from, keys, minSimilarity);
  }
  if (found === undefined) return undefined;
  let end = found.end;
  // "小宅小宅，开灯": a repeated phrase is part of the call, not of the command.
  for (let again = bestAt(chars, end, keys, minSimilarity); again !== undefined; again = bestAt(chars, end, keys, minSimilarity)) {
    end = again.end;
  }
  const heardStart = (chars[from] as KeyChar).start;
  const heardEnd = (chars[end - 1] as KeyChar).end;
  return {
    phrase: found.phrase.phrase,
    heard: transcript.slice(heardStart, heardEnd),
    command: transcript.slice(heardEnd).replace(/^[\s\p{P}\p{S}]+/u, ''),
    similarity: Math.round(found.similarity * 1000) / 1000,
  };
}

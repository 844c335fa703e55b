/**
 * The embedder that needs no model: signed feature hashing ("hashing trick") of
 *  - word tokens, from the injected `tokens` function (memory passes the jieba analyzer's, which
 *    lower-cases, segments Chinese and drops stop words) or a plain Unicode word split;
 *  - character n-grams inside words: 1-, 2- and 3-grams of CJK characters (Chinese has no spaces,
 *    and most words are one or two characters, so the n-grams catch words even where the
 *    segmenter splits differently), and 3-grams of `<word>` for other scripts (catches inflections
 *    such as lamp/lamps and typos).
 * Each feature adds ±weight to one of `dim` buckets; the sign comes from a second hash so that
 * collisions cancel out on average instead of piling up. The result is L2-normalised; a text
 * without letters or digits has no features and gets the zero vector, like an empty one.
 *
 * Everything is plain integer arithmetic on code points, so the vectors are identical on every
 * platform and Node version. Any change to features, weights or hashing must bump
 * {@link HASH_EMBEDDER_VERSION}: stored vectors are only comparable within one fingerprint.
 */
import { HomeAgentError } from '../shared/errors.js';
import type { Embedder } from './embedder.js';
import { abortedError, l2NormalizeInPlace, throwIfAborted } from './vector-math.js';

/** Part of the fingerprint; bump on any change that alters vectors. */
export const HASH_EMBEDDER_VERSION = 1;
export const HASH_EMBEDDER_DEFAULT_DIM = 384;
/** The range; below it collisions blur unrelated texts, above it vectors only grow. */
export const HASH_EMBEDDER_MIN_DIM = 256;
export const HASH_EMBEDDER_MAX_DIM = 512;

export interface HashEmbedderOptions {
  /** Vector length, 256–512 (default 384). */
  dim?: number;
  /**
   * Word tokens of a text, already lower-cased (e.g. the TextAnalyzer's `tokens`). Default: Unicode
   * words of non-CJK scripts, minus a few English function words; CJK text is covered by the
   * character n-grams either way.
   */
  tokens?: (text: string) => string[];
}

// Weights per feature kind. Whole words say the most; CJK bigrams are the best single guess at a
// Chinese word; single characters and Latin trigrams only back the words up.
const WEIGHT_TOKEN = 1;
const WEIGHT_CJK_UNIGRAM = 0.35;
const WEIGHT_CJK_BIGRAM = 0.8;
const WEIGHT_CJK_TRIGRAM = 0.45;
const WEIGHT_LATIN_TRIGRAM = 0.5;
/** Particles and pronouns are in nearly every Chinese sentence; as unigrams they only add noise. */
const WEIGHT_CJK_STOP_UNIGRAM = 0.05;

// Seeds keep the feature kinds apart: the token "灯" and the unigram 灯 are different features.
const SEED_TOKEN = 0x811c9dc5;
const SEED_UNIGRAM = 0x2b7e1516;
const SEED_BIGRAM = 0x28aed2a6;
const SEED_TRIGRAM = 0x3c4fcf09;
const SEED_LATIN = 0x9e3779b9;
const SEED_SIGN = 0x5bd1e995;

const CJK_STOP_CHARS = new Set(Array.from('的了是在我你他她它们这那吗呢吧啊和也就都而及与着之').map((c) => c.codePointAt(0) as number));
const ENGLISH_STOP_WORDS = new Set(
  (
    'a an the and or but of to in on at by for with from as is are was were be been being am do does did ' +
    'i you he she it we they me him her us them my your his its our their this that these those ' +
    'there here what which who whom whose not no so if then than too very can will would shall should'
  ).split(' '),
);

/** Long texts are embedded in slices; between slices the event loop runs and aborts are seen. */
const SLICE_MS = 8;
/** Texts beyond this many characters add little for similarity and would only cost time. */
const MAX_CHARS = 20_000;

const WORD_RUN = /[\p{L}\p{N}\p{M}_]+/gu;

/** Deterministic hashed n-gram embedder; see the module comment. Fast enough for the event loop. */
export class HashEmbedder implements Embedder {
  readonly dim: number;
  readonly fingerprint: string;
  readonly #tokens: ((text: string) => string[]) | undefined;
  #closed = false;

  constructor(options: HashEmbedderOptions = {}) {
    const dim = options.dim ?? HASH_EMBEDDER_DEFAULT_DIM;
    if (!Number.isInteger(dim) || dim < HASH_EMBEDDER_MIN_DIM || dim > HASH_EMBEDDER_MAX_DIM) {
      throw new HomeAgentError(
        'HA_ERR_EMBED_OPTIONS',
        `hash embedder dim must be an integer from ${HASH_EMBEDDER_MIN_DIM} to ${HASH_EMBEDDER_MAX_DIM}, got ${dim}`,
      );
    }
    this.dim = dim;
    this.fingerprint = `hash-ngram-v${HASH_EMBEDDER_VERSION}-${dim}`;
    this.#tokens = options.tokens;
  }

  async embed(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]> {
    if (this.#closed) throw new HomeAgentError('HA_ERR_EMBED_CLOSED', 'the hash embedder was closed');
    throwIfAborted(signal);
    const out: Float32Array[] = [];
    let sliceStart = performance.now();
    for (const text of texts) {
      out.push(this.embedOne(text));
      if (performance.now() - sliceStart > SLICE_MS) {
        await new Promise<void>((resolve) => setImmediate(resolve));
        if (signal?.aborted) throw abortedError(signal);
        if (this.#closed) throw new HomeAgentError('HA_ERR_EMBED_CLOSED', 'the hash embedder was closed');
        sliceStart = performance.now();
      }
    }
    return out;
  }

  /** The synchronous core, for callers that embed one short text on the spot (a query). */
  embedOne(text: string): Float32Array {
    const v = new Float32Array(this.dim);
    const clean = (text.length > MAX_CHARS ? text.slice(0, MAX_CHARS) : text).normalize('NFKC').toLowerCase();
    if (clean.trim() === '') return v;
    for (const match of clean.matchAll(WORD_RUN)) this.#addRun(v, match[0]);
    const tokens = this.#tokens ? this.#tokens(clean) : defaultTokens(clean);
    for (const token of tokens) {
      if (token !== '') this.#add(v, hashString(SEED_TOKEN, token), WEIGHT_TOKEN);
    }
    // A text of stop words only ("is it?") is still a text: fall back to its own trigrams rather
    // than the zero vector, which means "empty".
    if (v.every((x) => x === 0)) for (const match of clean.matchAll(WORD_RUN)) this.#addRun(v, match[0], true);
    return l2NormalizeInPlace(v);
  }

  async close(): Promise<void> {
    this.#closed = true;
  }

  /** Splits a run of word characters into CJK and other pieces and adds their n-grams. */
  #addRun(v: Float32Array, run: string, keepStopWords = false): void {
    const cps = Array.from(run, (c) => c.codePointAt(0) as number);
    let start = 0;
    while (start < cps.length) {
      const cjk = isCjk(cps[start] as number);
      let end = start + 1;
      while (end < cps.length && isCjk(cps[end] as number) === cjk) end++;
      if (cjk) this.#addCjk(v, cps, start, end);
      else this.#addLatin(v, cps, start, end, keepStopWords);
      start = end;
    }
  }

  #addCjk(v: Float32Array, cps: number[], start: number, end: number): void {
    for (let i = start; i < end; i++) {
      const c = cps[i] as number;
      this.#add(v, hashCodes(SEED_UNIGRAM, cps, i, i + 1), CJK_STOP_CHARS.has(c) ? WEIGHT_CJK_STOP_UNIGRAM : WEIGHT_CJK_UNIGRAM);
      if (i + 2 <= end) this.#add(v, hashCodes(SEED_BIGRAM, cps, i, i + 2), WEIGHT_CJK_BIGRAM);
      if (i + 3 <= end) this.#add(v, hashCodes(SEED_TRIGRAM, cps, i, i + 3), WEIGHT_CJK_TRIGRAM);
    }
  }

  #addLatin(v: Float32Array, cps: number[], start: number, end: number, keepStopWords: boolean): void {
    const word = cps.slice(start, end);
    // "the" in two texts says nothing about them, and neither do its trigrams.
    if (!keepStopWords && word.length <= 5 && ENGLISH_STOP_WORDS.has(String.fromCodePoint(...word))) return;
    // Trigrams of "<word>": the markers make prefixes and suffixes features of their own.
    const padded = [0x3c, ...word, 0x3e];
    for (let i = 0; i + 3 <= padded.length; i++) this.#add(v, hashCodes(SEED_LATIN, padded, i, i + 3), WEIGHT_LATIN_TRIGRAM);
  }

  #add(v: Float32Array, hash: number, weight: number): void {
    const index = hash % this.dim;
    const sign = fmix32((hash ^ SEED_SIGN) >>> 0) & 1 ? 1 : -1;
    v[index] = (v[index] as number) + sign * weight;
  }
}

/** Unicode words outside CJK scripts, minus English function words. */
function defaultTokens(text: string): string[] {
  const out: string[] = [];
  for (const match of text.matchAll(WORD_RUN)) {
    let piece = '';
    for (const ch of match[0]) {
      if (isCjk(ch.codePointAt(0) as number)) {
        if (piece !== '') out.push(piece);
        piece = '';
      } else piece += ch;
    }
    if (piece !== '') out.push(piece);
  }
  return out.filter((w) => !ENGLISH_STOP_WORDS.has(w));
}

/** Han (with extensions and compatibility ideographs), kana and Hangul: scripts without spaces. */
function isCjk(cp: number): boolean {
  return (
    (cp >= 0x4e00 && cp <= 0x9fff) ||
    (cp >= 0x3400 && cp <= 0x4dbf) ||
    (cp >= 0x3040 && cp <= 0x30ff) ||
    (cp >= 0xac00 && cp <= 0xd7af) ||
    (cp >= 0xf900 && cp <= 0xfaff) ||
    (cp >= 0x20000 && cp <= 0x3134f)
  );
}

/** FNV-1a over code points, finished with murmur3's fmix32 for well-spread low bits. */
function hashCodes(seed: number, cps: readonly number[], start: number, end: number): number {
  let h = seed;
  for (let i = start; i < end; i++) {
    h ^= cps[i] as number;
    h = Math.imul(h, 0x01000193);
  }
  return fmix32(h >>> 0);
}

function hashString(seed: number, s: string): number {
  let h = seed;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return fmix32(h >>> 0);
}

function fmix32(input: number): number {
  let h = input;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

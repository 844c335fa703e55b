/**
 * Search tokens for FTS5 and keyword lookup: jieba's search-mode cut for Chinese (a long word also
 * yields its dictionary sub-words: 智能家居 → 智能, 家居, 智能家居), lower-cased stems for English,
 * numbers and identifiers whole, stop words of both languages removed.
 */

import { stemEnglish } from './english-stemmer.js';
import { jiebaKeywordScorer, jiebaSegmenter } from './jieba-runtime.js';
import { isPunctuation, isSymbol, latinTokens } from './latin-words.js';
import { splitScriptRuns } from './script-runs.js';
import { ENGLISH_STOP_WORDS, isStopWord } from './stop-words.js';

const POSSESSIVE = /['’]s$/u;
const SINGLE_LETTER = /^\p{L}$/u;

function englishToken(token: string): string | undefined {
  if (isPunctuation(token)) return undefined;
  const lower = token.toLowerCase();
  if (isSymbol(lower)) return lower;
  if (ENGLISH_STOP_WORDS.has(lower.replace(/’/g, "'"))) return undefined;
  const word = lower.replace(POSSESSIVE, '');
  if (SINGLE_LETTER.test(word) || ENGLISH_STOP_WORDS.has(word)) return undefined;
  return stemEnglish(word);
}

export function searchTokens(text: string): string[] {
  const out: string[] = [];
  for (const run of splitScriptRuns(text)) {
    if (run.han) {
      for (const word of jiebaSegmenter().cutForSearch(run.text, false)) {
        const lower = word.trim().toLowerCase();
        if (lower === '' || isPunctuation(lower) || isStopWord(lower)) continue;
        out.push(lower);
      }
      continue;
    }
    for (const token of latinTokens(run.text)) {
      const found = englishToken(token);
      if (found !== undefined) out.push(found);
    }
  }
  return out;
}

/** jieba's median IDF, used for words its table does not know (all English words). */
const MEDIAN_IDF = 11.74;
let stopWordsConfigured = false;

/** Up to `k` keywords by TF-IDF: jieba's IDF table for Chinese, the median IDF for other words. */
export function tfidfKeywords(text: string, k: number): string[] {
  if (k <= 0) return [];
  const scorer = jiebaKeywordScorer();
  if (!stopWordsConfigured) {
    // Stop words are filtered below: @node-rs/jieba 2.0.3 fails to convert a `stopWords` set.
    scorer.setConfig({ minKeywordLength: 2, useHmm: false });
    stopWordsConfigured = true;
  }
  const runs = splitScriptRuns(text);
  const han = runs
    .filter((r) => r.han)
    .map((r) => r.text)
    .join('\n');
  const latin = runs.filter((r) => !r.han).flatMap((r) => latinTokens(r.text).map(englishToken));
  const latinWords = latin.filter((w): w is string => w !== undefined);
  const hanWords =
    han === ''
      ? 0
      : jiebaSegmenter()
          .cut(han, false)
          .filter((w) => !isPunctuation(w)).length;
  const total = Math.max(1, hanWords + latinWords.length);
  const scored = new Map<string, number>();
  if (han !== '') {
    // extractKeywords normalises by the Han word count; rescale so both scripts share one scale.
    for (const { keyword, weight } of scorer.extractKeywords(jiebaSegmenter(), han, k * 3)) {
      const word = keyword.toLowerCase();
      if (isPunctuation(word) || isStopWord(word)) continue;
      scored.set(word, (weight * Math.max(1, hanWords)) / total);
    }
  }
  for (const word of latinWords) scored.set(word, (scored.get(word) ?? 0) + MEDIAN_IDF / total);
  return [...scored.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, k)
    .map(([word]) => word);
}

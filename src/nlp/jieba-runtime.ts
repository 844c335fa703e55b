/**
 * The one place that loads @node-rs/jieba. Loading costs about 45 MB of RSS for the segmenter and
 * another 25–40 MB for the TF-IDF table (bench/nlp.mjs measures both), together more than the
 * daemon's 80 MB idle budget, so nothing is loaded until text is first segmented, and the IDF
 * table only when keywords are first asked for. The native module is CommonJS and must load
 * synchronously because the TextAnalyzer contract is synchronous, hence createRequire.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Jieba, TfIdf } from '@node-rs/jieba';
import { HomeAgentError } from '../shared/errors.js';
import { HOUSEHOLD_DICTIONARY } from './household-dictionary.js';

/** What loading cost, for the bench and for status output. Figures are 0 until loaded. */
export interface JiebaLoadStats {
  segmenterLoaded: boolean;
  segmenterLoadMs: number;
  /** RSS growth across the load; other allocations in the same instant are included. */
  segmenterRssBytes: number;
  tfidfLoaded: boolean;
  tfidfLoadMs: number;
  tfidfRssBytes: number;
}

interface JiebaModule {
  Jieba: typeof Jieba;
  TfIdf: typeof TfIdf;
}

const requireFromHere = createRequire(import.meta.url);

let segmenter: Jieba | undefined;
let keywordScorer: TfIdf | undefined;
const stats: JiebaLoadStats = {
  segmenterLoaded: false,
  segmenterLoadMs: 0,
  segmenterRssBytes: 0,
  tfidfLoaded: false,
  tfidfLoadMs: 0,
  tfidfRssBytes: 0,
};

function unavailable(error: unknown): HomeAgentError {
  return new HomeAgentError('HA_ERR_UNAVAILABLE', 'the Chinese word segmenter (@node-rs/jieba) could not be loaded on this platform', {
    cause: error,
  });
}

function loadModule(): JiebaModule {
  try {
    return requireFromHere('@node-rs/jieba') as JiebaModule;
  } catch (error) {
    throw unavailable(error);
  }
}

/**
 * One of the package's dictionary files. Read here rather than through `@node-rs/jieba/dict`,
 * which reads both files (11 MB) at once and keeps them referenced for the life of the process.
 */
function readDictionary(file: 'dict.txt' | 'idf.txt'): Buffer {
  try {
    return readFileSync(requireFromHere.resolve(`@node-rs/jieba/${file}`));
  } catch (error) {
    throw unavailable(error);
  }
}

/** The shared segmenter with the household supplement dictionary, loaded on first call. */
export function jiebaSegmenter(): Jieba {
  if (segmenter !== undefined) return segmenter;
  const rssBefore = process.memoryUsage.rss();
  const startedAt = performance.now();
  const loaded = loadModule().Jieba.withDict(readDictionary('dict.txt'));
  // Household words the stock dictionary segments badly (猫叫 "a cat meows" swallowing 猫 + 叫).
  loaded.loadDict(Buffer.from(HOUSEHOLD_DICTIONARY, 'utf8'));
  segmenter = loaded;
  stats.segmenterLoaded = true;
  stats.segmenterLoadMs = performance.now() - startedAt;
  stats.segmenterRssBytes = Math.max(0, process.memoryUsage.rss() - rssBefore);
  return loaded;
}

/** The shared TF-IDF scorer (jieba's IDF table), loaded on first call. */
export function jiebaKeywordScorer(): TfIdf {
  if (keywordScorer !== undefined) return keywordScorer;
  jiebaSegmenter();
  const rssBefore = process.memoryUsage.rss();
  const startedAt = performance.now();
  keywordScorer = loadModule().TfIdf.withDict(readDictionary('idf.txt'));
  stats.tfidfLoaded = true;
  stats.tfidfLoadMs = performance.now() - startedAt;
  stats.tfidfRssBytes = Math.max(0, process.memoryUsage.rss() - rssBefore);
  return keywordScorer;
}

/** A copy of the load figures. */
export function jiebaLoadStats(): JiebaLoadStats {
  return { ...stats };
}

/**
 * The TextAnalyzer: sentences, search tokens, keywords, POS tags and fact extraction
 * (Parse → Extract → Verify) for Chinese and English. Creating one is free; jieba is loaded the
 * first time a method needs it (sentences() never does).
 */

import { isBoilerplate, isQuestion, stripChatTemplate } from './boilerplate.js';
import type { Candidate, SpeakerContext } from './candidate.js';
import { extractFromChineseParse } from './chinese-extractor.js';
import { tagChinese } from './chinese-tagger.js';
import type { DependencyParser } from './dependency-parser.js';
import { extractEnglish } from './english-extractor.js';
import { tagEnglish } from './english-tagger.js';
import { chinesePersonalFacts, englishPersonalFacts } from './personal-facts.js';
import { RuleDependencyParser } from './rule-dependency-parser.js';
import { hasHan } from './script-runs.js';
import { searchTokens, tfidfKeywords } from './search-tokens.js';
import { splitSentences } from './sentence-splitter.js';
import { TripleVerifier } from './triple-verifier.js';
import type { TaggedWord, TextAnalyzer, Triple } from './types.js';

export interface TextAnalyzerOptions {
  /**
   * The Chinese dependency parser (see createDependencyParser); the rule parser when absent. The
   * analyzer only borrows it: whoever created the parser closes it.
   */
  parser?: DependencyParser;
}

/** Candidates for one cleaned sentence, before verification. */
async function candidatesFor(sentence: string, parser: DependencyParser, context: SpeakerContext): Promise<Candidate[]> {
  if (hasHan(sentence)) {
    const parse = await parser.parse(tagChinese(sentence));
    return [...chinesePersonalFacts(sentence, context), ...extractFromChineseParse(parse, context)];
  }
  return [...englishPersonalFacts(sentence, context), ...extractEnglish(sentence, context)];
}

export function createTextAnalyzer(options: TextAnalyzerOptions = {}): TextAnalyzer {
  const parser = options.parser ?? new RuleDependencyParser();
  return {
    sentences: splitSentences,
    tokens: searchTokens,
    indexText: (text) => searchTokens(text).join(' '),
    keywords: tfidfKeywords,
    tag(text: string): TaggedWord[] {
      return splitSentences(text).flatMap((sentence) => (hasHan(sentence) ? tagChinese(sentence) : tagEnglish(sentence)));
    },
    async extract(text: string, extractOptions?: { speaker?: string }): Promise<Triple[]> {
      const context: SpeakerContext = { speaker: extractOptions?.speaker?.trim() || undefined };
      const verifier = new TripleVerifier(context);
      const triples: Triple[] = [];
      for (const sentence of splitSentences(text)) {
        if (isBoilerplate(sentence)) continue;
        const cleaned = stripChatTemplate(sentence);
        if (isQuestion(cleaned, hasHan(cleaned))) continue;
        triples.push(...verifier.verify(await candidatesFor(cleaned, parser, context), sentence));
      }
      return triples;
    },
  };
}

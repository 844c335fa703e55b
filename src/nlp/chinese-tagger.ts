/**
 * Part-of-speech tagging for text containing Chinese: jieba's tagger (without HMM, which glues
 * verbs onto unknown names: 叫小美 as one word) plus repairs for what its stock dictionary gets
 * wrong in household speech. Latin runs are tagged here too, in jieba's tag set (`eng`, `m`, `x`).
 */

import { jiebaSegmenter } from './jieba-runtime.js';
import { isPunctuation, latinTokens } from './latin-words.js';
import { splitScriptRuns } from './script-runs.js';
import type { TaggedWord } from './types.js';

/** Stock tags that are wrong for the everyday sense of the word. */
const TAG_FIXES: Readonly<Record<string, string>> = {
  过敏: 'v',
  邻居: 'n',
  哥哥: 'n',
  老公: 'n',
  阿姨: 'n',
  读书: 'v',
  上学: 'v',
  念书: 'v',
  上班: 'v',
  我家: 'n',
  胡萝卜: 'n',
  同学: 'n',
  老家: 'n',
  当: 'v',
  超市: 'n',
  一起: 'd',
  回家: 'v',
  下班: 'v',
  放学: 'v',
  跑步: 'v',
  没: 'd',
};

/** jieba tags some time phrases as names (今天下午/nr). */
const TIME_PREFIX = /^(?:今天|明天|昨天|前天|后天|今年|明年|去年|上周|下周|这周|本周|周末|每)/u;

/** Words starting with these verbs are split off when the rest is a noun: 喝咖啡 → 喝 / 咖啡. */
const SPLITTABLE_VERBS = new Set(['喝', '吃', '弹', '踢', '打', '种', '看', '养', '买', '玩', '听', '画', '修']);
/** Single characters that are never part of a name run. */
const FUNCTION_CHARS = new Set([
  '的',
  '了',
  '是',
  '在',
  '和',
  '与',
  '也',
  '都',
  '就',
  '不',
  '没',
  '很',
  '又',
  '还',
  '把',
  '被',
  '给',
  '对',
  '从',
]);
/** Tags whose single-character words may be pieces of a name jieba did not know (小/a 美/ns). */
const NAME_PIECE_TAGS = new Set(['a', 'n', 'nr', 'ns', 'nz', 'ng', 'q', 'zg', 'j', 'b', 'k', 'tg', 'ag']);
const NOUN_TAGS = new Set(['n', 'nr', 'nrt', 'nz', 'ns', 'nt', 'ng']);
const DIGITS = /^\p{N}+$/u;
const HAN_NUMERAL = /^[零〇一二两三四五六七八九十百千万]+$/u;

function fixTag(word: string, tag: string): string {
  const fixed = TAG_FIXES[word];
  if (fixed !== undefined) return fixed;
  if (tag === 'x' && !isPunctuation(word)) return 'nz';
  // 每天, 每周六, 今天下午 are time adverbials, not pronouns, idioms or names.
  if (word.length >= 2 && TIME_PREFIX.test(word) && !tag.startsWith('v')) return 't';
  return tag;
}

function splitVerbPrefix(word: TaggedWord): TaggedWord[] {
  const chars = Array.from(word.word);
  const first = chars[0] ?? '';
  if (chars.length < 3 || !SPLITTABLE_VERBS.has(first) || !NOUN_TAGS.has(word.tag)) return [word];
  const rest = chars.slice(1).join('');
  const restTagged = jiebaSegmenter().tag(rest, false);
  const only = restTagged[0];
  if (restTagged.length !== 1 || only === undefined || !NOUN_TAGS.has(only.tag)) return [word];
  return [
    { word: first, tag: 'v' },
    { word: rest, tag: only.tag },
  ];
}

function isNamePiece(word: TaggedWord): boolean {
  return Array.from(word.word).length === 1 && NAME_PIECE_TAGS.has(word.tag) && !FUNCTION_CHARS.has(word.word);
}

/** Runs of two or more single characters become one word: 张/q 伟/zg → 张伟/nr. */
function mergeNamePieces(words: TaggedWord[]): TaggedWord[] {
  const out: TaggedWord[] = [];
  let i = 0;
  while (i < words.length) {
    let j = i;
    while (j < words.length && isNamePiece(words[j] as TaggedWord)) j++;
    if (j - i >= 2) {
      out.push({
        word: words
          .slice(i, j)
          .map((w) => w.word)
          .join(''),
        tag: 'nr',
      });
      i = j;
      continue;
    }
    out.push(words[i] as TaggedWord);
    i++;
  }
  return out;
}

/**
 * A number followed by 岁 is one age word, as jieba already does for 八十岁; the plural suffix 们
 * joins its noun (孩子们).
 */
function mergeSuffixes(words: TaggedWord[]): TaggedWord[] {
  const out: TaggedWord[] = [];
  for (const word of words) {
    const previous = out[out.length - 1];
    if (word.word === '们' && previous !== undefined && NOUN_TAGS.has(previous.tag)) {
      out[out.length - 1] = { word: `${previous.word}们`, tag: previous.tag };
      continue;
    }
    if (word.word === '岁' && previous !== undefined && (DIGITS.test(previous.word) || HAN_NUMERAL.test(previous.word))) {
      out[out.length - 1] = { word: `${previous.word}岁`, tag: 'm' };
      continue;
    }
    out.push(word);
  }
  return out;
}

function tagLatinRun(text: string): TaggedWord[] {
  return latinTokens(text).map((token) => ({
    word: token,
    tag: isPunctuation(token) ? 'x' : DIGITS.test(token) ? 'm' : 'eng',
  }));
}

/** Tags a sentence containing Chinese. */
export function tagChinese(text: string): TaggedWord[] {
  const words: TaggedWord[] = [];
  for (const run of splitScriptRuns(text)) {
    if (!run.han) {
      words.push(...tagLatinRun(run.text));
      continue;
    }
    const hanWords: TaggedWord[] = [];
    for (const tagged of jiebaSegmenter().tag(run.text, false)) {
      const fixed = { word: tagged.word, tag: fixTag(tagged.word, tagged.tag) };
      hanWords.push(...splitVerbPrefix(fixed));
    }
    words.push(...mergeNamePieces(hanWords));
  }
  return mergeSuffixes(words);
}

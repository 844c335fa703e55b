/**
 * Sentence splitting on 。！？；.!? and newlines. Each sentence keeps its closing mark (a question
 * mark is how extraction recognises a question) and any closing quote or bracket after it. A period
 * ends a sentence only before whitespace, a Han character or the end, and not after a known
 * abbreviation or a single initial, so 3.5, v1.2.3, example.com, Mrs. Lee and J. Smith stay whole.
 */

const ALWAYS_ENDS = new Set(['。', '！', '？', '；', '!', '?', '…']);
const CLOSERS = new Set(['"', "'", '”', '’', '」', '』', ')', '）', ']', '】', '》']);
const ABBREVIATIONS = new Set([
  'mr',
  'mrs',
  'ms',
  'dr',
  'prof',
  'st',
  'jr',
  'sr',
  'vs',
  'etc',
  'e.g',
  'i.e',
  'approx',
  'dept',
  'apt',
  'ave',
  'inc',
  'ltd',
  'co',
]);
const HAN_OR_SPACE = /[\s\p{Script=Han}]/u;
const WORD_BEFORE_DOT = /([\p{L}.]+)$/u;

function periodEndsSentence(text: string, dot: number): boolean {
  const next = text[dot + 1];
  if (next === '.') return false;
  if (next !== undefined && !HAN_OR_SPACE.test(next) && !CLOSERS.has(next)) return false;
  const word = WORD_BEFORE_DOT.exec(text.slice(Math.max(0, dot - 12), dot))?.[1]?.toLowerCase();
  if (word === undefined) return true;
  if (ABBREVIATIONS.has(word)) return false;
  // A single capital before the dot is an initial (J. Smith), unless the sentence is just "A."
  const single = /^\p{Lu}$/u.test(text.slice(dot - 1, dot)) && (dot < 2 || /\s/.test(text[dot - 2] ?? ' '));
  return !(single && dot >= 2);
}

const HAS_CONTENT = /[\p{L}\p{N}]/u;

export function splitSentences(text: string): string[] {
  const sentences: string[] = [];
  let start = 0;
  const push = (end: number): void => {
    const piece = text.slice(start, end).trim();
    if (HAS_CONTENT.test(piece)) sentences.push(piece);
    start = end;
  };
  for (let i = 0; i < text.length; i++) {
    const ch = text[i] ?? '';
    if (ch === '\n' || ch === '\r') {
      push(i);
      start = i + 1;
      continue;
    }
    const ends = ALWAYS_ENDS.has(ch) || (ch === '.' && periodEndsSentence(text, i));
    if (!ends) continue;
    let end = i + 1;
    // "?!", "。」", "...": the whole run of marks and closers belongs to this sentence.
    while (end < text.length && (ALWAYS_ENDS.has(text[end] ?? '') || text[end] === '.' || CLOSERS.has(text[end] ?? ''))) end++;
    push(end);
    i = end - 1;
  }
  push(text.length);
  return sentences;
}

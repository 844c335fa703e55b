/**
 * Turns an answer written for the screen into what is worth saying aloud: Markdown markup is
 * dropped (a code block becomes a short "(code omitted)", a link its text, a table its cells), and
 * a long answer is cut at the last sentence end that fits plugin.voice.tts.max_chars, so the
 * speaker never stops mid-word. Also picks the voice language from the text itself, because a
 * Chinese answer often carries English device names ("把 Kitchen Light 打开了").
 */
import type { SpeechLanguage } from './speech.js';

const HAN = /\p{Script=Han}/gu;
const LATIN_WORD = /[A-Za-z]+(?:['’][A-Za-z]+)*/g;
const SENTENCE_END = new Set(['。', '！', '？', '.', '!', '?']);
/** Full-width marks end a sentence on their own; ASCII ones only before a space or the end ("3.5" is one number). */
const FULL_WIDTH_END = new Set(['。', '！', '？']);

/**
 * zh when Han characters are at least as many as Latin words: one Han character is about one
 * spoken syllable, one Latin word one or two, so a device name inside a Chinese sentence does
 * not turn it English.
 */
export function spokenLanguage(text: string): SpeechLanguage {
  const han = text.match(HAN)?.length ?? 0;
  if (han === 0) return 'en';
  const latinWords = text.match(LATIN_WORD)?.length ?? 0;
  return han >= latinWords ? 'zh' : 'en';
}

function endsWithPunctuation(line: string): boolean {
  return /[。！？，；：.!?,;:…]$/u.test(line);
}

/** Lines that stand alone on screen (headings, list items, table rows) get a pause when spoken. */
function closeLine(line: string, language: SpeechLanguage): string {
  if (line === '' || endsWithPunctuation(line)) return line;
  return `${line}${language === 'zh' ? '。' : '.'}`;
}

function tableRow(line: string): string | undefined {
  if (!/^\s*\|.*\|\s*$/.test(line)) return undefined;
  if (/^\s*\|[\s|:-]+\|\s*$/.test(line)) return '';
  return line
    .trim()
    .slice(1, -1)
    .split('|')
    .map((cell) => cell.trim())
    .filter((cell) => cell !== '')
    .join(', ');
}

function inlineMarkup(line: string): string {
  return (
    line
      .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
      .replace(/\[([^\]]+)\]\([^)]*\)/g, '$1')
      .replace(/<(https?:\/\/[^>\s]+)>/g, '$1')
      // A bare URL is said as its host; the sentence's own full stop after it stays.
      .replace(/https?:\/\/([^/\s)]+?)(?:\/[^\s)]*?)?([.,;:!?]?)(?=\s|\)|$)/g, '$1$2')
      .replace(/<\/?[A-Za-z][^>]*>/g, '')
      .replace(/`([^`]*)`/g, '$1')
      .replace(/(\*\*|__)(.+?)\1/g, '$2')
      .replace(/~~(.+?)~~/g, '$1')
      .replace(/(^|[^\w*])\*(?!\s)([^*]+?)\*(?!\w)/g, '$1$2')
      // Underscores inside words are names (snake_case), not emphasis.
      .replace(/(^|[^\w])_(?!\s)([^_]+?)_(?!\w)/g, '$1$2')
  );
}

function stripMarkdown(text: string, language: SpeechLanguage): string {
  const omitted = language === 'zh' ? '（代码略）' : '(code omitted)';
  const withoutCode = text.replace(/(^|\n)[ \t]*(```|~~~)[^\n]*\n[\s\S]*?(?:\n[ \t]*\2[ \t]*(?=\n|$)|$)/g, `$1${omitted}`);
  const lines: string[] = [];
  for (const raw of withoutCode.split(/\r?\n/)) {
    if (/^\s*([-*_])(\s*\1){2,}\s*$/.test(raw)) continue;
    const row = tableRow(raw);
    if (row !== undefined) {
      lines.push(closeLine(inlineMarkup(row), language));
      continue;
    }
    const heading = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(raw);
    const item = /^\s*(?:>\s*)*(?:[-*+]|\d{1,3}[.)])\s+(.*)$/.exec(raw);
    if (heading) lines.push(closeLine(inlineMarkup(heading[1] ?? '').trim(), language));
    else if (item) lines.push(closeLine(inlineMarkup(item[1] ?? '').trim(), language));
    else lines.push(inlineMarkup(raw.replace(/^\s*(?:>\s*)+/, '')));
  }
  return lines.join('\n');
}

function collapse(text: string): string {
  return (
    text
      .replace(/\s+/g, ' ')
      // Between Han characters and full-width marks a line break is not a word gap.
      .replace(/([\p{Script=Han}\u3000-\u303f\uff00-\uffef]) (?=[\p{Script=Han}\u3000-\u303f\uff00-\uffef])/gu, '$1')
      .trim()
  );
}

/** The longest prefix within maxChars ending at a sentence end, else a space, else a character boundary. */
function cut(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  let end = maxChars;
  // Never split a surrogate pair (an emoji, a rare Han character).
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  const prefix = text.slice(0, end);
  for (let i = prefix.length - 1; i > 0; i -= 1) {
    const char = prefix[i] ?? '';
    if (!SENTENCE_END.has(char)) continue;
    const next = text[i + 1];
    if (FULL_WIDTH_END.has(char) || next === undefined || /\s/.test(next)) return prefix.slice(0, i + 1).trim();
  }
  const space = prefix.lastIndexOf(' ');
  return (space > 0 ? prefix.slice(0, space) : prefix).trim();
}

/** What to say aloud for `text`: Markdown stripped, whitespace collapsed, at most maxChars. */
export function speakableText(text: string, maxChars: number): string {
  return cut(collapse(stripMarkdown(text, spokenLanguage(text))), maxChars);
}

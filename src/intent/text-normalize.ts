/**
 * One normal form for both sentences and template literals, so the matcher can compare them
 * character by character: lowercase, full-width → half-width (NFKC), punctuation gone, whitespace
 * collapsed, and no space between two characters when either is CJK ("打开 厨房 的灯" = "打开厨房的灯").
 * "%", and a decimal point or a fraction slash between digits, survive because numbers need them.
 */

const CJK = /[\u3400-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af]/u;

/** Dropped without a trace, so "what's" reads as "whats" on both sides. */
export const APOSTROPHES = /['\u2019]/gu;

/** Everything but letters, digits, marks, "%", spaces, and a decimal point or fraction slash between two digits ("2.5", "1/2"). */
export const PUNCTUATION = /[^\p{L}\p{N}\p{M}%\s./]+|(?<!\d)[./]|[./](?!\d)/gu;

/** True for Chinese, Japanese and Korean characters, where words are not separated by spaces. */
export function isCjk(ch: string | undefined): boolean {
  return ch !== undefined && CJK.test(ch);
}

/** The normal form of a sentence or a template literal (see the module comment). */
export function normalizeText(text: string): string {
  const cleaned = text.normalize('NFKC').toLowerCase().replace(APOSTROPHES, '').replace(PUNCTUATION, ' ').replace(/\s+/gu, ' ').trim();
  return dropSpacesNextToCjk(cleaned);
}

function dropSpacesNextToCjk(text: string): string {
  if (!text.includes(' ')) return text;
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === ' ' && (isCjk(text[i - 1]) || isCjk(text[i + 1]))) continue;
    out += ch;
  }
  return out;
}

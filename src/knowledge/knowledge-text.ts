/**
 * Text shown about an entry: the content without markdown noise (previews and snippets read as
 * prose), its first characters, and a window around the first word a query matched.
 */

/** Characters of a search hit's snippet. */
export const SNIPPET_CHARS = 160;
/** Characters of the stored preview; tree previews are cut from it. */
export const MAX_PREVIEW_CHARS = 1000;
export const DEFAULT_PREVIEW_CHARS = 120;

const ELLIPSIS = '…';

/** Markdown reduced to its words: no heading, list, quote or emphasis marks, links as their text. */
export function plainText(markdown: string): string {
  return markdown
    .replace(/^\uFEFF/, '')
    .replace(/<!--[\s\S]*?-->/g, ' ')
    .replace(/^\s*(```|~~~).*$/gm, ' ')
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<\/?[a-z][^>]*>/gi, ' ')
    .replace(/^\s{0,3}#{1,6}\s+/gm, '')
    .replace(/^\s*>+\s?/gm, '')
    .replace(/^\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?/gm, '')
    .replace(/^\s*(?:[-*_]\s*){3,}$/gm, ' ')
    .replace(/^\s*\|?(?:\s*:?-{3,}:?\s*\|)+\s*:?-*:?\s*$/gm, ' ')
    .replace(/\|/g, ' ')
    .replace(/(\*\*|__|~~|\*|`)/g, '')
    .replace(/\s+/g, ' ')
    .trim();
}

/** The first `limit` characters (code points), with "…" as the last one when cut. */
export function preview(plain: string, limit = DEFAULT_PREVIEW_CHARS): string {
  const chars = Array.from(plain);
  if (chars.length <= limit) return plain;
  if (limit <= 1) return chars.slice(0, Math.max(0, limit)).join('');
  return `${chars
    .slice(0, limit - 1)
    .join('')
    .trimEnd()}${ELLIPSIS}`;
}

/**
 * About {@link SNIPPET_CHARS} characters around the earliest occurrence of any of `terms`
 * (lower-cased search tokens) in `plain`; the beginning when none occurs (a hit found by meaning).
 */
export function snippet(plain: string, terms: readonly string[], width = SNIPPET_CHARS): string {
  const chars = Array.from(plain);
  if (chars.length <= width) return plain;
  const lower = plain.toLowerCase();
  let first = -1;
  for (const term of terms) {
    if (term === '') continue;
    const at = lower.indexOf(term.toLowerCase());
    if (at >= 0 && (first < 0 || at < first)) first = at;
  }
  if (first < 0) return preview(plain, width);
  // UTF-16 offset → code point offset, so that a window never splits a surrogate pair.
  const start = Math.max(0, Array.from(plain.slice(0, first)).length - Math.floor(width / 3));
  const end = Math.min(chars.length, start + width);
  const from = Math.max(0, Math.min(start, end - width));
  return `${from > 0 ? ELLIPSIS : ''}${chars.slice(from, end).join('').trim()}${end < chars.length ? ELLIPSIS : ''}`;
}

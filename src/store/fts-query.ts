/** FTS5 MATCH expressions built from analyser output, never from raw user text (FTS5 syntax errors throw). */

/** At most this many distinct terms go into one query; longer inputs add noise, not recall. */
export const MAX_QUERY_TERMS = 32;

/**
 * An OR of quoted terms from `indexText` output (space-separated tokens), or undefined when there
 * is no term. Quoting makes every term a phrase of the table's tokenizer, so `1.2.3` matches the
 * token sequence 1 2 3 and operators such as `NOT` or `*` are plain words.
 */
export function ftsMatchQuery(indexedText: string, maxTerms = MAX_QUERY_TERMS): string | undefined {
  return ftsMatchTerms(ftsTerms(indexedText, maxTerms));
}

/** The distinct terms of `indexText` output that can match anything (words and numbers), at most `maxTerms`. */
export function ftsTerms(indexedText: string, maxTerms = MAX_QUERY_TERMS): string[] {
  return [...new Set(indexedText.split(/\s+/).filter((t) => /[\p{L}\p{N}]/u.test(t)))].slice(0, maxTerms);
}

/** An OR of the terms, each quoted; undefined for none. */
export function ftsMatchTerms(terms: readonly string[]): string | undefined {
  if (terms.length === 0) return undefined;
  return terms.map((t) => `"${t.replace(/"/g, '""')}"`).join(' OR ');
}

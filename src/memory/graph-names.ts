/** Entity-name and relation-type normalisation, and the name similarity the merge loop uses. */

/** Quotes, brackets and sentence punctuation that wrap names without being part of them. */
const WRAPPING =
  /^[\s"'`“”‘’「」『』《》〈〉()（）[\]【】{}<>.,，。、!！?？:：;；~～]+|[\s"'`“”‘’「」『』《》〈〉()（）[\]【】{}<>.,，。、!！?？:：;；~～]+$/gu;

/**
 * The key an entity is unique by: Unicode NFKC (full-width → half-width), lower case, inner white
 * space collapsed, wrapping quotes and punctuation removed. `「Alice」`, `ＡＬＩＣＥ` and `alice`
 * are one entity.
 */
export function normalizeName(name: string): string {
  return name.normalize('NFKC').toLowerCase().replace(/\s+/g, ' ').replace(WRAPPING, '').trim();
}

/** Relation types: NFKC, lower case, runs of white space and hyphens become `_` (`Lives in` → `lives_in`). */
export function normalizeRelationType(type: string): string {
  return type
    .normalize('NFKC')
    .toLowerCase()
    .trim()
    .replace(/[\s-]+/g, '_');
}

/** Character bigrams of a normalised name without spaces; a one-character name is its own bigram. */
export function nameBigrams(normalized: string): Set<string> {
  const chars = [...normalized.replace(/\s+/g, '')];
  if (chars.length < 2) return new Set(chars);
  const grams = new Set<string>();
  for (let i = 0; i + 1 < chars.length; i++) grams.add(`${chars[i]}${chars[i + 1]}`);
  return grams;
}

export function jaccard(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size === 0 && b.size === 0) return 0;
  let shared = 0;
  for (const g of a) if (b.has(g)) shared++;
  return shared / (a.size + b.size - shared);
}

/**
 * A light English stemmer for search tokens: plural and -ing/-ed endings only. Index and query go
 * through the same function, so it only has to be consistent, not linguistically right; anything
 * heavier (Porter) merges words people keep apart (`news`/`new`, `organ`/`organisation`).
 */

const VOWEL = /[aeiouy]/;
const UNDOUBLE = /([bdfgmnprt])\1$/;
/** consonant-vowel-consonant, the shape of `mak(e)`, `hik(e)`, `mov(e)` after the ending goes. */
const SHORT_CVC = /^[^aeiouy]*[aeiouy][^aeiouywx]$/;

function restoreStem(stem: string): string {
  if (UNDOUBLE.test(stem)) return stem.slice(0, -1);
  if (SHORT_CVC.test(stem)) return `${stem}e`;
  return stem;
}

export function stemEnglish(word: string): string {
  const w = word.toLowerCase();
  if (w.length <= 3) return w;
  if (w.endsWith("'s") || w.endsWith('’s')) return stemEnglish(w.slice(0, -2));
  if (w.endsWith('ies') && w.length > 4) return `${w.slice(0, -3)}y`;
  if (/(?:ss|x|z|ch|sh)es$/.test(w)) return w.slice(0, -2);
  if (w.endsWith('s') && !/(?:ss|us|is|ous)$/.test(w)) return w.slice(0, -1);
  if (w.endsWith('ing') && w.length > 5) {
    const stem = w.slice(0, -3);
    if (VOWEL.test(stem)) return restoreStem(stem);
  }
  if (w.endsWith('ed') && w.length > 4) {
    const stem = w.endsWith('ied') ? `${w.slice(0, -3)}y` : w.slice(0, -2);
    if (VOWEL.test(stem)) return w.endsWith('ied') ? stem : restoreStem(stem);
  }
  return w;
}

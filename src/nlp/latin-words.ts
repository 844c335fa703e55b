/**
 * Word-level tokenising of non-Han text. Symbols people ask about exactly (emails, URLs, versions
 * such as v1.2.3, decimals such as 3.5, phone numbers such as 555-0123, identifiers such as
 * sensor_01) stay whole; a sentence-final period is not part of the word before it.
 */

const EMAIL = String.raw`[\p{L}\p{N}._%+-]+@[\p{L}\p{N}-]+(?:\.[\p{L}\p{N}-]+)+`;
const URL = String.raw`https?:\/\/[^\s\u3000-\u303f\uff00-\uffef]+[^\s\u3000-\u303f\uff00-\uffef.,;:!?)]`;
/** Letters/digits joined by `.` `-` `:` `/` `_`, each joiner followed by more letters or digits. */
const WORD = String.raw`[\p{L}\p{M}\p{N}_]+(?:['’][\p{L}]+)?(?:[.\-:/@#][\p{L}\p{M}\p{N}_]+)*`;
const PUNCT = String.raw`[^\s\p{L}\p{M}\p{N}_]`;
const LATIN_TOKEN = new RegExp(`${EMAIL}|${URL}|${WORD}|${PUNCT}`, 'gu');

const LETTER_OR_DIGIT = /[\p{L}\p{N}]/u;
const DIGIT = /\p{N}/u;
/** A token that is matched exactly rather than stemmed. */
const SYMBOL_SHAPE = /[\p{N}_@]|\p{L}[.:/]\p{L}|^https?:/u;

/** Words, symbols and single punctuation marks, in order. */
export function latinTokens(text: string): string[] {
  return Array.from(text.matchAll(LATIN_TOKEN), (m) => m[0]);
}

export function isPunctuation(token: string): boolean {
  return !LETTER_OR_DIGIT.test(token);
}

export function hasDigit(token: string): boolean {
  return DIGIT.test(token);
}

/** Numbers, versions, identifiers, emails, URLs: kept whole and never stemmed. */
export function isSymbol(token: string): boolean {
  return SYMBOL_SHAPE.test(token);
}

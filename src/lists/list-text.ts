/**
 * How list names and items are cleaned and compared. People say the same item many ways ("Milk",
 * " milk.", "ｍｉｌｋ", "牛奶。"), and the same list many ways ("groceries", "the groceries list",
 * "购物" for "购物清单"), so both are compared by a key rather than by their text: without it,
 * "add milk" twice would put milk on the list twice and "milk is done" would not find "Milk".
 */

/** Sentence-ending punctuation (half- and full-width) that says nothing about the item itself. */
const TRAILING_PUNCTUATION = /[\s.,;:!?~。，、；：！？…～]+$/u;
const CONTROL = /\p{Cc}/u;
/** Words around a list's name that do not name it: "the shopping list", "my to-do list", "购物清单". */
const LIST_PREFIX = /^(?:the|my|our)\s+/u;
const LIST_SUFFIX = /(?:\s+list|清单|列表)$/u;

/** Why a text cannot be stored; undefined when it can. */
export type TextProblem = 'empty' | 'too_long' | 'control_characters';

/**
 * The text as stored: inner white space collapsed, surrounding white space and trailing
 * punctuation dropped; the characters themselves are kept as written.
 */
export function cleanText(text: string): string {
  return text.replace(/\s+/gu, ' ').trim().replace(TRAILING_PUNCTUATION, '');
}

/** What is wrong with a cleaned text, if anything. Lengths count characters, not UTF-16 units. */
export function textProblem(clean: string, maxChars: number): TextProblem | undefined {
  if (clean === '') return 'empty';
  if (CONTROL.test(clean)) return 'control_characters';
  if ([...clean].length > maxChars) return 'too_long';
  return undefined;
}

/** White space next to a Chinese character, which separates nothing ("纯 牛奶" is "纯牛奶"). */
const SPACE_BY_HAN = /\s+(?=\p{Script=Han})|(?<=\p{Script=Han})\s+/gu;

/**
 * The key an item is compared by: full-width → half-width, lower case, cleaned as {@link cleanText},
 * no spaces next to Chinese characters.
 */
export function itemKey(text: string): string {
  return cleanText(text.normalize('NFKC').toLowerCase()).replace(SPACE_BY_HAN, '');
}

/**
 * The key a list is unique by: like {@link itemKey}, then without "the"/"my" in front and
 * " list"/"清单"/"列表" behind, and without spaces and punctuation, so "To-do list", "todo" and
 * "the to do list" are one list.
 */
export function listKey(name: string): string {
  const words = name
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
  const core = words.replace(LIST_PREFIX, '').replace(LIST_SUFFIX, '').trim();
  // "List" alone (or "清单") names nothing but a list: keep it rather than return an empty key.
  return (core === '' ? words : core).replace(/\s+/gu, '');
}

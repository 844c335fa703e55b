/**
 * What the local intent engine's replies call a device or a place (issue 29): the words the person
 * used for it when they named it, else its name in the reply's language. A Chinese reply said
 * "已打开ceiling和Kitchen light。" for "打开客厅的灯": now it says the Chinese aliases (吸顶灯,
 * 厨房灯), and "打开 Kitchen Light" is answered with "Kitchen Light", as said. An English reply
 * prefers an English name or alias over a Chinese one the same way.
 *
 * "As said" is found in the person's words rather than carried from the match: the template and
 * the compositional recognisers both return registered names, and a phrase of the entity (its
 * name or an alias) that occurs in the words (whole words in English) is what the person called
 * it. The phrase is given as registered, so its capitals stay.
 */
import { type Language, nameInLanguage } from '../shared/language.js';
import { normalizeText } from './text-normalize.js';

export interface Named {
  name: string;
  aliases: readonly string[];
}

/** The person's words, normalised once for every name a reply says. */
export interface Heard {
  normal: string;
}

export function heard(text: string | undefined): Heard | undefined {
  if (text === undefined) return undefined;
  const normal = normalizeText(text);
  return normal === '' ? undefined : { normal };
}

/** The phrase of `item` the person said (the longest, when several occur), else its name in `language`. */
export function sayName(item: Named, language: Language, words?: Heard): string {
  const phrases = [item.name, ...item.aliases].filter((phrase) => phrase.trim() !== '');
  if (words !== undefined) {
    let said: string | undefined;
    let saidLength = 0;
    for (const phrase of phrases) {
      const normal = normalizeText(phrase);
      if (normal.length > saidLength && occurs(words.normal, normal)) {
        said = phrase;
        saidLength = normal.length;
      }
    }
    if (said !== undefined) return said;
  }
  return nameInLanguage(phrases, language);
}

/** A phrase in the words: anywhere in Chinese, as whole words where the phrase ends in Latin letters or digits. */
function occurs(words: string, phrase: string): boolean {
  if (phrase === '') return false;
  let from = words.indexOf(phrase);
  while (from >= 0) {
    const before = words[from - 1];
    const after = words[from + phrase.length];
    const wordLike = (ch: string | undefined) => ch !== undefined && /[\p{Script=Latin}\p{N}]/u.test(ch);
    const startsLatin = wordLike(phrase[0]);
    const endsLatin = wordLike(phrase.at(-1));
    if (!(startsLatin && wordLike(before)) && !(endsLatin && wordLike(after))) return true;
    from = words.indexOf(phrase, from + 1);
  }
  return false;
}

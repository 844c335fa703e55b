/**
 * The two languages HomeAgent speaks, and which one a text is in: answers the kernel composes
 * (approval requests, notices) follow the language of the input they answer.
 */
export type Language = 'en' | 'zh';

/** Han characters, CJK punctuation and full-width forms. */
const CHINESE = /[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]/u;

/** `zh` when the text holds any Chinese character, `en` otherwise (also for empty text). */
export function textLanguage(text: string): Language {
  return CHINESE.test(text) ? 'zh' : 'en';
}

/** Whether a phrase is in `language`: Chinese holds a Chinese character, English none. */
export function inLanguage(phrase: string, language: Language): boolean {
  return textLanguage(phrase) === language;
}

/**
 * What to call something in `language` among its names (the name first, then its aliases): the
 * first written in that language, else the first. A reply in Chinese says 厨房灯 for an entity
 * named "Kitchen light" with that alias, and "Kitchen light" when it has no Chinese name.
 */
export function nameInLanguage(names: readonly string[], language: Language): string {
  const usable = names.filter((name) => name.trim() !== '');
  return usable.find((name) => inLanguage(name, language)) ?? usable[0] ?? '';
}

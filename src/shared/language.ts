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

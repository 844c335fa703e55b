/**
 * Which language the page speaks and which locale it writes dates and numbers in, from the
 * browser's languages. Kept apart from i18n.ts (the strings) and format.ts (the formatters) so both
 * read it without importing each other.
 */

/** The language the page speaks: Chinese for zh* browsers, else English. */
export function pickLanguage(languages: readonly string[]): 'zh' | 'en' {
  const first = languages[0] ?? 'en';
  return first.toLowerCase().startsWith('zh') ? 'zh' : 'en';
}

/**
 * The locale dates and numbers are written in: Chinese pages always zh-CN (yyyy/M/d, 24-hour);
 * English pages the browser's own first locale (en-GB writes 03/12/2026, de-DE 3.12.2026), not
 * forced to the US.
 */
export function pickLocale(languages: readonly string[]): string {
  if (pickLanguage(languages) === 'zh') return 'zh-CN';
  const first = languages[0];
  if (first === undefined) return 'en';
  try {
    return Intl.getCanonicalLocales(first)[0] ?? 'en';
  } catch {
    return 'en'; // a malformed tag: the browser's own default English
  }
}

// Read through globalThis so the unit tests (Node, no DOM types) can import the pure functions above.
const browser = (globalThis as { navigator?: { languages?: readonly string[]; language?: string } }).navigator;
const browserLanguages: readonly string[] = browser?.languages?.length ? browser.languages : browser?.language ? [browser.language] : [];

export const LANGUAGE = pickLanguage(browserLanguages);
export const LOCALE = pickLocale(browserLanguages);

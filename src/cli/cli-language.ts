/**
 * Which of HomeAgent's two languages homeagentctl answers in: the one the terminal's locale names,
 * read the POSIX way (LC_ALL, then LC_MESSAGES, then LANG; the first one set wins). A zh locale
 * (zh_CN.UTF-8, zh_TW, zh) gets Chinese; anything else, or none, English. The daemon has no say:
 * the same daemon answers an owner in a Chinese terminal and a script under LANG=C.
 */
import type { Language } from '../shared/language.js';

export function cliLanguage(env: NodeJS.ProcessEnv = process.env): Language {
  const locale = [env.LC_ALL, env.LC_MESSAGES, env.LANG].find((value) => value !== undefined && value !== '') ?? '';
  return /^zh([_.@-]|$)/i.test(locale) ? 'zh' : 'en';
}

/**
 * One recalled item as a line a person or the model reads: who said it, how long ago and on what
 * date, then what was said ("Anna, 3 days ago (2024-05-06): the spare key is under the blue flower
 * pot"), with the date its time words point at and whether it is no longer so. The prompt,
 * `homeagentctl memory search` and the web page's inspector all show items this way.
 */
import type { RecallItem } from './recall.js';

export type LineLanguage = 'en' | 'zh';

const DAY = 24 * 3600 * 1000;

const WORDS = {
  en: {
    today: 'today',
    yesterday: 'yesterday',
    daysAgo: (n: number) => `${n} days ago`,
    weeksAgo: (n: number) => (n === 1 ? 'a week ago' : `${n} weeks ago`),
    monthsAgo: (n: number) => (n === 1 ? 'a month ago' : `${n} months ago`),
    refersTo: (date: string) => `[for ${date}]`,
    superseded: '[no longer so]',
  },
  zh: {
    today: '今天',
    yesterday: '昨天',
    daysAgo: (n: number) => `${n}天前`,
    weeksAgo: (n: number) => `${n}周前`,
    monthsAgo: (n: number) => `${n}个月前`,
    refersTo: (date: string) => `[指 ${date}]`,
    superseded: '[已不再如此]',
  },
} as const;

/** "3 days ago" / "3天前". */
export function ago(at: number, now: number, language: LineLanguage = 'en'): string {
  const w = WORDS[language];
  const days = Math.floor((startOfDay(now) - startOfDay(at)) / DAY);
  if (days <= 0) return w.today;
  if (days === 1) return w.yesterday;
  if (days < 14) return w.daysAgo(days);
  if (days < 60) return w.weeksAgo(Math.round(days / 7));
  return w.monthsAgo(Math.round(days / 30));
}

/** The item as one line (line breaks inside become " / "). */
export function recallLine(item: RecallItem, now: number, language: LineLanguage = 'en'): string {
  const w = WORDS[language];
  const date = isoDate(item.at);
  const speaker = item.speaker && item.speaker !== '' ? item.speaker : undefined;
  let text = item.text;
  // Documents carry "Anna: ..." already; the line names the speaker once, up front.
  if (speaker && (text.startsWith(`${speaker}: `) || text.startsWith(`${speaker}：`))) text = text.slice(speaker.length + 2);
  const extras = [
    ...(item.refers_to !== undefined ? [w.refersTo(isoDate(item.refers_to))] : []),
    ...(item.superseded ? [w.superseded] : []),
  ];
  const head = `${speaker ? `${speaker}, ` : ''}${ago(item.at, now, language)} (${date})`;
  return `${head}: ${text.replace(/\s*\n\s*/g, ' / ')}${extras.length > 0 ? ` ${extras.join(' ')}` : ''}`;
}

function isoDate(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

function startOfDay(ms: number): number {
  return Math.floor(ms / DAY) * DAY;
}

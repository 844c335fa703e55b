/**
 * The date a sentence's time words point at, resolved against when it was said: "next Tuesday"
 * said on Friday 3 May is Tuesday 7 May, "下周二" likewise, "tomorrow" / "明天" the next day.
 * Memory stores the resolved date with the fact, because "next Tuesday" means nothing a week later.
 * Days are calendar days in the given time-zone offset (UTC by default: the daemon's clock).
 */

const DAY = 24 * 3600 * 1000;
const WEEKDAYS_EN = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];
/** 周日 / 星期天 is day 0, like Date.getUTCDay. */
const WEEKDAYS_ZH: Record<string, number> = { 日: 0, 天: 0, 一: 1, 二: 2, 三: 3, 四: 4, 五: 5, 六: 6 };
const ZH_NUMBERS: Record<string, number> = { 一: 1, 两: 2, 二: 2, 三: 3, 四: 4, 五: 5, 六: 6, 七: 7, 八: 8, 九: 9, 十: 10 };

/** Midnight (ms) of the day `text` points at, said at `saidAt`; undefined when it names no day. */
export function resolveTimeWords(text: string, saidAt: number, offsetMinutes = 0): number | undefined {
  const offset = offsetMinutes * 60 * 1000;
  const today = Math.floor((saidAt + offset) / DAY) * DAY - offset;
  const weekday = new Date(today + offset).getUTCDay();
  const lower = text.toLowerCase();
  const inDays = (n: number) => today + n * DAY;

  if (/\bday after tomorrow\b|后天/.test(lower)) return inDays(2);
  if (/\btomorrow\b|明天|明日/.test(lower)) return inDays(1);
  if (/\byesterday\b|昨天/.test(lower)) return inDays(-1);
  if (/\btonight\b|\btoday\b|今天|今晚/.test(lower)) return inDays(0);
  const inN = /\bin (\d{1,3}) days?\b/.exec(lower) ?? /(\d{1,3}|[一两二三四五六七八九十])\s*天(?:以)?后/.exec(text);
  if (inN?.[1]) return inDays(Number(inN[1]) || ZH_NUMBERS[inN[1]] || 0);

  const en = /\b(next|this|on|last)?\s*(sunday|monday|tuesday|wednesday|thursday|friday|saturday)\b/.exec(lower);
  if (en?.[2]) return inDays(weekdayDelta(weekday, WEEKDAYS_EN.indexOf(en[2]), en[1]));
  const zh = /(下下|下|这|本|上)?(?:个)?(?:周|星期|礼拜)([一二三四五六日天])/.exec(text);
  if (zh?.[2] !== undefined) {
    const target = WEEKDAYS_ZH[zh[2]] ?? 0;
    const which = zh[1] === '下' ? 'next' : zh[1] === '下下' ? 'after_next' : zh[1] === '上' ? 'last' : zh[1] ? 'this' : undefined;
    return inDays(weekdayDelta(weekday, target, which));
  }
  return undefined;
}

/**
 * Days from `from` to the weekday `to`. "next X" is X of the coming week (Monday-based); "this X"
 * and a bare X are the next X from today (today itself for "this"); "last X" the one before.
 */
function weekdayDelta(from: number, to: number, which: string | undefined): number {
  const mondayBased = (d: number) => (d + 6) % 7;
  const ahead = (to - from + 7) % 7;
  switch (which) {
    case 'next':
      return 7 - mondayBased(from) + mondayBased(to);
    case 'after_next':
      return 14 - mondayBased(from) + mondayBased(to);
    case 'last':
      return -((from - to + 7) % 7 || 7);
    case 'this':
      return ahead;
    default:
      return ahead === 0 ? 7 : ahead;
  }
}

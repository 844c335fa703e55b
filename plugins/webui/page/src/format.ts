/**
 * Every date, time and number the page prints, in the page's locale (locale.ts): Chinese pages
 * write 2026/12/3 14:05 with a 24-hour clock, English ones whatever the browser's locale writes.
 * One module, so no view formats a date its own way; the formatters are made once and reused.
 */
import { LANGUAGE, LOCALE } from './locale';

/** Chinese pages pin the 24-hour clock; other locales keep their own. */
const clock: Intl.DateTimeFormatOptions = LANGUAGE === 'zh' ? { hourCycle: 'h23' } : {};
const DAY: Intl.DateTimeFormatOptions = { year: 'numeric', month: 'numeric', day: 'numeric' };
const MINUTE: Intl.DateTimeFormatOptions = { hour: '2-digit', minute: '2-digit', ...clock };

const dateTimeFormat = new Intl.DateTimeFormat(LOCALE, { ...DAY, ...MINUTE, second: '2-digit' });
const dateFormat = new Intl.DateTimeFormat(LOCALE, DAY);
const dayMonthFormat = new Intl.DateTimeFormat(LOCALE, { month: 'numeric', day: 'numeric' });
const timeFormat = new Intl.DateTimeFormat(LOCALE, MINUTE);
const dayTimeFormat = new Intl.DateTimeFormat(LOCALE, { month: 'numeric', day: 'numeric', ...MINUTE });
const relativeFormat = new Intl.RelativeTimeFormat(LOCALE, { numeric: 'auto' });
const numberFormats = new Map<number, Intl.NumberFormat>();

function toDate(value: string | number | Date): Date | undefined {
  const date = value instanceof Date ? value : new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

/** Local date and time to the second; what is not a date is shown as it came. */
export function dateTime(value: string | number | null | undefined): string {
  if (value === null || value === undefined || value === '') return '';
  const date = toDate(value);
  return date === undefined ? String(value) : dateTimeFormat.format(date);
}

/** The local day only: 2026/12/3, 12/3/2026, 03/12/2026. */
export function dateOnly(ms: number): string {
  return dateFormat.format(ms);
}

/** Hours and minutes: 14:05, 2:05 PM. */
export function timeOfDay(ms: number): string {
  return timeFormat.format(ms);
}

/** Day and month with hours and minutes, without the year: 12/3 14:05. */
export function dayAndTime(ms: number): string {
  return dayTimeFormat.format(ms);
}

/**
 * A time axis tick: hours and minutes within a day; on longer spans the day and month where the
 * day changes from the tick before (`previousMs`), the time of day between.
 */
export function timeTick(ms: number, spanMs: number, previousMs?: number): string {
  if (spanMs <= 36 * 3_600_000) return timeFormat.format(ms);
  const sameDay = previousMs !== undefined && new Date(previousMs).toDateString() === new Date(ms).toDateString();
  return sameDay ? timeFormat.format(ms) : dayMonthFormat.format(ms);
}

/** A number in the locale's digits grouping and decimal sign, at most `fractionDigits` decimals. */
export function formatNumber(n: number, fractionDigits = 2): string {
  let format = numberFormats.get(fractionDigits);
  if (format === undefined) {
    format = new Intl.NumberFormat(LOCALE, { maximumFractionDigits: fractionDigits });
    numberFormats.set(fractionDigits, format);
  }
  return format.format(n);
}

/** "3 min ago" / "3 分钟前" through the browser's own relative-time wording. */
export function relativeTime(ms: number, now = Date.now()): string {
  const seconds = Math.round((ms - now) / 1000);
  const abs = Math.abs(seconds);
  if (abs < 60) return relativeFormat.format(seconds, 'second');
  if (abs < 3600) return relativeFormat.format(Math.round(seconds / 60), 'minute');
  if (abs < 86400) return relativeFormat.format(Math.round(seconds / 3600), 'hour');
  return relativeFormat.format(Math.round(seconds / 86400), 'day');
}

const unitFormats = new Map<string, Intl.NumberFormat>();
function unit(n: number, name: string): string {
  let format = unitFormats.get(name);
  if (format === undefined) {
    format = new Intl.NumberFormat(LOCALE, { style: 'unit', unit: name, unitDisplay: 'short', maximumFractionDigits: 1 });
    unitFormats.set(name, format);
  }
  return format.format(n);
}

/** 3725 s → "1 hr 2 min" / "1小时 2分钟": the two largest units, the second left out when it is 0. */
export function duration(seconds: number): string {
  const d = Math.floor(seconds / 86400);
  const h = Math.floor((seconds % 86400) / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = Math.floor(seconds % 60);
  const [first, second]: [[number, string], [number, string]] =
    d > 0
      ? [
          [d, 'day'],
          [h, 'hour'],
        ]
      : h > 0
        ? [
            [h, 'hour'],
            [m, 'minute'],
          ]
        : [
            [m, 'minute'],
            [s, 'second'],
          ];
  // Under a minute the seconds are all there is to say.
  const parts = first[0] > 0 || second[0] === 0 ? [unit(first[0], first[1])] : [];
  if (second[0] > 0) parts.push(unit(second[0], second[1]));
  return parts.join(' ');
}

/** 1536 → "1.5 KB" in the locale's decimal sign. */
export function bytes(n: number): string {
  if (n < 1024) return unit(n, 'byte');
  if (n < 1024 * 1024) return unit(n / 1024, 'kilobyte');
  return unit(n / 1024 / 1024, 'megabyte');
}

import { evalError } from './eval-error.js';

const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];

// "1:47 pm on 18 May, 2023": the only shape LoCoMo uses; the comma and a dot after an
// abbreviated month are optional so hand-written conversations in the same format also load.
const DATE_TIME = /^\s*(\d{1,2}):(\d{2})\s*([ap])\.?m\.?\s+on\s+(\d{1,2})\s+([a-z]+)\.?\s*,?\s+(\d{4})\s*$/i;

const EXAMPLE = '"1:47 pm on 18 May, 2023"';

/** A month from its English name or an abbreviation of at least three letters ("Sep", "Sept"). */
function monthIndex(word: string): number {
  const lower = word.toLowerCase();
  if (lower.length < 3) return -1;
  return MONTHS.findIndex((name) => name.startsWith(lower));
}

/**
 * Reads a LoCoMo `session_N_date_time` ("1:47 pm on 18 May, 2023") as epoch milliseconds. The
 * data carries no time zone, so it is read as UTC: only order and distance between sessions
 * matter to a memory, and UTC keeps the figures the same on every machine.
 */
export function parseLocomoDateTime(text: string): number {
  const match = DATE_TIME.exec(text);
  if (!match) throw evalError(`${JSON.stringify(text)} is not a date like ${EXAMPLE}`);
  const [, hourText, minuteText, meridiem, dayText, monthText, yearText] = match as unknown as [
    string,
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  const hour12 = Number(hourText);
  const minute = Number(minuteText);
  const day = Number(dayText);
  const year = Number(yearText);
  const month = monthIndex(monthText);
  if (hour12 < 1 || hour12 > 12) throw evalError(`${JSON.stringify(text)}: hour ${hour12} is not 1–12 on a 12-hour clock`);
  if (minute > 59) throw evalError(`${JSON.stringify(text)}: minute ${minute} is not 0–59`);
  if (month < 0) throw evalError(`${JSON.stringify(text)}: ${JSON.stringify(monthText)} is not a month name`);
  // Day 0 of the next month is the last day of this one.
  if (day < 1 || day > utcDate(year, month + 1, 0).getUTCDate())
    throw evalError(`${JSON.stringify(text)}: ${MONTHS[month]} ${year} has no day ${day}`);
  // 12 am is midnight and 12 pm is noon.
  const hour = (hour12 % 12) + (meridiem.toLowerCase() === 'p' ? 12 : 0);
  const utc = utcDate(year, month, day);
  utc.setUTCHours(hour, minute, 0, 0);
  return utc.getTime();
}

/** Midnight UTC of a day; day 0 is the last day of the month before. */
function utcDate(year: number, month: number, day: number): Date {
  const date = new Date(0);
  // setUTCFullYear, unlike Date.UTC, does not move years 0–99 to the 1900s.
  date.setUTCFullYear(year, month, day);
  return date;
}

/**
 * Five-field cron schedules (minute hour day-of-month month day-of-week) in local time, for time
 * triggers. Each field takes `*`, numbers, names (jan-dec, sun-sat, any case), ranges `a-b`, lists
 * `a,b` and steps `*\/n`, `a-b/n` and `a/n` (a to the field's end). Day-of-week 0 and 7 are Sunday;
 * a weekday range ending on sun (`fri-sun`) runs to the end of the week.
 *
 * Day-of-month and day-of-week follow Vixie cron: when both are restricted (neither starts with
 * `*`) a day matches if EITHER matches (`0 9 1 * mon` = the 1st and every Monday); otherwise both
 * must match, so `*\/2` in one of them still combines with the other by AND.
 *
 * Daylight saving time: the search walks wall-clock time and converts each candidate to a real
 * instant. A time the clock skips (spring forward, 02:30 when 02:00 jumps to 03:00) fires at the
 * same minute after the jump (03:30), and several such times in the skipped hour fire once. A time
 * the clock shows twice (fall back) fires once, at its first occurrence; schedules that repeat
 * within the hour (`*\/15`) pause during the repeated hour instead of firing twice.
 */
import { HomeAgentError } from '../shared/errors.js';

export interface CronSchedule {
  readonly expression: string;
  /** The first matching minute strictly after `after` (seconds are dropped). */
  next(after: Date): Date;
}

interface FieldSpec {
  name: string;
  min: number;
  max: number;
  names?: readonly string[];
}

const MONTH_NAMES = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const DAY_NAMES = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];

const FIELDS: readonly FieldSpec[] = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day-of-month', min: 1, max: 31 },
  // Names count from the field's minimum: jan = 1, sun = 0.
  { name: 'month', min: 1, max: 12, names: MONTH_NAMES },
  { name: 'day-of-week', min: 0, max: 7, names: DAY_NAMES },
];

/** Days each month can have (February: 29, in leap years). */
const MONTH_DAYS = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

const MINUTE_MS = 60_000;
/** Feb 29 on a day-of-week AND rule can be 8 years away (2096 → 2104); beyond that nothing matches. */
const SEARCH_YEARS = 9;

/** Parses a cron expression; throws HA_ERR_AUTOMATION_CONFIG naming the field that is wrong. */
export function parseCron(expression: string): CronSchedule {
  const parts = expression.trim().split(/\s+/);
  if (parts.length !== 5 || parts[0] === '') {
    const found = parts[0] === '' ? 0 : parts.length;
    throw cronError(
      expression,
      undefined,
      `has ${found} field${found === 1 ? '' : 's'}; it needs 5: minute hour day-of-month month day-of-week (macros like @daily are not supported)`,
    );
  }
  const sets = FIELDS.map((spec, i) => parseField(expression, spec, parts[i] as string));
  const [minutes, hours, days, months, weekdays] = sets as [boolean[], boolean[], boolean[], boolean[], boolean[]];
  // 7 is another name for Sunday.
  if (weekdays[7]) weekdays[0] = true;
  const domStar = (parts[2] as string).startsWith('*');
  const dowStar = (parts[4] as string).startsWith('*');
  const andRule = domStar || dowStar;
  if (andRule && !MONTH_DAYS.some((length, m) => months[m + 1] === true && days.some((on, d) => on && d <= length))) {
    throw cronError(expression, 'day-of-month', `"${parts[2]}" never occurs in the months "${parts[3]}"`);
  }
  const minuteList = minutes.flatMap((on, m) => (on ? [m] : []));
  const dayMatches = (day: number, weekday: number): boolean =>
    andRule ? days[day] === true && weekdays[weekday] === true : days[day] === true || weekdays[weekday] === true;

  return {
    expression,
    next(after: Date): Date {
      const from = after.getTime();
      if (!Number.isFinite(from)) throw new HomeAgentError('HA_ERR_INTERNAL', `cron "${expression}": next() of an invalid date`);
      // Wall-clock fields held in a UTC timestamp: calendar arithmetic without DST jumps.
      let wall = Date.UTC(after.getFullYear(), after.getMonth(), after.getDate(), after.getHours(), after.getMinutes()) + MINUTE_MS;
      const lastYear = after.getFullYear() + SEARCH_YEARS;
      for (;;) {
        const c = new Date(wall);
        const [y, mo, d, h, mi] = [c.getUTCFullYear(), c.getUTCMonth(), c.getUTCDate(), c.getUTCHours(), c.getUTCMinutes()];
        if (y > lastYear) {
          throw new HomeAgentError('HA_ERR_AUTOMATION_CONFIG', `cron "${expression}" has no time within ${SEARCH_YEARS} years`);
        }
        if (months[mo + 1] !== true) {
          wall = Date.UTC(y, mo + 1, 1);
          continue;
        }
        if (!dayMatches(d, c.getUTCDay())) {
          wall = Date.UTC(y, mo, d + 1);
          continue;
        }
        if (hours[h] !== true) {
          wall = Date.UTC(y, mo, d, h + 1);
          continue;
        }
        const minute = minuteList.find((m) => m >= mi);
        if (minute === undefined) {
          wall = Date.UTC(y, mo, d, h + 1);
          continue;
        }
        // The local instant of that wall time; a skipped time lands after the jump, a repeated one on its first occurrence.
        const real = new Date(y, mo, d, h, minute);
        if (real.getTime() > from) return real;
        // The first occurrence of a repeated wall time is already past: the second is not fired.
        wall = Date.UTC(y, mo, d, h, minute) + MINUTE_MS;
      }
    },
  };
}

/** The daily schedule of a time trigger's `at` (HH:MM, already checked by the schema). */
export function dailyAt(at: string): CronSchedule {
  const [hour, minute] = at.split(':').map(Number);
  const schedule = parseCron(`${minute} ${hour} * * *`);
  return { expression: at, next: (after) => schedule.next(after) };
}

function parseField(expression: string, spec: FieldSpec, text: string): boolean[] {
  const set: boolean[] = new Array(spec.max + 1).fill(false);
  for (const item of text.split(',')) {
    if (item === '') throw cronError(expression, spec.name, `"${text}" has an empty list item`);
    const slash = item.split('/');
    if (slash.length > 2) throw cronError(expression, spec.name, `"${item}" has more than one /`);
    const [range, stepText] = slash as [string, string | undefined];
    let step = 1;
    if (stepText !== undefined) {
      if (!/^\d+$/.test(stepText) || Number(stepText) < 1) {
        throw cronError(expression, spec.name, `"${item}": the step must be a whole number of at least 1`);
      }
      step = Number(stepText);
    }
    let low: number;
    let high: number;
    if (range === '*') {
      low = spec.min;
      // `*` in day-of-week is 0-6: 7 would only repeat Sunday.
      high = spec.name === 'day-of-week' ? 6 : spec.max;
    } else {
      const bounds = range.split('-');
      if (bounds.length > 2) throw cronError(expression, spec.name, `"${item}" is not a value or a range a-b`);
      low = value(expression, spec, bounds[0] as string);
      if (bounds.length === 2) {
        high = value(expression, spec, bounds[1] as string);
        if (spec.name === 'day-of-week' && high === 0 && low > 0) high = 7;
      } else {
        high = stepText === undefined ? low : spec.name === 'day-of-week' ? 6 : spec.max;
      }
      if (low > high) throw cronError(expression, spec.name, `"${item}": the range runs backwards`);
    }
    for (let v = low; v <= high; v += step) set[v] = true;
  }
  return set;
}

function value(expression: string, spec: FieldSpec, text: string): number {
  let n: number;
  if (/^\d+$/.test(text)) n = Number(text);
  else {
    const index = spec.names?.indexOf(text.toLowerCase()) ?? -1;
    if (index < 0) {
      const names = spec.names ? ` or a name ${spec.names[0]}-${spec.names[spec.names.length - 1]}` : '';
      throw cronError(expression, spec.name, `"${text}" is not a number${names}`);
    }
    n = index + (spec.name === 'month' ? 1 : 0);
  }
  if (n < spec.min || n > spec.max) throw cronError(expression, spec.name, `${n} is out of range ${spec.min}-${spec.max}`);
  return n;
}

function cronError(expression: string, field: string | undefined, problem: string): HomeAgentError {
  const where = field === undefined ? '' : `the ${field} field: `;
  return new HomeAgentError('HA_ERR_AUTOMATION_CONFIG', `cron "${expression}": ${where}${problem}`, {
    details: field === undefined ? {} : { field },
  });
}

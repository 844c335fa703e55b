/**
 * Turns what a model writes for "how long" into seconds. Models write durations in many ways, so
 * the accepted forms are generous ("90s", "5m", "1h30m", "1h 30m", "2 hours", "1 hour and 30
 * minutes", "1.5h", 90, "90"), but anything left over after the parts is refused rather than
 * guessed at: a misread timer is worse than a clear error the model can correct. formatSeconds
 * writes seconds back in the short form the model reads in descriptions and errors.
 */

/** How the accepted forms are described to the model in errors and in the tool schema. */
export const DURATION_FORMS = 'a number of seconds (90) or text like "90s", "5m", "1h30m", "1h 30m", "2 hours"';

export type DurationParse = { ok: true; seconds: number } | { ok: false; problem: string };

const UNIT_SECONDS: Readonly<Record<string, number>> = {
  s: 1,
  sec: 1,
  secs: 1,
  second: 1,
  seconds: 1,
  m: 60,
  min: 60,
  mins: 60,
  minute: 60,
  minutes: 60,
  h: 3600,
  hr: 3600,
  hrs: 3600,
  hour: 3600,
  hours: 3600,
  d: 86400,
  day: 86400,
  days: 86400,
};

const PLAIN_NUMBER = /^\d+(?:\.\d+)?$/;
/** One "<number><unit>" part; sticky so that the parts must follow each other with nothing unparsed between. */
const PART = /\s*(\d+(?:\.\d+)?)\s*([a-z]+)\s*(?:,\s*)?(?:and\s+)?/y;
/** Longer inputs are not durations anyone writes; refusing them bounds the parsing work. */
const MAX_TEXT_LENGTH = 64;

/** Parses a duration; never throws. Zero and negative durations are refused. */
export function parseDuration(value: unknown): DurationParse {
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return { ok: false, problem: 'is not a finite number' };
    return positive(value);
  }
  if (typeof value !== 'string')
    return { ok: false, problem: `must be a string or a number, not ${value === null ? 'null' : typeof value}` };
  const text = value.trim().toLowerCase();
  if (text === '') return { ok: false, problem: 'is empty' };
  if (text.length > MAX_TEXT_LENGTH) return { ok: false, problem: `is longer than ${MAX_TEXT_LENGTH} characters` };
  if (PLAIN_NUMBER.test(text)) return positive(Number(text));

  let seconds = 0;
  const seen = new Set<number>();
  PART.lastIndex = 0;
  while (PART.lastIndex < text.length) {
    const at = PART.lastIndex;
    const match = PART.exec(text);
    if (!match) return { ok: false, problem: `cannot read ${JSON.stringify(value.trim().slice(at).trim())}` };
    const [, amount = '', unit = ''] = match;
    const factor = UNIT_SECONDS[unit];
    if (factor === undefined) return { ok: false, problem: `has an unknown unit ${JSON.stringify(unit)} (use s, m, h or d)` };
    // "5m 3m" is more likely a typo than a sum; refusing it lets the model say what it meant.
    if (seen.has(factor)) return { ok: false, problem: `gives the unit ${JSON.stringify(unit)} twice` };
    seen.add(factor);
    seconds += Number(amount) * factor;
  }
  return positive(seconds);
}

function positive(seconds: number): DurationParse {
  if (seconds <= 0) return { ok: false, problem: 'must be longer than zero' };
  // Millisecond resolution is all a timer can honour anyway.
  return { ok: true, seconds: Math.round(seconds * 1000) / 1000 };
}

/** "90 s", "5 min", "1 h 30 min": what the model reads back in descriptions and errors. */
export function formatSeconds(seconds: number): string {
  if (seconds < 60) return `${Number(seconds.toFixed(3))} s`;
  const whole = Math.round(seconds);
  const hours = Math.floor(whole / 3600);
  const minutes = Math.floor((whole % 3600) / 60);
  const rest = whole % 60;
  return [hours > 0 ? `${hours} h` : '', minutes > 0 ? `${minutes} min` : '', rest > 0 ? `${rest} s` : ''].filter(Boolean).join(' ');
}

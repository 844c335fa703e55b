// Cron schedules (src/automation/cron.ts): next() over month and weekday edge cases, the Vixie
// day-of-month/day-of-week rule, names and steps, and invalid expressions naming their field.
// Local time is UTC here; daylight saving time is in cron-dst.test.ts.
process.env.TZ = 'UTC';

import t from 'tap';
import { dailyAt, parseCron } from '../../../src/automation/cron.js';
import { expectError } from '../fixtures/support.js';

const at = (iso: string) => new Date(`${iso}Z`);
const iso = (d: Date) => d.toISOString().slice(0, 16);

t.test('next() finds the first matching minute strictly after the given time', async (t) => {
  const table: Array<[string, string, string, string]> = [
    // expression, after, expected, why
    ['* * * * *', '2026-03-10T10:15:30', '2026-03-10T10:16', 'seconds are dropped, strictly after'],
    ['30 7 * * *', '2026-03-10T07:30', '2026-03-11T07:30', 'the time itself is not "after"'],
    ['30 7 * * *', '2026-03-10T07:29:59', '2026-03-10T07:30', 'just before'],
    ['*/15 * * * *', '2026-03-10T10:46', '2026-03-10T11:00', 'step from *'],
    ['10-50/20 * * * *', '2026-03-10T10:31', '2026-03-10T10:50', 'step in a range: 10, 30, 50'],
    ['5/20 * * * *', '2026-03-10T10:46', '2026-03-10T11:05', 'a/n runs from a to the end: 5, 25, 45'],
    ['0 0 1 1 *', '2026-12-31T23:59', '2027-01-01T00:00', 'new year'],
    ['0 12 31 * *', '2026-04-01T00:00', '2026-05-31T12:00', 'months without a 31st are skipped'],
    ['0 0 29 2 *', '2026-03-01T00:00', '2028-02-29T00:00', 'February 29th waits for a leap year'],
    ['0 0 29 2 *', '2096-03-01T00:00', '2104-02-29T00:00', '2100 is not a leap year'],
    ['0 0 30 * *', '2026-01-30T00:00', '2026-03-30T00:00', 'no February 30th'],
    ['0 9 * * 0', '2026-03-10T00:00', '2026-03-15T09:00', '0 is Sunday (2026-03-15 is a Sunday)'],
    ['0 9 * * 7', '2026-03-10T00:00', '2026-03-15T09:00', '7 is Sunday too'],
    ['0 9 * * sun', '2026-03-10T00:00', '2026-03-15T09:00', 'names'],
    ['0 9 * * MON-fri', '2026-03-14T10:00', '2026-03-16T09:00', 'names in any case, a weekday range (Saturday → Monday)'],
    ['0 9 * * fri-sun', '2026-03-15T10:00', '2026-03-20T09:00', 'a range ending on sun runs to the end of the week'],
    ['0 9 * * 5-7', '2026-03-14T10:00', '2026-03-15T09:00', '5-7 includes Sunday'],
    ['0 8 * jan-mar *', '2026-03-31T08:00', '2027-01-01T08:00', 'month names and the year rollover'],
    ['0 8 1 * mon', '2026-03-02T09:00', '2026-03-09T08:00', 'both restricted: a Monday matches (OR)'],
    ['0 8 1 * mon', '2026-03-30T09:00', '2026-04-01T08:00', 'both restricted: the 1st matches although a Wednesday (OR)'],
    ['0 8 */2 * mon', '2026-03-02T09:00', '2026-03-09T08:00', 'a day-of-month starting with * combines by AND: Mon 9th is odd'],
    ['0 8 */2 * mon', '2026-03-10T09:00', '2026-03-23T08:00', 'AND: Mon 16th is even, Mon 23rd odd'],
    ['0 8 13 * fri', '2026-03-10T00:00', '2026-03-13T08:00', 'OR: Friday the 13th matches both'],
    ['0 0 * 2 *', '2026-02-28T00:00', '2027-02-01T00:00', 'the day after the last of February is March: next year'],
    ['59 23 31 12 *', '2026-12-31T23:58', '2026-12-31T23:59', 'the last minute of the year'],
    ['0,30 9-10 * * *', '2026-03-10T10:30', '2026-03-11T09:00', 'lists and ranges of hours'],
  ];
  for (const [expression, after, expected, why] of table) {
    t.equal(iso(parseCron(expression).next(at(after))), expected, `${expression} after ${after}: ${why}`);
  }
});

t.test('dailyAt is the daily cron of HH:MM and keeps the text as its expression', async (t) => {
  const schedule = dailyAt('07:05');
  t.equal(schedule.expression, '07:05');
  t.equal(iso(schedule.next(at('2026-03-10T07:05'))), '2026-03-11T07:05');
  t.equal(iso(schedule.next(at('2026-03-10T00:00'))), '2026-03-10T07:05');
});

t.test('invalid expressions throw HA_ERR_AUTOMATION_CONFIG naming the field', async (t) => {
  const table: Array<[string, RegExp, string | undefined]> = [
    ['* * * *', /has 4 fields; it needs 5: minute hour day-of-month month day-of-week/, undefined],
    ['* * * * * *', /has 6 fields/, undefined],
    ['@daily', /has 1 field;.*macros like @daily are not supported/, undefined],
    ['60 * * * *', /the minute field: 60 is out of range 0-59/, 'minute'],
    ['* 24 * * *', /the hour field: 24 is out of range 0-23/, 'hour'],
    ['* * 0 * *', /the day-of-month field: 0 is out of range 1-31/, 'day-of-month'],
    ['* * 32 * *', /day-of-month field: 32 is out of range/, 'day-of-month'],
    ['* * * 13 *', /the month field: 13 is out of range 1-12/, 'month'],
    ['* * * * 8', /the day-of-week field: 8 is out of range 0-7/, 'day-of-week'],
    ['* * * foo *', /the month field: "foo" is not a number or a name jan-dec/, 'month'],
    ['* * * * monday', /the day-of-week field: "monday" is not a number or a name sun-sat/, 'day-of-week'],
    ['*/0 * * * *', /the minute field: "\*\/0": the step must be a whole number of at least 1/, 'minute'],
    ['*/x * * * *', /the minute field: .*step/, 'minute'],
    ['1/2/3 * * * *', /more than one \//, 'minute'],
    ['30-10 * * * *', /the minute field: "30-10": the range runs backwards/, 'minute'],
    ['1-2-3 * * * *', /is not a value or a range/, 'minute'],
    ['1,,2 * * * *', /the minute field: "1,,2" has an empty list item/, 'minute'],
    ['-1 * * * *', /the minute field: "" is not a number/, 'minute'],
    ['0 0 30 2 *', /the day-of-month field: "30" never occurs in the months "2"/, 'day-of-month'],
    ['0 0 31 4,6,9,11 *', /never occurs/, 'day-of-month'],
  ];
  for (const [expression, message, field] of table) {
    const error = expectError(t, () => parseCron(expression), 'HA_ERR_AUTOMATION_CONFIG');
    t.match(error.message, message, expression);
    t.match(error.message, `cron "${expression}"`, 'the message quotes the expression');
    t.same(error.details, field === undefined ? {} : { field }, `${expression}: details name the field`);
  }
  // Feb 30 with a restricted weekday is fine: February's Mondays match by OR.
  t.equal(iso(parseCron('0 0 30 2 mon').next(at('2026-03-10T00:00'))), '2027-02-01T00:00');
});

// Cron schedules across daylight saving time (src/automation/cron.ts documents the behaviour), in
// Europe/Berlin: 2026-03-29 02:00 CET jumps to 03:00 CEST; 2026-10-25 03:00 CEST falls back to 02:00 CET.
process.env.TZ = 'Europe/Berlin';

import t from 'tap';
import { parseCron } from '../../../src/automation/cron.js';

const utc = (iso: string) => new Date(`${iso}Z`);
const iso = (d: Date) => d.toISOString().slice(0, 16);

t.test('spring forward: a time in the skipped hour fires once, at the same minute after the jump', async (t) => {
  const daily = parseCron('30 2 * * *');
  // 2026-03-28 01:00 CET = 00:00Z.
  const first = daily.next(utc('2026-03-28T00:00'));
  t.equal(iso(first), '2026-03-28T01:30', 'the day before: 02:30 CET');
  const jumped = daily.next(first);
  t.equal(iso(jumped), '2026-03-29T01:30', 'on the day: 03:30 CEST (02:30 does not exist)');
  t.equal(jumped.getHours(), 3);
  t.equal(iso(daily.next(jumped)), '2026-03-30T00:30', 'the day after: 02:30 CEST again');

  const twice = parseCron('0,30 2 * * *');
  const at0200 = twice.next(utc('2026-03-28T23:00'));
  t.equal(iso(at0200), '2026-03-29T01:00', '02:00 becomes 03:00 CEST');
  t.equal(iso(twice.next(at0200)), '2026-03-30T00:00', '02:30 the same night does not fire a second time');

  const every30 = parseCron('*/30 * * * *');
  t.equal(iso(every30.next(utc('2026-03-29T00:30'))), '2026-03-29T01:00', '01:30 CET → 03:00 CEST: half an hour of real time');
});

t.test('fall back: a repeated time fires once, at its first occurrence; repeating schedules pause', async (t) => {
  const daily = parseCron('30 2 * * *');
  const first = daily.next(utc('2026-10-24T23:00'));
  t.equal(iso(first), '2026-10-25T00:30', '02:30 CEST, the first of the two');
  t.equal(iso(daily.next(first)), '2026-10-26T01:30', 'not again at 02:30 CET: next day');

  const every30 = parseCron('*/30 * * * *');
  t.equal(iso(every30.next(utc('2026-10-25T00:00'))), '2026-10-25T00:30', '02:00 CEST → 02:30 CEST');
  t.equal(iso(every30.next(utc('2026-10-25T00:30'))), '2026-10-25T02:00', '02:30 CEST → 03:00 CET: the repeated hour is skipped');
  t.equal(iso(every30.next(utc('2026-10-25T01:10'))), '2026-10-25T02:00', 'started inside the repeated hour (02:10 CET): 03:00 CET');
});

import t from 'tap';
import { parseDuration } from '../../../../plugins/timer/duration.js';
import { formatSeconds } from '../../../../plugins/timer/index.js';

t.test('accepted forms', async (t) => {
  const good: Array<[unknown, number]> = [
    [90, 90],
    [1.5, 1.5],
    ['90', 90],
    [' 45 ', 45],
    ['90s', 90],
    ['5m', 300],
    ['5 min', 300],
    ['1h30m', 5400],
    ['1h 30m', 5400],
    ['1H30M', 5400],
    ['2 hours', 7200],
    ['1 hour and 30 minutes', 5400],
    ['1 hour, 30 minutes', 5400],
    ['1.5h', 5400],
    ['10 sec', 10],
    ['1d', 86400],
    ['1h 2m 3s', 3723],
  ];
  for (const [input, seconds] of good) {
    t.same(parseDuration(input), { ok: true, seconds }, `${JSON.stringify(input)} is ${seconds} s`);
  }
});

t.test('refused forms name the problem', async (t) => {
  const bad: Array<[unknown, RegExp]> = [
    ['', /empty/],
    ['   ', /empty/],
    ['soon', /unknown unit "soon"|cannot read/],
    ['5 fortnights', /unknown unit "fortnights"/],
    ['1h30', /cannot read "30"/],
    ['-5m', /cannot read/],
    ['5m 3m', /twice/],
    ['0', /longer than zero/],
    [0, /longer than zero/],
    [-10, /longer than zero/],
    ['0s', /longer than zero/],
    [Number.POSITIVE_INFINITY, /finite/],
    [Number.NaN, /finite/],
    [null, /string or a number/],
    [true, /string or a number/],
    ['1'.repeat(80), /longer than 64/],
    ['5m; rm -rf /', /cannot read/],
  ];
  for (const [input, problem] of bad) {
    const parsed = parseDuration(input);
    t.equal(parsed.ok, false, `${String(input)} is refused`);
    if (!parsed.ok) t.match(parsed.problem, problem, `${String(input)}: ${parsed.problem}`);
  }
});

t.test('formatSeconds', async (t) => {
  t.equal(formatSeconds(1), '1 s');
  t.equal(formatSeconds(1.5), '1.5 s');
  t.equal(formatSeconds(300), '5 min');
  t.equal(formatSeconds(5430), '1 h 30 min 30 s');
  t.equal(formatSeconds(86400), '24 h');
});

import t from 'tap';
import { parseDuration, parseNumberWords, parsePercent } from '../../../src/intent/number-words.js';
import { normalizeText } from '../../../src/intent/text-normalize.js';

t.test('numbers: digits, Chinese numerals and English words', async (t) => {
  const cases: Array<[string, number]> = [
    ['25', 25],
    ['2.5', 2.5],
    ['二十五', 25],
    ['十二', 12],
    ['一百零五', 105],
    ['两', 2],
    ['十二点五', 12.5],
    ['一千二百三十四', 1234],
    ['三万五千', 35000],
    ['twenty five', 25],
    ['twenty-five', 25],
    ['one hundred and five', 105],
    ['a hundred', 100],
    ['two point five', 2.5],
    ['zero', 0],
  ];
  for (const [text, expected] of cases) t.equal(parseNumberWords(text), expected, text);
});

t.test('numbers: anything that is not wholly a number is undefined', async (t) => {
  for (const text of ['', 'foo', '25 apples', 'a', 'twenty dogs', '厨房', '五个']) t.equal(parseNumberWords(text), undefined, text);
});

t.test('percent: percent words, fractions and halves', async (t) => {
  t.same(parsePercent('百分之五十'), { value: 50, percent: true });
  t.same(parsePercent('一半'), { value: 50, percent: true });
  t.same(parsePercent('half'), { value: 50, percent: true });
  t.same(parsePercent('a quarter'), { value: 25, percent: true });
  t.same(parsePercent('四分之一'), { value: 25, percent: true });
  t.same(parsePercent('50%'), { value: 50, percent: true });
  t.same(parsePercent('fifty percent'), { value: 50, percent: true });
  t.same(parsePercent('30'), { value: 30, percent: false });
  t.equal(parsePercent('百分之'), undefined);
  t.equal(parsePercent('零分之一'), undefined, 'a zero denominator is not a number');
  t.equal(parsePercent('lots'), undefined);
});

t.test('durations in seconds, Chinese and English', async (t) => {
  const cases: Array<[string, number]> = [
    ['十分钟', 600],
    ['一个半小时', 5400],
    ['1小时30分', 5400],
    ['半小时', 1800],
    ['半个小时', 1800],
    ['两小时半', 9000],
    ['一小时零五分', 3900],
    ['一刻钟', 900],
    ['90秒', 90],
    ['10 minutes', 600],
    ['an hour and a half', 5400],
    ['1 hour and 20 minutes', 4800],
    ['90 seconds', 90],
    ['half an hour', 1800],
    ['one and a half hours', 5400],
    ['a minute and a half', 90],
    ['10min', 600],
    ['two hours thirty minutes', 9000],
  ];
  for (const [text, expected] of cases) t.equal(parseDuration(text), expected, text);
});

t.test('durations: leftovers or missing numbers are undefined', async (t) => {
  for (const text of ['', 'x', '分钟', 'minutes', '10 minutes please', '十分钟吧', 'ten', 'hour and'])
    t.equal(parseDuration(text), undefined, text);
});

t.test('typed fractions in English durations survive normalisation', async (t) => {
  t.equal(normalizeText('1/2 an hour'), '1/2 an hour');
  t.equal(normalizeText('and/or'), 'and or', 'a slash between words is punctuation');
  t.equal(parseDuration('1/2 an hour'), 1800);
  t.equal(parseDuration('1/2 a minute'), 30);
  t.equal(parseDuration('1 and a 1/2 hours'), 5400);
  t.equal(parseDuration('a 1/4 hour'), 900);
  t.equal(parseDuration('11/2 hours'), undefined, 'not a fraction of one');
});

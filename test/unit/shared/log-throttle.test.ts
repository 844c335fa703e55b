import t from 'tap';
import { LogThrottle } from '../../../src/shared/log-throttle.js';

function clock() {
  let ms = 0;
  return {
    monotonic: () => ms,
    advance: (by: number) => {
      ms += by;
    },
  };
}

t.test('a storm is logged perWindow times a window; the next line logged counts what was left out', async (t) => {
  const time = clock();
  const throttle = new LogThrottle({ windowMs: 60_000, perWindow: 3, clock: time });
  const answers = Array.from({ length: 1000 }, () => throttle.admit('over_limit'));
  t.same(answers.slice(0, 3), [{ suppressed: 0 }, { suppressed: 0 }, { suppressed: 0 }], 'the first three pass');
  t.equal(answers.filter((a) => a !== undefined).length, 3, 'the other 997 are quiet');

  time.advance(59_999);
  t.equal(throttle.admit('over_limit'), undefined, 'still the same window');
  time.advance(1);
  t.same(throttle.admit('over_limit'), { suppressed: 998 }, 'the first line of the next window says how many were left out');
  t.same(throttle.admit('over_limit'), { suppressed: 0 }, 'and the count starts over');
});

t.test('each kind has its own window', async (t) => {
  const throttle = new LogThrottle({ windowMs: 1000, perWindow: 1, clock: clock() });
  t.same(throttle.admit('a'), { suppressed: 0 });
  t.equal(throttle.admit('a'), undefined);
  t.same(throttle.admit('b'), { suppressed: 0 }, 'a storm of a does not silence b');
});

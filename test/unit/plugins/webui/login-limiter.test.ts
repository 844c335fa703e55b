/** The login limit: per address, a sliding window, a success clears it, a bounded table. */
import t from 'tap';
import { LoginLimiter } from '../../../../plugins/webui/login-limiter.js';

function limiter(clock: { now: number }, max = 3, windowMs = 10_000, maxAddresses?: number) {
  return new LoginLimiter({
    maxFailures: () => max,
    windowMs: () => windowMs,
    now: () => clock.now,
    ...(maxAddresses === undefined ? {} : { maxAddresses }),
  });
}

t.test('refused after max failures in the window, until the oldest leaves it', (t) => {
  const clock = { now: 0 };
  const limit = limiter(clock);
  for (const at of [0, 2000, 4000]) {
    clock.now = at;
    t.equal(limit.retryAfterMs('a'), 0, `may try at ${at}`);
    limit.failure('a');
  }
  clock.now = 5000;
  t.equal(limit.retryAfterMs('a'), 5000, 'the failure at 0 leaves the window at 10000');
  t.equal(limit.retryAfterMs('b'), 0, 'other addresses are not affected');
  clock.now = 10_000;
  t.equal(limit.retryAfterMs('a'), 0);
  limit.failure('a');
  t.equal(limit.retryAfterMs('a'), 2000, 'the next oldest (2000) leaves at 12000');
  t.end();
});

t.test('a success clears the address', (t) => {
  const clock = { now: 0 };
  const limit = limiter(clock);
  limit.failure('a');
  limit.failure('a');
  limit.success('a');
  limit.failure('a');
  limit.failure('a');
  t.equal(limit.retryAfterMs('a'), 0);
  t.equal(limit.tracked, 1);
  t.end();
});

t.test('the table is bounded: the address that failed longest ago is forgotten first', (t) => {
  const clock = { now: 0 };
  const limit = limiter(clock, 1, 10_000, 3);
  for (const address of ['a', 'b', 'c', 'd']) {
    clock.now += 1;
    limit.failure(address);
  }
  t.equal(limit.tracked, 3);
  t.equal(limit.retryAfterMs('a'), 0, 'forgotten');
  t.ok(limit.retryAfterMs('d') > 0);
  t.end();
});

t.test('a lower limit applies at once', (t) => {
  const clock = { now: 0 };
  let max = 5;
  const limit = new LoginLimiter({ maxFailures: () => max, windowMs: () => 1000, now: () => clock.now });
  limit.failure('a');
  limit.failure('a');
  t.equal(limit.retryAfterMs('a'), 0);
  max = 2;
  t.equal(limit.retryAfterMs('a'), 1000);
  t.end();
});

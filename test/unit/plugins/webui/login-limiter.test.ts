/** The growing delay per address: free failures, then a doubling wait to a cap; never a lock-out; a bounded table. */
import t from 'tap';
import { LoginLimiter } from '../../../../plugins/webui/login-limiter.js';

interface Knobs {
  max?: number;
  windowMs?: number;
  delayMs?: number;
  maxDelayMs?: number;
  maxAddresses?: number;
}

function limiter(clock: { now: number }, knobs: Knobs = {}) {
  return new LoginLimiter({
    maxFailures: () => knobs.max ?? 3,
    windowMs: () => knobs.windowMs ?? 60_000,
    delayMs: () => knobs.delayMs ?? 1000,
    maxDelayMs: () => knobs.maxDelayMs ?? 8000,
    now: () => clock.now,
    ...(knobs.maxAddresses === undefined ? {} : { maxAddresses: knobs.maxAddresses }),
  });
}

t.test('the first failures cost nothing; then each attempt waits longer, doubling up to the cap', (t) => {
  const clock = { now: 0 };
  const limit = limiter(clock);
  for (let i = 0; i < 3; i++) {
    t.equal(limit.retryAfterMs('a'), 0, `free attempt ${i + 1}`);
    limit.failure('a');
  }
  const waits: number[] = [];
  for (let i = 0; i < 6; i++) {
    const wait = limit.retryAfterMs('a');
    waits.push(wait);
    clock.now += wait;
    t.equal(limit.retryAfterMs('a'), 0, 'after the wait the address may try again');
    limit.failure('a');
  }
  t.same(waits, [1000, 2000, 4000, 8000, 8000, 8000], 'doubling, bounded by login_max_delay_ms');
  t.equal(limit.retryAfterMs('b'), 0, 'other addresses are not affected');
  t.end();
});

t.test('refused attempts during the wait are not failures: they do not make the wait longer', (t) => {
  const clock = { now: 0 };
  const limit = limiter(clock, { max: 1 });
  limit.failure('a');
  limit.failure('a');
  t.equal(limit.retryAfterMs('a'), 2000);
  clock.now = 1500;
  t.equal(limit.retryAfterMs('a'), 500, 'asking again only shows what is left');
  t.equal(limit.retryAfterMs('a'), 500);
  clock.now = 2000;
  t.equal(limit.retryAfterMs('a'), 0, 'the owner with the right password gets in once the wait is over');
  t.end();
});

t.test('a success clears the address; a quiet address is forgotten after the window', (t) => {
  const clock = { now: 0 };
  const limit = limiter(clock, { max: 2, windowMs: 10_000 });
  for (let i = 0; i < 4; i++) limit.failure('a');
  limit.success('a');
  t.equal(limit.retryAfterMs('a'), 0);
  t.equal(limit.tracked, 0);
  for (let i = 0; i < 4; i++) limit.failure('b');
  t.equal(limit.retryAfterMs('b'), 4000);
  clock.now = 4000 + 9999;
  t.equal(limit.retryAfterMs('b'), 0, 'waited, and still within the window after the wait');
  limit.failure('b');
  t.equal(limit.retryAfterMs('b'), 8000, 'so the next failure waits longer');
  clock.now += 8000 + 10_000;
  t.equal(limit.retryAfterMs('b'), 0);
  limit.failure('b');
  t.equal(limit.retryAfterMs('b'), 0, 'a window without failures after the wait: the count started again');
  t.end();
});

t.test('the table is bounded: the address that failed longest ago is forgotten first', (t) => {
  const clock = { now: 0 };
  const limit = limiter(clock, { max: 0, maxAddresses: 3 });
  for (const address of ['a', 'b', 'c', 'd']) {
    clock.now += 1;
    limit.failure(address);
  }
  t.equal(limit.tracked, 3);
  t.equal(limit.retryAfterMs('a'), 0, 'forgotten');
  t.ok(limit.retryAfterMs('d') > 0);
  t.end();
});

t.test('changed settings apply at once; a cap below the first wait is the first wait', (t) => {
  const clock = { now: 0 };
  let max = 5;
  let cap = 60_000;
  const limit = new LoginLimiter({
    maxFailures: () => max,
    windowMs: () => 60_000,
    delayMs: () => 3000,
    maxDelayMs: () => cap,
    now: () => clock.now,
  });
  limit.failure('a');
  limit.failure('a');
  t.equal(limit.retryAfterMs('a'), 0);
  max = 2;
  t.equal(limit.retryAfterMs('a'), 3000);
  limit.failure('a');
  cap = 1000;
  t.equal(limit.retryAfterMs('a'), 3000, 'never shorter than the first wait');
  t.end();
});

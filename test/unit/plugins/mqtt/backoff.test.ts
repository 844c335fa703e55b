// Reconnect waits (src/shared/backoff.ts, the SDK's, used by MQTT, Home Assistant, OneBot and the wake word) and the QoS 1 re-delivery rule (duplicate-filter.ts):
// pure logic, checked with injected randomness and time.
import t from 'tap';
import { CAPACITY, DuplicateFilter, WINDOW_MS } from '../../../../plugins/mqtt/duplicate-filter.js';
import { backoffDelay, backoffRange, ReconnectBackoff } from '../../../../src/shared/backoff.js';

const BOUNDS = { min_ms: 1000, max_ms: 60_000 };

t.test('waits double from min_ms to max_ms with equal jitter, never outside the bounds', async (t) => {
  t.same(backoffRange(0, BOUNDS), { low: 1000, high: 1000 }, 'the first wait is min_ms');
  t.same(backoffRange(1, BOUNDS), { low: 1000, high: 2000 });
  t.same(backoffRange(2, BOUNDS), { low: 2000, high: 4000 });
  t.same(backoffRange(5, BOUNDS), { low: 16_000, high: 32_000 });
  t.same(backoffRange(6, BOUNDS), { low: 30_000, high: 60_000 }, 'capped: half to all of max_ms');
  t.same(backoffRange(5000, BOUNDS), { low: 30_000, high: 60_000 }, 'no overflow after many attempts');
  t.equal(
    backoffDelay(3, BOUNDS, () => 0),
    4000,
  );
  t.equal(
    backoffDelay(3, BOUNDS, () => 0.999999),
    8000,
  );
  t.equal(
    backoffDelay(3, BOUNDS, () => 0.5),
    6000,
  );
  t.same(backoffRange(0, { min_ms: 5000, max_ms: 1000 }), { low: 5000, high: 5000 }, 'a max below min means min');

  let seed = 42;
  const random = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  const backoff = new ReconnectBackoff(() => BOUNDS, random);
  const waits = Array.from({ length: 12 }, () => backoff.next());
  t.equal(backoff.attempts, 12);
  for (const [n, wait] of waits.entries()) {
    const { low, high } = backoffRange(n, BOUNDS);
    t.ok(wait >= low && wait <= high, `wait ${n} = ${wait} within [${low}, ${high}]`);
  }
  t.ok(new Set(waits.slice(6)).size > 1, 'capped waits are still spread');
  backoff.reset();
  t.equal(backoff.next(), 1000, 'after a reset the next outage starts at min_ms');
});

t.test('bounds are read at every wait, so a changed setting applies at once', async (t) => {
  let bounds = { min_ms: 100, max_ms: 1000 };
  const backoff = new ReconnectBackoff(
    () => bounds,
    () => 1,
  );
  t.equal(backoff.next(), 100);
  t.equal(backoff.next(), 200);
  bounds = { min_ms: 100, max_ms: 150 };
  t.equal(backoff.next(), 150);
});

t.test('a re-delivery with DUP set is recognised; a new message with the same payload is not', async (t) => {
  let now = 0;
  const filter = new DuplicateFilter(() => now);
  filter.connected(false);
  const on = Buffer.from('ON');
  t.notOk(filter.isDuplicate(7, 'door/bell', on, false), 'first copy');
  t.ok(filter.isDuplicate(7, 'door/bell', on, true), 'same id, topic and payload with DUP: a re-delivery');
  t.notOk(filter.isDuplicate(8, 'door/bell', on, false), 'same payload, next id: a second ring');
  t.notOk(filter.isDuplicate(7, 'door/bell', on, false), 'same id again without DUP on the same connection: the id was reused');
  t.notOk(
    filter.isDuplicate(9, 'door/bell', Buffer.from('OFF'), true),
    'DUP for a message never seen (its first copy was lost): delivered',
  );
  t.notOk(filter.isDuplicate(8, 'door/other', on, true), 'another topic');
  now += WINDOW_MS + 1;
  t.notOk(filter.isDuplicate(8, 'door/bell', on, true), 'too old to be a re-delivery');
});

t.test('without DUP, a copy on a later connection of a resumed session is recognised', async (t) => {
  const filter = new DuplicateFilter(() => 0);
  filter.connected(false);
  const payload = Buffer.from('21.5');
  t.notOk(filter.isDuplicate(40, 'sensor/t', payload, false));
  filter.connected(true);
  t.ok(filter.isDuplicate(40, 'sensor/t', payload, false), 'the broker re-sent it without DUP (aedes does)');
  t.notOk(filter.isDuplicate(41, 'sensor/t', payload, false), 'a new message');
  filter.connected(false);
  t.equal(filter.size, 0, 'a lost session re-sends nothing: the memory is dropped');
  t.notOk(filter.isDuplicate(41, 'sensor/t', payload, false));
});

t.test('the memory is bounded', async (t) => {
  const filter = new DuplicateFilter(() => 0);
  filter.connected(false);
  for (let id = 1; id <= CAPACITY + 100; id++) filter.isDuplicate(id % 65535, 't', Buffer.from(String(id)), false);
  t.equal(filter.size, CAPACITY);
  t.notOk(filter.isDuplicate(1, 't', Buffer.from('1'), true), 'the oldest was forgotten');
  t.ok(filter.isDuplicate(CAPACITY + 100, 't', Buffer.from(String(CAPACITY + 100)), true));
});

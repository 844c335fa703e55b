import t from 'tap';
import { type NewTimer, TimerBook } from '../../../../plugins/timer/timer-book.js';
import { isPaused, type PausedTimer, type RunningTimer } from '../../../../plugins/timer/timer-file.js';

const START = Date.UTC(2026, 0, 5, 8, 0, 0);
const DAY_MS = 86_400_000;

/** A book over a clock the test moves by hand. */
function book(): { book: TimerBook; advance(ms: number): void; now(): number } {
  let now = START;
  const advance = (ms: number) => {
    now += ms;
  };
  return { book: new TimerBook(() => now), advance, now: () => now };
}

function timer(overrides: Partial<NewTimer> = {}): NewTimer {
  return {
    message: 'take the pizza out',
    duration_ms: 600_000,
    source: 'voice',
    channel: 'voice:kitchen',
    trust: 'household',
    ...overrides,
  };
}

t.test('add makes a running timer that rings after its duration', async (t) => {
  const { book: b } = book();
  const set = b.add(timer({ name: 'pizza' }));
  t.match(set.id, /^t[0-9a-f]{6}$/);
  t.same(set, {
    id: set.id,
    message: 'take the pizza out',
    name: 'pizza',
    duration_ms: 600_000,
    set_at: START,
    source: 'voice',
    channel: 'voice:kitchen',
    trust: 'household',
    fires_at: START + 600_000,
  });
  t.notOk('name' in b.add(timer()), 'no name key when none was given');
  t.equal(b.size, 2);
});

t.test('pause keeps the time left, resume counts it down again from now', async (t) => {
  const { book: b, advance, now } = book();
  const { id } = b.add(timer());
  advance(100_000);
  const paused = b.pause(id);
  t.ok(isPaused(paused));
  t.equal(paused.remaining_ms, 500_000);
  t.notOk('fires_at' in paused, 'a paused timer has no moment to ring');
  advance(3_600_000);
  t.equal(b.remainingMs(b.get(id)), 500_000, 'time does not run while paused');
  t.same(b.due(), [], 'a paused timer is never due, however long it waits');
  const resumed = b.resume(id);
  t.equal(resumed.fires_at, now() + 500_000);
  t.notOk('remaining_ms' in resumed);
  t.equal(resumed.duration_ms, 600_000, 'pausing does not change the set length');
});

t.test('pausing a paused timer and resuming a running one are refused, the timer untouched', async (t) => {
  const { book: b } = book();
  const { id } = b.add(timer());
  t.throws(() => b.resume(id), {
    name: 'ToolError',
    info: { reason: 'rejected', field: 'id', detail: `timer ${id} is not paused; it is running` },
  });
  t.equal((b.get(id) as RunningTimer).fires_at, START + 600_000, 'still running at its time');
  b.pause(id);
  const before = b.get(id);
  t.throws(() => b.pause(id), { name: 'ToolError', info: { reason: 'rejected', field: 'id', detail: `timer ${id} is already paused` } });
  t.equal(b.get(id), before, 'the paused timer is the same object');
});

t.test('unknown ids are not_found for every operation', async (t) => {
  const { book: b } = book();
  b.add(timer());
  for (const operation of [
    () => b.get('tnope00'),
    () => b.remove('tnope00'),
    () => b.pause('tnope00'),
    () => b.resume('tnope00'),
    () => b.adjust('tnope00', 60_000, DAY_MS),
  ]) {
    t.throws(operation, { name: 'ToolError', info: { reason: 'not_found', field: 'id', detail: /"tnope00"/, hint: /timer_list/ } });
  }
  t.equal(b.size, 1);
});

t.test('adjust moves the time left and the set length of a running timer', async (t) => {
  const { book: b, advance, now } = book();
  const { id } = b.add(timer());
  advance(60_000);
  const longer = b.adjust(id, 120_000, DAY_MS) as RunningTimer;
  t.equal(longer.fires_at, START + 720_000);
  t.equal(longer.duration_ms, 720_000);
  const shorter = b.adjust(id, -300_000, DAY_MS) as RunningTimer;
  t.equal(shorter.fires_at, START + 420_000);
  t.equal(shorter.duration_ms, 420_000);
  t.equal(b.remainingMs(shorter), 420_000 - (now() - START));
});

t.test('adjust of a paused timer changes what it has left and keeps it paused', async (t) => {
  const { book: b } = book();
  const { id } = b.add(timer());
  b.pause(id);
  const adjusted = b.adjust(id, -60_000, DAY_MS) as PausedTimer;
  t.ok(isPaused(adjusted));
  t.equal(adjusted.remaining_ms, 540_000);
  t.equal(adjusted.duration_ms, 540_000);
});

t.test('taking away more than is left makes the timer due now, paused or not', async (t) => {
  const { book: b, advance, now } = book();
  const running = b.add(timer());
  const paused = b.add(timer({ message: 'tea' }));
  b.pause(paused.id);
  advance(60_000);
  const ringing = b.adjust(running.id, -3_600_000, DAY_MS);
  t.same(ringing, { ...ringing, fires_at: now(), duration_ms: 60_000 }, 'rings now; its length is the time it ran');
  const unpausedToRing = b.adjust(paused.id, -600_000, DAY_MS);
  t.notOk(isPaused(unpausedToRing), 'a paused timer taken to zero is no longer paused');
  t.same(
    b.due().map((due) => due.id),
    [running.id, paused.id],
  );
});

t.test('adjust past the longest allowed is refused and changes nothing', async (t) => {
  const { book: b } = book();
  const { id } = b.add(timer({ duration_ms: DAY_MS - 60_000 }));
  const before = b.get(id);
  t.throws(() => b.adjust(id, 120_000, DAY_MS), {
    name: 'ToolError',
    info: { reason: 'range', field: 'seconds', detail: /86460 s left.*86400 s/ },
  });
  t.equal(b.get(id), before);
  t.equal((b.adjust(id, 60_000, DAY_MS) as RunningTimer).fires_at, START + DAY_MS, 'exactly the longest is fine');
});

t.test('byRemaining puts paused timers among running ones by the time they have left', async (t) => {
  const { book: b, advance } = book();
  const long = b.add(timer({ message: 'long', duration_ms: 900_000 }));
  const paused = b.add(timer({ message: 'paused', duration_ms: 300_000 }));
  b.pause(paused.id);
  const short = b.add(timer({ message: 'short', duration_ms: 200_000 }));
  advance(150_000);
  t.same(
    b.byRemaining().map((entry) => entry.message),
    ['short', 'paused', 'long'],
  );
  t.same(
    b.all().map((entry) => entry.id),
    [long.id, paused.id, short.id],
    'all() keeps the order they were set, pausing included',
  );
});

t.test('remove and clear take timers out and return them', async (t) => {
  const { book: b } = book();
  const one = b.add(timer({ message: 'one' }));
  b.add(timer({ message: 'two' }));
  t.equal(b.remove(one.id).message, 'one');
  t.same(
    b.clear().map((entry) => entry.message),
    ['two'],
  );
  t.same(b.clear(), [], 'clearing an empty book is fine');
  t.equal(b.size, 0);
});

t.test('a book starts from stored timers as they are', async (t) => {
  const stored: RunningTimer = {
    id: 'tkept01',
    message: 'm',
    duration_ms: 1000,
    set_at: START,
    trust: 'household',
    source: 's',
    channel: 'c',
    fires_at: START + 1000,
  };
  const b = new TimerBook(() => START, [stored]);
  t.equal(b.get('tkept01'), stored);
});

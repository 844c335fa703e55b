import t from 'tap';
import { EventRing } from '../../../../plugins/webui/event-ring.js';

const ids = (events: Array<{ id: number }>) => events.map((e) => e.id);

t.test('ids count from 1; each event carries its SSE frame', async (t) => {
  const ring = new EventRing(5);
  t.equal(ring.lastId, 0);
  t.same(ring.since(0), { reset: false, events: [] }, 'nothing yet, nothing missed');
  const first = ring.push('agent.text_delta', { delta: 'Hel\nlo' });
  t.equal(first.id, 1);
  t.equal(
    first.frame,
    'id: 1\nevent: agent.text_delta\ndata: {"delta":"Hel\\nlo"}\n\n',
    'a newline in the data stays inside one data line',
  );
  t.equal(ring.push('daemon.status', undefined).frame, 'id: 2\nevent: daemon.status\ndata: null\n\n');
  t.same(ids(ring.since(0).events), [1, 2]);
  t.same(ids(ring.since(1).events), [2]);
  t.same(ring.since(2), { reset: false, events: [] });
});

t.test('a client behind the buffer gets a reset and everything kept', async (t) => {
  const ring = new EventRing(3);
  for (let i = 0; i < 5; i++) ring.push('e', i);
  t.equal(ring.oldestId, 3);
  t.equal(ring.since(2).reset, false, 'the event right before the oldest kept one: nothing lost');
  t.same(ids(ring.since(2).events), [3, 4, 5]);
  t.equal(ring.since(1).reset, true, 'event 2 was lost');
  t.same(ids(ring.since(1).events), [3, 4, 5]);
  t.same(ids(ring.since(4).events), [5]);
  t.same(ring.since(5), { reset: false, events: [] });
  const later = ring.since(9);
  t.equal(later.reset, true, 'an id this run never gave (an earlier run of the daemon) is a reset');
  t.same(ids(later.events), [3, 4, 5]);
  t.same(
    ring.since(1).events.map((e) => e.data),
    [2, 3, 4],
    'the data of the kept events, oldest first',
  );
});

t.test('listeners get every new event until they stop', async (t) => {
  const ring = new EventRing(10);
  const seen: number[] = [];
  const stop = ring.subscribe((e) => void seen.push(e.id));
  t.equal(ring.listenerCount, 1);
  ring.push('a', 1);
  ring.push('b', 2);
  stop();
  ring.push('c', 3);
  t.same(seen, [1, 2]);
  t.equal(ring.listenerCount, 0);
});

t.test('a capacity below 1 is a programming error', async (t) => {
  t.throws(() => new EventRing(0), RangeError);
  t.throws(() => new EventRing(1.5), RangeError);
});

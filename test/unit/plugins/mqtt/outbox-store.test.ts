// The MQTT outbox (plugins/mqtt/outbox-store.ts): mqtt.js's Store contract, reading the journal
// back after a clean close and after a crash, torn lines, compaction, the bound, a directory that
// cannot be written; and the message-id provider that keeps new ids off stored messages.
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { IPublishPacket, Packet } from 'mqtt';
import t from 'tap';
import { OutboxMessageIds } from '../../../../plugins/mqtt/outbox-message-ids.js';
import { COMPACT_MIN_DEAD, OUTBOX_JOURNAL, OutboxStore } from '../../../../plugins/mqtt/outbox-store.js';
import { captureLogs, silentLogs } from '../../fixtures/support.js';

const log = silentLogs().child('mqtt');

function publish(id: number, payload: string | Buffer = `message ${id}`, topic = `test/${id}`): IPublishPacket {
  return { cmd: 'publish', messageId: id, topic, payload: Buffer.from(payload), qos: 1, retain: false, dup: false };
}

function open(dir: string, max = 1000, onDrop?: (packet: Packet) => void): OutboxStore {
  return new OutboxStore({ dir, maxMessages: () => max, log, ...(onDrop ? { onDrop } : {}) }).open();
}

function put(store: OutboxStore, packet: Packet): void {
  let called = false;
  store.put(packet, (error) => {
    if (error) throw error;
    called = true;
  });
  if (!called) throw new Error('put did not call back');
}

function del(store: OutboxStore, id: number): void {
  store.del({ messageId: id }, (error) => {
    if (error) throw error;
  });
}

async function drain(store: OutboxStore): Promise<Packet[]> {
  const packets: Packet[] = [];
  for await (const packet of store.createStream()) packets.push(packet as Packet);
  return packets;
}

function journalLines(dir: string): string[] {
  return readFileSync(join(dir, OUTBOX_JOURNAL), 'utf8').split('\n').filter(Boolean);
}

t.test('the Store contract: put, get, del, createStream in order, errors for missing packets', async (t) => {
  const store = open(t.testdir());
  t.teardown(() => store.close());
  put(store, publish(7));
  put(store, publish(3));
  put(store, publish(9));

  await new Promise<void>((resolve) =>
    store.get({ messageId: 3 }, (error, packet) => {
      t.equal(error, undefined);
      t.equal((packet as IPublishPacket).topic, 'test/3');
      resolve();
    }),
  );
  await new Promise<void>((resolve) =>
    store.get({ messageId: 4 }, (error) => {
      t.match(error, { message: 'missing packet' }, 'get of an unknown id is an error, as in mqtt.js');
      resolve();
    }),
  );
  const stream = store.createStream();
  put(store, publish(11));
  t.same(
    (await drain(store)).map((p) => p.messageId),
    [7, 3, 9, 11],
    'oldest first',
  );
  const early: Packet[] = [];
  for await (const packet of stream) early.push(packet as Packet);
  t.same(
    early.map((p) => p.messageId),
    [7, 3, 9],
    'a stream shows the packets kept when it was made',
  );

  // A PUBREL replaces its PUBLISH and keeps its place.
  put(store, { cmd: 'pubrel', messageId: 3 });
  t.same(
    (await drain(store)).map((p) => `${p.cmd}:${p.messageId}`),
    ['publish:7', 'pubrel:3', 'publish:9', 'publish:11'],
  );

  await new Promise<void>((resolve) =>
    store.del({ messageId: 7 }, (error, packet) => {
      t.equal(error, undefined);
      t.equal(packet?.messageId, 7, 'del hands back the packet it removed');
      resolve();
    }),
  );
  await new Promise<void>((resolve) =>
    store.del({ messageId: 7 }, (error) => {
      t.match(error, { message: 'missing packet' });
      resolve();
    }),
  );
  t.equal(store.size, 3);
  t.ok(store.has(9));
  t.notOk(store.has(7));

  let refused: Error | undefined;
  store.put({ cmd: 'publish', topic: 'x', payload: Buffer.alloc(0), qos: 1, retain: false, dup: false }, (error) => {
    refused = error;
  });
  t.match(refused, { message: /without a message id/ });
});

t.test('a reopened store has what was kept, binary payloads byte for byte', async (t) => {
  const dir = t.testdir();
  const binary = Buffer.from([0, 1, 2, 255, 254, 10, 13, 0]);
  const first = open(dir);
  put(first, publish(1, binary, 'bin/topic'));
  put(first, publish(2));
  put(first, { ...publish(3), qos: 2, retain: true });
  put(first, { cmd: 'pubrel', messageId: 4 });
  del(first, 2);
  first.close();

  const second = open(dir);
  t.teardown(() => second.close());
  const packets = await drain(second);
  t.same(
    packets.map((p) => `${p.cmd}:${p.messageId}`),
    ['publish:1', 'publish:3', 'pubrel:4'],
  );
  const one = packets[0] as IPublishPacket;
  t.ok(Buffer.isBuffer(one.payload) && (one.payload as Buffer).equals(binary), 'binary payload intact');
  t.equal(one.topic, 'bin/topic');
  const three = packets[1] as IPublishPacket;
  t.equal(three.qos, 2);
  t.equal(three.retain, true);
  t.equal(second.stats().loaded, 3);
});

t.test('a store that was never closed (a crash) is read back by the next one', async (t) => {
  const dir = t.testdir();
  const crashed = open(dir);
  for (let id = 1; id <= 50; id++) put(crashed, publish(id));
  del(crashed, 10);
  // No close(): the process "died". Every put was written before its callback.
  const next = open(dir);
  t.teardown(() => {
    next.close();
    crashed.close();
  });
  t.equal(next.size, 49);
  t.notOk(next.has(10));
});

t.test('torn or garbled lines are skipped and counted; the journal is rewritten clean', async (t) => {
  const dir = t.testdir();
  const first = open(dir);
  put(first, publish(1));
  put(first, publish(2));
  first.close();
  const file = join(dir, OUTBOX_JOURNAL);
  // A write torn by a power cut, then zeros a file system may leave.
  appendFileSync(file, '{"op":"put","cmd":"publish","id":3,"topic":"te');
  appendFileSync(file, '\n\u0000\u0000\u0000\n{"op":"put","cmd":"subscribe","id":5}\n{"op":"del","id":70000}\n');

  const captured = captureLogs();
  const second = new OutboxStore({ dir, maxMessages: () => 100, log: captured.logs.child('mqtt') }).open();
  t.equal(second.size, 2);
  t.equal(second.stats().skipped_lines, 4);
  t.match(captured.text(), /4 unreadable journal line\(s\) skipped/);
  put(second, publish(6));
  second.close();
  t.same(journalLines(dir).length, 3, 'compacted at open: only live records');

  const third = open(dir);
  t.teardown(() => third.close());
  t.equal(third.stats().skipped_lines, 0);
  t.same(
    (await drain(third)).map((p) => p.messageId),
    [1, 2, 6],
  );
});

t.test('compaction keeps the journal near the size of what is pending', async (t) => {
  const dir = t.testdir();
  const store = open(dir, 10_000);
  let maxLines = 0;
  for (let round = 0; round < 4000; round++) {
    const id = (round % 60_000) + 1;
    put(store, publish(id));
    if (round >= 5) del(store, id - 5);
    maxLines = Math.max(maxLines, journalLines(dir).length);
  }
  t.equal(store.size, 5);
  t.ok(maxLines <= 2 * COMPACT_MIN_DEAD + 20, `journal stayed at ${maxLines} lines at most`);
  store.close();
  const reopened = open(dir);
  t.teardown(() => reopened.close());
  t.same(
    (await drain(reopened)).map((p) => p.messageId),
    [3996, 3997, 3998, 3999, 4000],
  );
});

t.test('the bound drops the oldest publishes, counts them, and keeps PUBRELs', async (t) => {
  const dir = t.testdir();
  const dropped: number[] = [];
  let max = 10;
  const store = new OutboxStore({ dir, maxMessages: () => max, log, onDrop: (p) => void dropped.push(p.messageId ?? -1) }).open();
  put(store, { cmd: 'pubrel', messageId: 100 });
  for (let id = 1; id <= 15; id++) put(store, publish(id));
  t.same(dropped, [1, 2, 3, 4, 5]);
  t.equal(store.stats().dropped, 5);
  t.equal(store.size, 11, 'ten publishes and the PUBREL');
  t.ok(store.has(100));
  store.close();

  max = 4;
  const reopened = new OutboxStore({ dir, maxMessages: () => max, log, onDrop: (p) => void dropped.push(p.messageId ?? -1) }).open();
  t.same(
    (await drain(reopened)).map((p) => p.messageId),
    [100, 12, 13, 14, 15],
    'a lower bound applies at open; the newest stay',
  );
  t.equal(reopened.stats().dropped, 6);
  reopened.close();
  const again = open(dir);
  t.teardown(() => again.close());
  t.equal(again.size, 5, 'the drops were written');
});

t.test('a directory that cannot be used leaves a working in-memory store that says so', async (t) => {
  const dir = t.testdir();
  const notADir = join(dir, 'file');
  writeFileSync(notADir, 'x');
  const captured = captureLogs();
  const store = new OutboxStore({ dir: join(notADir, 'outbox'), maxMessages: () => 10, log: captured.logs.child('mqtt') }).open();
  t.teardown(() => store.close());
  put(store, publish(1));
  t.equal(store.size, 1);
  t.match(store.stats().problem, /cannot read .* pending messages are kept in memory only/);
  t.match(captured.text(), /kept in memory only/);
});

t.test('OutboxMessageIds never hands out an id that is stored or in use', async (t) => {
  const stored = new Set([1, 2, 4]);
  const ids = new OutboxMessageIds((id) => stored.has(id));
  t.equal(ids.allocate(), 3);
  t.equal(ids.allocate(), 5);
  t.equal(ids.getLastAllocated(), 5);
  t.notOk(ids.register(5), 'an id in use cannot be registered again');
  ids.clear();
  // At a CONNACK mqtt.js registers the stored packets it re-sends: they must be accepted.
  t.ok(ids.register(1));
  t.ok(ids.register(2));
  t.equal(ids.allocate(), 6);
  ids.deallocate(6);
  t.ok(ids.register(6));

  const full = new OutboxMessageIds(() => true);
  t.equal(full.allocate(), null, 'no free id: mqtt.js queues the publish');

  const wrap = new OutboxMessageIds((id) => id < 65535);
  t.equal(wrap.allocate(), 65535);
  t.equal(wrap.allocate(), null);
});

// The embedded broker's file-backed persistence: aedes-persistence's own conformance suite (the
// tests every aedes persistence must pass), then what it adds — the state after a reload, torn and
// corrupt files, the size limits.
import assert from 'node:assert';
import { cpSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { SNAPSHOT_FILE } from '../../../../plugins/mqtt/broker-journal.js';
import { FilePersistence, type StoredPacket } from '../../../../plugins/mqtt/broker-persistence.js';
import { emptyCounters } from '../../../../plugins/mqtt/types.js';
import { LogManager } from '../../../../src/log/logger.js';

const require = createRequire(import.meta.url);
type AbstractSuite = (options: {
  test: (name: string, fn: (t: unknown) => Promise<void>) => void;
  persistence: () => Promise<unknown>;
  testAsync: boolean;
}) => void;
const abstractPersistence = require('aedes-persistence/abstract.js') as AbstractSuite;

interface LogRecord {
  level: string;
  msg: string;
  [key: string]: unknown;
}

function recordingLog() {
  const records: LogRecord[] = [];
  const logs = new LogManager({
    level: 'debug',
    levels: {},
    destination: { write: (line: string) => void records.push(JSON.parse(line) as LogRecord) },
  });
  return { log: logs.child('mqtt.broker'), records };
}

const silent = new LogManager({ level: 'silent', levels: {} }).child('mqtt.broker');
const broker = { id: 'broker-test' };

async function reopen(dir: string, log = silent): Promise<FilePersistence> {
  const persistence = new FilePersistence({ dir, log });
  await persistence.setup(broker);
  return persistence;
}

async function drain(stream: AsyncIterable<unknown>): Promise<unknown[]> {
  const items: unknown[] = [];
  for await (const item of stream) items.push(item);
  return items;
}

const publish = (topic: string, payload: string, extra: Partial<StoredPacket> = {}): StoredPacket => ({
  cmd: 'publish',
  topic,
  payload: Buffer.from(payload),
  qos: 1,
  retain: false,
  brokerId: 'broker-old',
  brokerCounter: 1,
  ...extra,
});

t.test('aedes-persistence conformance suite', async (t) => {
  const root = t.testdir();
  // The suite is written for node:test; its assertions are node:assert's, each also counted in tap.
  const suiteAssert = (tt: Test) =>
    new Proxy(assert, {
      get: (target, key) => {
        const method = (target as unknown as Record<string | symbol, unknown>)[key];
        if (typeof method !== 'function') return method;
        return (...args: unknown[]) => {
          (method as (...a: unknown[]) => void)(...args);
          tt.pass(typeof args.at(-1) === 'string' ? (args.at(-1) as string) : String(key));
        };
      },
    });
  abstractPersistence({
    test: (name, fn) => {
      t.test(name, async (tt) => {
        await fn({ plan: () => {}, diagnostic: (message: string) => tt.comment(message), assert: suiteAssert(tt) });
      });
    },
    persistence: async () => new FilePersistence({ dir: mkdtempSync(join(root, 'p-')), log: silent }),
    testAsync: true,
  });
});

t.test('retained messages, sessions, queues, QoS 2 state and wills survive a reload', async (t) => {
  const dir = join(t.testdir(), 'stopped');
  const crashed = join(t.testdir(), 'crashed');
  const first = await reopen(dir);
  await first.storeRetained({ ...publish('home/a', 'kept'), retain: true, qos: 0 });
  await first.storeRetained({ ...publish('home/b', 'cleared'), retain: true, qos: 0 });
  await first.storeRetained({ ...publish('home/b', ''), retain: true, qos: 0 });
  await first.addSubscriptions({ id: 'sub' }, [
    { topic: 'home/#', qos: 1, rh: 0, rap: false, nl: false },
    { topic: 'other', qos: 0 },
  ]);
  await first.outgoingEnqueueCombi([{ clientId: 'sub' }], publish('home/x', 'one', { brokerCounter: 1 }));
  await first.outgoingEnqueueCombi([{ clientId: 'sub' }], publish('home/x', 'two', { brokerCounter: 2 }));
  await first.outgoingEnqueueCombi([{ clientId: 'sub' }], publish('home/x', 'three', { brokerCounter: 3 }));
  // one delivered and acknowledged, one given a packet id and in flight
  await first.outgoingUpdate({ id: 'sub' }, { ...publish('home/x', 'one', { brokerCounter: 1 }), messageId: 7 });
  await first.outgoingClearMessageId({ id: 'sub' }, { messageId: 7 });
  await first.outgoingUpdate({ id: 'sub' }, { ...publish('home/x', 'two', { brokerCounter: 2 }), messageId: 8 });
  await first.incomingStorePacket({ id: 'pub' }, { ...publish('home/q2', 'exactly once', { qos: 2 }), messageId: 99 });
  await first.putWill({ id: 'sub' }, { topic: 'home/sub/status', payload: Buffer.from('offline'), qos: 1, retain: true });
  // What a crash leaves (the journal after the start's snapshot; the last change waited for the
  // disk, so the ones before it are written too), and what a stop leaves (one snapshot).
  cpSync(dir, crashed, { recursive: true });
  t.ok(
    readdirSync(crashed).some((name) => name.startsWith('journal-')),
    'the crash copy has a journal',
  );
  await first.close();

  for (const [how, from] of [
    ['after a crash (journal replayed)', crashed],
    ['after a stop (snapshot)', dir],
  ] as const) {
    const second = await reopen(from);
    t.same(
      (await drain(second.createRetainedStream('#'))).map((p) => [(p as StoredPacket).topic, String((p as StoredPacket).payload)]),
      [['home/a', 'kept']],
      `${how}: retained`,
    );
    t.same(
      await second.subscriptionsByClient({ id: 'sub' }),
      [
        { topic: 'home/#', qos: 1, rh: 0, rap: false, nl: false },
        { topic: 'other', qos: 0 },
      ],
      `${how}: subscriptions`,
    );
    t.same(
      (await second.subscriptionsByTopic('home/x')).map((s) => s.clientId),
      ['sub'],
      `${how}: the session still matches new messages`,
    );
    const queue = (await drain(second.outgoingStream({ id: 'sub' }))) as StoredPacket[];
    t.same(
      queue.map((p) => [String(p.payload), p.messageId]),
      [
        ['two', 8],
        ['three', undefined],
      ],
      `${how}: the queue without the acknowledged message, the packet id kept`,
    );
    t.ok(Buffer.isBuffer(queue[0]?.payload), `${how}: payloads come back as Buffers`);
    t.equal(String((await second.incomingGetPacket({ id: 'pub' }, { messageId: 99 })).payload), 'exactly once', `${how}: QoS 2`);
    const wills = (await drain(second.streamWill({ [broker.id]: Date.now() }))) as StoredPacket[];
    t.same(
      wills.map((w) => [w.clientId, String(w.payload)]),
      [],
      `${how}: a will of this broker run is not handed out while it runs`,
    );
    t.same(
      ((await drain(second.streamWill({}))) as StoredPacket[]).map((w) => [w.clientId, String(w.payload)]),
      [['sub', 'offline']],
      `${how}: the will is kept`,
    );
    t.match(second.stats(), { retained: 1, sessions: 1, queued: 2 }, `${how}: counts`);
    await second.close();
  }
});

t.test('the journal is compacted into the snapshot and stays bounded', async (t) => {
  const dir = t.testdir();
  const persistence = await reopen(dir);
  const payload = 'x'.repeat(10_000);
  for (let round = 0; round < 400; round++) {
    await persistence.storeRetained({ ...publish(`home/${round % 10}`, payload), retain: true });
  }
  await persistence.close();
  const files = readdirSync(dir).sort();
  t.same(
    files.filter((name) => !name.startsWith('journal-')),
    [SNAPSHOT_FILE],
    'one snapshot, no temporary file',
  );
  const onDisk = files.reduce((sum, name) => sum + readFileSync(join(dir, name)).length, 0);
  t.ok(onDisk < 2 * 1024 * 1024, `4 MB of writes to 10 topics leave ${onDisk} bytes`);
  const again = await reopen(dir);
  t.equal((await drain(again.createRetainedStream('#'))).length, 10);
  await again.close();
});

t.test('a torn last journal line is dropped with a warning, the rest kept', async (t) => {
  const dir = t.testdir();
  const first = await reopen(dir);
  await first.storeRetained({ ...publish('home/a', 'A'), retain: true });
  // simulate a crash: the journal's file as it is now, plus half a line
  const journal = readdirSync(dir).find((name) => name.startsWith('journal-'));
  if (!journal) throw new Error('no journal file');
  const withTornLine = `${readFileSync(join(dir, journal), 'utf8')}{"op":"retain","topic":"home/b","pa`;
  await first.close();
  const generation = JSON.parse(readFileSync(join(dir, SNAPSHOT_FILE), 'utf8')).generation as number;
  // put the crash state back: the snapshot of before plus that journal
  writeFileSync(join(dir, `journal-${generation}.jsonl`), withTornLine);
  const snapshot = JSON.parse(readFileSync(join(dir, SNAPSHOT_FILE), 'utf8'));
  snapshot.state.retained = [];
  writeFileSync(join(dir, SNAPSHOT_FILE), JSON.stringify(snapshot));
  const { log, records } = recordingLog();
  const second = await reopen(dir, log);
  t.same(
    (await drain(second.createRetainedStream('#'))).map((p) => (p as StoredPacket).topic),
    ['home/a'],
  );
  t.match(records, [{ msg: /half a line/ }], 'warned');
  await second.close();
});

t.test('an unreadable state is moved aside and the broker starts empty', async (t) => {
  const cases: Array<[string, (dir: string) => void]> = [
    ['a snapshot that is not JSON', (dir) => writeFileSync(join(dir, SNAPSHOT_FILE), '{"format": "homeagent-mqtt-br')],
    ['another file under that name', (dir) => writeFileSync(join(dir, SNAPSHOT_FILE), '{"hello": "world"}')],
    [
      'a bad journal line before the end',
      (dir) => writeFileSync(join(dir, 'journal-0.jsonl'), '{"op":"retain","topic":"a"}\nnot json\n{"op":"will_delete","client":"x"}\n'),
    ],
    ['an unknown change', (dir) => writeFileSync(join(dir, 'journal-0.jsonl'), '{"op":"explode"}\n')],
    [
      'a packet of the wrong shape',
      (dir) => writeFileSync(join(dir, 'journal-0.jsonl'), '{"op":"enqueue","clients":["a"],"packet":{"topic":5}}\n'),
    ],
  ];
  for (const [what, damage] of cases) {
    const dir = mkdtempSync(join(t.testdir(), 'c-'));
    damage(dir);
    const before = readdirSync(dir).map((name) => readFileSync(join(dir, name), 'utf8'));
    const { log, records } = recordingLog();
    const persistence = await reopen(dir, log);
    t.same(persistence.stats(), { retained: 0, sessions: 0, queued: 0, stored_bytes: 0 }, `${what}: starts empty`);
    const moved = readdirSync(dir).filter((name) => name.includes('.corrupt-'));
    t.same(
      moved.map((name) => readFileSync(join(dir, name), 'utf8')),
      before,
      `${what}: the damaged files are kept aside, unchanged`,
    );
    t.match(records, [{ level: 'error', msg: /could not be read; moved aside/ }], `${what}: logged as an error`);
    await persistence.storeRetained({ ...publish('home/new', 'works'), retain: true });
    await persistence.close();
    const again = await reopen(dir);
    t.equal((await drain(again.createRetainedStream('#'))).length, 1, `${what}: the new state is written and read back`);
    await again.close();
  }
});

t.test('limits: a full session queue or store drops (counted), never grows', async (t) => {
  const dir = t.testdir();
  const counted = emptyCounters();
  const { log, records } = recordingLog();
  const persistence = new FilePersistence({ dir, log, counters: counted, limits: { maxQueuedPerClient: 3, maxStoredBytes: 200 } });
  await persistence.setup(broker);
  for (let i = 1; i <= 5; i++) {
    await persistence.outgoingEnqueueCombi([{ clientId: 'a' }, { clientId: 'b' }], publish('t', `m${i}`, { brokerCounter: i }));
  }
  t.equal(persistence.stats().queued, 6, 'three a session');
  t.equal(counted.dropped, 4, 'the rest counted');
  t.match(records, [{ level: 'warn', msg: /not queued/ }], 'logged');
  t.equal(records.filter((r) => /not queued/.test(r.msg)).length, 1, 'once a minute, not per message');

  // A session whose client is connected is not held to the count (aedes queues its in-flight messages).
  const connected = new FilePersistence({ dir: t.testdir(), log: silent, limits: { maxQueuedPerClient: 3 } });
  await connected.setup({ id: 'broker-test', clients: { online: {} } });
  for (let i = 1; i <= 5; i++) await connected.outgoingEnqueueCombi([{ clientId: 'online' }], publish('t', `m${i}`, { brokerCounter: i }));
  t.equal(connected.stats().queued, 5, 'a connected client: all five kept');
  // A message kept out of the queue is still delivered: the update aedes makes before sending must not fail.
  await t.resolves(connected.outgoingUpdate({ id: 'absent' }, { ...publish('t', 'x', { brokerCounter: 99 }), messageId: 3 }));
  await connected.close();

  await persistence.storeRetained({ ...publish('big', 'y'.repeat(300)), retain: true });
  t.equal(persistence.stats().retained, 0, 'a retained message over the byte limit is not kept');
  await t.rejects(persistence.incomingStorePacket({ id: 'a' }, { ...publish('big', 'y'.repeat(300)), messageId: 1 }), /full/);
  await persistence.close();
});

// Delivery that survives outages (plugins/mqtt/mqtt-connection.ts + outbox-store.ts) against a real
// mosquitto with persistence: a broker restart in the middle of a 2,000-message QoS 1 burst loses
// nothing; QoS 1 messages published while the broker is down arrive after it is back; messages
// published while disconnected survive a "daemon restart" (the connection stopped and a new one
// made on the same data directory).
import { join } from 'node:path';
import t from 'tap';
import { Mosquitto, mosquittoMissing } from '../../../helpers/mosquitto.js';
import { cleanups, eventually, Inbox, startConnection, testSettings } from './mqtt-test-kit.js';

const skip = mosquittoMissing() ?? false;
const BURST = 2000;
/**
 * mosquitto keeps at most max_queued_messages (default 1000) for a disconnected persistent client
 * and drops the rest: a house broker must allow more than a burst for "nothing lost" to hold.
 */
const BROKER_CONFIG = ['max_queued_messages 10000'];

t.test('mosquitto restarted during a 2,000-message QoS 1 burst: all arrive, re-deliveries are counted', { skip }, async (t) => {
  const atEnd = cleanups(t);
  const dir = t.testdir();
  const broker = await Mosquitto.start({ dir: join(dir, 'broker'), config: BROKER_CONFIG });
  atEnd(() => broker.stop());

  const subscriber = await startConnection(atEnd, testSettings(broker.url), { outboxDir: join(dir, 'sub-outbox') });
  const seen = new Set<number>();
  let deliveries = 0;
  let restart: Promise<void> | undefined;
  let seenAtRestart = 0;
  const inbox = new Inbox();
  subscriber.connection.subscribe('burst/#', 1, (message) => {
    deliveries++;
    seen.add(Number(message.payload.toString()));
    if (restart === undefined && seen.size >= 300) {
      seenAtRestart = seen.size;
      restart = broker.restart();
    }
    inbox.handler(message);
  });
  await subscriber.nextConnect();

  const publisher = await startConnection(atEnd, testSettings(broker.url), { outboxDir: join(dir, 'pub-outbox') });
  await publisher.nextConnect();
  let publishedAtRestart = -1;
  for (let i = 0; i < BURST; i++) {
    await publisher.connection.publish('burst/n', String(i), { qos: 1 });
    if (restart !== undefined && publishedAtRestart < 0) publishedAtRestart = i;
    // Let the sockets move between publishes, as a real producer would.
    if (i % 25 === 24) await new Promise((resolve) => setImmediate(resolve));
  }
  await inbox.until(() => restart !== undefined, 'the restart', 20_000);
  await restart;
  await inbox.until(() => seen.size === BURST, `all ${BURST} distinct messages`, 40_000);

  t.equal(seen.size, BURST, 'every message arrived');
  t.ok(seenAtRestart > 0 && seenAtRestart < BURST, `the restart began after ${seenAtRestart} messages had arrived`);
  t.match(broker.log(), /mosquitto version .* terminating[\s\S]*mosquitto version .* running/, 'mosquitto really restarted');
  await eventually(() => subscriber.counters.reconnects >= 1 && publisher.counters.reconnects >= 1, 'both connections back');
  await eventually(() => publisher.connection.status().outbox.messages === 0, "the publisher's outbox drained", 20_000);
  // Handlers never see a recognised re-delivery; what they got beyond the burst are copies nobody can tell apart.
  const extra = deliveries - BURST;
  t.comment(
    `restart after ${seenAtRestart} received / ${publishedAtRestart < 0 ? 'all' : publishedAtRestart} published; ` +
      `${subscriber.counters.duplicates} re-deliveries recognised and dropped, ${extra} copies delivered again ` +
      '(a publisher re-sending after a lost PUBACK makes a new message the broker cannot tell apart)',
  );
  t.ok(extra >= 0, 'features got each message at least once');
});

t.test('QoS 1 messages published while mosquitto is down arrive after it is back', { skip }, async (t) => {
  const atEnd = cleanups(t);
  const dir = t.testdir();
  const broker = await Mosquitto.start({ dir: join(dir, 'broker'), config: BROKER_CONFIG });
  atEnd(() => broker.stop());
  const subscriber = await startConnection(atEnd, testSettings(broker.url), { outboxDir: join(dir, 'sub-outbox') });
  const inbox = new Inbox();
  subscriber.connection.subscribe('down/#', 1, inbox.handler);
  await subscriber.nextConnect();
  const publisher = await startConnection(atEnd, testSettings(broker.url), { outboxDir: join(dir, 'pub-outbox') });
  await publisher.nextConnect();

  await broker.stop();
  await eventually(() => !publisher.connection.connected, 'the publisher disconnected');
  for (let i = 0; i < 100; i++) await publisher.connection.publish(`down/${i}`, `m${i}`, { qos: 1 });
  t.ok(publisher.connection.status().outbox.messages >= 100, 'kept in the outbox while the broker is away');
  t.equal(inbox.messages.length, 0);

  await broker.start();
  await inbox.count(100, 20_000);
  t.same(new Set(inbox.texts()).size, 100, 'all 100 arrived');
  await eventually(() => publisher.connection.status().outbox.messages === 0, 'the outbox drained', 20_000);
});

t.test('a daemon restart: messages published while disconnected are sent by the next connection on the same data', { skip }, async (t) => {
  const atEnd = cleanups(t);
  const dir = t.testdir();
  const broker = await Mosquitto.start({ dir: join(dir, 'broker'), config: BROKER_CONFIG });
  atEnd(() => broker.stop());
  const subscriber = await startConnection(atEnd, testSettings(broker.url), { outboxDir: join(dir, 'sub-outbox') });
  const inbox = new Inbox();
  subscriber.connection.subscribe('restart/#', 2, inbox.handler);
  await subscriber.nextConnect();

  const settings = testSettings(broker.url);
  const outboxDir = join(dir, 'daemon-outbox');
  const before = await startConnection(atEnd, settings, { outboxDir });
  await before.nextConnect();
  // The retained "online" (QoS 1) sent at connect must be acknowledged first, or it is a 51st stored message.
  await eventually(() => before.connection.status().outbox.messages === 0, 'the online status acknowledged');
  await broker.stop();
  await eventually(() => !before.connection.connected, 'disconnected');
  for (let i = 0; i < 30; i++) await before.connection.publish('restart/q1', `one-${i}`, { qos: 1 });
  for (let i = 0; i < 20; i++) await before.connection.publish('restart/q2', `two-${i}`, { qos: 2 });
  await before.stop();

  await broker.start();
  const after = await startConnection(atEnd, settings, { outboxDir });
  t.equal(after.connection.status().outbox.loaded, 50, 'the new connection found the 50 messages');
  await inbox.count(50, 20_000);
  t.same(new Set(inbox.texts()).size, 50, 'all 50 delivered, none twice');
  // A new publish after the restart must not take the id of a stored one.
  await after.connection.publish('restart/q1', 'fresh', { qos: 1 });
  await inbox.until(() => inbox.texts().includes('fresh'), 'the fresh message');
  await eventually(() => after.connection.status().outbox.messages === 0, 'the outbox drained');
  t.equal(inbox.messages.length, 51);
});

// MqttConnection (plugins/mqtt/mqtt-connection.ts) against real brokers: the same suite runs
// against mosquitto (a process with its own config) and aedes (in-process). A TCP proxy between
// the connection and the broker cuts connections ungracefully or refuses them, so outages happen
// for real without stopping the broker.
import t, { type Test } from 'tap';
import { backoffDelay, backoffRange } from '../../../../src/shared/backoff.js';
import { HomeAgentError } from '../../../../src/shared/errors.js';
import { expectErrorAsync } from '../../fixtures/support.js';
import {
  BROKER_KINDS,
  type BrokerKind,
  cleanups,
  eventually,
  Inbox,
  ManualTimers,
  plainClient,
  startBroker,
  startConnection,
  TcpProxy,
  testSettings,
} from './mqtt-test-kit.js';

for (const { kind, skip } of BROKER_KINDS) {
  t.test(kind, { skip }, async (t) => {
    t.test('QoS 0, 1 and 2 round trips; the status topic says online (retained)', async (t) => roundTrips(t, kind));
    t.test('retained messages reach a later subscriber with the retain flag', async (t) => retained(t, kind));
    t.test('the will says offline when the socket dies, online after the reconnect, offline at stop', async (t) => will(t, kind));
    t.test('reconnect waits grow with jitter within bounds and reset after a stable connection', async (t) => backoff(t, kind));
    t.test('subscriptions are renewed on a broker that lost the session; unsubscribes wait for the link', async (t) =>
      resubscribe(t, kind),
    );
    t.test('a refused login gives a clear status and keeps retrying', async (t) => refusedLogin(t, kind));
    t.test('oversized payloads in are dropped and counted; bad topics and payloads out are refused', async (t) => limits(t, kind));
    t.test('a message handled but not acknowledged comes again after the reconnect and is recognised', async (t) => redelivery(t, kind));
    t.test('while disconnected QoS 0 is dropped and counted, QoS 1 is kept and sent after the reconnect', async (t) => offline(t, kind));
  });
}

async function roundTrips(t: Test, kind: BrokerKind): Promise<void> {
  const atEnd = cleanups(t);
  const broker = await startBroker(t, kind, atEnd);
  const link = await startConnection(atEnd, testSettings(broker.url), { outboxDir: t.testdir() });
  const inbox = new Inbox();
  link.connection.subscribe('rt/#', 2, inbox.handler);
  await link.nextConnect();
  t.ok(link.connection.connected);

  await link.connection.publish('rt/q0', 'zero', { qos: 0 });
  await link.connection.publish('rt/q1', 'one', { qos: 1 });
  await link.connection.publish('rt/q2', 'two', { qos: 2 });
  await inbox.count(3);
  const byTopic = Object.fromEntries(inbox.messages.map((m) => [m.topic, m]));
  t.equal(byTopic['rt/q0']?.qos, 0);
  t.equal(byTopic['rt/q1']?.qos, 1);
  t.equal(byTopic['rt/q2']?.qos, 2);
  t.same(inbox.texts().sort(), ['one', 'two', 'zero']);

  const other = await plainClient(atEnd, broker.url, [`${link.settings.base_topic}/status`]);
  await other.until(() => other.inbox.length > 0, 'the status');
  t.same(other.inbox[0], { topic: `${link.settings.base_topic}/status`, text: 'online', retain: true, qos: 1 });
  await other.client.publishAsync('rt/from/outside', 'hello', { qos: 1 });
  await inbox.until(() => inbox.texts().includes('hello'), 'a message from another client');
  await eventually(() => link.counters.published >= 3, 'acknowledgements counted');
  t.equal(link.counters.received, 4);
  t.equal(link.connection.status().state, 'connected');
  t.equal(link.connection.status().outbox.messages, 0, 'acknowledged messages left the outbox');
}

async function retained(t: Test, kind: BrokerKind): Promise<void> {
  const atEnd = cleanups(t);
  const broker = await startBroker(t, kind, atEnd);
  const publisher = await startConnection(atEnd, testSettings(broker.url), { outboxDir: t.testdir() });
  await publisher.nextConnect();
  await publisher.connection.publish('ret/light', 'on', { qos: 1, retain: true });
  await eventually(() => publisher.connection.status().outbox.messages === 0, 'the retained message acknowledged');

  const later = await startConnection(atEnd, testSettings(broker.url), { outboxDir: t.testdir() });
  const inbox = new Inbox();
  later.connection.subscribe('ret/#', 1, inbox.handler);
  await inbox.count(1);
  t.same(
    { topic: inbox.messages[0]?.topic, text: inbox.texts()[0], retain: inbox.messages[0]?.retain },
    { topic: 'ret/light', text: 'on', retain: true },
  );
  await publisher.connection.publish('ret/light', 'off', { qos: 1 });
  await inbox.count(2);
  t.equal(inbox.messages[1]?.retain, false, 'a live message is not marked retained');
}

async function will(t: Test, kind: BrokerKind): Promise<void> {
  const atEnd = cleanups(t);
  const broker = await startBroker(t, kind, atEnd);
  const proxy = await TcpProxy.start(broker.port);
  atEnd(() => proxy.close());
  const settings = testSettings(proxy.url);
  const status = `${settings.base_topic}/status`;
  const observer = await plainClient(atEnd, broker.url, [status]);
  const link = await startConnection(atEnd, settings, { outboxDir: t.testdir() });
  await link.nextConnect();
  await observer.until(() => observer.inbox.some((m) => m.text === 'online'), 'online');

  const reconnected = link.nextConnect();
  proxy.drop();
  await observer.until(() => observer.inbox.some((m) => m.text === 'offline'), 'the will');
  await reconnected;
  await observer.until(() => observer.inbox.filter((m) => m.text === 'online').length >= 2, 'online again');
  t.same(
    observer.inbox.map((m) => m.text),
    ['online', 'offline', 'online'],
  );
  t.equal(link.counters.reconnects, 1);

  const before = observer.inbox.length;
  await link.stop();
  // The last word is offline. (Under load a broker may see one more takeover reconnect before the
  // stop, so the index of that last message is not fixed.)
  await observer.until(() => observer.inbox.length > before && observer.inbox.at(-1)?.text === 'offline', 'offline at stop');
  t.equal(link.connection.status().state, 'stopped');
  await expectErrorAsync(t, () => link.connection.publish('x/y', 'late'), 'HA_ERR_MQTT_UNAVAILABLE');

  const fresh = await plainClient(atEnd, broker.url, [status]);
  await fresh.until(() => fresh.inbox.length > 0, 'the retained status');
  t.same(fresh.inbox[0], { topic: status, text: 'offline', retain: true, qos: 1 }, 'offline is retained for whoever looks later');
}

async function backoff(t: Test, kind: BrokerKind): Promise<void> {
  const atEnd = cleanups(t);
  const broker = await startBroker(t, kind, atEnd);
  const proxy = await TcpProxy.start(broker.port);
  atEnd(() => proxy.close());
  proxy.refuse = true;
  const timers = new ManualTimers();
  const settings = testSettings(proxy.url, { reconnect_min_ms: 100, reconnect_max_ms: 1600, keepalive_s: 5 });
  const bounds = { min_ms: 100, max_ms: 1600 };
  // Known jitter draws, so each wait can be checked exactly (the range check holds for any draw).
  const draws = [0.1, 0.9, 0.3, 0.7, 0.5, 0.2, 0.8];
  let drawn = 0;
  const random = () => draws[drawn++ % draws.length] ?? 0.5;
  const link = await startConnection(atEnd, settings, { outboxDir: t.testdir(), timers, random });

  const waits: number[] = [];
  for (let n = 0; n < 7; n++) {
    const timer = await timers.next();
    waits.push(timer.ms);
    const { low, high } = backoffRange(n, bounds);
    t.ok(timer.ms >= low && timer.ms <= high, `wait ${n}: ${timer.ms} ms within [${low}, ${high}]`);
    t.equal(
      timer.ms,
      backoffDelay(n, bounds, () => draws[n] ?? 0.5),
      `wait ${n} follows its jitter draw`,
    );
    const status = link.connection.status();
    t.equal(status.state, 'disconnected');
    t.equal(status.failed_attempts, n + 1);
    t.ok(status.next_attempt_in_ms !== null && status.next_attempt_in_ms <= timer.ms);
    timers.fire(timer);
  }
  t.equal(waits[0], 100, 'the first wait is reconnect_min_ms');
  t.same(waits.slice(4), [1200, 960, 1440], 'capped waits stay in [max/2, max] and are spread by the jitter');
  t.ok(proxy.accepted >= 7, 'each wait was followed by an attempt');

  // The broker is back: the pending attempt connects; the stable-connection timer is one keep-alive.
  const pending = await timers.next();
  proxy.refuse = false;
  const connected = link.nextConnect();
  timers.fire(pending);
  await connected;
  const stable = await timers.next();
  t.equal(stable.ms, 5000, 'a connection counts as stable after one keep-alive period');
  t.equal(link.connection.status().failed_attempts, 8, 'not reset before the connection proved stable');

  // It drops before that: the waits continue from where they were.
  proxy.drop();
  const afterFlap = await timers.next();
  const flapRange = backoffRange(8, bounds);
  t.ok(afterFlap.ms >= flapRange.low, `a flapping broker keeps the long wait (${afterFlap.ms} ms)`);
  t.ok(stable.cancelled, 'the stable timer of the lost connection was cancelled');
  const again = link.nextConnect();
  timers.fire(afterFlap);
  await again;
  const stable2 = await timers.next();
  timers.fire(stable2);
  t.equal(link.connection.status().failed_attempts, 0, 'reset once the connection stayed up');
  proxy.drop();
  const fresh = await timers.next();
  t.equal(fresh.ms, 100, 'the next outage starts at reconnect_min_ms again');
  const back = link.nextConnect();
  timers.fire(fresh);
  await back;
}

async function resubscribe(t: Test, kind: BrokerKind): Promise<void> {
  const atEnd = cleanups(t);
  const first = await startBroker(t, kind, atEnd);
  const second = await startBroker(t, kind, atEnd);
  const proxy = await TcpProxy.start(first.port);
  atEnd(() => proxy.close());
  const link = await startConnection(atEnd, testSettings(proxy.url), { outboxDir: t.testdir() });
  const kept = new Inbox();
  const gone = new Inbox();
  link.connection.subscribe('renew/#', 1, kept.handler);
  const removeGone = link.connection.subscribe('gone/#', 1, gone.handler);
  t.same((await link.nextConnect()).session_present, false, 'a new client id has no session');

  // Same broker: the session was kept.
  let next = link.nextConnect();
  proxy.drop();
  t.same((await next).session_present, true, 'the broker kept the session');
  t.equal(link.connection.status().session_present, true);
  const onFirst = await plainClient(atEnd, first.url);
  await onFirst.client.publishAsync('renew/a', 'first', { qos: 1 });
  await kept.count(1);

  // "gone/#" is given up while disconnected: the broker's session still has it, so the unsubscribe is sent after the reconnection.
  proxy.refuse = true;
  proxy.drop();
  await eventually(() => !link.connection.connected, 'the link down');
  removeGone();
  next = link.nextConnect();
  proxy.refuse = false;
  t.same((await next).session_present, true);
  const counted = link.counters.received;
  await onFirst.client.publishAsync('gone/b', 'stale', { qos: 1 });
  await onFirst.client.publishAsync('renew/c', 'sentinel', { qos: 1 });
  await kept.until(() => kept.texts().includes('sentinel'), 'the sentinel');
  t.equal(link.counters.received, counted + 1, 'the broker no longer sends gone/#');
  t.same(gone.texts(), [], 'the handler that was removed got nothing');

  // Another broker, which knows nothing of us: the table is subscribed again.
  proxy.target = second.port;
  next = link.nextConnect();
  proxy.drop();
  t.same((await next).session_present, false, 'the new broker has no session');
  const onSecond = await plainClient(atEnd, second.url);
  await onSecond.client.publishAsync('renew/b', 'second', { qos: 1 });
  await kept.until(() => kept.texts().includes('second'), 'a message on the renewed subscription');
  t.same(link.connection.status().subscriptions, ['renew/#']);
}

async function refusedLogin(t: Test, kind: BrokerKind): Promise<void> {
  const atEnd = cleanups(t);
  const broker = await startBroker(t, kind, atEnd, { users: { homeagent: 'secret' } });
  const wrong = await startConnection(atEnd, testSettings(broker.url, { username: 'homeagent', password: 'wrong' }), {
    outboxDir: t.testdir(),
  });
  await eventually(() => wrong.connection.status().failed_attempts >= 2, 'two refused attempts');
  const status = wrong.connection.status();
  t.equal(status.connected, false);
  t.equal(status.state === 'disconnected' || status.state === 'connecting', true);
  t.match(status.last_error, /the broker refused the login/);
  t.match(status.last_error, /plugin\.mqtt\.username/);
  t.notMatch(JSON.stringify(status), /wrong/, 'the password is not in the status');
  await wrong.stop();

  const right = await startConnection(atEnd, testSettings(broker.url, { username: 'homeagent', password: 'secret' }), {
    outboxDir: t.testdir(),
  });
  await right.nextConnect();
  t.equal(right.connection.status().last_error, null);
}

async function limits(t: Test, kind: BrokerKind): Promise<void> {
  const atEnd = cleanups(t);
  const broker = await startBroker(t, kind, atEnd);
  const link = await startConnection(atEnd, testSettings(broker.url, { max_payload_bytes: 256 }), { outboxDir: t.testdir() });
  const inbox = new Inbox();
  link.connection.subscribe('big/#', 1, inbox.handler);
  let thrown = 0;
  link.connection.subscribe('big/#', 1, () => {
    thrown++;
    throw new Error('a broken feature');
  });
  await link.nextConnect();
  const other = await plainClient(atEnd, broker.url);
  await other.client.publishAsync('big/one', Buffer.alloc(300, 1), { qos: 1 });
  await other.client.publishAsync('big/two', 'small', { qos: 1 });
  await inbox.count(1);
  t.same(inbox.texts(), ['small']);
  t.equal(link.counters.oversized, 1);
  t.equal(thrown, 1, 'a throwing handler got its message and did not stop the other');

  const payload = await expectErrorAsync(t, () => link.connection.publish('big/out', Buffer.alloc(257)), 'HA_ERR_MQTT_PAYLOAD');
  t.match(payload.message, /257 bytes, more than plugin\.mqtt\.max_payload_bytes \(256\)/);
  for (const topic of ['', 'a/+/b', 'a/#']) await expectErrorAsync(t, () => link.connection.publish(topic, 'x'), 'HA_ERR_MQTT_TOPIC');
  for (const filter of ['', 'a/#/b', 'a/b+']) {
    t.throws(() => link.connection.subscribe(filter, 1, () => {}), HomeAgentError, `filter ${JSON.stringify(filter)} refused`);
  }
  t.equal(link.connection.status().outbox.messages, 0, 'nothing refused was stored');
}

async function redelivery(t: Test, kind: BrokerKind): Promise<void> {
  const atEnd = cleanups(t);
  const broker = await startBroker(t, kind, atEnd);
  const proxy = await TcpProxy.start(broker.port);
  atEnd(() => proxy.close());
  const link = await startConnection(atEnd, testSettings(proxy.url), { outboxDir: t.testdir() });
  const inbox = new Inbox();
  let cut = false;
  link.connection.subscribe('bell/#', 1, (message) => {
    inbox.handler(message);
    // Cut the line while the message is being handled: mqtt.js sends the PUBACK only afterwards,
    // so the broker never gets it and must send the message again on the next connection.
    if (!cut) {
      cut = true;
      proxy.drop();
    }
  });
  await link.nextConnect();
  const other = await plainClient(atEnd, broker.url);
  const reconnected = link.nextConnect();
  await other.client.publishAsync('bell/front', 'ring', { qos: 1 });
  await reconnected;
  await eventually(() => link.counters.duplicates === 1, 'the re-delivery recognised');
  t.same(inbox.texts(), ['ring'], 'handed to the feature once');
  await other.client.publishAsync('bell/front', 'ring', { qos: 1 });
  await inbox.count(2);
  t.same(inbox.texts(), ['ring', 'ring'], 'a second ring with the same payload is a new message');
  t.equal(link.counters.duplicates, 1);
}

async function offline(t: Test, kind: BrokerKind): Promise<void> {
  const atEnd = cleanups(t);
  const broker = await startBroker(t, kind, atEnd);
  const proxy = await TcpProxy.start(broker.port);
  atEnd(() => proxy.close());
  const observer = await plainClient(atEnd, broker.url, ['later/#']);
  const link = await startConnection(atEnd, testSettings(proxy.url, { outbox_max_messages: 10 }), { outboxDir: t.testdir() });
  await link.nextConnect();
  await eventually(() => link.connection.status().outbox.messages === 0, '"online" acknowledged');
  proxy.refuse = true;
  proxy.drop();
  await eventually(() => !link.connection.connected, 'the link down');
  await link.connection.publish('later/zero', 'lost', { qos: 0 });
  t.equal(link.counters.dropped, 1, 'QoS 0 while disconnected is dropped and counted');
  await link.connection.publish('later/one', 'kept', { qos: 1 });
  await link.connection.publish('later/two', 'kept too', { qos: 2 });
  t.equal(link.connection.status().outbox.messages, 2, 'kept in the outbox');
  const back = link.nextConnect();
  proxy.refuse = false;
  await back;
  await observer.until(() => observer.inbox.length >= 2, 'the kept messages');
  t.same(observer.inbox.map((m) => m.text).sort(), ['kept', 'kept too']);
  await eventually(() => link.connection.status().outbox.messages === 0, 'the outbox empty');

  // A longer outage than the outbox holds: the oldest are dropped and counted, the newest delivered.
  proxy.refuse = true;
  proxy.drop();
  await eventually(() => !link.connection.connected, 'the link down again');
  for (let i = 0; i < 15; i++) await link.connection.publish('later/many', `n${i}`, { qos: 1 });
  t.equal(link.connection.status().outbox.messages, 10);
  t.equal(link.connection.status().outbox.dropped, 5);
  t.equal(link.counters.dropped, 1 + 5);
  const again = link.nextConnect();
  proxy.refuse = false;
  await again;
  await observer.until(() => observer.inbox.length >= 12, 'the ten newest');
  t.same(
    observer.inbox.slice(2).map((m) => m.text),
    ['n5', 'n6', 'n7', 'n8', 'n9', 'n10', 'n11', 'n12', 'n13', 'n14'],
    'the newest ten, in order',
  );
  await eventually(() => link.connection.status().outbox.messages === 0, 'the outbox empty again');
}

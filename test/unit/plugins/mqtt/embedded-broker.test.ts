// The embedded broker with real mqtt.js clients on loopback: login, anonymous only on loopback,
// persistent sessions and retained messages across a restart, the connection limit, a busy port,
// an unreadable state file.
import { once } from 'node:events';
import { existsSync, readdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import mqtt, { type IClientOptions, type MqttClient } from 'mqtt';
import t from 'tap';
import { EmbeddedBroker, type EmbeddedBrokerOptions } from '../../../../plugins/mqtt/embedded-broker.js';
import { LogManager } from '../../../../src/log/logger.js';
import { isHomeAgentError } from '../../../../src/shared/errors.js';

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

function brokerOn(dataDir: string, options: Partial<EmbeddedBrokerOptions> = {}): EmbeddedBroker {
  return new EmbeddedBroker({
    host: '127.0.0.1',
    port: 0,
    username: '',
    password: '',
    maxConnections: 64,
    dataDir,
    log: new LogManager({ level: 'silent', levels: {} }).child('mqtt.broker'),
    ...options,
  });
}

/** Connects once (no reconnects, so that a refusal is an error here rather than a retry loop). */
async function connect(url: string, options: IClientOptions = {}): Promise<MqttClient> {
  return mqtt.connectAsync(url, { reconnectPeriod: 0, connectTimeout: 5000, ...options });
}

/** The CONNACK return code (or socket error code) a refused connection got; undefined when it connected. */
async function refusedWith(url: string, options: IClientOptions = {}): Promise<number | string | undefined> {
  try {
    const client = await connect(url, options);
    await client.endAsync();
    return undefined;
  } catch (error) {
    return (error as { code?: number | string }).code ?? String(error);
  }
}

/** Collects `count` messages, or fails after the deadline with what arrived. */
function collect(client: MqttClient, count: number, deadlineMs = 5000): Promise<Array<[string, string]>> {
  const received: Array<[string, string]> = [];
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`only ${received.length} of ${count} messages: ${JSON.stringify(received)}`)),
      deadlineMs,
    );
    client.on('message', (topic, payload) => {
      received.push([topic, payload.toString()]);
      if (received.length === count) {
        clearTimeout(timer);
        resolve(received);
      }
    });
  });
}

t.test('anonymous on loopback: starts on a free port, carries messages, stops', async (t) => {
  const broker = brokerOn(t.testdir());
  const { url } = await broker.start();
  t.match(url, /^mqtt:\/\/127\.0\.0\.1:\d+$/);
  const subscriber = await connect(url);
  await subscriber.subscribeAsync('home/+', { qos: 1 });
  const arrived = collect(subscriber, 1);
  const publisher = await connect(url);
  await publisher.publishAsync('home/hall', 'hello', { qos: 1 });
  t.same(await arrived, [['home/hall', 'hello']]);
  t.equal(broker.status().clients, 2);
  await Promise.all([subscriber.endAsync(), publisher.endAsync()]);
  await broker.stop();
  t.equal(await refusedWith(url), 'ECONNREFUSED', 'the port is closed after stop');
  t.equal(broker.url, undefined);
});

t.test('with a login: only the right user name and password get in', async (t) => {
  const { log, records } = recordingLog();
  const broker = brokerOn(t.testdir(), { username: 'house', password: 'correct horse', log });
  const { url } = await broker.start();
  t.teardown(() => broker.stop());
  t.equal(await refusedWith(url), 4, 'no login: CONNACK 4 (bad user name or password)');
  t.equal(await refusedWith(url, { username: 'house', password: 'wrong horse' }), 4, 'wrong password');
  t.equal(await refusedWith(url, { username: 'House', password: 'correct horse' }), 4, 'wrong user name');
  t.equal(await refusedWith(url, { username: 'house' }), 4, 'user name only');
  t.equal(await refusedWith(url, { username: 'house', password: 'correct horse' }), undefined, 'right login');
  t.ok(
    records.some((r) => r.level === 'warn' && /bad user name or password/.test(r.msg)),
    'refusals are logged',
  );
  t.notOk(JSON.stringify(records).includes('wrong horse'), 'passwords never reach the log');
});

t.test('no login is allowed only on a loopback address; half a login never', async (t) => {
  for (const host of ['127.0.0.1', '::1', 'localhost']) {
    const broker = brokerOn(t.testdir(), { host });
    const started = await broker.start().then(
      (r) => r,
      (error: unknown) => error as Error,
    );
    // ::1 may be missing on a machine without IPv6; only the decision about the login matters here
    if (started instanceof Error) t.notMatch(started.message, /login/, `${host}: not refused for the missing login`);
    else t.pass(`${host}: started without a login`);
    await broker.stop();
  }
  for (const host of ['0.0.0.0', '::', '192.168.1.10']) {
    const dataDir = join(t.testdir(), 'state');
    const broker = brokerOn(dataDir, { host });
    await t.rejects(
      broker.start(),
      { code: 'HA_ERR_MQTT_BROKER', message: /without a login.*broker_username.*127\.0\.0\.1/ },
      `${host}: refused`,
    );
    t.notOk(existsSync(dataDir), `${host}: nothing written`);
  }
  await t.rejects(brokerOn(t.testdir(), { username: 'house' }).start(), {
    code: 'HA_ERR_MQTT_BROKER',
    message: /both .*only the user name/,
  });
  await t.rejects(brokerOn(t.testdir(), { password: 'secret' }).start(), {
    code: 'HA_ERR_MQTT_BROKER',
    message: /both .*only the password/,
  });
});

t.test('a persistent session gets the messages published while it was away, across a broker restart', async (t) => {
  const dataDir = t.testdir();
  const first = brokerOn(dataDir);
  const { url } = await first.start();
  const session: IClientOptions = { clientId: 'kitchen-display', clean: false };
  const subscriber = await connect(url, session);
  await subscriber.subscribeAsync('home/#', { qos: 1 });
  await subscriber.endAsync();

  const publisher = await connect(url);
  for (let i = 1; i <= 5; i++) await publisher.publishAsync('home/hall/motion', `event ${i}`, { qos: 1 });
  await publisher.publishAsync('status/hall', 'online', { qos: 1, retain: true });
  await publisher.endAsync();
  t.match(first.status(), { sessions: 1, queued: 5, retained: 1 });
  await first.stop();

  const second = brokerOn(dataDir);
  const { url: url2 } = await second.start();
  t.teardown(() => second.stop());
  t.match(second.status(), { sessions: 1, queued: 5, retained: 1 }, 'the state is back');
  const back = mqtt.connect(url2, { reconnectPeriod: 0, ...session });
  const arrived = collect(back, 5);
  const connack = await new Promise<{ sessionPresent: boolean }>((resolve) => back.once('connect', resolve));
  t.equal(connack.sessionPresent, true, 'the broker still knows the session');
  t.same(
    (await arrived).map(([, payload]) => payload),
    ['event 1', 'event 2', 'event 3', 'event 4', 'event 5'],
    'all five, in order, without subscribing again',
  );
  // delivered and acknowledged: the queue is empty and stays so after the next restart
  const deadline = Date.now() + 5000;
  while (second.status().queued > 0 && Date.now() < deadline) await new Promise((resolve) => setImmediate(resolve));
  t.equal(second.status().queued, 0, 'acknowledged messages leave the queue');
  await back.endAsync();

  const reader = await connect(url2);
  const retained = collect(reader, 1);
  await reader.subscribeAsync('status/#', { qos: 1 });
  t.same(await retained, [['status/hall', 'online']], 'the retained message survived the restart');
  await reader.endAsync();
});

t.test('a connected persistent subscriber gets a burst larger than an absent session may keep', async (t) => {
  const broker = brokerOn(t.testdir(), { limits: { maxQueuedPerClient: 50 } });
  const { url } = await broker.start();
  t.teardown(() => broker.stop());
  const subscriber = await connect(url, { clientId: 'display', clean: false });
  await subscriber.subscribeAsync('burst/#', { qos: 1 });
  const arrived = collect(subscriber, 500, 20_000);
  const publisher = await connect(url);
  await Promise.all(Array.from({ length: 500 }, (_, i) => publisher.publishAsync('burst/x', `m${i}`, { qos: 1 })));
  t.equal((await arrived).length, 500, 'all 500 arrived');
  t.ok(subscriber.connected, 'and the subscriber stayed connected');
  await Promise.all([subscriber.endAsync(), publisher.endAsync()]);

  // Away, the same session keeps 50 (once the broker has seen both leave).
  const deadline = Date.now() + 5000;
  while (broker.status().clients > 0 && Date.now() < deadline) await new Promise((resolve) => setImmediate(resolve));
  const publisher2 = await connect(url);
  for (let i = 0; i < 80; i++) await publisher2.publishAsync('burst/y', `n${i}`, { qos: 1 });
  await publisher2.endAsync();
  t.equal(broker.status().queued, 50, 'an absent session keeps at most maxQueuedPerClient');
});

t.test('max connections: one more client is told "server unavailable"; a free slot lets it in', async (t) => {
  const { log, records } = recordingLog();
  const broker = brokerOn(t.testdir(), { maxConnections: 2, log });
  const { url } = await broker.start();
  t.teardown(() => broker.stop());
  const a = await connect(url, { clientId: 'a' });
  const b = await connect(url, { clientId: 'b' });
  t.equal(await refusedWith(url, { clientId: 'c' }), 3, 'CONNACK 3 (server unavailable)');
  t.ok(
    records.some((r) => /too many connections/.test(r.msg)),
    'logged',
  );
  // the same client id coming back takes over its own slot
  const aAgain = await connect(url, { clientId: 'a' });
  t.ok(aAgain.connected, 'a session takeover is not an extra connection');
  await b.endAsync();
  const deadline = Date.now() + 5000;
  let code = await refusedWith(url, { clientId: 'c' });
  while (code !== undefined && Date.now() < deadline) code = await refusedWith(url, { clientId: 'c' });
  t.equal(code, undefined, 'c gets in once b has left');
  await Promise.all([a.endAsync(true), aAgain.endAsync()]);
});

t.test('a busy port: HA_ERR_MQTT_BROKER naming the port; nothing left behind', async (t) => {
  const occupier = createServer();
  occupier.listen(0, '127.0.0.1');
  await once(occupier, 'listening');
  t.teardown(() => new Promise<void>((resolve) => occupier.close(() => resolve())));
  const address = occupier.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  const dataDir = t.testdir();
  const broker = brokerOn(dataDir, { port: address.port });
  await t.rejects(broker.start(), {
    code: 'HA_ERR_MQTT_BROKER',
    message: new RegExp(`port ${address.port} on 127\\.0\\.0\\.1 is already in use.*broker_port`),
  });
  t.equal(broker.url, undefined);
  // the state was closed properly: the folder can be used again at once
  const again = brokerOn(dataDir);
  await again.start();
  await again.stop();
});

t.test('an unreadable state file is moved aside; the broker starts empty and works', async (t) => {
  const dataDir = t.testdir({ 'state.json': '{"format": "homeagent-mqtt-broker-state", "vers' });
  const { log, records } = recordingLog();
  const broker = brokerOn(dataDir, { log });
  const { url } = await broker.start();
  t.teardown(() => broker.stop());
  t.ok(
    readdirSync(dataDir).some((name) => name.startsWith('state.json.corrupt-')),
    'the damaged file is kept aside for inspection',
  );
  t.ok(
    records.some((r) => r.level === 'error' && /could not be read; moved aside/.test(r.msg)),
    'logged as an error',
  );
  const client = await connect(url);
  await client.publishAsync('status/x', 'fresh', { qos: 1, retain: true });
  await client.endAsync();
  t.equal(broker.status().retained, 1, 'the new state is kept');
});

t.test('a publish over the size limit is refused and not delivered', async (t) => {
  const broker = brokerOn(t.testdir(), { maxPayloadBytes: 1000 });
  const { url } = await broker.start();
  t.teardown(() => broker.stop());
  const subscriber = await connect(url);
  await subscriber.subscribeAsync('big/#', { qos: 0 });
  const arrived = collect(subscriber, 1);
  const publisher = await connect(url);
  const closed = new Promise<void>((resolve) => publisher.once('close', () => resolve()));
  publisher.publish('big/one', Buffer.alloc(2000), { qos: 0 });
  await closed;
  const small = await connect(url);
  await small.publishAsync('big/two', 'fits', { qos: 1 });
  t.same(await arrived, [['big/two', 'fits']], 'only the message within the limit arrived');
  await Promise.all([subscriber.endAsync(), small.endAsync(), publisher.endAsync(true)]);
});

t.test('a second start while running is refused', async (t) => {
  const broker = brokerOn(t.testdir());
  await broker.start();
  t.teardown(() => broker.stop());
  const error = await broker.start().catch((e: unknown) => e);
  t.ok(isHomeAgentError(error) && error.code === 'HA_ERR_MQTT_BROKER');
});

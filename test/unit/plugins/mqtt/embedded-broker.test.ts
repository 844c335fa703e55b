// The embedded broker with real mqtt.js clients on loopback: a login is required (anonymous only
// when allowed, and only on loopback), only HomeAgent's own client publishes on HomeAgent's topics
// (retained messages and wills included) and uses its client id, persistent sessions and retained
// messages across a restart, the connection limit, a login timeout, a busy port, an unreadable
// state file, and a TLS listener's handshakes at stop.
import { once } from 'node:events';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createServer, connect as tcpConnect } from 'node:net';
import { join } from 'node:path';
import mqtt, { type IClientOptions, type MqttClient } from 'mqtt';
import t from 'tap';
import { BrokerAccess, type BrokerAccessOptions, ownTopics } from '../../../../plugins/mqtt/broker-access.js';
import { FilePersistence } from '../../../../plugins/mqtt/broker-persistence.js';
import { EmbeddedBroker, type EmbeddedBrokerOptions } from '../../../../plugins/mqtt/embedded-broker.js';
import { LogManager } from '../../../../src/log/logger.js';
import { isHomeAgentError } from '../../../../src/shared/errors.js';
import { makeCertificates, opensslMissing } from '../../../helpers/mosquitto.js';

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

const silent = () => new LogManager({ level: 'silent', levels: {} }).child('mqtt.broker');

/** Client options where an explicit undefined user name or password leaves it out (the devices' login is the default). */
type ClientOptions = Omit<IClientOptions, 'username' | 'password'> & { username?: string | undefined; password?: string | undefined };

const BASE = 'homeagent/testnode';
const OWN_ID = 'homeagent-testnode';
/** HomeAgent's own login and the devices' one, as broker-credentials.ts would make them. */
const HOMEAGENT: ClientOptions = { username: 'homeagent', password: 'own-secret-0123456789', clientId: OWN_ID };
const DEVICE: ClientOptions = { username: 'devices', password: 'device-secret-0123456789' };

function access(options: Partial<BrokerAccessOptions> = {}): BrokerAccess {
  return new BrokerAccess({
    logins: [
      { username: 'homeagent', password: 'own-secret-0123456789', role: 'homeagent' },
      { username: 'devices', password: 'device-secret-0123456789', role: 'device' },
    ],
    allowAnonymous: false,
    ownClientId: OWN_ID,
    ...ownTopics(BASE, 'homeassistant', 'testnode'),
    ...options,
  });
}

function brokerOn(dataDir: string, options: Partial<EmbeddedBrokerOptions> = {}): EmbeddedBroker {
  return new EmbeddedBroker({
    host: '127.0.0.1',
    port: 0,
    access: access(),
    maxConnections: 64,
    dataDir,
    log: silent(),
    ...options,
  });
}

/** Connects once (no reconnects, so that a refusal is an error here rather than a retry loop); a device unless told otherwise. */
async function connect(url: string, options: ClientOptions = {}): Promise<MqttClient> {
  const merged: Record<string, unknown> = { reconnectPeriod: 0, connectTimeout: 5000, ...DEVICE, ...options };
  for (const key of ['username', 'password']) if (merged[key] === undefined) delete merged[key];
  return mqtt.connectAsync(url, merged as IClientOptions);
}

function closedOf(client: MqttClient): Promise<void> {
  return new Promise((resolve) => client.once('close', () => resolve()));
}

/** The CONNACK return code (or socket error code) a refused connection got; undefined when it connected. */
async function refusedWith(url: string, options: ClientOptions = {}): Promise<number | string | undefined> {
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

/** The retained messages under `filter` a new subscriber gets, once a marker published after them has arrived. */
async function retainedUnder(url: string, filter: string, marker: MqttClient): Promise<Array<[string, string]>> {
  const reader = await connect(url);
  const seen: Array<[string, string]> = [];
  const done = new Promise<void>((resolve) =>
    reader.on('message', (topic, payload, packet) => {
      if (topic === 'test/marker') resolve();
      else if (packet.retain) seen.push([topic, payload.toString()]);
    }),
  );
  await reader.subscribeAsync([filter, 'test/marker'], { qos: 1 });
  await marker.publishAsync('test/marker', 'x', { qos: 1 });
  await done;
  await reader.endAsync();
  return seen.sort();
}

t.test('a device with the login: starts on a free port, carries messages, stops', async (t) => {
  const broker = brokerOn(t.testdir());
  const { url } = await broker.start();
  t.match(url, /^mqtt:\/\/127\.0\.0\.1:\d+$/);
  t.match(broker.status(), { login: 'required', refused: { logins: 0, publishes: 0, subscriptions: 0 } });
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

t.test('logins: only a right user name and password get in; no login is "not authorized"', async (t) => {
  const { log, records } = recordingLog();
  let now = 0;
  const broker = brokerOn(t.testdir(), { log, clock: { now: () => now } });
  const { url } = await broker.start();
  t.teardown(() => broker.stop());
  t.equal(await refusedWith(url, { username: undefined, password: undefined }), 5, 'no login: CONNACK 5 (not authorized)');
  t.equal(await refusedWith(url, { password: 'wrong horse' }), 4, 'wrong password: CONNACK 4');
  t.equal(await refusedWith(url, { username: 'Devices' }), 4, 'wrong user name');
  t.equal(await refusedWith(url, { password: undefined }), 4, 'user name only');
  t.equal(await refusedWith(url, { username: 'homeagent' }), 4, "one login's user name with another's password");
  t.equal(await refusedWith(url), undefined, 'the right login');
  t.equal(broker.status().refused.logins, 5, 'counted');
  const refusals = records.filter((r) => r.level === 'warn' && /MQTT client refused/.test(r.msg));
  t.same(
    refusals.map((r) => r.msg),
    ['MQTT client refused: no login (this broker needs a user name and password)', 'MQTT client refused: bad user name or password'],
    'one warning per kind and address a minute: a storm of wrong logins does not flood the log',
  );
  now += 61_000;
  t.equal(await refusedWith(url, { password: 'wrong again' }), 4);
  t.match(
    records.at(-1),
    { level: 'warn', msg: 'MQTT client refused: bad user name or password', suppressed: 3 },
    'then the count left out',
  );
  t.notOk(JSON.stringify(records).includes('wrong horse'), 'passwords never reach the log');
  t.notOk(JSON.stringify(records).includes('device-secret'), 'nor the right ones');
});

t.test('anonymous clients only when allowed, only on loopback, and with no more rights than a device', async (t) => {
  const { log, records } = recordingLog();
  const broker = brokerOn(t.testdir(), { access: access({ allowAnonymous: true }), log });
  const { url } = await broker.start();
  t.teardown(() => broker.stop());
  t.match(broker.status(), { login: 'anonymous allowed' });
  t.ok(
    records.some(
      (r) => r.level === 'warn' && /broker_allow_anonymous lets any program on this machine connect without a login/.test(r.msg),
    ),
    'a warning at start',
  );
  const anonymous = await connect(url, { username: undefined, password: undefined });
  await anonymous.publishAsync('home/hall', 'fine', { qos: 1 });
  t.equal(await refusedWith(url, { password: 'wrong' }), 4, 'a wrong login is still refused (no fallback to anonymous)');
  const closed = closedOf(anonymous);
  anonymous.publish(`${BASE}/status`, 'online', { qos: 1, retain: true });
  await closed;
  t.equal(broker.status().refused.publishes, 1, "an anonymous client may not publish on HomeAgent's topics either");
  await anonymous.endAsync(true);

  for (const host of ['0.0.0.0', '::', '192.168.1.10']) {
    const dataDir = join(t.testdir(), 'state');
    const refused = brokerOn(dataDir, { host, access: access({ allowAnonymous: true }) });
    await t.rejects(
      refused.start(),
      {
        code: 'HA_ERR_MQTT_BROKER',
        message: /without a login: plugin\.mqtt\.broker_allow_anonymous is only allowed with broker_host 127\.0\.0\.1/,
      },
      `${host}: refused`,
    );
    t.notOk(existsSync(dataDir), `${host}: nothing written`);
  }
});

t.test('on every address of the machine a login is required', async (t) => {
  const broker = brokerOn(t.testdir(), { host: '0.0.0.0' });
  const { url } = await broker.start();
  t.teardown(() => broker.stop());
  t.equal(await refusedWith(url, { username: undefined, password: undefined }), 5, 'anonymous refused');
  t.equal(await refusedWith(url), undefined, 'the login gets in');
});

t.test("only HomeAgent's client publishes on HomeAgent's topics; devices keep the rest and the topics HomeAgent listens to", async (t) => {
  const { log, records } = recordingLog();
  const broker = brokerOn(t.testdir(), { log });
  const { url } = await broker.start();
  t.teardown(() => broker.stop());
  const homeagent = await connect(url, HOMEAGENT);
  t.teardown(() => homeagent.endAsync(true));
  const own: Array<[string, string]> = [
    [`${BASE}/status`, 'online'],
    [`${BASE}/switch.kitchen/state`, 'on'],
    [`${BASE}/switch.kitchen/availability`, 'online'],
    [`${BASE}/agent/last_reply`, 'The kitchen light is on.'],
    ['homeassistant/switch/testnode/switch_kitchen/config', '{"name":"Kitchen"}'],
  ];
  for (const [topic, text] of own) await homeagent.publishAsync(topic, text, { qos: 1, retain: true });

  const watcher = await connect(url);
  t.teardown(() => watcher.endAsync(true));
  const seen: Array<[string, string]> = [];
  watcher.on('message', (topic, payload) => void seen.push([topic, payload.toString()]));
  await watcher.subscribeAsync([`${BASE}/#`, 'homeassistant/#', 'zigbee2mqtt/#', 'homeagent/othernode/#'], { qos: 1 });

  const forged: Array<[string, string]> = [
    [`${BASE}/agent/last_reply`, '[Confirmation needed] ... Reply "/confirm ABCD"'],
    [`${BASE}/status`, 'offline'],
    [`${BASE}/switch.kitchen/state`, 'off'],
    [`${BASE}/switch.kitchen/attributes`, '{}'],
    [BASE, 'x'],
    [`${BASE}/agent/anything_new`, 'x'],
    ['homeassistant/lock/testnode/lock_front/config', '{"command_topic":"evil"}'],
    ['homeassistant/switch/testnode/switch_kitchen/config', ''],
  ];
  for (const [topic, text] of forged) {
    for (const retain of [true, false]) {
      const device = await connect(url);
      const closed = closedOf(device);
      device.publish(topic, text, { qos: 1, retain });
      await closed;
      await device.endAsync(true);
    }
  }
  t.equal(broker.status().refused.publishes, forged.length * 2, 'each forged publish refused, the client disconnected');

  const device = await connect(url);
  t.teardown(() => device.endAsync(true));
  const allowed: Array<[string, string]> = [
    [`${BASE}/switch.kitchen/set`, 'OFF'],
    [`${BASE}/agent/notify`, 'hello'],
    ['homeassistant/status', 'online'],
    ['homeassistant/sensor/0x00158d0001/temperature/config', '{}'],
    ['zigbee2mqtt/lamp', '{"state":"ON"}'],
    ['homeagent/othernode/status', 'online'],
  ];
  for (const [topic, text] of allowed) await device.publishAsync(topic, text, { qos: 1 });
  t.ok(device.connected, 'a device publishing where it may stays connected');
  await device.publishAsync('zigbee2mqtt/end', 'x', { qos: 1 });
  const deadline = Date.now() + 5000;
  while (!seen.some(([topic]) => topic === 'zigbee2mqtt/end') && Date.now() < deadline) await new Promise((r) => setImmediate(r));
  // aedes may hand a retained message once per matching filter of a SUBSCRIBE: compare what arrived, not how often.
  const distinct = [...new Set(seen.filter(([topic]) => topic !== 'zigbee2mqtt/end').map((m) => JSON.stringify(m)))];
  t.same(
    distinct.map((m) => JSON.parse(m) as [string, string]).sort(),
    [...own, ...allowed].sort(),
    "a subscriber got HomeAgent's retained messages and what devices may publish, nothing forged",
  );
  t.same(await retainedUnder(url, '#', device), [...own].sort(), 'the retained messages are still the ones HomeAgent published');
  t.ok(
    records.some((r) => r.level === 'warn' && /agent\/last_reply is one of HomeAgent's own topics/.test(r.msg)),
    'refusals are logged with the topic',
  );
});

t.test("HomeAgent's client id is its login's alone, and its login uses only that client id", async (t) => {
  const { log, records } = recordingLog();
  const broker = brokerOn(t.testdir(), { log });
  const { url } = await broker.start();
  t.teardown(() => broker.stop());
  const homeagent = await connect(url, { ...HOMEAGENT, clean: false });
  t.teardown(() => homeagent.endAsync(true));
  await homeagent.subscribeAsync(`${BASE}/+/set`, { qos: 1 });
  let kicked = false;
  homeagent.on('close', () => {
    kicked = true;
  });
  t.equal(await refusedWith(url, { clientId: OWN_ID, clean: false }), 5, 'a device with the client id: CONNACK 5');
  t.equal(await refusedWith(url, { ...HOMEAGENT, clientId: 'something-else' }), 5, 'the login with another client id: CONNACK 5');
  const device = await connect(url);
  t.teardown(() => device.endAsync(true));
  const arrived = collect(homeagent, 1);
  await device.publishAsync(`${BASE}/switch.kitchen/set`, 'ON', { qos: 1 });
  t.same(await arrived, [[`${BASE}/switch.kitchen/set`, 'ON']], "HomeAgent's session was not taken over: it still gets its commands");
  t.notOk(kicked, 'and its connection was never cut');
  t.equal(await refusedWith(url, { username: undefined, password: undefined }), 5);
  t.same(
    records.filter((r) => r.level === 'warn').map((r) => r.msg),
    [
      "MQTT client refused: the client id homeagent-testnode is HomeAgent's own",
      'MQTT client refused: no login (this broker needs a user name and password)',
    ],
    'each kind of refusal has its own warning (the second client-id refusal within the minute is counted, not logged)',
  );
});

t.test("wills: none on HomeAgent's topics but HomeAgent's own; stored ones from before the rules are deleted", async (t) => {
  const dataDir = t.testdir();
  // A will stored by an older version without these rules (written straight into the broker's state).
  const old = new FilePersistence({ dir: dataDir, log: silent() });
  await old.setup({ id: 'old-broker' });
  const packet = (topic: string) => ({ cmd: 'publish', topic, payload: Buffer.from('offline'), qos: 1, retain: true });
  await old.putWill({ id: 'intruder' }, packet(`${BASE}/status`));
  await old.putWill({ id: OWN_ID }, packet(`${BASE}/status`));
  await old.putWill({ id: 'lamp' }, packet('lamps/kitchen/status'));
  await old.close();

  const { log, records } = recordingLog();
  const broker = brokerOn(dataDir, { log });
  const { url } = await broker.start();
  t.ok(
    records.some((r) => r.level === 'warn' && r.client === 'intruder' && /stored will on HomeAgent's own topic/.test(r.msg)),
    'the forged will was deleted at start, and said so',
  );
  t.notOk(
    records.some((r) => r.client === OWN_ID || r.client === 'lamp'),
    "HomeAgent's own and a device's own were kept",
  );

  t.equal(
    await refusedWith(url, { will: { topic: `${BASE}/status`, payload: Buffer.from('offline'), qos: 1, retain: true } }),
    5,
    "a device with a will on HomeAgent's status: CONNACK 5",
  );
  const watcher = await connect(url);
  t.teardown(() => watcher.endAsync(true));
  await watcher.subscribeAsync(['lamps/#', `${BASE}/status`], { qos: 1 });
  const wills = collect(watcher, 2);
  const lamp = await connect(url, {
    clientId: 'lamp2',
    will: { topic: 'lamps/hall/status', payload: Buffer.from('gone'), qos: 1, retain: false },
  });
  const homeagent = await connect(url, {
    ...HOMEAGENT,
    will: { topic: `${BASE}/status`, payload: Buffer.from('offline'), qos: 1, retain: true },
  });
  (lamp.stream as import('node:net').Socket).destroy();
  (homeagent.stream as import('node:net').Socket).destroy();
  t.same(
    (await wills).sort(),
    [
      [`${BASE}/status`, 'offline'],
      ['lamps/hall/status', 'gone'],
    ],
    'allowed wills are published when the connection dies',
  );
  await Promise.all([lamp.endAsync(true), homeagent.endAsync(true)]);
  await broker.stop();

  const after = new FilePersistence({ dir: dataDir, log: silent() });
  await after.setup({ id: 'check' });
  const left: string[] = [];
  for await (const will of after.streamWill()) left.push(String((will as { clientId: string }).clientId));
  await after.close();
  // HomeAgent's stored will was replaced by its new connection's, published when that died.
  t.same(left, ['lamp'], "the stored will left: the lamp's, not the intruder's");
});

t.test('only HomeAgent reads $SYS; a refused subscription keeps the connection', async (t) => {
  const broker = brokerOn(t.testdir());
  const { url } = await broker.start();
  t.teardown(() => broker.stop());
  const device = await connect(url);
  t.teardown(() => device.endAsync(true));
  // mqtt.js rejects a SUBACK carrying a failure; the codes are in the packet it rejects with.
  const suback = await device.subscribeAsync(['$SYS/#', 'home/#'], { qos: 1 }).then(
    () => undefined,
    (error: { packet?: { granted?: number[] } }) => error.packet?.granted,
  );
  t.same(suback, [128, 1], '$SYS/# refused (128), the other filter granted');
  t.ok(device.connected, 'still connected');
  t.equal(broker.status().refused.subscriptions, 1);
  const homeagent = await connect(url, HOMEAGENT);
  t.teardown(() => homeagent.endAsync(true));
  t.same(
    (await homeagent.subscribeAsync('$SYS/#', { qos: 0 })).map((g) => g.qos),
    [0],
  );
});

t.test('a persistent session gets the messages published while it was away, across a broker restart', async (t) => {
  const dataDir = t.testdir();
  const first = brokerOn(dataDir);
  const { url } = await first.start();
  const session: ClientOptions = { clientId: 'kitchen-display', clean: false };
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
  const back = mqtt.connect(url2, { reconnectPeriod: 0, ...DEVICE, ...session } as IClientOptions);
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

t.test('max connections: one more client is told "server unavailable"; a free slot lets it in; HomeAgent always gets in', async (t) => {
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
  const homeagent = await connect(url, HOMEAGENT);
  t.ok(homeagent.connected, "HomeAgent's own client gets in when the devices took every slot");
  // the same client id coming back takes over its own slot
  const aAgain = await connect(url, { clientId: 'a' });
  t.ok(aAgain.connected, 'a session takeover is not an extra connection');
  await Promise.all([b.endAsync(), homeagent.endAsync()]);
  const deadline = Date.now() + 5000;
  let code = await refusedWith(url, { clientId: 'c' });
  while (code !== undefined && Date.now() < deadline) code = await refusedWith(url, { clientId: 'c' });
  t.equal(code, undefined, 'c gets in once b has left');
  await Promise.all([a.endAsync(true), aAgain.endAsync()]);
});

t.test('a connection that does not log in within the login timeout is closed', async (t) => {
  const broker = brokerOn(t.testdir(), { loginTimeoutMs: 200 });
  const { url } = await broker.start();
  t.teardown(() => broker.stop());
  const socket = tcpConnect(Number(new URL(url).port), '127.0.0.1');
  await once(socket, 'connect');
  socket.write(Buffer.from([0x10, 0x20, 0x00])); // the first bytes of a CONNECT, and then nothing
  await once(socket, 'close');
  t.pass('the broker closed it');
  t.equal(await refusedWith(url), undefined, 'and still takes logins');
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

t.test(
  'TLS: stop() ends connections still in their handshake; a stalled handshake ends at the login timeout',
  { skip: opensslMissing() ?? false },
  async (t) => {
    const base = t.testdir();
    const certs = makeCertificates(join(base, 'certs'));
    const tls = { cert: readFileSync(certs.serverCert), key: readFileSync(certs.serverKey), port: 0 };
    const broker = brokerOn(join(base, 'state'), { tls, loginTimeoutMs: 300 });
    await broker.start();
    const tlsUrl = broker.status().tls_url ?? '';
    t.match(tlsUrl, /^mqtts:\/\/127\.0\.0\.1:\d+$/);
    const port = Number(new URL(tlsUrl).port);
    const open = (): Promise<import('node:net').Socket> =>
      new Promise((resolve) => {
        const socket = tcpConnect(port, '127.0.0.1', () => {
          socket.write(Buffer.from([0x16, 0x03, 0x01])); // a TLS record begun, never finished
          resolve(socket);
        });
        socket.on('error', () => {});
      });
    // events.once would reject on the reset that ends them; only the close matters here.
    const closedOf = (socket: import('node:net').Socket) => new Promise<void>((resolve) => socket.once('close', () => resolve()));
    const stalled = await open();
    await closedOf(stalled);
    t.pass('the handshake timeout closed it');
    const pending = await open();
    const closed = closedOf(pending);
    await broker.stop();
    await closed;
    t.pass('stop() returned and closed the socket still in its handshake');
  },
);

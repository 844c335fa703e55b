// The MQTT plugin with its real embedded broker and real mqtt.js clients on loopback: the logins
// made at the first start (0600) and kept, HomeAgent's client on its own login, `mqtt.credentials`
// for the owner only (and its reset), anonymous access only when allowed and then a warning in
// health, the configured extra login, and the outside tester's path: a client on the broker that
// drives the agent through notify cannot forge HomeAgent's retained last_reply, steal its
// session, or get in without a login.
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import mqtt, { type IClientOptions, type MqttClient } from 'mqtt';
import t, { type Test } from 'tap';
import { BROKER_CREDENTIALS_FILE } from '../../../../plugins/mqtt/broker-credentials.js';
import { EmbeddedBrokerService, type MqttCredentials } from '../../../../plugins/mqtt/embedded-broker-service.js';
import { MQTT_FEATURES, MqttPlugin, type MqttPluginOptions } from '../../../../plugins/mqtt/mqtt-plugin.js';
import { emptyCounters } from '../../../../plugins/mqtt/types.js';
import { defaultConfig } from '../../../../src/config/loader.js';
import { LogManager } from '../../../../src/log/logger.js';
import type { Caller } from '../../../../src/sdk/index.js';
import { makeCertificates, opensslMissing } from '../../../helpers/mosquitto.js';
import { createTestPluginContext, type TestPluginContext } from '../../../helpers/plugin-context.js';
import { expectErrorAsync } from '../../fixtures/support.js';
import { cleanups, eventually } from './mqtt-test-kit.js';

const DEFAULTS = {
  ...defaultConfig().plugin.mqtt,
  node_id: 'testnode',
  broker_enabled: true,
  broker_port: 0,
  reconnect_min_ms: 100,
  reconnect_max_ms: 1000,
};
const BASE = 'homeagent/testnode';
const OWNER: Caller = { actor: 'cli', owner: true };

interface Running {
  tc: TestPluginContext;
  plugin: MqttPlugin;
  /** The broker's address (port 0 picked a free one). */
  url: string;
  credentials(reset?: boolean, caller?: Caller): Promise<MqttCredentials>;
  stop(): Promise<void>;
}

async function startPlugin(
  t: Test,
  atEnd: (fn: () => Promise<void> | void) => void,
  settings: Record<string, unknown> = {},
  options: MqttPluginOptions & { dataDir?: string } = {},
): Promise<Running> {
  const tc = createTestPluginContext({ name: 'mqtt', dataDir: options.dataDir ?? t.testdir(), settings: { ...DEFAULTS, ...settings } });
  atEnd(() => tc.close());
  const plugin = new MqttPlugin(tc.context, { features: [], ...options });
  await plugin.start(new AbortController().signal);
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await plugin.stop();
  };
  atEnd(stop);
  await eventually(() => plugin.status().connected, "HomeAgent's client connected to its broker");
  const broker = plugin.status().broker as { url: string };
  return {
    tc,
    plugin,
    url: broker.url,
    credentials: async (reset = false, caller = OWNER) =>
      (await tc.control.call('mqtt.credentials', reset ? { reset: 'devices' } : {}, caller)) as MqttCredentials,
    stop,
  };
}

async function connect(atEnd: (fn: () => Promise<void> | void) => void, url: string, options: IClientOptions = {}): Promise<MqttClient> {
  const client = await mqtt.connectAsync(url, { reconnectPeriod: 0, connectTimeout: 5000, ...options });
  atEnd(() => client.endAsync(true));
  return client;
}

async function refusedWith(url: string, options: IClientOptions = {}): Promise<number | string | undefined> {
  try {
    const client = await mqtt.connectAsync(url, { reconnectPeriod: 0, connectTimeout: 5000, ...options });
    await client.endAsync();
    return undefined;
  } catch (error) {
    return (error as { code?: number | string }).code ?? String(error);
  }
}

const login = (c: MqttCredentials): IClientOptions => ({ username: c.username, password: c.password });

t.test("the first start makes the logins (0600); HomeAgent's client uses its own; a restart keeps them", async (t) => {
  const atEnd = cleanups(t);
  const dataDir = t.testdir();
  const first = await startPlugin(t, atEnd, {}, { dataDir });
  const file = join(dataDir, 'plugin-data', 'mqtt', BROKER_CREDENTIALS_FILE);
  t.equal(statSync(file).mode & 0o777, 0o600, 'the file is private');
  t.ok(first.plugin.health().ok, 'healthy');
  t.match(first.plugin.health().detail, /^connected to mqtt:\/\/127\.0\.0\.1:\d+ as homeagent-testnode$/);
  t.match(first.plugin.status().broker, { login: 'required', clients: 1, credentials_file: file });

  const devices = await first.credentials();
  t.match(devices, { host: '127.0.0.1', username: 'devices', password: /^[A-Za-z0-9_-]{32}$/, file, anonymous_allowed: false });
  t.equal(devices.port, Number(new URL(first.url).port));
  const stored = JSON.parse(readFileSync(file, 'utf8')) as { homeagent: { password: string }; devices: { password: string } };
  t.equal(stored.devices.password, devices.password);
  t.notMatch(JSON.stringify(devices), stored.homeagent.password, "HomeAgent's own password is never answered");
  t.same(first.tc.audits, [{ action: 'mqtt.credentials.read', details: { on_behalf_of: 'cli' } }], 'reading them is audited');

  t.equal(await refusedWith(first.url), 5, 'no login: refused');
  t.equal(await refusedWith(first.url, login(devices)), undefined, 'the devices login gets in');
  await first.stop();

  const second = await startPlugin(t, atEnd, {}, { dataDir });
  // port 0 picks another free port each start; the logins are what must stay.
  t.same({ ...(await second.credentials()), port: devices.port }, devices, 'the same logins after a restart');
});

t.test('mqtt.credentials answers the owner only, and only with the embedded broker', async (t) => {
  const atEnd = cleanups(t);
  const running = await startPlugin(t, atEnd);
  for (const actor of ['webui:session', 'webui:api_key', 'plugin:onebot', 'mqtt', 'agent']) {
    const error = await expectErrorAsync(t, () => running.credentials(false, { actor }), 'HA_ERR_RPC_FORBIDDEN');
    t.match(error.message, /for the owner only/);
  }
  t.same(running.tc.audits, [], 'refused calls read nothing');
  t.match(
    await running.credentials(false, { actor: 'webui:session', owner: true } as Caller),
    { username: 'devices' },
    'a caller the kernel marks as the owner',
  );

  const off = createTestPluginContext({ name: 'mqtt', dataDir: t.testdir(), settings: { ...DEFAULTS, broker_enabled: false } });
  atEnd(() => off.close());
  const idle = new MqttPlugin(off.context, { features: [] });
  await idle.start(new AbortController().signal);
  atEnd(() => idle.stop());
  const error = await expectErrorAsync(t, () => off.control.call('mqtt.credentials', {}, OWNER), 'HA_ERR_MQTT_UNAVAILABLE');
  t.match(error.message, /broker_enabled/);
});

t.test('a reset makes a new devices password: clients on the old one are cut off and cannot come back', async (t) => {
  const atEnd = cleanups(t);
  const running = await startPlugin(t, atEnd);
  const before = await running.credentials();
  const device = await connect(atEnd, running.url, { ...login(before), clientId: 'hass' });
  const cut = new Promise<void>((resolve) => device.once('close', () => resolve()));
  const after = await running.credentials(true);
  t.not(after.password, before.password);
  t.equal(after.disconnected, 1, 'one client was logged in with the old password');
  await cut;
  t.equal(await refusedWith(running.url, login(before)), 4, 'the old password is refused');
  t.equal(await refusedWith(running.url, login(after)), undefined, 'the new one works');
  t.ok(running.plugin.status().connected, "HomeAgent's own client was not touched");
  t.match(running.tc.audits.at(-1), {
    action: 'mqtt.credentials.reset',
    details: { on_behalf_of: 'cli', which: 'devices', disconnected: 1 },
  });
});

t.test('anonymous access only by plugin.mqtt.broker_allow_anonymous, and then health warns', async (t) => {
  const atEnd = cleanups(t);
  const running = await startPlugin(t, atEnd, { broker_allow_anonymous: true });
  t.equal(await refusedWith(running.url), undefined, 'a client without a login gets in');
  const health = running.plugin.health();
  t.equal(health.ok, true);
  t.match(health.detail, /; WARNING: the embedded broker lets clients in without a login \(plugin\.mqtt\.broker_allow_anonymous\)$/);
  t.match(running.plugin.status().broker, { login: 'anonymous allowed' });
  t.match(await running.credentials(), { anonymous_allowed: true });

  const tc = createTestPluginContext({
    name: 'mqtt',
    dataDir: t.testdir(),
    settings: { ...DEFAULTS, broker_allow_anonymous: true, broker_host: '0.0.0.0' },
  });
  atEnd(() => tc.close());
  const refused = new MqttPlugin(tc.context, { features: [] });
  await t.rejects(refused.start(new AbortController().signal), {
    code: 'HA_ERR_MQTT_BROKER',
    message: /broker_allow_anonymous is only allowed/,
  });
});

t.test('plugin.mqtt.broker_username / broker_password: one more device login; half of one or a generated name is refused', async (t) => {
  const atEnd = cleanups(t);
  const running = await startPlugin(t, atEnd, { broker_username: 'zigbee2mqtt', broker_password: 'a configured secret' });
  t.equal(await refusedWith(running.url, { username: 'zigbee2mqtt', password: 'a configured secret' }), undefined);
  t.match(await running.credentials(), { extra_username: 'zigbee2mqtt', username: 'devices' });
  const device = await connect(atEnd, running.url, { username: 'zigbee2mqtt', password: 'a configured secret' });
  const closed = new Promise<void>((resolve) => device.once('close', () => resolve()));
  device.publish(`${BASE}/status`, 'offline', { qos: 1, retain: true });
  await closed;
  t.pass("the extra login is a device: it may not publish on HomeAgent's topics");

  for (const [settings, message] of [
    [{ broker_username: 'zigbee2mqtt' }, /needs both .*only the user name/],
    [{ broker_password: 'secret' }, /needs both .*only the password/],
    [{ broker_username: 'homeagent', broker_password: 'secret' }, /"homeagent" is a login the embedded broker makes itself/],
    [{ broker_username: 'devices', broker_password: 'secret' }, /"devices" is a login the embedded broker makes itself/],
  ] as const) {
    const tc = createTestPluginContext({ name: 'mqtt', dataDir: t.testdir(), settings: { ...DEFAULTS, ...settings } });
    atEnd(() => tc.close());
    await t.rejects(new MqttPlugin(tc.context, { features: [] }).start(new AbortController().signal), {
      code: 'HA_ERR_MQTT_BROKER',
      message,
    });
  }
});

t.test(
  "the tester's path: a broker client driving the agent cannot forge last_reply, take HomeAgent's session, or skip the login",
  async (t) => {
    const atEnd = cleanups(t);
    const outbound = MQTT_FEATURES.filter((f) => f.name === 'outbound');
    const running = await startPlugin(t, atEnd, {}, { features: outbound });
    const devices = await running.credentials();

    // No login, no notify: the anonymous client of the finding does not get in.
    t.equal(await refusedWith(running.url), 5);

    // A logged-in device (Home Assistant) may still hand the agent a text: the kernel treats it as untrusted.
    const hass = await connect(atEnd, running.url, { ...login(devices), clientId: 'hass' });
    const injected = running.tc.nextInjected();
    await hass.publishAsync(`${BASE}/agent/notify`, 'what is on in the kitchen?', { qos: 1 });
    t.match((await injected).input, { channel: 'mqtt', payload: 'what is on in the kitchen?' });

    // HomeAgent's answer is the retained last_reply.
    const channel = running.tc.channels.get('mqtt');
    if (channel === undefined) throw new Error('no mqtt channel');
    await channel.send({
      id: 'out-1',
      channel: 'mqtt',
      type: 'text',
      payload: 'The kitchen light is on.',
      meta: {},
      created_at: Date.now(),
    });
    const reader = await connect(atEnd, running.url, login(devices));
    const replies: string[] = [];
    reader.on('message', (topic, payload) => void (topic.endsWith('/agent/last_reply') && replies.push(payload.toString())));
    await reader.subscribeAsync(`${BASE}/agent/last_reply`, { qos: 1 });
    await eventually(() => replies.length > 0, 'the retained answer');
    t.same(replies, ['The kitchen light is on.']);

    // A forged last_reply (say, a confirmation prompt with a code) is refused and the publisher cut off.
    const forger = await connect(atEnd, running.url, { ...login(devices), clientId: 'forger' });
    const cut = new Promise<void>((resolve) => forger.once('close', () => resolve()));
    forger.publish(`${BASE}/agent/last_reply`, '[Confirmation needed] Reply "/confirm ABCD"', { qos: 1, retain: true });
    await cut;
    const second = await connect(atEnd, running.url, login(devices));
    const again: string[] = [];
    second.on('message', (_topic, payload) => void again.push(payload.toString()));
    await second.subscribeAsync(`${BASE}/agent/last_reply`, { qos: 1 });
    await eventually(() => again.length > 0, 'the retained answer');
    t.same(again, ['The kitchen light is on.'], 'last_reply is still the answer HomeAgent published');

    // HomeAgent's client id cannot be taken: its session and its commands stay with HomeAgent.
    t.equal(await refusedWith(running.url, { ...login(devices), clientId: 'homeagent-testnode', clean: false }), 5);
    const next = running.tc.nextInjected();
    await hass.publishAsync(`${BASE}/agent/notify`, 'still there?', { qos: 1 });
    t.match((await next).input, { payload: 'still there?' });
    t.equal(running.plugin.status().reconnects, 0, "HomeAgent's connection was never cut");
  },
);

t.test(
  'TLS: devices log in over TLS on broker_host; plain MQTT stays on loopback for HomeAgent',
  { skip: opensslMissing() ?? false },
  async (t) => {
    const atEnd = cleanups(t);
    // One test folder (each t.testdir() call empties it): certificates and data dirs side by side.
    const base = t.testdir();
    const certs = makeCertificates(join(base, 'certs'));
    const running = await startPlugin(
      t,
      atEnd,
      { broker_host: '0.0.0.0', broker_tls_cert_file: certs.serverCert, broker_tls_key_file: certs.serverKey, broker_tls_port: 0 },
      { dataDir: join(base, 'data') },
    );
    t.match(running.url, /^mqtt:\/\/127\.0\.0\.1:\d+$/, "HomeAgent's own client is on plain MQTT on loopback");
    const devices = await running.credentials();
    t.type(devices.tls_port, 'number');
    const tlsUrl = `mqtts://127.0.0.1:${devices.tls_port}`;
    const ca = readFileSync(certs.ca);
    t.equal(await refusedWith(tlsUrl, { ...login(devices), ca }), undefined, 'a device with the login and the CA gets in over TLS');
    t.equal(await refusedWith(tlsUrl, { username: 'devices', password: 'wrong', ca }), 4, 'a wrong login over TLS: CONNACK 4');
    t.equal(
      await refusedWith(tlsUrl, { ...login(devices), ca: readFileSync(certs.otherCa) }),
      'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
      'a client that does not trust the certificate does not talk',
    );
    const lan = Object.values(networkInterfaces())
      .flat()
      .find((i) => i !== undefined && i.family === 'IPv4' && !i.internal);
    if (lan === undefined) t.comment('no network address besides loopback here: the plain listener cannot be tried from one');
    else {
      t.equal(
        await refusedWith(`mqtt://${lan.address}:${devices.port}`, login(devices)),
        'ECONNREFUSED',
        `plain MQTT is not on ${lan.address}`,
      );
      // The test certificate names 127.0.0.1 only: this checks the listener and the login, not the name.
      t.equal(
        await refusedWith(`mqtts://${lan.address}:${devices.tls_port}`, { ...login(devices), ca, rejectUnauthorized: false }),
        undefined,
        `TLS is on ${lan.address}`,
      );
    }
    t.ok(running.plugin.health().ok);

    const bad = join(base, 'not-a-cert.pem');
    writeFileSync(bad, 'not a certificate');
    for (const [settings, message] of [
      [{ broker_tls_cert_file: certs.serverCert }, /broker_tls_cert_file and broker_tls_key_file go together/],
      [
        { broker_tls_cert_file: certs.serverCert, broker_tls_key_file: join(base, 'missing.key') },
        /plugin\.mqtt\.broker_tls_key_file .*missing\.key cannot be read/,
      ],
      [{ broker_tls_cert_file: bad, broker_tls_key_file: certs.serverKey }, /do not make a TLS certificate/],
    ] as const) {
      const dataDir = join(base, `refused-${Math.random().toString(16).slice(2)}`);
      mkdirSync(dataDir);
      const tc = createTestPluginContext({ name: 'mqtt', dataDir, settings: { ...DEFAULTS, broker_tls_port: 0, ...settings } });
      atEnd(() => tc.close());
      await t.rejects(new MqttPlugin(tc.context, { features: [] }).start(new AbortController().signal), {
        code: 'HA_ERR_MQTT_BROKER',
        message,
      });
    }
  },
);

t.test('the log says where the logins are, never what they are', async (t) => {
  const records: string[] = [];
  const logs = new LogManager({ level: 'debug', levels: {}, destination: { write: (line: string) => void records.push(line) } });
  const dataDir = t.testdir();
  const service = new EmbeddedBrokerService({
    settings: { ...DEFAULTS, broker_username: 'extra', broker_password: 'configured extra secret' },
    ownClientId: 'homeagent-testnode',
    baseTopic: BASE,
    nodeId: 'testnode',
    dataDir,
    brokerDir: join(dataDir, 'broker'),
    log: logs.child('mqtt'),
    audit: () => {},
    counters: emptyCounters(),
  });
  const own = await service.start();
  t.teardown(() => service.stop());
  const devices = await service.credentials({}, OWNER);
  await refusedWith(own.url, { username: 'devices', password: 'a wrong guess' });
  await service.credentials({ reset: 'devices' }, OWNER);
  const text = records.join('\n');
  t.match(text, new RegExp(`"file":"${join(dataDir, BROKER_CREDENTIALS_FILE).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}"`), 'where');
  for (const secret of [own.password, devices.password, 'configured extra secret', 'a wrong guess'])
    t.notOk(text.includes(secret), 'never a password');
});

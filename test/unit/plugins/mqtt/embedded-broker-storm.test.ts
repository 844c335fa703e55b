// Connection storms against the MQTT plugin's real embedded broker (aedes, through real loopback
// sockets): random bytes, half-open CONNECTs, resets at every point of the handshake, 500
// connect/close cycles, and CONNECTs with wrong logins; and the same kinds on its TLS listener
// (garbage ClientHellos, stalled and reset handshakes, wrong logins over TLS). After each, the plugin must be up and
// unchanged: healthy, HomeAgent's own client still on its first connection, a long-lived device
// still connected, a new device able to log in and get its own message back, and no exception
// having escaped anywhere in the process. The packets are written by hand (MQTT 3.1.1) so every
// cut point of the handshake can be reached; the same bytes sent whole must log in (checked first).
import { readFileSync } from 'node:fs';
import { type Socket, connect as tcpConnect } from 'node:net';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import mqtt, { type MqttClient } from 'mqtt';
import t from 'tap';
import type { MqttCredentials } from '../../../../plugins/mqtt/embedded-broker-service.js';
import { MqttPlugin } from '../../../../plugins/mqtt/mqtt-plugin.js';
import { defaultConfig } from '../../../../src/config/loader.js';
import { makeCertificates, opensslMissing } from '../../../helpers/mosquitto.js';
import { createTestPluginContext } from '../../../helpers/plugin-context.js';
import { cleanups, eventually, withDeadline } from './mqtt-test-kit.js';

// ---- MQTT 3.1.1 packets by hand ----

function field(text: string): Buffer {
  const bytes = Buffer.from(text);
  return Buffer.concat([Buffer.from([bytes.length >> 8, bytes.length & 0xff]), bytes]);
}

function packet(first: number, body: Buffer): Buffer {
  const length: number[] = [];
  let n = body.length;
  do {
    let byte = n % 128;
    n = Math.floor(n / 128);
    if (n > 0) byte |= 0x80;
    length.push(byte);
  } while (n > 0);
  return Buffer.concat([Buffer.from([first, ...length]), body]);
}

function connectPacket(clientId: string, login?: { username: string; password: string }): Buffer {
  const flags = 0x02 | (login ? 0xc0 : 0); // clean session, user name and password
  const variable = Buffer.concat([field('MQTT'), Buffer.from([4, flags, 0, 30])]);
  const payload = Buffer.concat([field(clientId), ...(login ? [field(login.username), field(login.password)] : [])]);
  return packet(0x10, Buffer.concat([variable, payload]));
}

const subscribePacket = (topic: string) => packet(0x82, Buffer.concat([Buffer.from([0, 1]), field(topic), Buffer.from([1])]));
const publishPacket = (topic: string, qos: 1 | 2, payload: string) =>
  packet(0x30 | (qos << 1), Buffer.concat([field(topic), Buffer.from([0, 7]), Buffer.from(payload)]));

/** A seeded generator (mulberry32), so a failing storm can be replayed byte for byte. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

function randomBytes(next: () => number, length: number): Buffer {
  return Buffer.from(Array.from({ length }, () => Math.floor(next() * 256)));
}

// ---- raw sockets ----

interface Raw {
  socket: Socket;
  /** Everything the broker sent. */
  received: () => Buffer;
  /** Resolves once the broker sent at least `bytes` bytes (or the socket closed). */
  until(bytes: number): Promise<Buffer>;
  /** Resolves when the socket is closed, by either side. */
  closed: Promise<void>;
}

async function raw(port: number): Promise<Raw> {
  const socket = tcpConnect(port, '127.0.0.1');
  const chunks: Buffer[] = [];
  const waiters: Array<() => void> = [];
  // A reset from the broker is a normal end here.
  socket.on('error', () => {});
  socket.on('data', (chunk) => {
    chunks.push(chunk);
    for (const wake of waiters.splice(0)) wake();
  });
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  void closed.then(() => {
    for (const wake of waiters.splice(0)) wake();
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', () => resolve());
    socket.once('error', reject);
  });
  const received = () => Buffer.concat(chunks);
  return {
    socket,
    received,
    closed,
    until: async (bytes) => {
      while (received().length < bytes && !socket.destroyed) await new Promise<void>((resolve) => waiters.push(resolve));
      return received();
    },
  };
}

/** Runs `count` jobs, `width` at a time. */
async function inBatches(count: number, width: number, job: (i: number) => Promise<void>): Promise<void> {
  for (let start = 0; start < count; start += width) {
    await Promise.all(Array.from({ length: Math.min(width, count - start) }, (_, k) => job(start + k)));
  }
}

// ---- the plugin under storm ----

t.test('the embedded broker and the plugin stay up through connection storms', async (t) => {
  const atEnd = cleanups(t);
  const escaped: unknown[] = [];
  const onEscape = (error: unknown) => void escaped.push(error);
  process.on('uncaughtException', onEscape);
  process.on('unhandledRejection', onEscape);
  atEnd(() => {
    process.off('uncaughtException', onEscape);
    process.off('unhandledRejection', onEscape);
  });

  const tc = createTestPluginContext({
    name: 'mqtt',
    dataDir: t.testdir(),
    settings: {
      ...defaultConfig().plugin.mqtt,
      node_id: 'testnode',
      broker_enabled: true,
      broker_port: 0,
      // the smallest the schema allows: half-open connections are closed after a second
      broker_login_timeout_ms: 1000,
      broker_max_connections: 64,
    },
  });
  atEnd(() => tc.close());
  const plugin = new MqttPlugin(tc.context, { features: [] });
  await plugin.start(new AbortController().signal);
  atEnd(() => plugin.stop());
  await eventually(() => plugin.status().connected, "HomeAgent's client connected");
  const url = (plugin.status().broker as { url: string }).url;
  const port = Number(new URL(url).port);
  const devices = (await tc.control.call('mqtt.credentials', {}, { actor: 'cli', owner: true })) as MqttCredentials;
  const login = { username: devices.username, password: devices.password };
  const wrong = { username: devices.username, password: `${devices.password}x` };

  const probe: MqttClient = await mqtt.connectAsync(url, { ...login, clientId: 'probe', reconnectPeriod: 0 });
  atEnd(() => probe.endAsync(true));
  let probeClosed = false;
  probe.on('close', () => {
    probeClosed = true;
  });

  let round = 0;
  const stillServing = async (after: string) => {
    t.equal(escaped.length, 0, `${after}: no exception escaped`);
    const health = plugin.health();
    t.ok(health.ok, `${after}: healthy (${health.detail})`);
    const status = plugin.status();
    t.equal(status.connected, true, `${after}: HomeAgent's client connected`);
    t.equal(status.reconnects, 0, `${after}: on its first connection`);
    t.notOk(probeClosed, `${after}: the long-lived device is still connected`);
    const fresh = await mqtt.connectAsync(url, { ...login, clientId: `fresh-${round++}`, reconnectPeriod: 0, connectTimeout: 5000 });
    const topic = `storm/check/${round}`;
    const back = new Promise<string>((resolve) => fresh.once('message', (_t, payload) => resolve(payload.toString())));
    await fresh.subscribeAsync(topic, { qos: 1 });
    await fresh.publishAsync(topic, after, { qos: 1 });
    t.equal(await back, after, `${after}: a new device logs in and gets its own message back`);
    await fresh.endAsync();
  };

  // The hand-made packets are right: sent whole they log in, and the wrong login is told so.
  {
    const whole = await raw(port);
    whole.socket.write(connectPacket('handmade', login));
    t.same([...(await whole.until(4)).subarray(0, 4)], [0x20, 2, 0, 0], 'the hand-made CONNECT logs in (CONNACK 0)');
    whole.socket.destroy();
    const bad = await raw(port);
    bad.socket.write(connectPacket('handmade-bad', wrong));
    t.same([...(await bad.until(4)).subarray(0, 4)], [0x20, 2, 0, 4], 'a wrong login: CONNACK 4');
    await bad.closed;
  }

  // 1. Random bytes: bare, and behind a CONNECT header so the CONNECT parser chews on them; then a
  // FIN, a reset, or waiting for the broker to close (a parse error, or the login timeout).
  const next = random(25);
  await inBatches(150, 30, async (i) => {
    const socket = await raw(port);
    const junk = randomBytes(next, 1 + Math.floor(next() * 512));
    socket.socket.write(i % 3 === 0 ? Buffer.concat([Buffer.from([0x10, Math.floor(next() * 128)]), junk]) : junk);
    const end = i % 3;
    if (end === 0) socket.socket.end();
    else if (end === 1) socket.socket.resetAndDestroy();
    await socket.closed;
  });
  await stillServing('random bytes');

  // 2. Half-open CONNECTs: a part of a valid CONNECT, then silence. The broker closes each after
  // the login timeout; meanwhile everyone else is served.
  const full = connectPacket('half-open', login);
  const halfOpen = await Promise.all(
    Array.from({ length: 40 }, async (_, i) => {
      const socket = await raw(port);
      socket.socket.write(full.subarray(0, 1 + (i % (full.length - 1))));
      return socket;
    }),
  );
  await stillServing('half-open CONNECTs held');
  // This side never closes them: only the broker's login timeout (1 s) can end them in time.
  await withDeadline(Promise.all(halfOpen.map((s) => s.closed)), 'the broker to close the half-open connections', 5000);
  t.pass('every half-open connection was closed by the broker');
  await stillServing('half-open CONNECTs closed');

  // 3. A reset at every point of the handshake: inside the CONNECT, after it, after CONNACK, inside
  // and after a SUBSCRIBE, and inside QoS 1 and QoS 2 publishes before their acknowledgement.
  const connect = connectPacket('cut', login);
  for (let cut = 0; cut <= connect.length; cut++) {
    const socket = await raw(port);
    if (cut > 0) socket.socket.write(connect.subarray(0, cut));
    socket.socket.resetAndDestroy();
    await socket.closed;
  }
  const afterLogin = [
    subscribePacket('storm/#'),
    publishPacket('storm/qos1', 1, 'one'),
    publishPacket('storm/qos2', 2, 'two'),
    publishPacket(`homeagent/testnode/status`, 1, 'forged'),
  ];
  for (const [n, follow] of afterLogin.entries()) {
    for (let cut = 0; cut <= follow.length; cut++) {
      const socket = await raw(port);
      socket.socket.write(connectPacket(`cut-after-${n}-${cut}`, login));
      await socket.until(4); // CONNACK
      if (cut > 0) socket.socket.write(follow.subarray(0, cut));
      socket.socket.resetAndDestroy();
      await socket.closed;
    }
  }
  await stillServing('resets at every point of the handshake');

  // 4. 500 connect/close cycles: TCP only (FIN or reset right after the connect), and full MQTT
  // logins with mqtt.js that disconnect properly or vanish.
  await inBatches(500, 25, async (i) => {
    const socket = await raw(port);
    if (i % 2 === 0) socket.socket.end();
    else socket.socket.resetAndDestroy();
    await socket.closed;
  });
  await inBatches(100, 10, async (i) => {
    const client = await mqtt.connectAsync(url, { ...login, clientId: `cycle-${i}`, reconnectPeriod: 0, connectTimeout: 5000 });
    await client.endAsync(i % 2 === 0);
  });
  await stillServing('500 connect/close cycles');

  // 5. CONNECTs with wrong logins, and without any: each told why (CONNACK 4 or 5) and closed.
  const before = (plugin.status().broker as { refused: { logins: number } }).refused.logins;
  const codes: number[] = [];
  await inBatches(220, 20, async (i) => {
    const socket = await raw(port);
    socket.socket.write(connectPacket(`wrong-${i}`, i < 200 ? wrong : undefined));
    const answer = await socket.until(4);
    codes.push(answer[3] ?? -1);
    await socket.closed;
  });
  t.equal(codes.filter((c) => c === 4).length, 200, '200 wrong logins: CONNACK 4');
  t.equal(codes.filter((c) => c === 5).length, 20, '20 without a login: CONNACK 5');
  t.equal((plugin.status().broker as { refused: { logins: number } }).refused.logins - before, 220, 'all counted');
  await stillServing('wrong logins');

  // Every storm connection is gone again: only HomeAgent's client and the probe are logged in.
  await eventually(() => (plugin.status().broker as { clients: number }).clients === 2, 'the storm connections to be released');
  t.equal(escaped.length, 0, 'no exception escaped, start to end');
});

t.test('the TLS listener takes the same storms', { skip: opensslMissing() ?? false }, async (t) => {
  const atEnd = cleanups(t);
  const escaped: unknown[] = [];
  const onEscape = (error: unknown) => void escaped.push(error);
  process.on('uncaughtException', onEscape);
  process.on('unhandledRejection', onEscape);
  atEnd(() => {
    process.off('uncaughtException', onEscape);
    process.off('unhandledRejection', onEscape);
  });
  const base = t.testdir();
  const certs = makeCertificates(join(base, 'certs'));
  const tc = createTestPluginContext({
    name: 'mqtt',
    dataDir: join(base, 'data'),
    settings: {
      ...defaultConfig().plugin.mqtt,
      node_id: 'testnode',
      broker_enabled: true,
      broker_port: 0,
      broker_tls_port: 0,
      broker_tls_cert_file: certs.serverCert,
      broker_tls_key_file: certs.serverKey,
      broker_login_timeout_ms: 1000,
    },
  });
  atEnd(() => tc.close());
  const plugin = new MqttPlugin(tc.context, { features: [] });
  await plugin.start(new AbortController().signal);
  atEnd(() => plugin.stop());
  await eventually(() => plugin.status().connected, "HomeAgent's client connected");
  const devices = (await tc.control.call('mqtt.credentials', {}, { actor: 'cli', owner: true })) as MqttCredentials;
  const tlsPort = devices.tls_port ?? 0;
  const ca = readFileSync(certs.ca);
  const login = { username: devices.username, password: devices.password };

  /** A TLS session over a raw socket the test can reset at any moment. */
  const secure = async () => {
    const socket = await raw(tlsPort);
    const session = tlsConnect({ socket: socket.socket, ca, servername: 'localhost' });
    session.on('error', () => {});
    return { socket, session };
  };
  const answerOf = (session: ReturnType<typeof tlsConnect>, bytes: number) =>
    new Promise<Buffer>((resolve) => {
      const chunks: Buffer[] = [];
      session.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        if (Buffer.concat(chunks).length >= bytes) resolve(Buffer.concat(chunks));
      });
      session.once('close', () => resolve(Buffer.concat(chunks)));
    });

  const serving = async (after: string) => {
    t.equal(escaped.length, 0, `${after}: no exception escaped`);
    t.ok(plugin.health().ok, `${after}: healthy`);
    t.equal(plugin.status().reconnects, 0, `${after}: HomeAgent's client on its first connection`);
    const client = await mqtt.connectAsync(`mqtts://127.0.0.1:${tlsPort}`, { ...login, ca, reconnectPeriod: 0, connectTimeout: 5000 });
    await client.endAsync();
    t.pass(`${after}: a device logs in over TLS`);
  };

  // Random bytes where a ClientHello belongs, ended or reset or left for the broker to close.
  const next = random(8883);
  await inBatches(90, 30, async (i) => {
    const socket = await raw(tlsPort);
    socket.socket.write(randomBytes(next, 1 + Math.floor(next() * 512)));
    if (i % 3 === 0) socket.socket.end();
    else if (i % 3 === 1) socket.socket.resetAndDestroy();
    await socket.closed;
  });
  await serving('random bytes on TLS');

  // Half-open: a TLS handshake begun (the ClientHello sent), never finished; the handshake timeout (the login timeout) ends it.
  const stalled = await Promise.all(
    Array.from({ length: 20 }, async () => {
      const socket = await raw(tlsPort);
      socket.socket.write(Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01])); // a record header and a ClientHello's first byte
      return socket;
    }),
  );
  await withDeadline(Promise.all(stalled.map((s) => s.closed)), 'the broker to end the stalled handshakes', 5000);
  await serving('stalled TLS handshakes');

  // Resets: before the ClientHello, after the server's first answer, after the handshake, inside a CONNECT, after CONNACK.
  for (let point = 0; point < 5; point++) {
    for (let n = 0; n < 10; n++) {
      if (point === 0) {
        const socket = await raw(tlsPort);
        socket.socket.resetAndDestroy();
        await socket.closed;
        continue;
      }
      const { socket, session } = await secure();
      if (point === 1) await socket.until(1);
      else {
        await new Promise<void>((resolve) => session.once('secureConnect', () => resolve()));
        if (point === 3) session.write(connectPacket(`tls-cut-${n}`, login).subarray(0, 5 + n));
        if (point === 4) {
          const connack = answerOf(session, 4);
          session.write(connectPacket(`tls-cut-${n}`, login));
          t.same([...(await connack).subarray(0, 4)], [0x20, 2, 0, 0], 'CONNACK over TLS');
        }
      }
      socket.socket.resetAndDestroy();
      await socket.closed;
    }
  }
  await serving('resets during the TLS handshake');

  // Wrong logins over TLS.
  await inBatches(40, 20, async (i) => {
    const { socket, session } = await secure();
    await new Promise<void>((resolve) => session.once('secureConnect', () => resolve()));
    const answer = answerOf(session, 4);
    session.write(connectPacket(`tls-wrong-${i}`, { username: login.username, password: 'wrong' }));
    t.equal((await answer)[3], 4, 'CONNACK 4');
    await socket.closed;
  });
  await serving('wrong logins over TLS');
  t.equal(escaped.length, 0);
});

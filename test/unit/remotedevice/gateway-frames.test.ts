/**
 * What a peer that is not a well-behaved companion sends the real gateway, over real sockets (the
 * `ws` client for frames that are WebSocket but not protocol, hand-made RFC 6455 frames for the
 * rest): garbage and binary frames get an `error` frame with its code, before bind ending the
 * connection and after bind only after max_bad_frames; frames out of order, another protocol
 * version, an oversize message (before and after bind), a handshake that never finishes, more
 * connections than allowed, a wrong path, and results for requests never made. The gateway keeps
 * serving a good device through all of it.
 */
import { connect } from 'node:net';
import t from 'tap';
import WebSocket from 'ws';
import { acceptKey, wsFrame } from '../../helpers/ws-frames.js';
import { startRig, toolError, until } from './rig.js';

interface Peer {
  ws: WebSocket;
  frames: Array<Record<string, unknown>>;
  closed: Promise<{ code: number; reason: string }>;
  next(type: string): Promise<Record<string, unknown>>;
  send(frame: unknown): void;
}

async function peer(url: string): Promise<Peer> {
  const ws = new WebSocket(url);
  const frames: Array<Record<string, unknown>> = [];
  const waiters: Array<{ type: string; resolve: (f: Record<string, unknown>) => void }> = [];
  ws.on('message', (data) => {
    const frame = JSON.parse(String(data)) as Record<string, unknown>;
    const waiter = waiters.find((w) => w.type === frame.type);
    if (!waiter) return void frames.push(frame);
    waiters.splice(waiters.indexOf(waiter), 1);
    waiter.resolve(frame);
  });
  ws.on('error', () => undefined);
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on('close', (code, reason) => resolve({ code, reason: String(reason) })),
  );
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  return {
    ws,
    frames,
    closed,
    send: (frame) => ws.send(typeof frame === 'string' ? frame : JSON.stringify(frame)),
    next: (type) => {
      const seen = frames.find((f) => f.type === type);
      if (seen) {
        frames.splice(frames.indexOf(seen), 1);
        return Promise.resolve(seen);
      }
      return new Promise((resolve) => waiters.push({ type, resolve }));
    },
  };
}

const HELLO = { type: 'hello', protocol: 1, client: 'test-peer', platform: 'test', capabilities: ['notify', 'screenshot', 'made_up'] };

async function boundPeer(url: string, id: string, token: string): Promise<Peer> {
  const p = await peer(url);
  p.send(HELLO);
  await p.next('welcome');
  p.send({ type: 'bind', device_id: id, token });
  const bound = await p.next('bound');
  if (bound.device_id !== id) throw new Error('not bound');
  return p;
}

t.test('garbage before bind: a coded error, then the connection ends', async (t) => {
  const rig = await startRig(t);
  for (const [garbage, code, message] of [
    ['not json at all', 'HA_ERR_REMOTEDEVICE_FRAME', /not JSON/],
    ['[1,2,3]', 'HA_ERR_REMOTEDEVICE_FRAME', /not a JSON object/],
    ['{"type":"launch_missiles"}', 'HA_ERR_REMOTEDEVICE_FRAME', /unknown frame type "launch_missiles"/],
    ['{"type":"hello","protocol":2,"capabilities":[]}', 'HA_ERR_REMOTEDEVICE_PROTOCOL', /speaks protocol 1, the device 2/],
    ['{"type":"bind","device_id":"x","token":"y"}', 'HA_ERR_REMOTEDEVICE_PROTOCOL', /expected hello first, got bind/],
    ['{"type":"result","id":"r1","ok":true}', 'HA_ERR_REMOTEDEVICE_PROTOCOL', /expected hello first, got result/],
  ] as const) {
    const p = await peer(rig.url());
    p.send(garbage);
    const error = await p.next('error');
    t.match(error, { code, message }, garbage);
    t.equal((await p.closed).code, code === 'HA_ERR_REMOTEDEVICE_FRAME' || code === 'HA_ERR_REMOTEDEVICE_PROTOCOL' ? 4400 : 0);
  }
  const binary = await peer(rig.url());
  binary.ws.send(Buffer.from([0, 1, 2, 3]));
  t.match(await binary.next('error'), { code: 'HA_ERR_REMOTEDEVICE_FRAME', message: /binary frames/ });
  t.match(rig.plugin.health(), { ok: true, detail: /7 bad frames/ });
});

t.test('after bind: each bad frame is answered, the connection lasts until max_bad_frames', async (t) => {
  const rig = await startRig(t, { max_bad_frames: 3 });
  const token = await rig.add('laptop');
  const p = await boundPeer(rig.url(), 'laptop', token);
  p.send('{{{');
  t.match(await p.next('error'), { code: 'HA_ERR_REMOTEDEVICE_FRAME' });
  p.send({ type: 'result', id: 7, ok: true });
  t.match(await p.next('error'), { code: 'HA_ERR_REMOTEDEVICE_FRAME', message: /needs the id/ });
  // A result for a request never made is ignored (late or made up), not an error.
  p.send({ type: 'result', id: 'never-asked', ok: true, data: { stolen: true } });
  p.send({ type: 'ping', id: 5 });
  t.match(await p.next('pong'), { id: 5 }, 'still served');
  t.equal(await rig.state('laptop'), 'on');
  p.send('null');
  t.match(await p.next('error'), { code: 'HA_ERR_REMOTEDEVICE_FRAME', message: /not a JSON object/ });
  t.match(await p.next('error'), { code: 'HA_ERR_REMOTEDEVICE_FRAME', message: /3 frames were not protocol/ });
  t.equal((await p.closed).code, 4400);
  await until('offline', async () => ((await rig.state('laptop')) === 'off' ? true : undefined));
});

t.test('a result of the wrong shape is a coded tool error, and what the device offered beyond the grant is not asked', async (t) => {
  const rig = await startRig(t);
  const token = await rig.add('laptop');
  const p = await boundPeer(rig.url(), 'laptop', token);
  const shot = rig.tc.call('screensee', { device: 'laptop' });
  const request = await p.next('request');
  t.match(request, { capability: 'screenshot', args: {} });
  p.send({
    type: 'result',
    id: request.id,
    ok: true,
    data: { mime: 'image/png', data: Buffer.from('<script>not a picture</script>').toString('base64') },
  });
  t.match((await toolError(shot)).info, { reason: 'failed', detail: /HA_ERR_REMOTEDEVICE_BAD_RESULT.*not a png, jpeg, gif or webp/ });
  t.same(rig.tc.attached, [], 'nothing is shown to the model');
  // Not answered at all: the request times out and the device is told to cancel.
  rig.tc.settings.set('request_timeout_ms', 200);
  const slow = rig.tc.call('screensee', { device: 'laptop' });
  const second = await p.next('request');
  t.match((await toolError(slow)).info, { reason: 'timeout', detail: /HA_ERR_REMOTEDEVICE_TIMEOUT/ });
  t.match(await p.next('cancel'), { id: second.id });
  const view = (await rig.tc.call('device_ctl_status', { device: 'laptop' })) as { offered: string[] };
  t.same(view.offered, ['screenshot', 'notify'], 'an unknown capability name in hello is left out');
});

t.test('too many pending requests are refused', async (t) => {
  const rig = await startRig(t, { max_pending_requests: 2 });
  const token = await rig.add('laptop');
  const p = await boundPeer(rig.url(), 'laptop', token);
  const first = rig.tc.call('screensee', { device: 'laptop' });
  const second = rig.tc.call('screensee', { device: 'laptop' });
  t.match((await toolError(rig.tc.call('screensee', { device: 'laptop' }))).info, {
    reason: 'rejected',
    detail: /HA_ERR_REMOTEDEVICE_BUSY/,
  });
  p.ws.terminate();
  const [a, b] = await Promise.all([toolError(first), toolError(second)]);
  t.match(a.info, { reason: 'unavailable', detail: /HA_ERR_REMOTEDEVICE_OFFLINE/ });
  t.match(b.info, { reason: 'unavailable' });
});

t.test('oversize: before bind the raw byte budget, after bind max_message_bytes (1009)', async (t) => {
  const rig = await startRig(t, { handshake_max_bytes: 2048, max_message_bytes: 65536 });
  const early = await peer(rig.url());
  early.send({ ...HELLO, client: 'x'.repeat(5000) });
  t.match(await early.closed, { code: 1006 }, 'cut off without reading the frame');
  const token = await rig.add('laptop');
  const p = await boundPeer(rig.url(), 'laptop', token);
  p.send({ type: 'result', id: 'x', ok: true, data: { blob: 'y'.repeat(70_000) } });
  t.match(await p.closed, { code: 1009 });
  await until('offline', async () => ((await rig.state('laptop')) === 'off' ? true : undefined));
  const status = (await rig.tc.call('device_ctl_status', { device: 'laptop' })) as { last_offline?: { code: string } };
  t.equal(status.last_offline?.code, 'HA_ERR_REMOTEDEVICE_TOO_LARGE');
  t.match(rig.plugin.health().detail, /2 too large/);
  // The gateway serves on.
  await boundPeer(rig.url(), 'laptop', token);
});

t.test('a handshake that never finishes is closed; broken frames and wrong paths never reach a handler', async (t) => {
  const rig = await startRig(t, { handshake_timeout_ms: 200, max_connections: 3 });
  const idle = await peer(rig.url());
  t.match(await idle.next('error'), { code: 'HA_ERR_REMOTEDEVICE_HANDSHAKE_TIMEOUT' });
  t.equal((await idle.closed).code, 4408);

  // An unmasked client frame with reserved bits: ws's parser refuses it (1002), the gateway lives on.
  const url = new URL(rig.url());
  const raw = connect(Number(url.port), url.hostname);
  const key = 'dGhlIHNhbXBsZSBub25jZQ==';
  raw.write(
    `GET ${url.pathname} HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
  );
  let answer = '';
  raw.on('data', (d) => {
    answer += d.toString('latin1');
  });
  await until('upgrade', () => (answer.includes(acceptKey(key)) ? true : undefined));
  raw.write(wsFrame(1, Buffer.from('{"type":"hello"}'), { mask: false, rsv: 5 }));
  await new Promise((resolve) => raw.once('close', resolve));

  const wrong = new WebSocket(`ws://${url.host}/not-the-path`);
  const status = await new Promise((resolve) => wrong.once('unexpected-response', (_req, res) => resolve(res.statusCode)));
  t.equal(status, 404);

  const held = await Promise.all([peer(rig.url()), peer(rig.url()), peer(rig.url())]);
  const over = new WebSocket(rig.url());
  t.equal(await new Promise((resolve) => over.once('unexpected-response', (_req, res) => resolve(res.statusCode))), 503);
  for (const p of held) p.ws.terminate();
  const token = await rig.add('laptop');
  rig.tc.settings.set('handshake_timeout_ms', 10_000);
  await until('room again', async () => {
    try {
      return await boundPeer(rig.url(), 'laptop', token);
    } catch {
      return undefined;
    }
  });
});

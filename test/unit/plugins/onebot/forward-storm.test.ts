/**
 * The onebot plugin in forward mode against a hostile "implementation": a TCP server that resets
 * at accept, answers the handshake with garbage, half a response, a refusal or a wrong accept key,
 * or completes it and then sends garbage frames, half frames, masked frames, an absurd length, a
 * close frame or a reset mid-message. 500 reconnect cycles, each on the plugin's manual clock:
 * the plugin stays up, reports the last failure in health(), never tries again before its wait
 * (exactly one wait per attempt, doubling to reconnect_max_ms, so it cannot spin), and connects
 * to a well-behaved server at once afterwards.
 *
 * The per-connection details are random from one seed, printed as a comment: STORM_SEED=<seed> replays it.
 */
import { createServer as createHttpServer } from 'node:http';
import type { Socket } from 'node:net';
import t from 'tap';
import { WebSocketServer } from 'ws';
import type { LinkClock } from '../../../../plugins/onebot/forward-client.js';
import { OnebotPlugin } from '../../../../plugins/onebot/onebot-plugin.js';
import { backoffRange } from '../../../../src/shared/backoff.js';
import { deferred } from '../../../helpers/deferred.js';
import { ManualTimerClock } from '../../../helpers/manual-timer-clock.js';
import { createTestPluginContext } from '../../../helpers/plugin-context.js';
import { garbage, Rng, readRequestHead, startHostileServer, stormSeed } from '../../../helpers/storm.js';
import { until } from '../../../helpers/until.js';
import { acceptKey, wsFrame } from '../../../helpers/ws-frames.js';
import { DEFAULTS } from './settings.js';

const CYCLES = 500;
const TOKEN = 'forward-storm-token-0123456789';

function switching(head: string): string {
  const key = /sec-websocket-key:\s*(\S+)/i.exec(head)?.[1] ?? '';
  return `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${acceptKey(key)}\r\n\r\n`;
}

const json = (value: unknown) => Buffer.from(JSON.stringify(value));
const HEARTBEAT = json({ post_type: 'meta_event', meta_event_type: 'heartbeat', self_id: 42, time: 1, status: {} });

/** What the hostile server does once it has the handshake; each one ends the connection sooner or later. */
const AFTER_HANDSHAKE: Array<(socket: Socket, head: string, rng: Rng) => void> = [
  (socket, _head, rng) => socket.end(garbage(rng)),
  (socket) => socket.write('HTTP/1.1 101 Switch', () => socket.resetAndDestroy()),
  (socket) => socket.end('HTTP/1.1 401 Unauthorized\r\nContent-Length: 12\r\n\r\nUnauthorized'),
  (socket) =>
    socket.end('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: d3Jvbmc=\r\n\r\n'),
  (socket, head, rng) => socket.end(Buffer.concat([Buffer.from(switching(head)), garbage(rng)])),
  (socket, head) => socket.end(Buffer.concat([Buffer.from(switching(head)), wsFrame(1, HEARTBEAT, { mask: false }).subarray(0, 5)])),
  (socket, head) => socket.write(Buffer.concat([Buffer.from(switching(head)), wsFrame(1, HEARTBEAT, { mask: true })])),
  (socket, head) =>
    socket.write(Buffer.concat([Buffer.from(switching(head)), wsFrame(1, Buffer.alloc(0), { mask: false, length: 2n ** 62n })])),
  (socket, head) =>
    socket.end(
      Buffer.concat([
        Buffer.from(switching(head)),
        wsFrame(1, HEARTBEAT, { mask: false }),
        wsFrame(8, Buffer.from([0x03, 0xe8]), { mask: false }),
      ]),
    ),
  (socket, head) =>
    socket.write(
      Buffer.concat([
        Buffer.from(switching(head)),
        wsFrame(1, HEARTBEAT, { mask: false }),
        wsFrame(1, HEARTBEAT, { mask: false }).subarray(0, 9),
      ]),
      () => socket.resetAndDestroy(),
    ),
  (socket, head, rng) => socket.write(Buffer.concat([Buffer.from(switching(head)), wsFrame(1, garbage(rng), { mask: false, rsv: 3 })])),
  (socket, head) =>
    socket.write(Buffer.concat([Buffer.from(switching(head)), wsFrame(1, Buffer.from('not json'), { mask: false })]), () => socket.end()),
];

t.test(`forward mode survives ${CYCLES} reconnect cycles against a hostile implementation`, async (t) => {
  const rng = new Rng(stormSeed(t));
  // After the storm the same port serves a real OneBot WebSocket server.
  let storming = true;
  const real = new WebSocketServer({ noServer: true });
  const http = createHttpServer();
  http.on('upgrade', (req, socket, head) => real.handleUpgrade(req, socket, head, (ws) => ws.send(HEARTBEAT)));
  const server = await startHostileServer((socket, index) => {
    if (!storming) {
      http.emit('connection', socket);
      return;
    }
    // Every other connection is dropped before the handshake: at accept, with a reset or a close.
    if (index % 2 === 0) {
      if (rng.chance(0.5)) socket.resetAndDestroy();
      else socket.end();
      return;
    }
    void readRequestHead(socket).then((head) => {
      if (head === undefined || socket.destroyed) return;
      const behave = AFTER_HANDSHAKE[((index - 1) / 2) % AFTER_HANDSHAKE.length];
      behave?.(socket, head, rng);
    });
  });
  t.teardown(() => server.close());
  t.teardown(() => real.close());

  const ctx = createTestPluginContext({
    name: 'onebot',
    dataDir: t.testdir(),
    settings: { ...DEFAULTS, mode: 'forward', url: `ws://127.0.0.1:${server.port}/`, access_token: TOKEN, refuse_reply: false },
  });
  const manual = new ManualTimerClock();
  const waits: number[] = [];
  let armed = deferred<number>();
  const clock: LinkClock = {
    now: () => manual.now(),
    setTimer: (fn, ms) => {
      waits.push(ms);
      armed.resolve(ms);
      return manual.setTimer(fn, ms);
    },
  };
  const plugin = new OnebotPlugin(ctx.context, { clock });
  t.teardown(async () => {
    await plugin.stop();
    await ctx.close();
  });
  await plugin.start();

  const problems = new Set<string>();
  let wait = 0;
  for (let cycle = 0; cycle < CYCLES; cycle++) {
    if (cycle > 0) await manual.advance(wait);
    wait = await armed.promise;
    armed = deferred<number>();
    // The attempt ended, and the next waits for the clock: nothing connects before it moves.
    if (server.connections !== cycle + 1) t.fail(`cycle ${cycle}: ${server.connections} connections for ${cycle + 1} attempts`);
    const health = plugin.health();
    if (health.ok) t.fail(`cycle ${cycle}: health ok against a hostile server`);
    problems.add(health.detail.replace(/\d+/g, 'N'));
  }
  t.equal(server.connections, CYCLES, `${CYCLES} failed attempts, each after one wait`);
  const bounds = { min_ms: DEFAULTS.reconnect_min_ms, max_ms: DEFAULTS.reconnect_max_ms };
  const outside = waits.flatMap((ms, i) => {
    const { low, high } = backoffRange(i, bounds);
    return ms >= low && ms <= high ? [] : [`wait ${i}: ${ms} ms outside ${low}-${high}`];
  });
  t.equal(waits[0], DEFAULTS.reconnect_min_ms, 'the first wait is reconnect_min_ms');
  t.same(outside, [], 'the waits double up to reconnect_max_ms with jitter and stay there (no connection lasted)');
  t.comment(`health details seen: ${[...problems].join(' | ')}`);
  t.ok(
    [...problems].some((p) => p.startsWith('no OneBot implementation connected; cannot connect:')),
    'failed handshakes are reported in health()',
  );
  t.ok(
    [...problems].some((p) => p.startsWith('no OneBot implementation connected; connection lost:')),
    'connections lost after the handshake are reported in health()',
  );

  // A well-behaved implementation on the same address: the next attempt connects.
  storming = false;
  await manual.advance(wait);
  await until('connected to the real server', () => (plugin.health().ok ? true : undefined));
  t.match(plugin.health(), { ok: true, detail: /^connected/ }, 'connected once the server behaves');
  t.equal(server.connections, CYCLES + 1);
});

/**
 * The reverse WebSocket server's refusal paths over a raw socket: a request target that is no URL
 * path, a client that resets before reading its refusal, and one that never closes its side; and a
 * frame handler that throws. None of them may throw out of a socket event (tap fails the test on an
 * uncaught exception), and each ends only its own connection.
 */
import { connect, type Socket } from 'node:net';
import t, { type Test } from 'tap';
import { WebSocket } from 'ws';
import type { LinkHandlers, LinkLog } from '../../../../plugins/onebot/link.js';
import { ReverseServer } from '../../../../plugins/onebot/reverse-server.js';

const TOKEN = 'reverse-test-token-0123456789';
const PATH = '/onebot/v11/ws';

interface Logged {
  level: string;
  msg: string;
}

async function startServer(t: Test, handlers: Partial<LinkHandlers> = {}) {
  const logged: Logged[] = [];
  const log: LinkLog = {
    debug: (_obj, msg) => void logged.push({ level: 'debug', msg }),
    info: (_obj, msg) => void logged.push({ level: 'info', msg }),
    warn: (_obj, msg) => void logged.push({ level: 'warn', msg }),
    error: (_obj, msg) => void logged.push({ level: 'error', msg }),
  };
  const server = new ReverseServer({
    host: '127.0.0.1',
    port: 0,
    path: PATH,
    token: TOKEN,
    handlers: { onFrame: () => {}, onUp: () => {}, onDown: () => {}, ...handlers },
    log,
  });
  await server.start();
  t.teardown(() => server.stop());
  return { server, logged };
}

function upgradeHead(target: string, token = TOKEN): string {
  return (
    `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n` +
    `Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nAuthorization: Bearer ${token}\r\n\r\n`
  );
}

/** Sends `text` on a fresh connection; resolves with everything the server sent until it closed the connection. */
function exchange(port: number, text: string, options: { end?: boolean } = {}): Promise<{ reply: string; socket: Socket }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let reply = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      reply += chunk;
    });
    socket.on('error', reject);
    socket.on('close', () => resolve({ reply, socket }));
    socket.on('connect', () => {
      socket.write(text);
      if (options.end) socket.end();
    });
  });
}

t.test('a request target that is no URL path is refused with 400, not thrown', async (t) => {
  const { server, logged } = await startServer(t);
  // (`//a b` never gets here: the HTTP parser refuses the space itself.)
  for (const target of ['//', '//a:99999', '//[::1']) {
    const { reply } = await exchange(server.port, upgradeHead(target));
    t.match(reply, /^HTTP\/1\.1 400 Bad Request\r\n/, `${target} → 400`);
  }
  t.equal(server.refused, 3);
  t.match(server.problem, /^3 connections refused, the last: 400 Bad Request from 127\.0\.0\.1$/);
  t.ok(
    logged.some((line) => line.level === 'warn' && line.msg === 'OneBot connection refused: 400 Bad Request'),
    'the refusal is logged',
  );
});

t.test('a refused client that keeps its side open is closed by the server once the refusal is out', async (t) => {
  const { server } = await startServer(t);
  // No end() from the client: the server closes (before, a refused socket lingered half-open).
  const { reply } = await exchange(server.port, upgradeHead(PATH, 'wrong-token'));
  t.match(reply, /^HTTP\/1\.1 403 Forbidden\r\n/);
});

t.test('clients that reset before reading their refusal: counted, logged a few times, the server goes on', async (t) => {
  const { server, logged } = await startServer(t);
  const resets = Array.from(
    { length: 200 },
    () =>
      new Promise<void>((resolve) => {
        // Reset as soon as the refusal starts to arrive: the server's side may still be open (it
        // used to wait for the client's close, and the reset was an uncaught ECONNRESET).
        const socket = connect(server.port, '127.0.0.1');
        socket.on('error', () => {});
        socket.on('close', () => resolve());
        socket.once('data', () => socket.resetAndDestroy());
        socket.on('connect', () => socket.write(upgradeHead(PATH, 'wrong-token')));
      }),
  );
  await Promise.all(resets);
  const warnings = logged.filter((line) => line.msg.startsWith('OneBot connection refused')).length;
  t.ok(warnings >= 1 && warnings <= 5, `refusals are rate-limited in the log (${warnings} lines for ${server.refused} refusals)`);
  const ws = new WebSocket(`ws://127.0.0.1:${server.port}${PATH}`, { headers: { Authorization: `Bearer ${TOKEN}` } });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  t.ok(server.connected, 'a real implementation still connects');
  ws.terminate();
});

t.test('a frame the plugin fails on is logged; the connection goes on', async (t) => {
  const frames: unknown[] = [];
  const { server, logged } = await startServer(t, {
    onFrame: (frame) => {
      frames.push(frame);
      if (frames.length === 1) throw new Error('the handler broke');
    },
  });
  const ws = new WebSocket(`ws://127.0.0.1:${server.port}${PATH}`, { headers: { Authorization: `Bearer ${TOKEN}` } });
  t.teardown(() => ws.terminate());
  await new Promise<void>((resolve) => ws.once('open', () => resolve()));
  ws.send('{"post_type":"meta_event"}');
  ws.send('{"post_type":"notice"}');
  await new Promise<void>((resolve) => {
    const check = setInterval(() => {
      if (frames.length === 2) {
        clearInterval(check);
        resolve();
      }
    }, 5);
  });
  t.same(frames, [{ post_type: 'meta_event' }, { post_type: 'notice' }], 'the second frame arrived on the same connection');
  t.ok(logged.some((line) => line.level === 'error' && line.msg === 'OneBot frame could not be handled'));
  t.ok(server.connected);
});

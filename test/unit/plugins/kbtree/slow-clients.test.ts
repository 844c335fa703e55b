import { connect, type Socket } from 'node:net';
import t from 'tap';
import { get, startKbtree, startKernel } from './kbtree-setup.js';

const SLOW_CLIENTS = 200;
/** The goal: an authenticated request is answered within this while the slow clients trickle. */
const BOUND_MS = 1000;
const HEAD = 'GET /tree HTTP/1.1\r\nHost: kbtree\r\nX-Trickle: ';

t.test(`${SLOW_CLIENTS} clients sending headers a byte per second do not hold up an authenticated request`, async (t) => {
  const kernel = await startKernel(t);
  await kernel.services.knowledge?.create('house/stopcock', 'The water stopcock is under the kitchen sink.');
  const kb = await startKbtree(t, kernel);

  const sockets: Socket[] = [];
  const timers: NodeJS.Timeout[] = [];
  const answered: Socket[] = [];
  t.teardown(() => {
    for (const timer of timers) clearInterval(timer);
    for (const socket of sockets) socket.destroy();
  });
  /** Resolves once every client has written its second byte, a second after its first. */
  const trickling: Array<Promise<void>> = [];
  for (let i = 0; i < SLOW_CLIENTS; i++) {
    const socket = connect(kb.port, '127.0.0.1');
    sockets.push(socket);
    socket.on('error', () => {});
    socket.once('data', () => answered.push(socket));
    trickling.push(
      new Promise<void>((resolve) =>
        socket.once('connect', () => {
          let sent = 0;
          const trickle = () => {
            if (socket.destroyed) return;
            const byte = HEAD[sent % HEAD.length] ?? 'x';
            sent++;
            socket.write(byte, () => {
              if (sent === 2) resolve();
            });
          };
          trickle();
          timers.push(setInterval(trickle, 1000));
        }),
      ),
    );
  }
  await Promise.all(trickling);
  t.equal(kb.plugin.connections(), SLOW_CLIENTS, 'every slow client is connected and still sending');

  const started = performance.now();
  const reply = await get(kb, '/tree?items=1');
  const elapsed = performance.now() - started;
  t.equal(reply.status, 200);
  t.match(reply.body, { ok: true, tree: { total_count: 1 } });
  // Answered at all is what the test holds (a server waiting on the slow clients would time out); the
  // time is reported, not asserted: a loaded test machine must not fail a speed goal.
  t.comment(`answered in ${elapsed.toFixed(1)} ms (goal ${BOUND_MS} ms)`);
  t.equal(answered.length, 0, 'no slow client got an answer: they were all still sending headers');
});

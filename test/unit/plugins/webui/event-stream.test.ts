/**
 * GET /api/v1/events over a real socket: what a browser's EventSource sees, including the replay
 * after a reconnect, the stream limit, the heartbeat, and that nothing is left listening once
 * clients go or the server stops.
 */
import { once } from 'node:events';
import { createServer, get, type IncomingMessage } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import t, { type Test } from 'tap';
import { STREAMED_EVENTS } from '../../../../plugins/webui/api-events.js';
import { createApiRoutes } from '../../../../plugins/webui/api-routes.js';
import { EventRing } from '../../../../plugins/webui/event-ring.js';
import { EventStreams } from '../../../../plugins/webui/event-stream.js';
import { LogManager } from '../../../../src/log/logger.js';
import { type ApiHarness, apiHarness, type HarnessOptions } from './api-harness.js';
import { startWebui } from './webui-setup.js';

interface Frame {
  id?: string;
  event?: string;
  data?: unknown;
  comment?: string;
}

/** An SSE client: frames as they arrive, and a way to wait for the next ones. */
class SseClient {
  readonly frames: Frame[] = [];
  readonly response: IncomingMessage;
  ended = false;
  #buffer = '';
  #waiters: Array<() => void> = [];

  constructor(response: IncomingMessage) {
    this.response = response;
    response.setEncoding('utf8');
    response.on('data', (chunk: string) => {
      this.#buffer += chunk;
      let end = this.#buffer.indexOf('\n\n');
      while (end !== -1) {
        this.frames.push(parseFrame(this.#buffer.slice(0, end)));
        this.#buffer = this.#buffer.slice(end + 2);
        end = this.#buffer.indexOf('\n\n');
      }
      this.#wake();
    });
    // 'close' too: a connection cut without a proper end (a server destroying its sockets) is also the end.
    for (const event of ['end', 'close']) {
      response.on(event, () => {
        this.ended = true;
        this.#wake();
      });
    }
  }

  /** Frames that are events (not comments or the retry line). */
  events(): Frame[] {
    return this.frames.filter((f) => f.event !== undefined);
  }

  /** Resolves once `count` events have arrived (or the stream ended). */
  async waitForEvents(count: number): Promise<Frame[]> {
    while (this.events().length < count && !this.ended) await new Promise<void>((resolve) => this.#waiters.push(resolve));
    return this.events();
  }

  async waitFor(predicate: (frames: Frame[]) => boolean): Promise<void> {
    while (!predicate(this.frames) && !this.ended) await new Promise<void>((resolve) => this.#waiters.push(resolve));
  }

  async waitForEnd(): Promise<void> {
    while (!this.ended) await new Promise<void>((resolve) => this.#waiters.push(resolve));
  }

  close(): void {
    this.response.destroy();
  }

  #wake(): void {
    for (const waiter of this.#waiters.splice(0)) waiter();
  }
}

function parseFrame(text: string): Frame {
  const frame: Frame = {};
  for (const line of text.split('\n')) {
    if (line.startsWith(':')) frame.comment = line.slice(1).trim();
    else if (line.startsWith('id: ')) frame.id = line.slice(4);
    else if (line.startsWith('event: ')) frame.event = line.slice(7);
    else if (line.startsWith('data: ')) frame.data = JSON.parse(line.slice(6));
  }
  return frame;
}

interface Live {
  h: ApiHarness;
  port: number;
  /** Heartbeat ticks of the open timer, driven by the test. */
  beat(): void;
  heartbeatsRunning(): number;
  /** Server-side sockets, to await their close. */
  sockets: Socket[];
  connect(options?: { lastEventId?: string; query?: string }): Promise<SseClient>;
}

async function live(t: Test, options: HarnessOptions = {}): Promise<Live> {
  const ticks = new Set<() => void>();
  const h = await apiHarness(t, {
    ...options,
    heartbeat: (_ms, tick) => {
      ticks.add(tick);
      return () => void ticks.delete(tick);
    },
  });
  const sockets: Socket[] = [];
  h.app.server.on('connection', (socket: Socket) => void sockets.push(socket));
  await h.app.listen({ port: 0, host: '127.0.0.1' });
  const port = (h.app.server.address() as AddressInfo).port;
  return {
    h,
    port,
    sockets,
    beat: () => {
      for (const tick of ticks) tick();
    },
    heartbeatsRunning: () => ticks.size,
    connect: async ({ lastEventId, query = '' } = {}) => {
      const request = get({
        host: '127.0.0.1',
        port,
        path: `/api/v1/events${query}`,
        headers: lastEventId === undefined ? {} : { 'last-event-id': lastEventId },
      });
      const [response] = (await once(request, 'response')) as [IncomingMessage];
      const client = new SseClient(response);
      // The stream is registered once its first bytes (the retry line) are out.
      await client.waitFor((frames) => frames.length > 0);
      return client;
    },
  };
}

const delta = (text: string) => ({ task_id: 't1', input_id: 'in1', channel: 'webui', turn: 1, delta: text, restart: false });

t.test('kernel events reach an open stream with increasing ids, names and JSON data', async (t) => {
  const { h, connect } = await live(t);
  const client = await connect();
  t.equal(client.response.statusCode, 200);
  t.match(client.response.headers['content-type'], /^text\/event-stream/);
  t.equal(client.response.headers['cache-control'], 'no-store, no-transform');
  h.tc.events.emit('agent.text_delta', delta('Hel'));
  h.tc.events.emit('agent.text_delta', delta('lo'));
  h.tc.events.emit('daemon.status', { state: 'running', text: 'all good' });
  h.tc.events.emit('gpio.edge', { pin: 'p', bcm: 1, entity_id: 'x', edge: 'rising', value: 1, at: 1 });
  const events = await client.waitForEvents(3);
  t.same(
    events.map((e) => [e.id, e.event]),
    [
      ['1', 'agent.text_delta'],
      ['2', 'agent.text_delta'],
      ['3', 'daemon.status'],
    ],
  );
  t.same(events[0]?.data, delta('Hel'));
  t.equal(h.ring.lastId, 3, 'events the page does not follow are not kept');
  client.close();
});

t.test('a reconnect with Last-Event-ID (or ?last_event_id) replays what was missed, then goes on live', async (t) => {
  const { h, connect } = await live(t);
  const first = await connect();
  h.tc.events.emit('agent.text_delta', delta('a'));
  h.tc.events.emit('agent.text_delta', delta('b'));
  await first.waitForEvents(2);
  first.close();

  // Missed while the phone slept.
  h.tc.events.emit('agent.text_delta', delta('c'));
  h.tc.events.emit('agent.answer', {
    task_id: 't1',
    input_id: 'in1',
    channel: 'webui',
    text: 'abc',
    usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 },
  });

  const again = await connect({ lastEventId: '2' });
  h.tc.events.emit('entity.state_changed', {
    entity_id: 'switch.kitchen_light',
    domain: 'switch',
    old_state: 'off',
    new_state: 'on',
    state_changed: true,
    attributes: {},
    at: 1,
    context: null,
  });
  const events = await again.waitForEvents(3);
  t.same(
    events.map((e) => [e.id, e.event]),
    [
      ['3', 'agent.text_delta'],
      ['4', 'agent.answer'],
      ['5', 'entity.state_changed'],
    ],
    'the missed events in order, then the live one; no reset',
  );
  again.close();

  const byQuery = await connect({ query: '?last_event_id=4' });
  t.same(
    (await byQuery.waitForEvents(1)).map((e) => e.id),
    ['5'],
  );
  const both = await connect({ query: '?last_event_id=0', lastEventId: '3' });
  t.same(
    (await both.waitForEvents(2)).map((e) => e.id),
    ['4', '5'],
    'the header (sent by the browser on its own reconnects) wins over the URL',
  );
  byQuery.close();
  both.close();
});

t.test('a client behind the buffer gets a reset event first', async (t) => {
  const { h, connect } = await live(t, { settings: { event_buffer: 10 } });
  for (let i = 0; i < 15; i++) h.tc.events.emit('agent.text_delta', delta(String(i)));
  const client = await connect({ lastEventId: '2' });
  const events = await client.waitForEvents(11);
  t.same(events[0], { event: 'reset', data: { last_event_id: 2, oldest_kept_id: 6, newest_id: 15 } });
  t.same(
    events.slice(1).map((e) => Number(e.id)),
    [6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
  );
  client.close();
});

t.test('a bad Last-Event-ID is refused before any stream opens', async (t) => {
  const h = await apiHarness(t);
  const reply = await h.request({ method: 'GET', url: '/api/v1/events', headers: { 'last-event-id': 'abc' } });
  t.equal(reply.status, 400);
  t.match(reply.json, { ok: false, error: { code: 'HA_ERR_RPC_INVALID_PARAMS', message: /Last-Event-ID must be an event id.*"abc"/ } });
  const query = await h.request({ method: 'GET', url: '/api/v1/events?last_event_id=-1' });
  t.equal(query.status, 400);
  t.equal(h.streams.size, 0);
});

t.test('the heartbeat: a comment on every open stream, only while one is open', async (t) => {
  const { h, connect, beat, heartbeatsRunning, sockets } = await live(t);
  t.equal(heartbeatsRunning(), 0, 'no timer without streams');
  const a = await connect();
  const b = await connect();
  t.equal(heartbeatsRunning(), 1, 'one timer for all streams');
  t.equal(sockets.at(-1)?.timeout, 0, 'the stream socket has no idle timeout');
  beat();
  await a.waitFor((frames) => frames.some((f) => f.comment === 'keep-alive'));
  await b.waitFor((frames) => frames.some((f) => f.comment === 'keep-alive'));
  t.pass('both streams got the comment');
  a.close();
  b.close();
  await Promise.all(sockets.map((s) => (s.destroyed ? undefined : once(s, 'close'))));
  t.equal(h.streams.size, 0);
  t.equal(heartbeatsRunning(), 0, 'the timer stops with the last stream');
  t.equal(h.ring.listenerCount, 0, 'nothing listens to the ring');
});

t.test('at most max_event_streams: the oldest stream is closed for a new one', async (t) => {
  const { h, connect } = await live(t, { settings: { max_event_streams: 2 } });
  const oldest = await connect();
  const middle = await connect();
  const newest = await connect();
  await oldest.waitForEnd();
  t.match(oldest.events().at(-1), { event: 'closed', data: { reason: /too many event streams/ } });
  t.equal(h.streams.size, 2);
  h.tc.events.emit('daemon.status', { state: 'running', text: 'x' });
  t.equal((await middle.waitForEvents(1)).length, 1);
  t.equal((await newest.waitForEvents(1)).length, 1);
  middle.close();
  newest.close();
});

t.test('a client that stops reading is cut off instead of filling memory', async (t) => {
  const { h, connect, sockets } = await live(t);
  const client = await connect();
  client.response.pause();
  const chunk = 'x'.repeat(64 * 1024);
  let pushed = 0;
  while (h.streams.size > 0 && pushed < 2000) {
    h.tc.events.emit('agent.text_delta', delta(chunk));
    pushed++;
  }
  t.equal(h.streams.size, 0, `closed after ${pushed} events of 64 KiB`);
  t.ok(pushed * 64 * 1024 < 64 * 1024 * 1024, 'long before it held tens of megabytes');
  await Promise.all(sockets.map((s) => (s.destroyed ? undefined : once(s, 'close'))));
  client.close();
});

t.test('stopping the server ends every stream cleanly and leaves no listener behind', async (t) => {
  const { h, connect, heartbeatsRunning } = await live(t);
  const clients = [await connect(), await connect()];
  for (const name of STREAMED_EVENTS) t.equal(h.tc.events.listenerCount(name), 1, `${name} is followed`);
  await h.app.close();
  for (const client of clients) {
    await client.waitForEnd();
    t.match(client.events().at(-1), { event: 'closed', data: { reason: /stopping/ } });
  }
  t.equal(h.streams.size, 0);
  t.equal(heartbeatsRunning(), 0);
  for (const name of STREAMED_EVENTS) t.equal(h.tc.events.listenerCount(name), 0, `${name} is no longer followed`);
});

t.test('on the real web server: the stream outlives the request and idle timeouts and ends when the plugin stops', async (t) => {
  const web = await startWebui(t, {
    settings: { header_timeout_ms: 200, request_timeout_ms: 200, idle_timeout_ms: 200 },
    routeModules: [createApiRoutes({ heartbeat: () => () => {} })],
  });
  const request = get({ host: '127.0.0.1', port: web.port, path: '/api/v1/events', headers: { 'x-api-key': web.apiKey } });
  const [response] = (await once(request, 'response')) as [IncomingMessage];
  t.equal(response.statusCode, 200);
  const client = new SseClient(response);
  await client.waitFor((frames) => frames.length > 0);

  // A connection that sends nothing is cut off by those timeouts: once it is, they have passed.
  // It reads what it is sent: a header deadline answers 408 before closing, and a socket that
  // leaves that answer unread never sees the end (whichever deadline fires first under load).
  const idle = connect(web.port, '127.0.0.1');
  idle.on('error', () => {}); // a reset instead of an end is a cut too
  idle.resume();
  await new Promise((resolve) => idle.once('close', resolve));
  web.test.events.emit('daemon.status', { state: 'running', text: 'still here' });
  t.match(await client.waitForEvents(1), [{ id: '1', event: 'daemon.status', data: { text: 'still here' } }]);
  t.notOk(client.ended, 'the stream is still open');

  await web.stop();
  await client.waitForEnd();
  t.match(client.events().at(-1), { event: 'closed', data: { reason: /stopping/ } }, 'the stream ended with the plugin, saying why');
  t.equal(web.test.events.listenerCount('daemon.status'), 0);
});

t.test('a client gone before its stream opens is not kept (its close event has been and gone)', async (t) => {
  const streams = new EventStreams({
    ring: new EventRing(16),
    maxStreams: () => 8,
    log: new LogManager({ level: 'silent', levels: {} }).child('webui'),
    heartbeat: () => () => {},
  });
  const opened = new Promise<number>((resolve) => {
    const server = createServer((request, response) => {
      request.socket.once('close', () => {
        // As a handler that was still busy when the client reset: the response is destroyed already.
        streams.open(response, undefined);
        resolve(streams.size);
        server.close();
      });
      request.socket.resetAndDestroy();
    });
    server.listen(0, '127.0.0.1', () => {
      const socket = connect((server.address() as AddressInfo).port, '127.0.0.1');
      socket.on('error', () => {});
      socket.write('GET /api/v1/events HTTP/1.1\r\nHost: x\r\n\r\n');
    });
  });
  t.equal(await opened, 0, 'no stream is kept for it');
});

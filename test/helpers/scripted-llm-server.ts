/**
 * A scripted LLM vendor on loopback for tests and benchmarks: it speaks HTTP like an
 * OpenAI-compatible or Ollama server, answers each request with the next queued step (recorded
 * vendor payloads, errors, stalls, connection resets) and records what it was sent.
 *
 *   const server = await startScriptedServer(t);
 *   server.enqueue({ sse: chunks, done: true }, { status: 500, body: 'boom' });
 *   ... point a provider at server.url ...
 *   t.equal(server.requests[0]?.body.model, 'deepseek-chat');
 *
 * With an empty queue the server answers HTTP 500 "scripted server: no step queued" (so a test
 * that sends more requests than it scripted fails visibly), unless `replyFn` is set: then it is
 * asked for a step, which suits benchmarks that want instant answers forever.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

type Headers = Record<string, string>;

/** Anything that waits before the answer starts (`gate`) applies to every step kind. */
interface StepBase {
  /** The answer starts only after this settles: lets a test hold a request for as long as it likes. */
  gate?: Promise<unknown>;
}

export type ScriptStep = StepBase &
  (
    | { json: unknown; status?: number; headers?: Headers }
    /**
     * Objects are sent as `data: <json>\n\n`; strings are sent verbatim (include the framing).
     * `hang` (also for ndjson): after the chunks the response stays open without another byte.
     */
    | { sse: Array<unknown>; done?: boolean; delayMs?: number; status?: number; headers?: Headers; hang?: boolean }
    /** Objects are sent as one JSON line each; strings verbatim (include the newline). */
    | { ndjson: Array<unknown>; delayMs?: number; status?: number; headers?: Headers; hang?: boolean }
    | { status: number; body?: unknown; headers?: Headers }
    /** Reads the request and never answers. */
    | { stall: true }
    /** Sends 200 headers and the given SSE chunks (or NDJSON lines), then destroys the socket. */
    | { reset: true; sse?: Array<unknown>; ndjson?: Array<unknown>; before_headers?: boolean }
    | { raw: string; status?: number; headers?: Headers }
  );

export interface RecordedRequest {
  /** Order of arrival, from 0. */
  seq: number;
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The parsed JSON body (undefined when it was not JSON). */
  // biome-ignore lint/suspicious/noExplicitAny: recorded bodies are inspected freely in tests.
  body: any;
  raw: string;
  /** performance.now() when the body had arrived. */
  received_at: number;
  /** performance.now() when the answer was complete (or the socket was reset); undefined while open. */
  finished_at: number | undefined;
  /** The client went away before the answer was complete. */
  aborted: boolean;
}

export type ReplyFn = (body: unknown, request: RecordedRequest) => ScriptStep;

export interface ScriptedServer {
  /** `http://127.0.0.1:<port>` (no trailing slash). */
  url: string;
  requests: RecordedRequest[];
  /**
   * GET requests (the supervisor's reachability probe of the base URL): answered 404 like a real
   * API root, kept apart so they neither take a scripted step nor count as requests.
   */
  probes: number;
  enqueue(...steps: ScriptStep[]): void;
  /** Steps not used yet. */
  pending(): number;
  /** Answers requests when the queue is empty; undefined turns it off. */
  replyFn: ReplyFn | undefined;
  /** Resolves once at least `n` requests have arrived (their bodies read). */
  waitForRequests(n: number): Promise<void>;
  /** Resolves once request `seq` has been answered completely, reset or abandoned by the client. */
  waitForFinished(seq: number): Promise<void>;
  close(): Promise<void>;
}

export interface Teardown {
  teardown(fn: () => void | Promise<void>): void;
}

const EMPTY_QUEUE_BODY = JSON.stringify({
  error: { message: 'scripted server: no step queued for this request', type: 'scripted_server_empty_queue' },
});

export async function startScriptedServer(t?: Teardown, options: { replyFn?: ReplyFn } = {}): Promise<ScriptedServer> {
  const queue: ScriptStep[] = [];
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  const waiters = new Set<() => void>();
  const notify = (): void => {
    for (const w of [...waiters]) w();
  };
  const until = (test: () => boolean): Promise<void> =>
    new Promise((resolve) => {
      if (test()) return resolve();
      const check = (): void => {
        if (!test()) return;
        waiters.delete(check);
        resolve();
      };
      waiters.add(check);
    });

  const server = createServer((req, res) => void handle(req, res));
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  const scripted: ScriptedServer = {
    url: '',
    requests,
    probes: 0,
    enqueue: (...steps) => void queue.push(...steps),
    pending: () => queue.length,
    replyFn: options.replyFn,
    waitForRequests: (n) => until(() => requests.length >= n),
    waitForFinished: (seq) => until(() => requests[seq]?.finished_at !== undefined),
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method === 'GET') {
      scripted.probes++;
      req.resume();
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'not found' } }));
      return;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    let body: unknown;
    try {
      body = JSON.parse(raw);
    } catch {
      body = undefined;
    }
    const record: RecordedRequest = {
      seq: requests.length,
      method: req.method ?? '',
      path: req.url ?? '',
      headers: req.headers,
      body,
      raw,
      received_at: performance.now(),
      finished_at: undefined,
      aborted: false,
    };
    requests.push(record);
    const finish = (): void => {
      if (record.finished_at !== undefined) return;
      record.finished_at = performance.now();
      notify();
    };
    res.on('close', () => {
      if (!res.writableFinished) record.aborted = true;
      finish();
    });
    notify();
    const step = queue.shift() ?? scripted.replyFn?.(body, record);
    if (!step) {
      res.writeHead(500, { 'content-type': 'application/json' }).end(EMPTY_QUEUE_BODY);
      return;
    }
    if (step.gate) await step.gate.catch(() => undefined);
    if (res.destroyed) return;
    await answer(step, res);
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  scripted.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  t?.teardown(() => scripted.close());
  return scripted;
}

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function sseFrame(item: unknown): string {
  return typeof item === 'string' ? item : `data: ${JSON.stringify(item)}\n\n`;
}

function ndjsonLine(item: unknown): string {
  return typeof item === 'string' ? item : `${JSON.stringify(item)}\n`;
}

async function writeAll(res: ServerResponse, frames: string[], delayMs: number): Promise<void> {
  for (const [i, frame] of frames.entries()) {
    if (res.destroyed) return;
    if (i > 0 && delayMs > 0) await pause(delayMs);
    res.write(frame);
  }
}

async function answer(step: ScriptStep, res: ServerResponse): Promise<void> {
  if ('stall' in step) return;
  if ('reset' in step) {
    if (!step.before_headers) {
      const ndjson = step.ndjson !== undefined;
      res.writeHead(200, { 'content-type': ndjson ? 'application/x-ndjson' : 'text/event-stream' });
      res.flushHeaders();
      const frames = ndjson ? (step.ndjson ?? []).map(ndjsonLine) : (step.sse ?? []).map(sseFrame);
      await writeAll(res, frames, 0);
      // Let the written bytes leave before the socket dies, so "after the first chunk" is real.
      await new Promise<void>((resolve) => res.socket?.write('', () => resolve()) ?? resolve());
    }
    res.socket?.destroy();
    return;
  }
  if ('sse' in step) {
    res.writeHead(step.status ?? 200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...step.headers });
    res.flushHeaders();
    const frames = step.sse.map(sseFrame);
    if (step.done) frames.push('data: [DONE]\n\n');
    await writeAll(res, frames, step.delayMs ?? 0);
    if (!step.hang) res.end();
    return;
  }
  if ('ndjson' in step) {
    res.writeHead(step.status ?? 200, { 'content-type': 'application/x-ndjson', ...step.headers });
    res.flushHeaders();
    await writeAll(res, step.ndjson.map(ndjsonLine), step.delayMs ?? 0);
    if (!step.hang) res.end();
    return;
  }
  if ('json' in step) {
    res.writeHead(step.status ?? 200, { 'content-type': 'application/json', ...step.headers }).end(JSON.stringify(step.json));
    return;
  }
  if ('raw' in step) {
    res.writeHead(step.status ?? 200, { 'content-type': 'text/plain', ...step.headers }).end(step.raw);
    return;
  }
  const body = step.body === undefined ? '' : typeof step.body === 'string' ? step.body : JSON.stringify(step.body);
  const type = typeof step.body === 'string' || step.body === undefined ? 'text/plain' : 'application/json';
  res.writeHead(step.status, { 'content-type': type, ...step.headers }).end(body);
}

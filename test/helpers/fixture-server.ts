/**
 * A loopback HTTP server that plays back recorded vendor payloads and records what it received.
 * Replies are queued per test: a body (written in small pieces so stream parsers meet split
 * events), a stall (headers or body never finish), or a connection reset.
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { join } from 'node:path';

export interface RecordedRequest {
  method: string;
  /** Path and query, e.g. `/v1/messages`. */
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export type FixtureReply =
  | {
      status?: number;
      headers?: Record<string, string>;
      body: string | Buffer;
      /** Write the body in pieces of this many bytes (default: all at once). */
      chunk_size?: number;
      /** After writing this many bytes of the body, stop sending (the client's idle timer must fire). */
      stall_after?: number;
    }
  /** Accept the request and never answer. */
  | { stall: true }
  /** Destroy the connection as soon as the request arrived. */
  | { reset: true };

export class FixtureServer {
  readonly requests: RecordedRequest[] = [];
  readonly #server: Server;
  readonly #queue: Array<FixtureReply | ((request: RecordedRequest) => FixtureReply)> = [];
  readonly #sockets = new Set<Socket>();
  #url = '';

  private constructor() {
    this.#server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const recorded: RecordedRequest = {
          method: req.method ?? '',
          path: req.url ?? '',
          headers: req.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        };
        this.requests.push(recorded);
        const next = this.#queue.shift();
        const reply = typeof next === 'function' ? next(recorded) : next;
        void this.#answer(res, reply ?? { status: 500, body: '{"error":"no reply queued in the fixture server"}' });
      });
    });
    this.#server.on('connection', (socket) => {
      this.#sockets.add(socket);
      socket.on('close', () => this.#sockets.delete(socket));
    });
  }

  static async start(): Promise<FixtureServer> {
    const server = new FixtureServer();
    await new Promise<void>((resolve) => server.#server.listen(0, '127.0.0.1', resolve));
    const { port } = server.#server.address() as AddressInfo;
    server.#url = `http://127.0.0.1:${port}`;
    return server;
  }

  /** `http://127.0.0.1:<port>` */
  get url(): string {
    return this.#url;
  }

  /** Queues the reply for the next request. */
  reply(reply: FixtureReply | ((request: RecordedRequest) => FixtureReply)): void {
    this.#queue.push(reply);
  }

  get last(): RecordedRequest | undefined {
    return this.requests.at(-1);
  }

  async close(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  async #answer(res: ServerResponse, reply: FixtureReply): Promise<void> {
    if ('reset' in reply) {
      res.socket?.destroy();
      return;
    }
    if ('stall' in reply) return;
    const body = typeof reply.body === 'string' ? Buffer.from(reply.body, 'utf8') : reply.body;
    res.writeHead(reply.status ?? 200, reply.headers ?? { 'content-type': 'application/json' });
    const size = reply.chunk_size ?? body.length;
    const limit = reply.stall_after ?? body.length;
    for (let at = 0; at < Math.min(body.length, limit); at += size) {
      if (res.destroyed) return;
      res.write(body.subarray(at, Math.min(at + size, limit)));
      // Let each piece leave on its own so the client meets events split across reads.
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    if (reply.stall_after === undefined) res.end();
  }
}

/** The text of `test/fixtures/llm/<folder>/<file>`. */
export function readFixture(folder: string, file: string): string {
  return readFileSync(join(FIXTURES_DIR, folder, file), 'utf8');
}

export const FIXTURES_DIR = join(import.meta.dirname, '..', 'fixtures', 'llm');

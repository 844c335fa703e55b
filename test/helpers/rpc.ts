/**
 * A raw client for the CLI socket's wire protocol (newline-delimited JSON), written independently
 * of src/cli so that protocol tests do not check the daemon with its own code. It can send raw
 * bytes (malformed or oversized frames) as well as requests, and matches responses by id.
 */
import { createConnection, type Socket } from 'node:net';

export interface RpcResponse {
  id: string | number | null;
  ok: boolean;
  result?: unknown;
  error?: { code: string; message: string };
}

export class RpcConnection {
  readonly socket: Socket;
  /** Every response line received, parsed, in arrival order. */
  readonly received: RpcResponse[] = [];
  readonly #claimed = new Set<number>();
  readonly #waiters = new Set<() => void>();
  #buffer = '';
  #closed = false;
  #closeError: Error | undefined;
  #nextId = 1;

  private constructor(socket: Socket) {
    this.socket = socket;
    socket.setEncoding('utf8');
    socket.on('data', (text: string) => {
      this.#buffer += text;
      let newline = this.#buffer.indexOf('\n');
      while (newline !== -1) {
        const line = this.#buffer.slice(0, newline);
        this.#buffer = this.#buffer.slice(newline + 1);
        if (line.trim() !== '') this.received.push(parseResponse(line));
        newline = this.#buffer.indexOf('\n');
      }
      this.#wake();
    });
    socket.on('error', (error) => {
      this.#closeError ??= error;
    });
    socket.on('close', () => {
      this.#closed = true;
      this.#wake();
    });
  }

  static connect(path: string, timeoutMs = 5000): Promise<RpcConnection> {
    return new Promise((resolve, reject) => {
      const socket = createConnection(path);
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new Error(`connecting to ${path} took longer than ${timeoutMs} ms`));
      }, timeoutMs);
      socket.once('connect', () => {
        clearTimeout(timer);
        socket.removeAllListeners('error');
        resolve(new RpcConnection(socket));
      });
      socket.once('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
    });
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Writes text as is (no newline added); resolves once it is handed to the kernel. */
  writeRaw(text: string | Buffer): Promise<void> {
    return new Promise((resolve, reject) => {
      this.socket.write(text, (error) => (error ? reject(error) : resolve()));
    });
  }

  /** Sends one request line; returns the id used (given or generated). */
  send(method: string, params: unknown = {}, id: string | number = this.#nextId++): string | number {
    this.socket.write(`${JSON.stringify({ id, method, params })}\n`);
    return id;
  }

  /** Sends a request and waits for the response with its id. */
  async request(method: string, params: unknown = {}, timeoutMs = 10_000): Promise<RpcResponse> {
    const id = this.send(method, params);
    return this.waitFor((r) => r.id === id, timeoutMs);
  }

  /**
   * The first response not yet returned by an earlier waitFor for which `predicate` holds.
   * Rejects on timeout or when the connection closes first.
   */
  waitFor(predicate: (response: RpcResponse) => boolean, timeoutMs = 10_000): Promise<RpcResponse> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const index = this.received.findIndex((r, i) => !this.#claimed.has(i) && predicate(r));
        if (index !== -1) {
          this.#claimed.add(index);
          finish();
          resolve(this.received[index] as RpcResponse);
        } else if (this.#closed) {
          finish();
          reject(
            new Error(`connection closed before a matching response arrived${this.#closeError ? ` (${this.#closeError.message})` : ''}`),
          );
        }
      };
      const timer = setTimeout(() => {
        finish();
        reject(new Error(`no matching response within ${timeoutMs} ms; received: ${JSON.stringify(this.received).slice(0, 2000)}`));
      }, timeoutMs);
      const finish = () => {
        clearTimeout(timer);
        this.#waiters.delete(check);
      };
      this.#waiters.add(check);
      check();
    });
  }

  close(): void {
    this.socket.destroy();
  }

  #wake(): void {
    for (const waiter of [...this.#waiters]) waiter();
  }
}

/** A line that is not JSON becomes an error response, so that assertions show it instead of a crash. */
function parseResponse(line: string): RpcResponse {
  try {
    return JSON.parse(line) as RpcResponse;
  } catch {
    return { id: null, ok: false, error: { code: 'TEST_UNPARSABLE_RESPONSE', message: line.slice(0, 500) } };
  }
}

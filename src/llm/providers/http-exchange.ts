/**
 * One HTTP request to an LLM vendor with the timeouts every provider needs: an idle timeout
 * (nothing received for `idleTimeoutMs`, counted only while we are actually waiting for bytes, so
 * a slow consumer of a stream never times its own source out), an overall deadline, and the
 * caller's AbortSignal. Every failure leaves as an {@link LlmError} with the right kind.
 */
import { httpError, LlmError, transportError } from '../spec/errors.js';

/** Largest body read from a vendor (a whole non-streamed answer or an error excerpt source). */
export const MAX_RESPONSE_BYTES = 16 * 1024 * 1024;
/** How much of an error body is read; httpError keeps a short excerpt of it anyway. */
const MAX_ERROR_BODY_BYTES = 64 * 1024;

/** What every HTTP-based model takes, whatever its wire format. */
export interface HttpModelOptions {
  /** The source name, used in error messages. */
  source: string;
  model: string;
  /** generate(): the whole request; stream(): silence (no bytes) allowed before and between chunks. */
  timeout_ms: number;
  /** stream(): the whole stream must end within this; default 10 × timeout_ms. */
  stream_total_timeout_ms?: number;
  temperature?: number;
  max_tokens?: number;
}

export interface ExchangeOptions {
  url: string;
  headers: Record<string, string>;
  /** A string is sent as is (already JSON); anything else is JSON-encoded. */
  body: unknown;
  /** Name used in error messages (the source name). */
  source: string;
  /** No bytes (nor response headers) for this long → timeout. */
  idleTimeoutMs: number;
  /** The whole exchange, headers to last byte, must finish within this. */
  totalTimeoutMs: number;
  signal?: AbortSignal | undefined;
}

export class HttpExchange {
  readonly #options: ExchangeOptions;
  readonly #controller = new AbortController();
  #timedOut = false;
  #idleTimer: NodeJS.Timeout | undefined;
  #totalTimer: NodeJS.Timeout | undefined;
  #closed = false;
  readonly #onCallerAbort = (): void => this.#controller.abort();

  constructor(options: ExchangeOptions) {
    this.#options = options;
  }

  /** Sends the request and resolves with a 2xx response; HTTP errors and transport failures reject. */
  async open(): Promise<Response> {
    const { body, signal, source } = this.#options;
    const { url, headers } = moveCredentials(this.#options.url, this.#options.headers);
    if (signal?.aborted) throw new LlmError('aborted', `${source}: request cancelled`);
    signal?.addEventListener('abort', this.#onCallerAbort, { once: true });
    this.#totalTimer = setTimeout(() => this.#expire(), this.#options.totalTimeoutMs);
    this.#startIdle();
    let response: Response;
    try {
      const text = typeof body === 'string' ? body : JSON.stringify(body);
      response = await fetch(url, { method: 'POST', headers, body: text, signal: this.#controller.signal });
    } catch (error) {
      throw this.error(error);
    } finally {
      this.#stopIdle();
    }
    if (!response.ok) {
      let text = '';
      try {
        text = await this.text(response, MAX_ERROR_BODY_BYTES, true);
      } catch (error) {
        // The status is what matters; a body cut short by abort still reports the abort.
        if (error instanceof LlmError && (error.kind === 'aborted' || error.kind === 'timeout')) throw error;
      }
      throw httpError(response.status, text, response.headers.get('retry-after'), source);
    }
    return response;
  }

  /** The body chunk by chunk; the idle timer runs only while waiting for the next chunk. */
  async *chunks(response: Response): AsyncGenerator<Uint8Array> {
    if (!response.body) return;
    const reader = response.body.getReader();
    try {
      for (;;) {
        this.#startIdle();
        let result: Awaited<ReturnType<typeof reader.read>>;
        try {
          result = await reader.read();
        } catch (error) {
          throw this.error(error);
        } finally {
          this.#stopIdle();
        }
        if (result.done) return;
        if (this.#timedOut) throw this.error(new Error('deadline passed'));
        yield result.value;
      }
    } finally {
      reader.releaseLock();
    }
  }

  /** The whole body as text, at most `maxBytes` (more is a bad_response, or cut when `truncate`). */
  async text(response: Response, maxBytes = MAX_RESPONSE_BYTES, truncate = false): Promise<string> {
    const parts: Uint8Array[] = [];
    let size = 0;
    for await (const chunk of this.chunks(response)) {
      size += chunk.length;
      if (size > maxBytes) {
        if (truncate) {
          parts.push(chunk.subarray(0, chunk.length - (size - maxBytes)));
          break;
        }
        throw new LlmError('bad_response', `${this.#options.source}: the answer is larger than ${maxBytes} bytes`);
      }
      parts.push(chunk);
    }
    return Buffer.concat(parts).toString('utf8');
  }

  /** Maps anything thrown during the exchange to an LlmError of the right kind. */
  /** The source name, for messages. */
  get source(): string {
    return this.#options.source;
  }

  error(error: unknown): LlmError {
    return transportError(error, this.#options.source, this.#options.signal, this.#timedOut);
  }

  /** Clears the timers and cancels whatever is still in flight (the socket is freed). */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#stopIdle();
    if (this.#totalTimer) clearTimeout(this.#totalTimer);
    this.#options.signal?.removeEventListener('abort', this.#onCallerAbort);
    this.#controller.abort();
  }

  #expire(): void {
    this.#timedOut = true;
    this.#controller.abort();
  }

  #startIdle(): void {
    this.#stopIdle();
    this.#idleTimer = setTimeout(() => this.#expire(), this.#options.idleTimeoutMs);
  }

  #stopIdle(): void {
    if (this.#idleTimer) clearTimeout(this.#idleTimer);
    this.#idleTimer = undefined;
  }
}

/**
 * fetch refuses URLs with user info (and would quote them, password included, in its error):
 * `http://user:pass@host` becomes Basic authentication unless an Authorization header is set.
 */
function moveCredentials(url: string, headers: Record<string, string>): { url: string; headers: Record<string, string> } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { url, headers };
  }
  if (parsed.username === '' && parsed.password === '') return { url, headers };
  const basic = Buffer.from(`${decodeURIComponent(parsed.username)}:${decodeURIComponent(parsed.password)}`).toString('base64');
  parsed.username = '';
  parsed.password = '';
  const hasAuth = Object.keys(headers).some((h) => h.toLowerCase() === 'authorization');
  return { url: parsed.toString(), headers: hasAuth ? headers : { ...headers, authorization: `Basic ${basic}` } };
}

/** Parses a JSON body or fails with bad_response quoting the start of it. */
export function parseJsonBody(text: string, source: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    const excerpt = text.replace(/\s+/g, ' ').slice(0, 200);
    throw new LlmError('bad_response', `${source}: the answer is not JSON: ${excerpt || '(empty)'}`, { cause: error });
  }
}

/** Normalises anything caught inside a provider to an LlmError. */
export function toLlmError(error: unknown, source: string): LlmError {
  if (error instanceof LlmError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new LlmError('bad_response', `${source}: ${message}`, { cause: error });
}

/** `x` when it is a plain object, else undefined (vendor JSON is untrusted). */
export function asRecord(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

export function asString(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

export function asCount(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? Math.floor(value) : 0;
}

/** Removes a trailing slash so `${base}/path` never has two. */
export function trimBaseUrl(url: string): string {
  return url.replace(/\/+$/, '');
}

/** A synchronous sequence of parts as the async iterable collectStream reads. */
export async function* fromSync<T>(items: Iterable<T>): AsyncGenerator<T> {
  yield* items;
}

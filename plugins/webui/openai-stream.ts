/**
 * Streaming answers of /v1/chat/completions: Server-Sent Events carrying chat.completion.chunk
 * objects and ending with `data: [DONE]`, as OpenAI streams them.
 *
 * The answer is streamed from the agent's text deltas as the model produces them; the receipt says
 * what the answer finally is. The two can differ: no delta at all when no model was called (offline
 * answer, a stage or a confirmation answered), a confirmation request the kernel appends after the
 * model's text, a pre-empted request that starts over, a stage that rewrote the answer.
 * {@link StreamedAnswer} works out what the client still has to be sent so that it ends up with the
 * final answer. Text of a round that then called tools was already sent and stays: a client cannot
 * be made to forget it, and it is what the model said on the way (a separating blank line keeps the
 * rounds apart).
 */
import type { ServerResponse } from 'node:http';
import type { EventMap } from '../../src/sdk/index.js';
import { errorHeaders, type OpenAiError } from './openai-errors.js';
import { type ChunkDelta, type CompletionIdentity, chunkBody, type OpenAiUsage, usageChunkBody } from './openai-response.js';

const ROUND_SEPARATOR = '\n\n';

type TextDelta = Pick<EventMap['agent.text_delta'], 'turn' | 'delta' | 'restart'>;

/** What the client was sent of the answer, to tell what is missing once the final text is known. */
export class StreamedAnswer {
  #sent = '';
  /** Text of the latest model round (since its start or its restart). */
  #round = '';
  #turn: number | undefined;

  /** The content to send for one text delta of the task. */
  add(event: TextDelta): string {
    let prefix = '';
    if (event.turn !== this.#turn) {
      // A new round after one that called tools: keep the two apart.
      if (this.#sent !== '') prefix = ROUND_SEPARATOR;
      this.#turn = event.turn;
      this.#round = '';
    } else if (event.restart) {
      // A pre-empted request starts over; what it sent before stays sent.
      this.#round = '';
    }
    this.#round += event.delta;
    this.#sent += prefix + event.delta;
    return prefix + event.delta;
  }

  /** The content still to send so that the client has `final`, the answer of the receipt. */
  rest(final: string): string {
    if (this.#sent === '') return final;
    if (this.#round !== '' && final.startsWith(this.#round)) return final.slice(this.#round.length);
    // The answer is not the streamed text continued (a stage replaced it): give it whole, apart.
    return final === '' ? '' : ROUND_SEPARATOR + final;
  }
}

const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  // Proxies (nginx) would otherwise hold chunks back.
  'x-accel-buffering': 'no',
};

/**
 * Writes one completion's chunks to the raw response. The status line is sent with the first
 * chunk, so an error that comes before any text is still an ordinary HTTP error the client's
 * library raises as such; after that it can only be an `error` event in the stream.
 */
export class ChunkWriter {
  readonly #res: ServerResponse;
  readonly #identity: CompletionIdentity;
  readonly #headers: Record<string, string | number | string[]>;
  #started = false;

  /** `headers`: what the server had set on the reply before it was handed over (security headers). */
  constructor(res: ServerResponse, identity: CompletionIdentity, headers: Record<string, string | number | string[]> = {}) {
    this.#res = res;
    this.#identity = identity;
    this.#headers = headers;
  }

  /** False once the response ended or the client went away. */
  get open(): boolean {
    return !this.#res.writableEnded && !this.#res.destroyed;
  }

  /** Sends `text` as a content delta (nothing for empty text). */
  content(text: string): void {
    if (text === '' || !this.#begin()) return;
    this.#frame(chunkBody(this.#identity, { content: text }));
  }

  /** The closing chunks: finish_reason stop, the usage when asked for, [DONE]. */
  finish(usage: OpenAiUsage | undefined): void {
    if (!this.#begin()) return;
    this.#frame(chunkBody(this.#identity, {}, 'stop'));
    if (usage) this.#frame(usageChunkBody(this.#identity, usage));
    this.#res.end('data: [DONE]\n\n');
  }

  /** Ends the request with an error: an HTTP error before the stream started, an error event after. */
  fail(error: OpenAiError): void {
    if (!this.open) return;
    if (!this.#started) {
      this.#started = true;
      this.#res.writeHead(error.status, { ...this.#headers, ...errorHeaders(error), 'content-type': 'application/json; charset=utf-8' });
      this.#res.end(JSON.stringify(error.body));
      return;
    }
    this.#frame(error.body);
    this.#res.end();
  }

  /** Sends the status line and the first chunk (the role) once; false when the response is gone. */
  #begin(): boolean {
    if (!this.open) return false;
    if (this.#started) return true;
    this.#started = true;
    this.#res.writeHead(200, { ...this.#headers, ...SSE_HEADERS });
    const first: ChunkDelta = { role: 'assistant', content: '' };
    this.#frame(chunkBody(this.#identity, first));
    return true;
  }

  #frame(body: unknown): void {
    this.#res.write(`data: ${JSON.stringify(body)}\n\n`);
  }
}

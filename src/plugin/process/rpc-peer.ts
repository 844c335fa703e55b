/**
 * One end of a JSON-RPC 2.0 connection carried as newline-delimited JSON: one object per line,
 * each line at most {@link MAX_FRAME_BYTES}. Both the daemon (talking to a plugin process) and the
 * child runtime (talking to the daemon) use it. The child runs under Node's permission model with
 * read access to the runtime's own files only, so this module imports nothing but the line decoder.
 *
 * A frame that is not a JSON-RPC 2.0 object, or is too large, is a protocol error: the owner is
 * told once and the peer ignores everything after it (the daemon then kills the child). An answer
 * to an unknown id is not an error: it is a late answer to a call that already timed out or was
 * cancelled.
 */
import { LineDecoder } from '../../shared/line-decoder.js';

/** Bumped on any incompatible change to the vocabulary in protocol.ts; the child refuses an init with another version. */
export const PROTOCOL_VERSION = 1;

/** Largest line either side sends or accepts. */
export const MAX_FRAME_BYTES = 4 * 1024 * 1024;

/** JSON-RPC error codes: the standard ones and two of ours for application and tool errors. */
export const RPC_ERROR = {
  PARSE: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL: -32603,
  /** A failure with a HomeAgent error code in `data.ha_code`. */
  APPLICATION: -32000,
  /** A tool failure the model reads, in `data.tool_error`. */
  TOOL: -32001,
} as const;

export interface WireToolError {
  reason: string;
  field?: string;
  detail: string;
  hint?: string;
}

export interface WireErrorData {
  /** A HomeAgent error code (`HA_ERR_...`). */
  ha_code?: string;
  tool_error?: WireToolError;
}

export interface WireError {
  code: number;
  message: string;
  data?: WireErrorData;
}

export type RequestId = number | string;

/** An error answer from the other side, as received. The daemon turns it into a HomeAgentError or ToolError. */
export class RemoteError extends Error {
  override readonly name = 'RemoteError';
  readonly rpcCode: number;
  readonly data: WireErrorData | undefined;

  constructor(error: WireError) {
    super(error.message);
    this.rpcCode = error.code;
    this.data = error.data;
  }
}

/** Thrown by a request handler to answer with a specific JSON-RPC code (unknown method, bad params). */
export class RpcFault extends Error {
  override readonly name = 'RpcFault';
  readonly rpcCode: number;

  constructor(rpcCode: number, message: string) {
    super(message);
    this.rpcCode = rpcCode;
  }
}

export interface RpcPeerOptions {
  /** Sends one line (already newline-terminated). */
  write(line: string): void;
  /** Answers a request; its return value is the result, a throw the error answer. */
  onRequest(method: string, params: unknown, id: RequestId): unknown;
  onNotification(method: string, params: unknown): void;
  /** The other side broke the protocol; called once, after which input is ignored. */
  onProtocolError(detail: string): void;
  maxFrameBytes?: number;
}

export interface RequestOptions {
  /** Rejects with `timeoutError()` after this long (the other side is not told; send a cancel if it should stop). */
  timeoutMs?: number;
  timeoutError?: () => Error;
}

interface Pending {
  resolve(value: unknown): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout | undefined;
}

export class RpcPeer {
  readonly #options: RpcPeerOptions;
  readonly #maxFrameBytes: number;
  readonly #decoder: LineDecoder;
  readonly #pending = new Map<number, Pending>();
  #nextId = 1;
  #broken = false;
  #closed: Error | undefined;

  constructor(options: RpcPeerOptions) {
    this.#options = options;
    this.#maxFrameBytes = options.maxFrameBytes ?? MAX_FRAME_BYTES;
    this.#decoder = new LineDecoder(this.#maxFrameBytes);
  }

  /** Feeds bytes read from the other side. */
  receive(chunk: Buffer): void {
    if (this.#broken) return;
    for (const frame of this.#decoder.push(chunk)) {
      if (frame.kind === 'too_large') {
        this.#protocolError(`a frame of more than ${frame.bytes} bytes exceeds the limit of ${this.#maxFrameBytes}`);
        return;
      }
      if (frame.text.trim() === '') continue;
      this.#dispatch(frame.text);
      if (this.#broken) return;
    }
  }

  /** Sends a request; `result` settles with the answer, a timeout, a cancel or the close error. */
  request<T = unknown>(method: string, params: unknown, options: RequestOptions = {}): { id: number; result: Promise<T> } {
    const id = this.#nextId++;
    if (this.#closed) return { id, result: Promise.reject(this.#closed) };
    const result = new Promise<T>((resolve, reject) => {
      const pending: Pending = { resolve: resolve as (value: unknown) => void, reject, timer: undefined };
      if (options.timeoutMs !== undefined) {
        const timeoutError = options.timeoutError ?? (() => new Error(`${method} did not answer within ${options.timeoutMs} ms`));
        pending.timer = setTimeout(() => this.cancel(id, timeoutError()), options.timeoutMs);
      }
      this.#pending.set(id, pending);
    });
    try {
      this.#send({ jsonrpc: '2.0', id, method, params });
    } catch (error) {
      this.cancel(id, error instanceof Error ? error : new Error(String(error)));
    }
    return { id, result };
  }

  notify(method: string, params: unknown): void {
    if (this.#closed) return;
    this.#send({ jsonrpc: '2.0', method, params });
  }

  /** Rejects a pending request now; its answer, if it ever comes, is ignored. */
  cancel(id: number, error: Error): void {
    const pending = this.#pending.get(id);
    if (!pending) return;
    this.#pending.delete(id);
    clearTimeout(pending.timer);
    pending.reject(error);
  }

  /** Rejects every pending request with `error`; later requests reject with it at once. */
  close(error: Error): void {
    this.#closed ??= error;
    for (const id of [...this.#pending.keys()]) this.cancel(id, error);
  }

  get pendingCount(): number {
    return this.#pending.size;
  }

  #dispatch(text: string): void {
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch {
      this.#protocolError(`a frame is not JSON: ${text.slice(0, 120)}`);
      return;
    }
    if (typeof message !== 'object' || message === null || Array.isArray(message) || (message as { jsonrpc?: unknown }).jsonrpc !== '2.0') {
      this.#protocolError(`a frame is not a JSON-RPC 2.0 object: ${text.slice(0, 120)}`);
      return;
    }
    const m = message as { id?: unknown; method?: unknown; params?: unknown; result?: unknown; error?: unknown };
    if (m.method !== undefined) {
      if (typeof m.method !== 'string') {
        this.#protocolError('a request has a method that is not a string');
        return;
      }
      if (m.id === undefined) {
        this.#options.onNotification(m.method, m.params);
        return;
      }
      if (typeof m.id !== 'number' && typeof m.id !== 'string') {
        this.#protocolError('a request id is neither a number nor a string');
        return;
      }
      this.#answer(m.id, m.method, m.params);
      return;
    }
    if (typeof m.id !== 'number' || (!('result' in m) && !isWireError(m.error))) {
      this.#protocolError(`a frame is neither a request nor an answer: ${text.slice(0, 120)}`);
      return;
    }
    const pending = this.#pending.get(m.id);
    if (!pending) return;
    this.#pending.delete(m.id);
    clearTimeout(pending.timer);
    if (isWireError(m.error)) pending.reject(new RemoteError(m.error));
    else pending.resolve(m.result);
  }

  #answer(id: RequestId, method: string, params: unknown): void {
    let outcome: unknown;
    try {
      outcome = this.#options.onRequest(method, params, id);
    } catch (error) {
      this.#respondError(id, error);
      return;
    }
    Promise.resolve(outcome).then(
      (result) => {
        if (this.#closed) return;
        try {
          this.#send({ jsonrpc: '2.0', id, result: result ?? null });
        } catch (error) {
          this.#respondError(id, error);
        }
      },
      (error: unknown) => this.#respondError(id, error),
    );
  }

  #respondError(id: RequestId, error: unknown): void {
    if (this.#closed) return;
    try {
      this.#send({ jsonrpc: '2.0', id, error: encodeError(error) });
    } catch (sendError) {
      // Only an oversized or unserialisable error gets here; its short description always fits.
      const detail = sendError instanceof Error ? sendError.message : String(sendError);
      this.#send({ jsonrpc: '2.0', id, error: { code: RPC_ERROR.INTERNAL, message: `the error could not be sent: ${detail}` } });
    }
  }

  /** Serialises and writes one message; throws (before writing) when it cannot be sent as one frame. */
  #send(message: Record<string, unknown>): void {
    let line: string;
    try {
      line = JSON.stringify(message);
    } catch (error) {
      throw new RpcFault(
        RPC_ERROR.INTERNAL,
        `the message could not be turned into JSON: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    // Counting bytes costs a pass over the text; most frames are far too short to need it.
    if (line.length * 3 > this.#maxFrameBytes && Buffer.byteLength(line) > this.#maxFrameBytes) {
      throw new RpcFault(RPC_ERROR.INTERNAL, `the message is larger than the frame limit of ${this.#maxFrameBytes} bytes`);
    }
    this.#options.write(`${line}\n`);
  }

  #protocolError(detail: string): void {
    this.#broken = true;
    this.#options.onProtocolError(detail);
  }
}

/**
 * The wire form of a thrown value. ToolErrors and HomeAgentErrors are recognised by shape, not by
 * class: the plugin may bundle its own copy of the SDK, and the child runtime cannot import ours.
 */
export function encodeError(error: unknown): WireError {
  const wire = encodeUnbounded(error);
  return wire.message.length > MAX_ERROR_MESSAGE ? { ...wire, message: `${wire.message.slice(0, MAX_ERROR_MESSAGE)}…` } : wire;
}

/** Error messages are for people and models; a longer one is cut rather than blowing the frame limit. */
const MAX_ERROR_MESSAGE = 4000;

function encodeUnbounded(error: unknown): WireError {
  if (error instanceof RpcFault) return { code: error.rpcCode, message: error.message };
  if (error instanceof RemoteError) return { code: error.rpcCode, message: error.message, ...(error.data ? { data: error.data } : {}) };
  if (error instanceof Error) {
    const info = (error as { info?: unknown }).info;
    if (error.name === 'ToolError' && isWireToolError(info)) {
      return { code: RPC_ERROR.TOOL, message: info.detail, data: { tool_error: copyToolError(info) } };
    }
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' && /^HA_ERR_[A-Z_]+$/.test(code)) {
      return { code: RPC_ERROR.APPLICATION, message: error.message, data: { ha_code: code } };
    }
    return { code: RPC_ERROR.APPLICATION, message: error.message || error.name };
  }
  return { code: RPC_ERROR.APPLICATION, message: String(error) };
}

export function isWireToolError(value: unknown): value is WireToolError {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return (
    typeof v.reason === 'string' &&
    typeof v.detail === 'string' &&
    (v.field === undefined || typeof v.field === 'string') &&
    (v.hint === undefined || typeof v.hint === 'string')
  );
}

function copyToolError(info: WireToolError): WireToolError {
  return {
    reason: info.reason,
    detail: info.detail,
    ...(info.field === undefined ? {} : { field: info.field }),
    ...(info.hint === undefined ? {} : { hint: info.hint }),
  };
}

function isWireError(value: unknown): value is WireError {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as WireError).code === 'number' &&
    typeof (value as WireError).message === 'string' &&
    ((value as WireError).data === undefined || typeof (value as WireError).data === 'object')
  );
}

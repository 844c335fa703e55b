/**
 * The messages every model worker exchanges with its client (model-worker-client.ts on the main
 * thread, model-worker-host.ts in the worker). Each model adds its own request, ready and answer
 * messages (onnx-protocol.ts, nlp/onnx-parser-protocol.ts); the lifecycle ones are shared.
 */
import type { ErrorCode } from '../shared/errors.js';

/** One unit of work; the worker answers it with exactly one answer or one `failed` of the same id. */
export interface ModelRequest {
  t: string;
  id: number;
}

export interface ModelAnswer {
  t: string;
  id: number;
}

/** Sent once the model is loaded; the model adds what the client should know about it. */
export interface ModelReady {
  t: 'ready';
}

export type LoadFailed = { t: 'load_failed'; code: ErrorCode; message: string };

/** A request the model could not answer; the worker keeps serving. */
export type RequestFailed = { t: 'failed'; id: number; code: ErrorCode; message: string };

export type ToModelWorker<Request extends ModelRequest> = Request | { t: 'close' };

export type FromModelWorker<Ready extends ModelReady, Answer extends ModelAnswer> =
  | Ready
  | LoadFailed
  | Answer
  | RequestFailed
  | { t: 'closed' };

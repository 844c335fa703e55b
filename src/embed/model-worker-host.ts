/**
 * The worker-thread half of a model worker (model-worker-client.ts is the other): loads one model,
 * says `ready` or `load_failed`, answers requests one at a time in arrival order, and on `close`
 * releases the model before the thread ends. A worker entry (onnx-worker.ts,
 * nlp/onnx-parser-worker.ts) passes only what is its own: how to load, what ready says, how to answer.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { describeError, type ErrorCode, HomeAgentError } from '../shared/errors.js';
import type { FromModelWorker, ModelAnswer, ModelReady, ModelRequest, ToModelWorker } from './model-worker-protocol.js';

export interface HostedModel {
  /** Frees the native session; the thread ends right after. */
  release(): Promise<void>;
}

export interface ModelReply<Answer extends ModelAnswer> {
  message: Answer;
  /** Buffers of `message` to move to the main thread instead of copying them. */
  transfer?: ArrayBuffer[];
}

export interface ModelWorkerHost<
  Init,
  Model extends HostedModel,
  Request extends ModelRequest,
  Ready extends ModelReady,
  Answer extends ModelAnswer,
> {
  /** The entry file, named in the error when it is not run as a worker thread. */
  name: string;
  /** Loads the model from the worker's `workerData`; a HomeAgentError keeps its code across the thread. */
  load(init: Init): Promise<Model>;
  ready(model: Model): Ready;
  answer(model: Model, request: Request): Promise<ModelReply<Answer>>;
}

/** Runs the worker until it is closed; resolves once the model is loaded (or failed to load). */
export async function hostModelWorker<
  Init,
  Model extends HostedModel,
  Request extends ModelRequest,
  Ready extends ModelReady,
  Answer extends ModelAnswer,
>(host: ModelWorkerHost<Init, Model, Request, Ready, Answer>): Promise<void> {
  const port = parentPort;
  if (!port) throw new Error(`${host.name} must run in a worker thread`);
  const send = (message: FromModelWorker<Ready, Answer>, transfer: ArrayBuffer[] = []): void => port.postMessage(message, transfer);

  let model: Model;
  try {
    model = await host.load(workerData as Init);
    send(host.ready(model));
  } catch (error) {
    send({ t: 'load_failed', code: codeOf(error, 'HA_ERR_EMBED_MODEL_LOAD'), message: messageOf(error) });
    port.close();
    return;
  }

  // One request at a time: ORT's own threads do the parallel work, and a queue keeps memory flat
  // under a burst.
  let queue: Promise<void> = Promise.resolve();
  port.on('message', (message: ToModelWorker<Request>) => {
    queue = queue.then(async () => {
      if (message.t === 'close') {
        await model.release().catch(() => undefined);
        send({ t: 'closed' });
        port.close();
        return;
      }
      const request = message as Request;
      try {
        const reply = await host.answer(model, request);
        send(reply.message, reply.transfer);
      } catch (error) {
        send({ t: 'failed', id: request.id, code: codeOf(error, 'HA_ERR_EMBED_FAILED'), message: messageOf(error) });
      }
    });
  });
}

function codeOf(error: unknown, fallback: ErrorCode): ErrorCode {
  return error instanceof HomeAgentError ? error.code : fallback;
}

function messageOf(error: unknown): string {
  return error instanceof HomeAgentError ? error.message : describeError(error);
}

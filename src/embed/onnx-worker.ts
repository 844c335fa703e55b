/**
 * Entry point of an ONNX embedder worker thread: loads one model (onnx-pipeline.ts) and answers
 * embed requests one at a time, in arrival order, so the daemon's event loop never tokenizes or
 * waits on inference.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { describeError, type ErrorCode, HomeAgentError } from '../shared/errors.js';
import { OnnxPipeline } from './onnx-pipeline.js';
import type { FromOnnxWorker, OnnxWorkerInit, ToOnnxWorker } from './onnx-protocol.js';

const port = parentPort;
if (!port) throw new Error('onnx-worker must run in a worker thread');
const init = workerData as OnnxWorkerInit;
const send = (message: FromOnnxWorker, transfer: ArrayBuffer[] = []): void => port.postMessage(message, transfer);
const codeOf = (error: unknown, fallback: ErrorCode): ErrorCode => (error instanceof HomeAgentError ? error.code : fallback);
const messageOf = (error: unknown): string => (error instanceof HomeAgentError ? error.message : describeError(error));

let pipeline: OnnxPipeline | undefined;
try {
  pipeline = await OnnxPipeline.load(init.dir, init.manifest, init.threads);
  send({ t: 'ready', fingerprint: pipeline.fingerprint });
} catch (error) {
  send({ t: 'load_failed', code: codeOf(error, 'HA_ERR_EMBED_MODEL_LOAD'), message: messageOf(error) });
  port.close();
}

if (pipeline) {
  const loaded = pipeline;
  // One request at a time: ORT's own threads do the parallel work; queuing here keeps memory flat.
  let queue: Promise<void> = Promise.resolve();
  port.on('message', (message: ToOnnxWorker) => {
    queue = queue.then(async () => {
      if (message.t === 'close') {
        await loaded.release().catch(() => undefined);
        send({ t: 'closed' });
        port.close();
        return;
      }
      try {
        const data = await loaded.embed(message.texts);
        send({ t: 'vectors', id: message.id, data }, [data.buffer as ArrayBuffer]);
      } catch (error) {
        send({ t: 'failed', id: message.id, code: codeOf(error, 'HA_ERR_EMBED_FAILED'), message: messageOf(error) });
      }
    });
  });
}

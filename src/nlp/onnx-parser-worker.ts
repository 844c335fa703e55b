/**
 * Entry point of the dependency parser's worker thread: loads one model (onnx-parser-model.ts) and
 * parses sentences one at a time, in arrival order, so inference never runs on the daemon's event
 * loop.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { describeError, type ErrorCode, HomeAgentError } from '../shared/errors.js';
import { OnnxParserModel } from './onnx-parser-model.js';
import type { FromParserWorker, ParserWorkerInit, ToParserWorker } from './onnx-parser-protocol.js';

const port = parentPort;
if (!port) throw new Error('onnx-parser-worker must run in a worker thread');
const init = workerData as ParserWorkerInit;
const send = (message: FromParserWorker): void => port.postMessage(message);
const codeOf = (error: unknown, fallback: ErrorCode): ErrorCode => (error instanceof HomeAgentError ? error.code : fallback);
const messageOf = (error: unknown): string => (error instanceof HomeAgentError ? error.message : describeError(error));

let model: OnnxParserModel | undefined;
try {
  model = await OnnxParserModel.load(init.dir, init.threads);
  send({ t: 'ready', maxWords: model.manifest.maxWords, labels: model.manifest.labels.length, words: model.manifest.wordIds.size });
} catch (error) {
  send({ t: 'load_failed', code: codeOf(error, 'HA_ERR_EMBED_MODEL_LOAD'), message: messageOf(error) });
  port.close();
}

if (model) {
  const loaded = model;
  // One sentence at a time: each is small, and a queue keeps memory flat under a burst.
  let queue: Promise<void> = Promise.resolve();
  port.on('message', (message: ToParserWorker) => {
    queue = queue.then(async () => {
      if (message.t === 'close') {
        await loaded.release().catch(() => undefined);
        send({ t: 'closed' });
        port.close();
        return;
      }
      try {
        send({ t: 'parsed', id: message.id, arcs: await loaded.parse(message.words, message.tags) });
      } catch (error) {
        send({ t: 'failed', id: message.id, code: codeOf(error, 'HA_ERR_EMBED_FAILED'), message: messageOf(error) });
      }
    });
  });
}

/**
 * Entry point of the dependency parser's worker thread: loads one model (onnx-parser-model.ts) and
 * parses sentences one at a time, in arrival order, so inference never runs on the daemon's event
 * loop.
 */
import { hostModelWorker } from '../embed/model-worker-host.js';
import { OnnxParserModel } from './onnx-parser-model.js';
import type { ParseAnswer, ParseRequest, ParserReady, ParserWorkerInit } from './onnx-parser-protocol.js';

await hostModelWorker<ParserWorkerInit, OnnxParserModel, ParseRequest, ParserReady, ParseAnswer>({
  name: 'onnx-parser-worker',
  load: (init) => OnnxParserModel.load(init.dir, init.threads),
  ready: (model) => ({
    t: 'ready',
    maxWords: model.manifest.maxWords,
    labels: model.manifest.labels.length,
    words: model.manifest.wordIds.size,
  }),
  answer: async (model, request) => ({ message: { t: 'parsed', id: request.id, arcs: await model.parse(request.words, request.tags) } }),
});

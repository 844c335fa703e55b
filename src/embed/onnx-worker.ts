/**
 * Entry point of an ONNX embedder worker thread: loads one model (onnx-pipeline.ts) and answers
 * embed requests one at a time, in arrival order, so the daemon's event loop never tokenizes or
 * waits on inference.
 */
import { hostModelWorker } from './model-worker-host.js';
import { OnnxPipeline } from './onnx-pipeline.js';
import type { EmbedAnswer, EmbedderReady, EmbedRequest, OnnxWorkerInit } from './onnx-protocol.js';

await hostModelWorker<OnnxWorkerInit, OnnxPipeline, EmbedRequest, EmbedderReady, EmbedAnswer>({
  name: 'onnx-worker',
  load: (init) => OnnxPipeline.load(init.dir, init.manifest, init.threads),
  ready: (pipeline) => ({ t: 'ready', fingerprint: pipeline.fingerprint }),
  async answer(pipeline, request) {
    const data = await pipeline.embed(request.texts);
    return { message: { t: 'vectors', id: request.id, data }, transfer: [data.buffer as ArrayBuffer] };
  },
});

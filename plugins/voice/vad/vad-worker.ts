/**
 * The detector's worker thread: runs the Silero VAD v5 model frame by frame, off the daemon's event
 * loop. The model is recurrent: each frame goes in with the end of the previous frame in front of
 * it (the context) and the state the previous frame left, so frames are handled strictly in order
 * (one queue for all messages) and a reset clears both.
 */
import { performance } from 'node:perf_hooks';
import { parentPort, workerData } from 'node:worker_threads';
import * as ort from 'onnxruntime-node';
import { type FromVadWorker, type ToVadWorker, type VadWorkerInit, vadFrameSize } from './vad-protocol.js';

const STATE_SIZE = 2 * 1 * 128;

const port = parentPort;
if (!port) throw new Error('vad-worker.ts runs as a worker thread');
const init = workerData as VadWorkerInit;
const { frame, context: contextSize } = vadFrameSize(init.sampleRate);
const post = (message: FromVadWorker): void => port.postMessage(message);

let session: ort.InferenceSession;
try {
  session = await ort.InferenceSession.create(init.model, {
    executionProviders: ['cpu'],
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
  });
} catch (error) {
  post({ t: 'failed', message: error instanceof Error ? error.message : String(error) });
  port.close();
  throw error;
}

const input = new Float32Array(contextSize + frame);
let state = new Float32Array(STATE_SIZE);
const sr = new ort.Tensor('int64', BigInt64Array.from([BigInt(init.sampleRate)]), []);

function reset(): void {
  input.fill(0);
  state = new Float32Array(STATE_SIZE);
}

async function frames(id: number, audio: Float32Array): Promise<void> {
  const started = performance.now();
  const count = Math.floor(audio.length / frame);
  const probs = new Float32Array(count);
  for (let i = 0; i < count; i++) {
    input.set(audio.subarray(i * frame, (i + 1) * frame), contextSize);
    const result = await session.run({
      input: new ort.Tensor('float32', input, [1, contextSize + frame]),
      state: new ort.Tensor('float32', state, [2, 1, 128]),
      sr,
    });
    const output = result.output?.data;
    const next = result.stateN?.data;
    if (!(output instanceof Float32Array) || !(next instanceof Float32Array) || next.length !== STATE_SIZE) {
      throw new Error('the model answered without a float `output` and a [2,1,128] `stateN`');
    }
    probs[i] = output[0] ?? 0;
    state = Float32Array.from(next);
    // The last samples of this frame are the next frame's context.
    input.copyWithin(0, input.length - contextSize);
  }
  post({ t: 'probs', id, probs, ms: performance.now() - started });
}

let queue = Promise.resolve();
port.on('message', (message: ToVadWorker) => {
  queue = queue.then(async () => {
    if (message.t === 'frames') await frames(message.id, message.audio);
    else if (message.t === 'reset') reset();
    else {
      await session.release();
      port.close();
    }
  });
  // An inference error ends the worker; the detector sees the exit and reports HA_ERR_VOICE_VAD.
  queue.catch((error: unknown) => {
    setImmediate(() => {
      throw error;
    });
  });
});

post({ t: 'ready' });

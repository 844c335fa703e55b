/**
 * Entry point of the wake word detector's worker thread: loads the models (wake-word-models.ts),
 * cuts the audio it is sent into 80 ms chunks and answers the scores of each, in arrival order, so
 * three ONNX models running 12.5 times a second never hold up the daemon's event loop.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { type ErrorCode, HomeAgentError } from '../../../src/sdk/index.js';
import { CHUNK_SAMPLES, WakeWordModels } from './wake-word-models.js';
import type { FromWakeWordWorker, ToWakeWordWorker, WakeWordWorkerInit } from './wake-word-protocol.js';

function codeOf(error: unknown): ErrorCode {
  return error instanceof HomeAgentError ? error.code : 'HA_ERR_VOICE_WAKE_WORD';
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

async function main(): Promise<void> {
  const port = parentPort;
  if (!port) throw new Error('wake-word-worker must run in a worker thread');
  const send = (message: FromWakeWordWorker): void => port.postMessage(message);

  let models: WakeWordModels;
  try {
    models = await WakeWordModels.load((workerData as WakeWordWorkerInit).dir);
  } catch (error) {
    send({ t: 'load_failed', code: codeOf(error), message: messageOf(error) });
    port.close();
    return;
  }
  send({ t: 'ready', models: models.names });

  let pending = new Int16Array(0);
  let processed = 0;
  let failed = false;
  let queue: Promise<void> = Promise.resolve();

  async function take(samples: Int16Array): Promise<void> {
    if (failed) return;
    const joined = new Int16Array(pending.length + samples.length);
    joined.set(pending);
    joined.set(samples, pending.length);
    let at = 0;
    try {
      for (; at + CHUNK_SAMPLES <= joined.length; at += CHUNK_SAMPLES) {
        const scores = await models.process(joined.subarray(at, at + CHUNK_SAMPLES));
        processed += CHUNK_SAMPLES;
        if (scores) send({ t: 'scores', endSample: processed, scores });
      }
    } catch (error) {
      // The same models would fail on every chunk: say it once and stop.
      failed = true;
      send({ t: 'failed', code: codeOf(error), message: messageOf(error) });
    }
    pending = joined.slice(at);
  }

  port.on('message', (message: ToWakeWordWorker) => {
    queue = queue.then(async () => {
      if (message.t === 'audio') await take(message.samples);
      else if (message.t === 'flush') send({ t: 'flushed', id: message.id });
      else {
        await models.release();
        send({ t: 'closed' });
        port.close();
      }
    });
  });
}

await main();

/**
 * openWakeWord's streaming pipeline over ONNX Runtime: 80 ms of 16 kHz audio → melspectrogram
 * frames → one speech embedding per 8 new frames (from the last 76) → each classifier scores the
 * last n embeddings. It runs inside the detector's worker thread (wake-word-worker.ts), so it may
 * block. The models come from a directory the user fills, so every name and shape is read from the
 * sessions and checked at load, and a mismatch names the file, the shape found and the one expected.
 */
import { basename } from 'node:path';
import * as ort from 'onnxruntime-node';
import { wakeWordError as fail, wakeWordFiles } from './wake-word-files.js';

/** Samples per step: 80 ms. */
export const CHUNK_SAMPLES = 1280;
/** The melspectrogram model also sees this much earlier audio, so its frames overlap the chunk boundary. */
const MEL_CONTEXT_SAMPLES = 480;
const MEL_BANDS = 32;
const EMBEDDING_WINDOW = 76;
const EMBEDDING_STEP = 8;
const EMBEDDING_SIZE = 96;
/** Embeddings a classifier sees when its input does not declare how many. */
const DEFAULT_CLASSIFIER_FRAMES = 16;

interface Stage {
  session: ort.InferenceSession;
  input: string;
  file: string;
}

interface Classifier extends Stage {
  name: string;
  /** Embeddings it scores (its input's declared [1, n, 96]). */
  frames: number;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function shapeText(shape: ReadonlyArray<number | string>): string {
  return `[${shape.join(',')}]`;
}

/** The declared shape of a session's only input (empty when undeclared) and its name. */
function onlyInput(session: ort.InferenceSession, file: string): { name: string; shape: ReadonlyArray<number | string> } {
  const name = session.inputNames[0];
  if (name === undefined || session.inputNames.length !== 1) {
    throw fail(file, `has ${session.inputNames.length} inputs (${session.inputNames.join(', ')}), 1 expected`);
  }
  const meta = session.inputMetadata?.[0];
  return { name, shape: meta?.isTensor ? meta.shape : [] };
}

/** A declared shape fits `expected` (a string there: any size) when ranks match and fixed sizes agree; symbolic sizes fit anything. */
function checkDeclared(file: string, what: string, shape: ReadonlyArray<number | string>, expected: ReadonlyArray<number | string>): void {
  if (shape.length === 0) return;
  const fits =
    shape.length === expected.length &&
    shape.every((d, i) => typeof d !== 'number' || d < 0 || typeof expected[i] !== 'number' || d === expected[i]);
  if (!fits) throw fail(file, `${what} shape ${shapeText(shape)} found, ${shapeText(expected)} expected`);
}

async function openSession(file: string): Promise<ort.InferenceSession> {
  try {
    return await ort.InferenceSession.create(file, {
      executionProviders: ['cpu'],
      intraOpNumThreads: 1,
      interOpNumThreads: 1,
      executionMode: 'sequential',
    });
  } catch (error) {
    throw fail(file, `ONNX Runtime cannot load it: ${describe(error)}`, error);
  }
}

/** Runs `session` once and checks that the output has `expected` shape (strings: any size ≥ 1). */
async function run(
  session: ort.InferenceSession,
  file: string,
  feeds: Record<string, ort.Tensor>,
  expected: ReadonlyArray<number | string>,
): Promise<ort.Tensor> {
  let output: ort.Tensor | undefined;
  try {
    const outputs = await session.run(feeds);
    output = outputs[session.outputNames[0] as string];
  } catch (error) {
    throw fail(file, `the model does not run on input ${shapeText(Object.values(feeds)[0]?.dims ?? [])}: ${describe(error)}`, error);
  }
  const dims = output?.dims ?? [];
  const fits = dims.length === expected.length && dims.every((d, i) => (typeof expected[i] === 'number' ? d === expected[i] : d >= 1));
  if (output?.type !== 'float32' || !fits) {
    throw fail(file, `output shape ${shapeText(dims)} (${output?.type ?? 'none'}) found, ${shapeText(expected)} float32 expected`);
  }
  return output;
}

export class WakeWordModels {
  readonly #mel: Stage;
  readonly #embedding: Stage;
  readonly #classifiers: Classifier[];
  /** The last CHUNK + context samples, as the melspectrogram model's input. */
  readonly #audio = new Float32Array(CHUNK_SAMPLES + MEL_CONTEXT_SAMPLES);
  /** Transformed mel frames, oldest first (at most one window plus a step). */
  #melFrames: Float32Array[] = [];
  #framesSinceEmbedding = 0;
  #embeddings: Float32Array[] = [];
  readonly #maxFrames: number;

  private constructor(mel: Stage, embedding: Stage, classifiers: Classifier[]) {
    this.#mel = mel;
    this.#embedding = embedding;
    this.#classifiers = classifiers;
    this.#maxFrames = Math.max(...classifiers.map((c) => c.frames));
  }

  /** The wake words: each classifier's file name without .onnx. */
  get names(): string[] {
    return this.#classifiers.map((c) => c.name);
  }

  /** Loads and checks the three kinds of model; HA_ERR_VOICE_WAKE_WORD naming the directory or file. */
  static async load(dir: string): Promise<WakeWordModels> {
    const files = wakeWordFiles(dir);
    const sessions: ort.InferenceSession[] = [];
    try {
      const melFile = files.mel;
      const melSession = await openSession(melFile);
      sessions.push(melSession);
      const melInput = onlyInput(melSession, melFile);
      checkDeclared(melFile, 'input', melInput.shape, [1, 'samples']);
      const probe = new ort.Tensor('float32', new Float32Array(CHUNK_SAMPLES + MEL_CONTEXT_SAMPLES), [
        1,
        CHUNK_SAMPLES + MEL_CONTEXT_SAMPLES,
      ]);
      await run(melSession, melFile, { [melInput.name]: probe }, [1, 1, 'frames', MEL_BANDS]);

      const embeddingFile = files.embedding;
      const embeddingSession = await openSession(embeddingFile);
      sessions.push(embeddingSession);
      const embeddingInput = onlyInput(embeddingSession, embeddingFile);
      checkDeclared(embeddingFile, 'input', embeddingInput.shape, [1, EMBEDDING_WINDOW, MEL_BANDS, 1]);
      const window = new ort.Tensor('float32', new Float32Array(EMBEDDING_WINDOW * MEL_BANDS), [1, EMBEDDING_WINDOW, MEL_BANDS, 1]);
      await run(embeddingSession, embeddingFile, { [embeddingInput.name]: window }, [1, 1, 1, EMBEDDING_SIZE]);

      const classifiers: Classifier[] = [];
      for (const file of files.classifiers) {
        const session = await openSession(file);
        sessions.push(session);
        const input = onlyInput(session, file);
        checkDeclared(file, 'input', input.shape, [1, 'n', EMBEDDING_SIZE]);
        const declared = input.shape[1];
        const frames = typeof declared === 'number' && declared > 0 ? declared : DEFAULT_CLASSIFIER_FRAMES;
        const features = new ort.Tensor('float32', new Float32Array(frames * EMBEDDING_SIZE), [1, frames, EMBEDDING_SIZE]);
        await run(session, file, { [input.name]: features }, [1, 1]);
        classifiers.push({ name: basename(file, '.onnx'), session, input: input.name, file, frames });
      }
      return new WakeWordModels(
        { session: melSession, input: melInput.name, file: melFile },
        { session: embeddingSession, input: embeddingInput.name, file: embeddingFile },
        classifiers,
      );
    } catch (error) {
      await Promise.all(sessions.map((s) => s.release().catch(() => undefined)));
      throw error;
    }
  }

  /**
   * Takes the next 80 ms (CHUNK_SAMPLES int16 samples) and answers each classifier's score, in
   * {@link names} order, or undefined while too few embeddings exist yet (the first ~2 s).
   */
  async process(chunk: Int16Array): Promise<number[] | undefined> {
    const audio = this.#audio;
    audio.copyWithin(0, CHUNK_SAMPLES);
    for (let i = 0; i < CHUNK_SAMPLES; i++) audio[MEL_CONTEXT_SAMPLES + i] = chunk[i] ?? 0;
    const mel = await run(
      this.#mel.session,
      this.#mel.file,
      { [this.#mel.input]: new ort.Tensor('float32', audio.slice(), [1, audio.length]) },
      [1, 1, 'frames', MEL_BANDS],
    );
    const values = mel.data as Float32Array;
    const frames = mel.dims[2] ?? 0;
    for (let f = 0; f < frames; f++) {
      // openWakeWord's scaling of the mel output to the range its embedding model was trained on.
      this.#melFrames.push(values.slice(f * MEL_BANDS, (f + 1) * MEL_BANDS).map((x) => x / 10 + 2));
      this.#framesSinceEmbedding++;
    }
    // One embedding per 8 new frames, each from the 76 frames that end there (none until 76 exist).
    while (this.#framesSinceEmbedding >= EMBEDDING_STEP) {
      const end = this.#melFrames.length - (this.#framesSinceEmbedding - EMBEDDING_STEP);
      this.#framesSinceEmbedding -= EMBEDDING_STEP;
      if (end >= EMBEDDING_WINDOW) await this.#embed(this.#melFrames.slice(end - EMBEDDING_WINDOW, end));
    }
    this.#melFrames = this.#melFrames.slice(-(EMBEDDING_WINDOW + EMBEDDING_STEP));
    if (this.#embeddings.length < this.#maxFrames) return undefined;
    const scores: number[] = [];
    for (const c of this.#classifiers) {
      const features = new Float32Array(c.frames * EMBEDDING_SIZE);
      for (const [i, e] of this.#embeddings.slice(-c.frames).entries()) features.set(e, i * EMBEDDING_SIZE);
      const out = await run(c.session, c.file, { [c.input]: new ort.Tensor('float32', features, [1, c.frames, EMBEDDING_SIZE]) }, [1, 1]);
      scores.push((out.data as Float32Array)[0] as number);
    }
    return scores;
  }

  async #embed(frames: Float32Array[]): Promise<void> {
    const window = new Float32Array(EMBEDDING_WINDOW * MEL_BANDS);
    for (const [i, f] of frames.entries()) window.set(f, i * MEL_BANDS);
    const out = await run(
      this.#embedding.session,
      this.#embedding.file,
      { [this.#embedding.input]: new ort.Tensor('float32', window, [1, EMBEDDING_WINDOW, MEL_BANDS, 1]) },
      [1, 1, 1, EMBEDDING_SIZE],
    );
    this.#embeddings.push((out.data as Float32Array).slice());
    if (this.#embeddings.length > this.#maxFrames) this.#embeddings.shift();
  }

  async release(): Promise<void> {
    const all = [this.#mel.session, this.#embedding.session, ...this.#classifiers.map((c) => c.session)];
    await Promise.all(all.map((s) => s.release().catch(() => undefined)));
  }
}

/**
 * Synthetic openWakeWord models for tests, written with src/embed/onnx-writer.ts, because the real
 * melspectrogram and embedding models cannot be shipped (dependencies.md: openwakeword-js publishes
 * classifier heads only). They have the real models' inputs and outputs and really discriminate:
 *
 * - melspectrogram.onnx [1, N] → [1, 1, frames, 32]: drops the 480 context samples, cuts 160-sample
 *   frames and takes the log power (above a floor) of 32 DFT bins (200, 400, … 6400 Hz; exact over 160 samples at
 *   16 kHz), so one 80 ms chunk gives 8 frames, as with the real model.
 * - embedding_model.onnx [1, 76, 32, 1] → [1, 1, 1, 96]: feature 0 is "tone-ness" over the newest 8
 *   frames (the 1 kHz band minus the mean of the others), feature 1 the mean level.
 * - each classifier [1, n, 96] → [1, 1]: sigmoid(sum of tone-ness over its n embeddings − 6), so a
 *   loud 1 kHz tone of 240 ms or more scores above 0.5 while silence and broadband noise stay near 0.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type OnnxGraph, writeOnnxModel } from '../../src/embed/onnx-writer.js';

export const SAMPLE_RATE = 16_000;
export const TONE_HZ = 1000;
const FRAME = 160;
const CONTEXT = 480;
const WINDOW = 76;
const STEP = 8;
/** The band of TONE_HZ: band b is the DFT bin of (b + 1) × 200 Hz. */
const TONE_BAND = TONE_HZ / 200 - 1;
const CLASSIFIER_BIAS = -6;
const POWER_FLOOR = 1e4;

export interface SyntheticClassifier {
  /** File name without .onnx: the wake word's name. */
  name: string;
  /** Embeddings it declares in its input [1, n, 96] (default 16). */
  frames?: number;
  /** Size of its input's last axis (default 96; anything else is a shape mismatch). */
  features?: number;
  /** Declare the input as [1, 'n', features] (the count unknown to the detector). */
  symbolicFrames?: boolean;
}

export interface WakeWordModelOptions {
  classifiers?: readonly SyntheticClassifier[];
  /** Bands in the melspectrogram output (default 32). */
  melBands?: number;
  /** Size of the embedding output (default 96). */
  embeddingSize?: number;
  /** Leave these files out. */
  omit?: readonly string[];
}

function melGraph(bands: number): OnnxGraph {
  // Columns 2b and 2b+1: cosine and sine of band b's bin, so their squares add up to its power.
  const basis = new Float32Array(FRAME * 2 * bands);
  const sum = new Float32Array(2 * bands * bands);
  for (let b = 0; b < bands; b++) {
    const w = (2 * Math.PI * ((b + 1) * 200)) / SAMPLE_RATE;
    for (let n = 0; n < FRAME; n++) {
      basis[n * 2 * bands + 2 * b] = Math.cos(w * n);
      basis[n * 2 * bands + 2 * b + 1] = Math.sin(w * n);
    }
    sum[2 * b * bands + b] = 1;
    sum[(2 * b + 1) * bands + b] = 1;
  }
  return {
    name: 'synthetic_melspectrogram',
    inputs: [{ name: 'input', type: 'float', shape: [1, 'samples'] }],
    outputs: [{ name: 'output', type: 'float', shape: [1, 1, 'frames', bands] }],
    initializers: [
      { name: 'starts', type: 'int64', dims: [1], values: [CONTEXT] },
      { name: 'ends', type: 'int64', dims: [1], values: [2 ** 40] },
      { name: 'axes', type: 'int64', dims: [1], values: [1] },
      { name: 'frame_shape', type: 'int64', dims: [2], values: [-1, FRAME] },
      { name: 'basis', type: 'float', dims: [FRAME, 2 * bands], values: basis },
      { name: 'pair_sum', type: 'float', dims: [2 * bands, bands], values: sum },
      // A noise floor: float32 rounding leaks a loud tone into the other bins, which would read as a quiet tone there.
      { name: 'floor', type: 'float', dims: [], values: [POWER_FLOOR] },
      { name: 'out_shape', type: 'int64', dims: [4], values: [1, 1, -1, bands] },
    ],
    nodes: [
      { op: 'Slice', inputs: ['input', 'starts', 'ends', 'axes'], outputs: ['chunk'] },
      { op: 'Reshape', inputs: ['chunk', 'frame_shape'], outputs: ['frames'] },
      { op: 'MatMul', inputs: ['frames', 'basis'], outputs: ['projections'] },
      { op: 'Mul', inputs: ['projections', 'projections'], outputs: ['squares'] },
      { op: 'MatMul', inputs: ['squares', 'pair_sum'], outputs: ['power'] },
      { op: 'Add', inputs: ['power', 'floor'], outputs: ['floored'] },
      { op: 'Log', inputs: ['floored'], outputs: ['log_power'] },
      { op: 'Reshape', inputs: ['log_power', 'out_shape'], outputs: ['output'] },
    ],
  };
}

function embeddingGraph(size: number): OnnxGraph {
  const bands = 32;
  const weights = new Float32Array(WINDOW * bands * size);
  for (let f = WINDOW - STEP; f < WINDOW; f++) {
    for (let b = 0; b < bands; b++) {
      const row = (f * bands + b) * size;
      weights[row] = b === TONE_BAND ? 1 / STEP : -1 / (STEP * (bands - 1));
      if (size > 1) weights[row + 1] = 1 / (STEP * bands);
    }
  }
  return {
    name: 'synthetic_embedding',
    inputs: [{ name: 'input_1', type: 'float', shape: [1, WINDOW, bands, 1] }],
    outputs: [{ name: 'conv2d_19', type: 'float', shape: [1, 1, 1, size] }],
    initializers: [
      { name: 'flat', type: 'int64', dims: [2], values: [1, WINDOW * bands] },
      { name: 'weights', type: 'float', dims: [WINDOW * bands, size], values: weights },
      { name: 'out_shape', type: 'int64', dims: [4], values: [1, 1, 1, size] },
    ],
    nodes: [
      { op: 'Reshape', inputs: ['input_1', 'flat'], outputs: ['flat_window'] },
      { op: 'MatMul', inputs: ['flat_window', 'weights'], outputs: ['features'] },
      { op: 'Reshape', inputs: ['features', 'out_shape'], outputs: ['conv2d_19'] },
    ],
  };
}

function classifierGraph(c: SyntheticClassifier): OnnxGraph {
  const frames = c.frames ?? 16;
  const features = c.features ?? 96;
  const weights = new Float32Array(frames * features);
  for (let i = 0; i < frames; i++) weights[i * features] = 1;
  return {
    name: `synthetic_${c.name}`,
    // Named like the real heads' exports (dependencies.md), so the detector must read the name.
    inputs: [{ name: 'onnx::Flatten_0', type: 'float', shape: [1, c.symbolicFrames ? 'n' : frames, features] }],
    outputs: [{ name: '39', type: 'float', shape: [1, 1] }],
    initializers: [
      { name: 'flat', type: 'int64', dims: [2], values: [1, frames * features] },
      { name: 'weights', type: 'float', dims: [frames * features, 1], values: weights },
      { name: 'bias', type: 'float', dims: [1, 1], values: [CLASSIFIER_BIAS] },
    ],
    nodes: [
      { op: 'Reshape', inputs: ['onnx::Flatten_0', 'flat'], outputs: ['flat_features'] },
      { op: 'MatMul', inputs: ['flat_features', 'weights'], outputs: ['sum'] },
      { op: 'Add', inputs: ['sum', 'bias'], outputs: ['logit'] },
      { op: 'Sigmoid', inputs: ['logit'], outputs: ['39'] },
    ],
  };
}

/** Writes a model directory; answers its path. */
export function writeWakeWordModels(dir: string, options: WakeWordModelOptions = {}): string {
  mkdirSync(dir, { recursive: true });
  const files: Array<[string, OnnxGraph]> = [
    ['melspectrogram.onnx', melGraph(options.melBands ?? 32)],
    ['embedding_model.onnx', embeddingGraph(options.embeddingSize ?? 96)],
    ...(options.classifiers ?? [{ name: 'hey_tone' }]).map((c): [string, OnnxGraph] => [`${c.name}.onnx`, classifierGraph(c)]),
  ];
  for (const [file, graph] of files) {
    if (!options.omit?.includes(file)) writeFileSync(join(dir, file), writeOnnxModel(graph));
  }
  return dir;
}

/** A deterministic pseudo-random source in [0, 1) (mulberry32), so noise is the same on every run. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let x = s;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

export type AudioPart =
  | { kind: 'silence'; ms: number }
  | { kind: 'noise'; ms: number; amplitude: number; seed?: number }
  | { kind: 'tone'; ms: number; amplitude: number; hz?: number };

/** 16 kHz mono audio built from parts in order. */
export function synthAudio(parts: readonly AudioPart[]): Int16Array {
  const total = parts.reduce((n, p) => n + Math.round((p.ms * SAMPLE_RATE) / 1000), 0);
  const out = new Int16Array(total);
  let at = 0;
  for (const part of parts) {
    const count = Math.round((part.ms * SAMPLE_RATE) / 1000);
    const next = part.kind === 'noise' ? random(part.seed ?? 1) : undefined;
    for (let i = 0; i < count; i++) {
      let v = 0;
      if (part.kind === 'tone') v = part.amplitude * Math.sin((2 * Math.PI * (part.hz ?? TONE_HZ) * i) / SAMPLE_RATE);
      else if (part.kind === 'noise' && next) v = part.amplitude * (2 * next() - 1);
      out[at + i] = Math.max(-32768, Math.min(32767, Math.round(v)));
    }
    at += count;
  }
  return out;
}

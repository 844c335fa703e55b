import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { OnnxEmbedder } from '../../src/embed/onnx-embedder.js';
import { writeTinyModel } from '../unit/embed/fixtures/tiny-model.js';
import { embedderContract } from './embedder.contract.js';

// A sentence-transformer-shaped model built here (embedding table + mean pooling), no download.
const root = mkdtempSync(join(tmpdir(), 'ha-embed-contract-'));
t.teardown(() => rmSync(root, { recursive: true, force: true }));
const { dir } = writeTinyModel(join(root, 'tiny'), { dim: 32 });

embedderContract({ name: 'OnnxEmbedder', create: () => OnnxEmbedder.create(dir, { batchSize: 8, threads: 1 }) });

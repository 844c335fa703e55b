import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { findVadModel, loadVadModel } from '../../../../plugins/voice/vad/vad-model.js';

const script = join(import.meta.dirname, '..', '..', '..', '..', 'scripts', 'copy-vad-model.mjs');

function copy(source: string, target: string): { status: number | null; stderr: string } {
  const run = spawnSync(process.execPath, [script, '--source', source, '--target', target], { encoding: 'utf8' });
  return { status: run.status, stderr: run.stderr };
}

t.test('the model is copied when its digest matches', async (t) => {
  const dir = t.testdir({});
  const target = join(dir, 'out', 'silero_vad_v5.onnx');
  t.match(copy(findVadModel() as string, target), { status: 0, stderr: '' });
  t.equal(loadVadModel(target).length, 2_327_524);
});

t.test('a missing or altered model fails the build with a clear message and is not copied', async (t) => {
  const dir = t.testdir({});
  const target = join(dir, 'out', 'silero_vad_v5.onnx');
  const missing = copy(join(dir, 'nothing.onnx'), target);
  t.equal(missing.status, 1);
  t.match(missing.stderr, /^copy-vad-model: .*nothing\.onnx is missing; run npm install/);
  const altered = join(dir, 'altered.onnx');
  copyFileSync(findVadModel() as string, altered);
  const bytes = readFileSync(altered);
  bytes[10] = (bytes[10] ?? 0) ^ 1;
  writeFileSync(altered, bytes);
  const wrong = copy(altered, target);
  t.equal(wrong.status, 1);
  t.match(wrong.stderr, /altered\.onnx has sha256 [0-9a-f]{64}, expected 2623a2953f6ff3d2c1e61740c6cdb7168133479b267dfef114a4a3cc5bdd788f/);
  t.notOk(existsSync(target));
});

#!/usr/bin/env node
// Part of `npm run build`: copies the Silero VAD v5 model from the @ricky0123/vad-web package to
// dist/plugins/voice/vad/, beside the compiled detector, so an installed daemon does not need the
// package (a development dependency). The copy is checked against the digest the detector pins
// (plugins/voice/vad/vad-model.ts); nothing is ever downloaded.
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const SHA256 = '2623a2953f6ff3d2c1e61740c6cdb7168133479b267dfef114a4a3cc5bdd788f';
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
// --source/--target let the tests run the script on files of their own.
const option = (name, fallback) => {
  const at = process.argv.indexOf(name);
  return at > 0 && process.argv[at + 1] ? resolve(process.argv[at + 1]) : fallback;
};
const source = option('--source', join(root, 'node_modules', '@ricky0123', 'vad-web', 'dist', 'silero_vad_v5.onnx'));
const target = option('--target', join(root, 'dist', 'plugins', 'voice', 'vad', 'silero_vad_v5.onnx'));

function fail(message) {
  process.stderr.write(`copy-vad-model: ${message}\n`);
  process.exit(1);
}

function digest(file) {
  return createHash('sha256').update(readFileSync(file)).digest('hex');
}

if (!existsSync(source)) fail(`${relative(root, source)} is missing; run npm install (the model comes with @ricky0123/vad-web)`);
const found = digest(source);
if (found !== SHA256) fail(`${relative(root, source)} has sha256 ${found}, expected ${SHA256}; reinstall @ricky0123/vad-web`);
mkdirSync(dirname(target), { recursive: true });
copyFileSync(source, target);
const copied = digest(target);
if (copied !== SHA256) fail(`the copy ${relative(root, target)} has sha256 ${copied}, expected ${SHA256}`);

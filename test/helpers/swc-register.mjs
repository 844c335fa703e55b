// The test processes' TypeScript loader (package.json tap.node-arg). It replaces @tapjs/typescript
// (ts-node), which loads the TypeScript compiler into every test process: about 0.8 s of each
// file's start-up, and the suite starts ~350 of them. Type checking stays with `npm run lint`.
// ES modules go through swc-hooks.mjs; CommonJS `require` of a .cts file (node-record-lpcm16 loads
// the microphone's recorder by path) through the require extension below, with the same SWC.
// SWC is required only when a .cts file is, so that the other processes do not load it twice.
import { readFileSync } from 'node:fs';
import Module, { createRequire, register } from 'node:module';
import { swcOptions } from './swc-hooks.mjs';

register('./swc-hooks.mjs', import.meta.url);

const require = createRequire(import.meta.url);
Module._extensions['.cts'] = (module, filename) => {
  const { transformSync } = require('@swc/core');
  module._compile(transformSync(readFileSync(filename, 'utf8'), swcOptions(filename, true)).code, filename);
};

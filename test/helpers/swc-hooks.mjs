// Module hooks for the tests (registered by swc-register.mjs): the sources import each other by
// their compiled names (`./x.js` for x.ts, as NodeNext wants), so a relative .js/.mjs/.cjs that
// does not exist resolves to the .ts/.mts/.cts beside it; TypeScript files are transpiled by SWC
// one by one (isolatedModules and verbatimModuleSyntax make that exact), with inline source maps
// for --enable-source-maps, at the tsconfig target.
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { transform } from '@swc/core';

const TYPESCRIPT = /\.[cm]?ts$/;
const COMPILED = { '.js': '.ts', '.mjs': '.mts', '.cjs': '.cts' };

export async function resolve(specifier, context, next) {
  try {
    return await next(specifier, context);
  } catch (error) {
    const ext = /\.[cm]?js$/.exec(specifier)?.[0];
    const local = specifier.startsWith('.') || specifier.startsWith('/') || specifier.startsWith('file:');
    if (error?.code !== 'ERR_MODULE_NOT_FOUND' || !ext || !local) throw error;
    return next(specifier.slice(0, -ext.length) + COMPILED[ext], context);
  }
}

/** SWC's options for one file: TypeScript at the tsconfig target, inline source maps. */
export function swcOptions(filename, commonjs) {
  return {
    filename,
    sourceMaps: 'inline',
    jsc: { parser: { syntax: 'typescript' }, target: 'es2022', transform: { useDefineForClassFields: true } },
    module: { type: commonjs ? 'commonjs' : 'es6' },
  };
}

export async function load(url, context, next) {
  if (!url.startsWith('file:') || !TYPESCRIPT.test(url)) return next(url, context);
  const filename = fileURLToPath(url);
  const commonjs = url.endsWith('.cts');
  const { code } = await transform(await readFile(filename, 'utf8'), swcOptions(filename, commonjs));
  return { format: commonjs ? 'commonjs' : 'module', source: code, shortCircuit: true };
}

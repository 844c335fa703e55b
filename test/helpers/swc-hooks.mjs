// Module hooks for the tests (registered by swc-register.mjs): the sources import each other by
// their compiled names (`./x.js` for x.ts, as NodeNext wants), so a relative .js/.mjs/.cjs that
// does not exist resolves to the .ts/.mts/.cts beside it; TypeScript files are transpiled by SWC
// one by one (isolatedModules and verbatimModuleSyntax make that exact), with inline source maps
// for --enable-source-maps, at the tsconfig target.
//
// Every test file is its own process and most of them import a large part of src/, so the hooks
// are on the suite's critical path (importing src/daemon.ts through them cost 1.4 s of CPU against
// 0.5 s from dist/): a sibling .ts is found with two stat calls instead of a failed default
// resolution (which builds an error per import), and transpiled output is kept on disk, keyed by
// the file's path and content, so each module is transpiled once per checkout, not once per process.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const TYPESCRIPT = /\.[cm]?ts$/;
const COMPILED = { '.js': '.ts', '.mjs': '.mts', '.cjs': '.cts' };
const CACHE_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'node_modules', '.cache', 'homeagent-test-swc');
/** Part of every cache key: another SWC or a change to the options below must not reuse older output. */
const SWC_VERSION = JSON.parse(readFileSync(join(CACHE_DIR, '..', '..', '@swc', 'core', 'package.json'), 'utf8')).version;
const OPTIONS_VERSION = `swc-${SWC_VERSION}-es2022-inline-maps-1`;

export async function resolve(specifier, context, next) {
  const ext = /\.[cm]?js$/.exec(specifier)?.[0];
  if (ext && specifier.startsWith('.') && context.parentURL?.startsWith('file:')) {
    // The compiled name wins when both exist, as with the default resolution tried first.
    const compiled = new URL(specifier, context.parentURL);
    const source = new URL(specifier.slice(0, -ext.length) + COMPILED[ext], context.parentURL);
    if (!existsSync(compiled) && existsSync(source)) return { url: source.href, shortCircuit: true };
  }
  try {
    return await next(specifier, context);
  } catch (error) {
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

let swc;

async function transpile(filename, source, commonjs) {
  const key = createHash('sha1').update(`${OPTIONS_VERSION}\0${commonjs}\0${filename}\0`).update(source).digest('hex');
  const cached = join(CACHE_DIR, `${key}.js`);
  try {
    return await readFile(cached, 'utf8');
  } catch {
    // Not transpiled yet in this checkout.
  }
  swc ??= await import('@swc/core');
  const { code } = await swc.transform(source, swcOptions(filename, commonjs));
  // Written aside and renamed: test processes run side by side and must never read half a file.
  const partial = `${cached}.${process.pid}.${Math.random().toString(36).slice(2)}`;
  try {
    await mkdir(CACHE_DIR, { recursive: true });
    await writeFile(partial, code);
    await rename(partial, cached);
  } catch {
    // A read-only or full disk only costs the next process the transpilation.
  }
  return code;
}

export async function load(url, context, next) {
  if (!url.startsWith('file:') || !TYPESCRIPT.test(url)) return next(url, context);
  const filename = fileURLToPath(url);
  const commonjs = url.endsWith('.cts');
  const source = await transpile(filename, await readFile(filename, 'utf8'), commonjs);
  return { format: commonjs ? 'commonjs' : 'module', source, shortCircuit: true };
}

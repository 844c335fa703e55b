/**
 * Shared Lua libraries for adapters: `<adapters>/lib/<name>.lua`. The sandbox has no `require`,
 * so the host loads each library an adapter script mentions (its name appears in the source as a
 * word) into the engine before the script, and exposes the table the library returns as the
 * read-only global `<name>` (e.g. `openai_compat`). Libraries are read the way adapter scripts
 * are: only from the adapters folder (no name or symlink leaving it), at most 1 MiB, text chunks
 * only, and they run under the same CPU and memory limits as a script.
 */
import { readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { join, sep } from 'node:path';
import type { LuaLibrarySource } from '../../lua/lua-protocol.js';
import { PACKAGE_ROOT } from '../../shared/version.js';

export type { LuaLibrarySource } from '../../lua/lua-protocol.js';

/** Where the shipped adapters live (`<package>/adapters`). */
export const ADAPTERS_DIR = join(PACKAGE_ROOT, 'adapters');

/** Largest adapter script or library. */
export const MAX_SCRIPT_BYTES = 1024 * 1024;

/** A library name is a plain Lua identifier (it becomes a global). */
const LIBRARY_NAME = /^[a-z][a-z0-9_]{0,31}$/;

/**
 * The libraries in `<dir>/lib` that `source` mentions, in name order. Throws an Error (with a
 * message fit for a load error) for a library that leaves `dir` or is too large.
 */
export function adapterLibraries(source: string, dir: string = ADAPTERS_DIR): LuaLibrarySource[] {
  let base: string;
  let names: string[];
  try {
    base = realpathSync(dir);
    names = readdirSync(join(base, 'lib'));
  } catch {
    return [];
  }
  const out: LuaLibrarySource[] = [];
  for (const file of names.sort()) {
    if (!file.endsWith('.lua')) continue;
    const name = file.slice(0, -4);
    if (!LIBRARY_NAME.test(name) || !new RegExp(`\\b${name}\\b`).test(source)) continue;
    let path: string;
    try {
      path = realpathSync(join(base, 'lib', file));
    } catch (error) {
      throw new Error(`Lua library ${name} cannot be read: ${(error as Error).message}`);
    }
    if (!path.startsWith(base + sep)) throw new Error(`Lua library ${name} points outside ${dir}`);
    if (statSync(path).size > MAX_SCRIPT_BYTES) throw new Error(`Lua library ${name} is larger than ${MAX_SCRIPT_BYTES} bytes`);
    out.push({ name, source: readFileSync(path, 'utf8'), chunk_name: `@adapters/lib/${name}.lua` });
  }
  return out;
}

import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The package root, found by walking up from this file to the nearest package.json. Works both
 * from `src/` (tests) and from `dist/src/` (the built daemon).
 */
export const PACKAGE_ROOT: string = findPackageRoot(dirname(fileURLToPath(import.meta.url)));

export const VERSION: string = (JSON.parse(readFileSync(resolve(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }).version;

function findPackageRoot(start: string): string {
  let dir = start;
  for (;;) {
    try {
      readFileSync(resolve(dir, 'package.json'));
      return dir;
    } catch {
      const parent = dirname(dir);
      if (parent === dir) throw new Error(`no package.json above ${start}`);
      dir = parent;
    }
  }
}

import { accessSync, constants } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';

/** Absolute path of an executable found on a PATH-style list, or undefined (like `which`). */
export function findOnPath(name: string, path = process.env.PATH ?? ''): string | undefined {
  for (const dir of path.split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this directory
    }
  }
  return undefined;
}

/** A program named by an absolute path (when it is executable) or found on PATH, else undefined. */
export function findProgram(name: string, path = process.env.PATH ?? ''): string | undefined {
  if (!isAbsolute(name)) return findOnPath(name, path);
  try {
    accessSync(name, constants.X_OK);
    return name;
  } catch {
    return undefined;
  }
}

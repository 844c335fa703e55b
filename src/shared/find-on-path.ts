import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

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

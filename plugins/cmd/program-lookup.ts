/**
 * The real file system behind the cmd policy's {@link ProgramLookup}: bare names are found only in
 * the trusted directories, and every answer is a real path (symlinks resolved), so what the policy
 * approved is the file that runs.
 */
import { accessSync, constants, realpathSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { type ProgramLookup, TRUSTED_DIRS } from './policy.js';

export const systemProgramLookup: ProgramLookup = {
  resolveName(name) {
    for (const dir of TRUSTED_DIRS) {
      const found = realExecutable(join(dir, name));
      if (found !== undefined) return found;
    }
    return undefined;
  },
  realExecutable,
};

function realExecutable(path: string): string | undefined {
  try {
    const real = realpathSync(path);
    if (!statSync(real).isFile()) return undefined;
    accessSync(real, constants.X_OK);
    return real;
  } catch {
    return undefined;
  }
}

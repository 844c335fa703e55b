/**
 * Where a command runs: the default working directory, or a requested one that really lies inside
 * it. Checked on real paths, so `..` and symlinks that lead out are caught alike. Shared by the
 * plugin (in-process runs, on the daemon's view of the file system) and the runner service (on
 * the runner user's view, which is the one that counts there).
 */
import { realpathSync, statSync } from 'node:fs';
import { isAbsolute, join, sep } from 'node:path';
import { ToolError } from '../../src/sdk/index.js';

/** The real working directory for `requested` (absolute, or relative to `base`; empty: `base` itself). */
export function resolveWorkdir(base: string, requested: string | undefined): string {
  let realBase: string;
  try {
    realBase = realpathSync(base);
  } catch {
    throw new ToolError({ reason: 'unavailable', detail: `the cmd working directory ${base} does not exist or cannot be entered` });
  }
  if (requested === undefined || requested === '') return realBase;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what is refused
  if (/[\u0000-\u001f\u007f]/.test(requested)) {
    throw new ToolError({ reason: 'rejected', field: 'workdir', detail: 'HA_ERR_CMD_DENIED: workdir contains control characters' });
  }
  const target = isAbsolute(requested) ? requested : join(realBase, requested);
  let real: string;
  try {
    real = realpathSync(target);
  } catch {
    throw new ToolError({ reason: 'not_found', field: 'workdir', detail: `workdir ${JSON.stringify(requested)} does not exist` });
  }
  if (real !== realBase && !real.startsWith(realBase + sep)) {
    throw new ToolError({
      reason: 'rejected',
      field: 'workdir',
      detail: `HA_ERR_CMD_DENIED: workdir ${JSON.stringify(requested)} resolves to ${real}, outside ${realBase}`,
      hint: `use a directory inside ${realBase}, or leave workdir out`,
    });
  }
  if (!statSync(real).isDirectory()) {
    throw new ToolError({ reason: 'rejected', field: 'workdir', detail: `workdir ${JSON.stringify(requested)} is not a directory` });
  }
  return real;
}

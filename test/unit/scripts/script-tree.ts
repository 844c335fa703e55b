/**
 * The repository scripts' tests run a script on a small fixture tree (`--root`): writing the tree
 * and running the script, shared by check-boundaries and gen-builtins.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Teardown, tempDir } from '../fixtures/support.js';

export const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

/** A temporary tree holding `files` (path → text), removed after the test. */
export function tree(t: Teardown, files: Record<string, string>): string {
  const root = tempDir(t, 'ha-script-tree-');
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

/** Runs scripts/<script> on `root`; its exit code and everything it printed. */
export function runScript(script: string, root: string, ...args: string[]): { code: number | null; out: string } {
  const r = spawnSync(process.execPath, [join(repo, 'scripts', script), '--root', root, ...args], { encoding: 'utf8' });
  return { code: r.status, out: r.stdout + r.stderr };
}

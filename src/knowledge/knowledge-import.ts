/**
 * What knowledge_import_dir reads: markdown and text files under a directory, each becoming an
 * entry named after its path relative to that directory (minus the extension). Symbolic links are
 * not followed and hidden files and directories are passed over; everything else that is not
 * imported is reported with the reason.
 */
import { type Dirent, readdirSync } from 'node:fs';
import { extname, join } from 'node:path';
import { describeError } from '../shared/errors.js';
import type { Skipped } from './knowledge-files.js';

export const IMPORT_EXTENSIONS = new Set(['.md', '.markdown', '.txt']);
/** Skip reasons listed one by one; beyond this they are summed up in one line. */
export const MAX_LISTED_SKIPS = 1000;

export interface ImportFile {
  /** Absolute path. */
  path: string;
  /** Relative to the import directory, "/"-separated. */
  rel: string;
  /** `rel` without its extension: the entry name below the target category. */
  stem: string;
}

export interface ImportPlan {
  files: ImportFile[];
  skipped: Skipped[];
}

/** Lists the files to import (at most `maxFiles`, in path order). */
export function planImport(dir: string, maxFiles: number): ImportPlan {
  const plan: ImportPlan = { files: [], skipped: [] };
  let more = 0;
  const walk = (abs: string, rel: string): void => {
    let entries: Dirent[];
    try {
      entries = readdirSync(abs, { withFileTypes: true });
    } catch (error) {
      plan.skipped.push({ file: rel || '.', reason: `cannot read the directory: ${describeError(error)}` });
      return;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      if (e.name.startsWith('.')) continue;
      const childRel = rel === '' ? e.name : `${rel}/${e.name}`;
      if (e.isSymbolicLink()) {
        plan.skipped.push({ file: childRel, reason: 'a symbolic link (not followed)' });
      } else if (e.isDirectory()) {
        walk(join(abs, e.name), childRel);
      } else if (!e.isFile()) {
        plan.skipped.push({ file: childRel, reason: 'not a regular file' });
      } else if (!IMPORT_EXTENSIONS.has(extname(e.name).toLowerCase())) {
        plan.skipped.push({ file: childRel, reason: 'not a markdown or text file (.md, .markdown, .txt)' });
      } else if (plan.files.length >= maxFiles) {
        more++;
      } else {
        plan.files.push({ path: join(abs, e.name), rel: childRel, stem: childRel.slice(0, -extname(e.name).length) });
      }
    }
  };
  walk(dir, '');
  if (more > 0) {
    plan.skipped.push({
      file: '.',
      reason: `${more} more files not read: at most ${maxFiles} per import (core.knowledge.import_max_files)`,
    });
  }
  return plan;
}

/** Keeps a summary's skip list readable: the first {@link MAX_LISTED_SKIPS}, then one line for the rest. */
export function capSkipped(skipped: Skipped[]): Skipped[] {
  if (skipped.length <= MAX_LISTED_SKIPS) return skipped;
  return [
    ...skipped.slice(0, MAX_LISTED_SKIPS),
    { file: '…', reason: `${skipped.length - MAX_LISTED_SKIPS} more files skipped (not listed)` },
  ];
}

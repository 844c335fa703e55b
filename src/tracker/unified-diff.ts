/**
 * Unified diffs of kept file contents for `changes diff` (what `diff -u` and `git diff` print:
 * `--- a/path`, `+++ b/path`, hunks with 3 lines of context). The edit script is Myers' O(ND)
 * shortest one, after trimming the common head and tail, with lines interned to numbers. Its
 * memory grows with the square of the number of edits, so a change of more than `maxEdits` lines
 * is described instead of shown: nobody reads such a diff on a phone, and a Pi must not spend
 * hundreds of megabytes on one.
 */

import type { ChangeDiff, ChangeSet } from './change-types.js';
import { NOT_KEPT_WHY } from './kept-contents.js';

export const DIFF_CONTEXT_LINES = 3;
/** Changed lines (deleted + added) beyond which a file's diff is described instead of computed. */
export const DEFAULT_MAX_DIFF_EDITS = 1000;

/** The note of a file whose contents are not text. */
export const BINARY_NOTE = 'binary file';

export type FileDiff = { diff: string; note: null } | { diff: null; note: string };

export interface DiffOptions {
  context?: number;
  maxEdits?: number;
}

/**
 * The unified diff turning `before` into `after` (null: the file did not exist on that side), or a
 * note when the contents are binary (a NUL byte or not UTF-8, as git decides) or too different.
 */
export function fileDiff(path: string, before: Uint8Array | null, after: Uint8Array | null, options: DiffOptions = {}): FileDiff {
  const oldText = before === null ? '' : asText(before);
  const newText = after === null ? '' : asText(after);
  if (oldText === undefined || newText === undefined) return { diff: null, note: BINARY_NOTE };
  const maxEdits = options.maxEdits ?? DEFAULT_MAX_DIFF_EDITS;
  const edits = editScript(splitLines(oldText), splitLines(newText), maxEdits);
  if (edits === undefined) return { diff: null, note: `more than ${maxEdits} lines changed: too many to show` };
  const header = `--- ${before === null ? '/dev/null' : `a/${path}`}\n+++ ${after === null ? '/dev/null' : `b/${path}`}\n`;
  return { diff: header + hunks(edits, options.context ?? DIFF_CONTEXT_LINES), note: null };
}

/**
 * The diff of a change set from its kept contents (`read` answers undefined for content not kept),
 * per file and as one text the way `git diff` prints it, with a line for each file described instead.
 */
export async function changeDiff(set: ChangeSet, read: (sha256: string) => Promise<Buffer | undefined>): Promise<ChangeDiff> {
  const files: ChangeDiff['files'] = [];
  for (const file of set.files) {
    const before = file.sha256_before === null ? null : file.kept ? await read(file.sha256_before) : undefined;
    const after = file.sha256_after === null ? null : file.kept ? await read(file.sha256_after) : undefined;
    const result: FileDiff =
      before === undefined || after === undefined
        ? { diff: null, note: `contents not kept (${NOT_KEPT_WHY})` }
        : fileDiff(file.path, before, after);
    files.push({ path: file.path, op: file.op, diff: result.diff, note: result.note });
  }
  const text = files
    .map((f) => {
      if (f.diff !== null) return f.diff;
      const a = f.op === 'add' ? '/dev/null' : `a/${f.path}`;
      const b = f.op === 'delete' ? '/dev/null' : `b/${f.path}`;
      return f.note === BINARY_NOTE ? `Binary files ${a} and ${b} differ\n` : `Files ${a} and ${b} differ (${f.note})\n`;
    })
    .join('');
  return { id: set.id, files, text };
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

function asText(data: Uint8Array): string | undefined {
  if (data.includes(0)) return undefined;
  try {
    return UTF8.decode(data);
  } catch {
    return undefined;
  }
}

/**
 * Lines without their newline; a last line with no newline after it keeps a trailing NUL (text has
 * none, see asText) so it differs from the same line with one, as in diff(1).
 */
function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  else lines[lines.length - 1] += NO_NEWLINE;
  return lines;
}

const NO_NEWLINE = '\0';

type Op = ' ' | '-' | '+';

interface Edit {
  op: Op;
  line: string;
}

/** The shortest edit script from `a` to `b`, or undefined when it needs more than `maxEdits` edits. */
export function editScript(a: readonly string[], b: readonly string[], maxEdits: number): Edit[] | undefined {
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const oldMid = a.slice(head, a.length - tail);
  const newMid = b.slice(head, b.length - tail);
  const same = (lines: readonly string[]): Edit[] => lines.map((line) => ({ op: ' ', line }));
  let middle: Edit[] | undefined;
  if (oldMid.length === 0 || newMid.length === 0) {
    // Only additions or only deletions: no search needed, however long.
    middle = [...oldMid.map((line): Edit => ({ op: '-', line })), ...newMid.map((line): Edit => ({ op: '+', line }))];
  } else {
    const ids = new Map<string, number>();
    const intern = (lines: string[]) => Int32Array.from(lines, (line) => ids.get(line) ?? ids.set(line, ids.size).size - 1);
    const ops = myers(intern(oldMid), intern(newMid), maxEdits);
    if (ops === undefined) return undefined;
    middle = [];
    let x = 0;
    let y = 0;
    for (const op of ops) {
      if (op === '-') middle.push({ op, line: oldMid[x++] as string });
      else if (op === '+') middle.push({ op, line: newMid[y++] as string });
      else {
        middle.push({ op, line: oldMid[x++] as string });
        y++;
      }
    }
  }
  return [...same(a.slice(0, head)), ...middle, ...same(a.slice(a.length - tail))];
}

/**
 * Myers' greedy forward search. `trace[d]` keeps the furthest x per diagonal k ∈ [-d, d] as round
 * d found them from round d-1, which is all the walk back needs.
 */
function myers(a: Int32Array, b: Int32Array, maxD: number): Op[] | undefined {
  const n = a.length;
  const m = b.length;
  const offset = n + m + 1;
  const v = new Int32Array(2 * offset + 1);
  const at = (k: number) => v[offset + k] ?? 0;
  const trace: Int32Array[] = [];
  for (let d = 0; d <= n + m; d++) {
    if (d > maxD) return undefined;
    trace.push(v.slice(offset - d, offset + d + 1));
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && at(k - 1) < at(k + 1)) ? at(k + 1) : at(k - 1) + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) return walkBack(trace, n, m, d);
    }
  }
  return undefined; // not reached: d = n + m always finishes
}

function walkBack(trace: Int32Array[], n: number, m: number, last: number): Op[] {
  const ops: Op[] = [];
  let x = n;
  let y = m;
  for (let d = last; d > 0; d--) {
    const snap = trace[d] as Int32Array;
    const at = (k: number) => snap[k + d] ?? 0;
    const k = x - y;
    const down = k === -d || (k !== d && at(k - 1) < at(k + 1));
    const prevK = down ? k + 1 : k - 1;
    const prevX = at(prevK);
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) {
      ops.push(' ');
      x--;
      y--;
    }
    ops.push(down ? '+' : '-');
    x = prevX;
    y = prevY;
  }
  while (x > 0 && y > 0) {
    ops.push(' ');
    x--;
    y--;
  }
  return ops.reverse();
}

/** The hunks of an edit script: changes closer than 2 × context lines share a hunk. */
function hunks(edits: readonly Edit[], context: number): string {
  const oldBefore: number[] = [];
  const newBefore: number[] = [];
  let oldLine = 0;
  let newLine = 0;
  for (const edit of edits) {
    oldBefore.push(oldLine);
    newBefore.push(newLine);
    if (edit.op !== '+') oldLine++;
    if (edit.op !== '-') newLine++;
  }
  const changes = edits.flatMap((edit, index) => (edit.op === ' ' ? [] : [index]));
  let text = '';
  for (let i = 0; i < changes.length; ) {
    let j = i;
    while (j + 1 < changes.length && (changes[j + 1] as number) - (changes[j] as number) - 1 <= 2 * context) j++;
    const from = Math.max(0, (changes[i] as number) - context);
    const to = Math.min(edits.length - 1, (changes[j] as number) + context);
    const part = edits.slice(from, to + 1);
    const oldCount = part.filter((e) => e.op !== '+').length;
    const newCount = part.filter((e) => e.op !== '-').length;
    text += `@@ -${range(oldBefore[from] as number, oldCount)} +${range(newBefore[from] as number, newCount)} @@\n`;
    for (const edit of part) {
      const missingNewline = edit.line.endsWith(NO_NEWLINE);
      text += `${edit.op}${missingNewline ? edit.line.slice(0, -1) : edit.line}\n`;
      if (missingNewline) text += '\\ No newline at end of file\n';
    }
    i = j + 1;
  }
  return text;
}

/** `start,count` as diff(1) prints it: start is 1-based, or the line before when count is 0; `,1` is left out. */
function range(linesBefore: number, count: number): string {
  if (count === 0) return `${linesBefore},0`;
  return count === 1 ? `${linesBefore + 1}` : `${linesBefore + 1},${count}`;
}

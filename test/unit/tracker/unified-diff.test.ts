// Unified diffs of kept contents (src/tracker/unified-diff.ts): the text diff -u prints, binary and
// over-long notes, and, on many random pairs, that the hunks rebuild the new file from the old one
// with the fewest changed lines (checked against a plain LCS table).
import t from 'tap';
import { editScript, fileDiff } from '../../../src/tracker/unified-diff.js';

const diffOf = (before: string | null, after: string | null, options = {}) =>
  fileDiff('p/f.txt', before === null ? null : Buffer.from(before), after === null ? null : Buffer.from(after), options);

t.test('a small edit: headers, a hunk with 3 lines of context on each side', async (t) => {
  const before = 'one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n';
  t.same(diffOf(before, before.replace('five', 'FIVE')), {
    diff: '--- a/p/f.txt\n+++ b/p/f.txt\n@@ -2,7 +2,7 @@\n two\n three\n four\n-five\n+FIVE\n six\n seven\n eight\n',
    note: null,
  });
});

t.test('changes far apart get separate hunks, close ones share one', async (t) => {
  const lines = Array.from({ length: 20 }, (_, i) => `l${i + 1}`);
  const far = [...lines];
  far[1] = 'X';
  far[17] = 'Y';
  const text = diffOf(`${lines.join('\n')}\n`, `${far.join('\n')}\n`).diff ?? '';
  t.same(
    text.split('\n').filter((l) => l.startsWith('@@')),
    ['@@ -1,5 +1,5 @@', '@@ -15,6 +15,6 @@'],
  );
  const near = [...lines];
  near[1] = 'X';
  near[8] = 'Y';
  t.same(
    (diffOf(`${lines.join('\n')}\n`, `${near.join('\n')}\n`).diff ?? '').split('\n').filter((l) => l.startsWith('@@')),
    ['@@ -1,12 +1,12 @@'],
  );
});

t.test('added and deleted files diff against /dev/null', async (t) => {
  t.same(diffOf(null, 'a\nb\n').diff, '--- /dev/null\n+++ b/p/f.txt\n@@ -0,0 +1,2 @@\n+a\n+b\n');
  t.same(diffOf('a\n', null).diff, '--- a/p/f.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-a\n');
  t.same(diffOf(null, '').diff, '--- /dev/null\n+++ b/p/f.txt\n', 'an empty new file has no hunk');
});

t.test('a missing newline at the end is marked as diff(1) does', async (t) => {
  t.same(diffOf('a\nb', 'a\nb\n').diff, '--- a/p/f.txt\n+++ b/p/f.txt\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n');
  t.same(diffOf('a\n', 'a\nc').diff, '--- a/p/f.txt\n+++ b/p/f.txt\n@@ -1 +1,2 @@\n a\n+c\n\\ No newline at end of file\n');
});

t.test('binary contents (a NUL byte, or bytes that are not UTF-8) are noted, not diffed', async (t) => {
  t.same(fileDiff('x.png', Buffer.from([1, 0, 2]), Buffer.from('text')), { diff: null, note: 'binary file' });
  t.same(fileDiff('x.bin', Buffer.from('text'), Buffer.from([0xff, 0xfe, 0x41])), { diff: null, note: 'binary file' });
  t.equal(fileDiff('x.txt', null, Buffer.from('héllo 你好\n')).note, null, 'UTF-8 text is text');
});

t.test('more changed lines than maxEdits are noted instead of computed; pure additions have no limit', async (t) => {
  const a = Array.from({ length: 50 }, (_, i) => `a${i}`).join('\n');
  const b = Array.from({ length: 50 }, (_, i) => `b${i}`).join('\n');
  t.same(diffOf(a, b, { maxEdits: 20 }), { diff: null, note: 'more than 20 lines changed: too many to show' });
  t.equal(diffOf(null, b, { maxEdits: 20 }).note, null);
  t.equal(diffOf(a, b, { maxEdits: 100 }).note, null);
});

t.test('random pairs: the hunks rebuild the new text, with the fewest changed lines', async (t) => {
  let seed = 12345;
  const random = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  const lines = () => Array.from({ length: random(25) }, () => `w${random(5)}`);
  let failures = 0;
  for (let round = 0; round < 300; round++) {
    const a = lines();
    const b = lines();
    const text = fileDiff('f', Buffer.from(a.map((l) => `${l}\n`).join('')), Buffer.from(b.map((l) => `${l}\n`).join(''))).diff ?? '';
    const rebuilt = applyHunks(a, text);
    const changed = text.split('\n').filter((l) => /^[-+]/.test(l) && !/^(---|\+\+\+) /.test(l)).length;
    const fewest = a.length + b.length - 2 * lcsLength(a, b);
    if (rebuilt.join('\n') !== b.join('\n') || changed !== fewest) failures++;
  }
  t.equal(failures, 0);
  t.same(editScript(['x'], ['x'], 0), [{ op: ' ', line: 'x' }], 'equal texts need no search at all');
});

/** Applies unified hunks to the old lines (context and deletions are checked against them). */
function applyHunks(old: string[], diff: string): string[] {
  const out: string[] = [];
  let at = 0;
  for (const line of diff.split('\n').slice(2)) {
    const hunk = /^@@ -(\d+)(?:,(\d+))? /.exec(line);
    if (hunk) {
      const start = Number(hunk[1]) - (hunk[2] === '0' ? 0 : 1);
      while (at < start) out.push(old[at++] as string);
    } else if (line.startsWith(' ') || line.startsWith('-')) {
      if (old[at] !== line.slice(1)) throw new Error(`hunk does not match line ${at + 1}`);
      if (line.startsWith(' ')) out.push(line.slice(1));
      at++;
    } else if (line.startsWith('+')) out.push(line.slice(1));
  }
  while (at < old.length) out.push(old[at++] as string);
  return out;
}

function lcsLength(a: string[], b: string[]): number {
  const row = new Array<number>(b.length + 1).fill(0);
  for (const x of a) {
    let diagonal = 0;
    for (let j = 1; j <= b.length; j++) {
      const up = row[j] as number;
      row[j] = x === b[j - 1] ? diagonal + 1 : Math.max(up, row[j - 1] as number);
      diagonal = up;
    }
  }
  return row[b.length] as number;
}

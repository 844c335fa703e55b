// The stat-keyed hash cache of tree manifests (FileHashCache in src/tracker/tree-manifest.ts): an
// unchanged file is not read again, a changed one always is, and recently written ("racy") files
// are not cached at all.
import { createHash } from 'node:crypto';
import { rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { FileHashCache, manifestOf, RACY_MARGIN_MS } from '../../../src/tracker/tree-manifest.js';

const sha = (text: string) => createHash('sha256').update(text).digest('hex');

t.test('a second manifest reads no unchanged file again; a changed or new file is read', async (t) => {
  const root = t.testdir({ a: { 'x.txt': 'x' }, 'y.txt': 'y' });
  // Files older than the racy margin, as on a running system.
  const farFuture = () => Date.now() + 10 * RACY_MARGIN_MS;
  const cache = new FileHashCache({ now: farFuture });
  const first = await manifestOf(root, cache);
  t.same([cache.hits, cache.misses, cache.size], [0, 2, 2]);
  const second = await manifestOf(root, cache);
  t.same([cache.hits, cache.misses], [2, 2]);
  t.same([...second.files], [...first.files]);
  writeFileSync(join(root, 'y.txt'), 'Y'); // same size: the stat key changes all the same (mtime, ctime)
  writeFileSync(join(root, 'z.txt'), 'z');
  const third = await manifestOf(root, cache);
  t.same([cache.hits, cache.misses], [3, 4]);
  t.equal(third.files.get('y.txt'), sha('Y'));
  rmSync(join(root, 'a'), { recursive: true });
  await manifestOf(root, cache);
  t.equal(cache.size, 2, 'entries of files gone are dropped');
});

t.test('files changed within the racy margin are hashed every time', async (t) => {
  const root = t.testdir({ 'x.txt': 'x', 'old.txt': 'o' });
  const old = (Date.now() - 10 * RACY_MARGIN_MS) / 1000;
  utimesSync(join(root, 'old.txt'), old, old);
  const cache = new FileHashCache();
  await manifestOf(root, cache);
  await manifestOf(root, cache);
  // ctime is set by utimes too, so both files are recent by ctime: neither may be cached.
  t.same([cache.hits, cache.misses, cache.size], [0, 4, 0]);
});

t.test('manifests with and without a cache agree', async (t) => {
  const root = t.testdir({ p: { 'a.js': 'a', q: { 'b.js': 'b' } } });
  t.same([...(await manifestOf(root, new FileHashCache({ now: () => Date.now() + 1e6 }))).files], [...(await manifestOf(root)).files]);
});

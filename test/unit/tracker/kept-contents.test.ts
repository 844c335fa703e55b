// Kept contents and putting them back (src/tracker/kept-contents.ts), and the durable trial marker
// (src/tracker/trial-marker.ts).
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { KeptContents, restoreFiles } from '../../../src/tracker/kept-contents.js';
import { readTrialMarker, removeTrialMarker, writeTrialMarker } from '../../../src/tracker/trial-marker.js';

const sha = (text: string) => createHash('sha256').update(text).digest('hex');

t.test('contents are kept under their hash once, and only when the hash is right', async (t) => {
  const dir = t.testdir();
  const kept = new KeptContents(join(dir, 'kept'));
  t.equal(await kept.keep(sha('hello'), Buffer.from('hello')), true);
  t.equal(await kept.keep(sha('hello'), Buffer.from('hello')), true, 'again: already there');
  t.equal(readFileSync(join(dir, 'kept', sha('hello').slice(0, 2), sha('hello')), 'utf8'), 'hello');
  t.equal(await kept.keep(sha('other'), Buffer.from('not other')), false, 'content that does not match its name is refused');
  t.equal(await kept.read(sha('other')), undefined);
  t.equal((await kept.read(sha('hello')))?.toString(), 'hello');
});

t.test('a damaged blob reads as not kept; a name that is not a hash is refused', async (t) => {
  const dir = t.testdir();
  const kept = new KeptContents(join(dir, 'kept'));
  await kept.keep(sha('hello'), Buffer.from('hello'));
  writeFileSync(join(dir, 'kept', sha('hello').slice(0, 2), sha('hello')), 'hellO');
  t.equal(await kept.read(sha('hello')), undefined);
  await t.rejects(kept.read('../../etc/passwd'), { code: 'HA_ERR_TRACKER_STATE' });
});

t.test('prune removes every blob not referenced, and emptied folders', async (t) => {
  const dir = t.testdir();
  const kept = new KeptContents(join(dir, 'kept'));
  for (const text of ['a', 'b', 'c']) await kept.keep(sha(text), Buffer.from(text));
  t.equal(await kept.prune(new Set([sha('b')])), 2);
  t.same(readdirSync(join(dir, 'kept')), [sha('b').slice(0, 2)]);
  t.equal(await new KeptContents(join(dir, 'none')).prune(new Set()), 0, 'nothing kept yet');
});

t.test('restoreFiles writes, recreates and removes files inside the tree, keeping modes', async (t) => {
  const dir = t.testdir({ tree: { p: { 'run.sh': 'new', 'added.txt': 'x' }, q: { deep: { 'only.txt': 'y' } } } });
  const root = join(dir, 'tree');
  chmodSync(join(root, 'p/run.sh'), 0o755);
  await restoreFiles(root, [
    { path: 'p/run.sh', content: Buffer.from('old') },
    { path: 'p/added.txt', content: null },
    { path: 'q/deep/only.txt', content: null },
    { path: 'r/s/gone.txt', content: Buffer.from('back') },
  ]);
  t.equal(readFileSync(join(root, 'p/run.sh'), 'utf8'), 'old');
  t.equal(statSync(join(root, 'p/run.sh')).mode & 0o777, 0o755);
  t.notOk(existsSync(join(root, 'p/added.txt')));
  t.ok(existsSync(join(root, 'p')), 'a folder with files left stays');
  t.notOk(existsSync(join(root, 'q')), 'folders emptied are removed');
  t.equal(readFileSync(join(root, 'r/s/gone.txt'), 'utf8'), 'back');
  t.ok(existsSync(root), 'never the root itself');
});

t.test('restoreFiles refuses paths out of the tree and folders that are links, writing nothing outside', async (t) => {
  const dir = t.testdir({ tree: { p: { 'a.txt': 'a' } }, outside: { 'a.txt': 'outside' } });
  const root = join(dir, 'tree');
  symlinkSync(join(dir, 'outside'), join(root, 'link'));
  await t.rejects(restoreFiles(root, [{ path: 'link/a.txt', content: Buffer.from('evil') }]), {
    code: 'HA_ERR_CHANGE_STATE',
    message: 'cannot put link/a.txt back: link is not a folder',
  });
  await t.rejects(restoreFiles(root, [{ path: '../outside/a.txt', content: null }]), { code: 'HA_ERR_FILES_DENIED' });
  mkdirSync(join(root, 'p/dir.txt'));
  await t.rejects(restoreFiles(root, [{ path: 'p/dir.txt', content: Buffer.from('x') }]), { message: /a folder is in its place/ });
  t.equal(readFileSync(join(dir, 'outside/a.txt'), 'utf8'), 'outside');
});

t.test('the trial marker is written whole, read back, and removed', async (t) => {
  const dir = t.testdir();
  t.equal(await readTrialMarker(dir), undefined);
  await writeTrialMarker(dir, { phase: 'committing', written_at: 'now', change_set_ids: [3, 4], by: 'supervisor' });
  t.same(await readTrialMarker(dir), { phase: 'committing', written_at: 'now', change_set_ids: [3, 4], by: 'supervisor' });
  t.same(readdirSync(dir), ['trial.json'], 'no temporary file left');
  writeFileSync(join(dir, 'trial.json'), 'garbage');
  t.same(await readTrialMarker(dir), { phase: 'trial', written_at: '', change_set_ids: [], by: null }, 'unreadable: still a trial');
  await removeTrialMarker(dir);
  t.equal(await readTrialMarker(dir), undefined);
});

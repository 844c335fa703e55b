import { chmodSync, existsSync, mkdirSync, readdirSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { expectErrorAsync, tempDir } from '../fixtures/support.js';
import { openKnowledge } from './fixtures/knowledge-fixture.js';

function writeEntry(root: string, name: string, content: string | Buffer): void {
  mkdirSync(join(root, ...name.split('/')), { recursive: true });
  writeFileSync(join(root, ...name.split('/'), 'content.md'), content);
}

t.test('edits on disk are picked up by reindex: new, changed, touched, removed', async (t) => {
  const { kb, root } = await openKnowledge(t);
  writeEntry(root, 'house/wifi', 'The guest password is zebra.');
  writeEntry(root, '菜谱/番茄汤', '番茄汤要煮二十分钟。');
  t.match(await kb.reindex(), { indexed: 2, removed: 0, skipped: [] });
  t.equal((await kb.search('zebra'))[0]?.name, 'house/wifi');
  t.equal((await kb.search('番茄汤'))[0]?.name, '菜谱/番茄汤');
  t.same(kb.categories(), ['house', '菜谱']);

  writeEntry(root, 'house/wifi', 'The guest password is giraffe.');
  t.match(await kb.reindex(), { indexed: 1, removed: 0 });
  t.same(await kb.search('zebra', { paths: ['lexical'] }), [], 'the old words are gone');
  t.equal((await kb.search('giraffe'))[0]?.name, 'house/wifi');

  const future = new Date(Date.now() + 60_000);
  utimesSync(join(root, 'house/wifi/content.md'), future, future);
  t.match(await kb.reindex(), { indexed: 0, removed: 0 }, 'a touched file with the same content is not re-indexed');
  t.equal(kb.get('house/wifi')?.updated_at, future.getTime());

  rmSync(join(root, '菜谱'), { recursive: true });
  t.match(await kb.reindex(), { indexed: 0, removed: 1 });
  t.same(await kb.search('番茄汤'), []);
  t.same(kb.categories(), ['house']);
  t.same(kb.stats().index, { state: 'ready', indexed: 1 });
});

t.test('reindex reports what it passed over, with reasons', async (t) => {
  const { kb, root } = await openKnowledge(t, { settings: { max_entry_kb: 1 } });
  writeEntry(root, 'ok/fine', 'fine');
  writeEntry(root, 'ok/too_big', 'x'.repeat(2048));
  writeEntry(root, 'ok/latin1', Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]));
  writeEntry(root, 'My Notes/x', 'a directory name people typed');
  writeEntry(root, 'ok/fine2', 'fine too');
  mkdirSync(join(root, 'ok/fine2/sub'));
  writeFileSync(join(root, 'ok', 'loose.md'), 'not in a directory of its own');
  writeFileSync(join(root, 'ok', '.editor.swp'), 'hidden files are nobody’s business');
  writeFileSync(join(root, 'ok/fine/media.json'), '{ not json');
  mkdirSync(join(root, 'ok/odd/content.md'), { recursive: true });
  const summary = await kb.reindex();
  t.equal(summary.indexed, 2);
  const reasons = new Map(summary.skipped?.map((s) => [s.file, s.reason]));
  t.match(reasons.get('ok/too_big/content.md'), /2 KiB; entries may have at most 1 KiB/);
  t.match(reasons.get('ok/latin1/content.md'), /not valid UTF-8/);
  t.match(reasons.get('My Notes'), /rename it to "my_notes"/);
  t.match(reasons.get('ok/fine2/sub'), /inside the entry ok\/fine2/);
  t.match(reasons.get('ok/loose.md'), /a loose file/);
  t.match(reasons.get('ok/fine/media.json'), /ignored/);
  t.match(reasons.get('ok/odd/content.md'), /not a regular file/);
  t.equal(reasons.size, 7, 'hidden files are not reported');
  t.same(
    kb.list().map((e) => e.name),
    ['ok/fine', 'ok/fine2'],
  );
  t.equal(kb.get('ok/fine')?.media.length, 0, 'a malformed media.json reads as no media');

  // A file that grew over the limit leaves the index.
  writeEntry(root, 'ok/fine2', 'y'.repeat(4096));
  t.match(await kb.reindex(), { indexed: 0, removed: 1 });
  t.same(
    kb.list().map((e) => e.name),
    ['ok/fine'],
  );
});

t.test('unreadable files are skipped with the reason', { skip: process.getuid?.() === 0 ? 'root reads everything' : false }, async (t) => {
  const { kb, root } = await openKnowledge(t);
  writeEntry(root, 'locked/x', 'secret');
  chmodSync(join(root, 'locked/x/content.md'), 0o000);
  t.teardown(() => chmodSync(join(root, 'locked/x/content.md'), 0o644));
  const summary = await kb.reindex();
  t.match(summary.skipped, [{ file: 'locked/x/content.md', reason: /EACCES|permission/i }]);
});

t.test('symbolic links: refused for writing and skipped by reindex when they leave the library; followed inside it', async (t) => {
  const { kb, root } = await openKnowledge(t);
  const outside = tempDir(t, 'ha-kb-outside-');
  writeEntry(outside, 'secret', 'the neighbour’s diary: pineapple');
  writeFileSync(join(outside, 'loose.md'), 'outside file: mango');

  symlinkSync(outside, join(root, 'escape'));
  const write = await expectErrorAsync(t, () => kb.create('escape/new_entry', 'x'), 'HA_ERR_KNOWLEDGE_NAME');
  t.match(write.message, /outside the knowledge directory/);
  t.notOk(existsSync(join(outside, 'new_entry')), 'nothing was written outside');
  await expectErrorAsync(t, () => kb.create('escape/secret', 'x', { overwrite: true }), 'HA_ERR_KNOWLEDGE_NAME');
  t.same(readdirSync(join(outside, 'secret')), ['content.md']);

  mkdirSync(join(root, 'notes/linked'), { recursive: true });
  symlinkSync(join(outside, 'loose.md'), join(root, 'notes/linked/content.md'));
  symlinkSync('/nonexistent/target', join(root, 'notes/broken'));
  writeEntry(root, 'notes/real', 'a real note about kiwi');
  symlinkSync(join(root, 'notes/real'), join(root, 'notes/alias'));
  symlinkSync(join(root, 'notes'), join(root, 'notes/loop'));

  const summary = await kb.reindex();
  const reasons = new Map(summary.skipped?.map((s) => [s.file, s.reason]));
  t.match(reasons.get('escape'), /a symbolic link to .* outside the knowledge directory/);
  t.match(reasons.get('notes/linked/content.md'), /outside the knowledge directory/);
  t.match(reasons.get('notes/broken'), /broken symbolic link/);
  t.match(reasons.get('notes/loop'), /loop/);
  t.same(await kb.search('pineapple'), [], 'nothing from outside is indexed');
  t.same(await kb.search('mango'), []);
  t.same(
    kb.list().map((e) => e.name),
    ['notes/alias', 'notes/real'],
    'a link inside the library is followed',
  );
  t.equal(await kb.delete('notes/alias'), true, 'deleting an alias removes the link');
  t.notOk(existsSync(join(root, 'notes/alias')));
  t.equal(kb.get('notes/real')?.content, 'a real note about kiwi', 'not the entry it pointed to');
  await expectErrorAsync(t, async () => kb.get('notes/linked'), 'HA_ERR_KNOWLEDGE_NAME');
  await expectErrorAsync(t, async () => kb.get('escape/secret'), 'HA_ERR_KNOWLEDGE_NAME');
});

t.test('the watcher picks up edits on disk; stop closes it', async (t) => {
  const watchers = () => process.getActiveResourcesInfo().filter((r) => r === 'FSEventWrap').length;
  const before = watchers();
  const { kb, root } = await openKnowledge(t, { settings: { watch: true }, extra: { debounceMs: 20 } });
  t.equal(kb.watching, true);
  t.ok(watchers() > before, 'an inotify watch is open');
  writeEntry(root, 'garden/tulips', 'Plant tulip bulbs in October.');
  // Each wait ends when a reindex finishes; the watcher's debounce decides how many that takes.
  while ((await kb.search('tulip bulbs', { paths: ['lexical'] })).length === 0) await kb.nextReindex();
  t.equal((await kb.search('tulip bulbs'))[0]?.name, 'garden/tulips');

  writeEntry(root, 'garden/tulips', 'Plant daffodil bulbs in September.');
  while ((await kb.search('daffodil', { paths: ['lexical'] })).length === 0) await kb.nextReindex();
  t.same(await kb.search('October', { paths: ['lexical'] }), [], 'the edit replaced the old text');

  rmSync(join(root, 'garden'), { recursive: true });
  while (kb.list().length > 0) await kb.nextReindex();
  await kb.whenIdle();
  t.equal(kb.stats().index.state, 'ready', 'nothing left to index');

  await kb.stop();
  t.equal(kb.watching, false);
  // A closed handle leaves the list of active resources at the loop's next turn.
  for (let turn = 0; turn < 10 && watchers() !== before; turn++) await new Promise((resolve) => setImmediate(resolve));
  t.equal(watchers(), before, 'every inotify watch is closed');
});

t.test('writes wait for a running reindex; a reindex sees every write before it', async (t) => {
  const { kb, root } = await openKnowledge(t);
  for (let i = 0; i < 100; i++) writeEntry(root, `bulk/e${i}`, `entry number ${i} about lamps`);
  const reindex = kb.reindex();
  const created = kb.create('bulk/late', 'written while the reindex ran');
  const deleted = kb.delete('bulk/e5');
  t.match(await reindex, { indexed: 100 });
  await created;
  t.equal(await deleted, true);
  t.equal(kb.stats().entries, 100);
  t.equal(kb.stats().index.state, 'ready');
  t.match(await kb.reindex(), { indexed: 0, removed: 0 }, 'the index agrees with the files');
});

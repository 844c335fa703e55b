/**
 * A knowledge write whose index write fails (the database refuses writes, as on a full disk or a
 * read-only file system) leaves nothing it created: no folder (a phantom category), no files, no
 * media, no index rows; an overwrite or attach puts the previous files back. The real full disk
 * (ENOSPC on the files and SQLITE_FULL on the index) is test/integration/disk-full.test.ts.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { expectErrorAsync, tempDir } from '../fixtures/support.js';
import { type KnowledgeSetup, openKnowledge } from './fixtures/knowledge-fixture.js';
import { SAMPLES } from './fixtures/media-samples.js';

const sha = (data: Uint8Array) => createHash('sha256').update(data).digest('hex');

/** Every file and folder under `dir`, hidden ones included, relative and sorted. */
function tree(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return (readdirSync(dir, { recursive: true }) as string[]).sort();
}

function refuseWrites(setup: KnowledgeSetup, refuse: boolean): void {
  setup.managed.db.pragma(`query_only = ${refuse ? 'ON' : 'OFF'}`);
}

t.test('a new entry whose index write fails leaves no folder, file or media behind', async (t) => {
  const setup = await openKnowledge(t);
  const { kb, root, dataDir } = setup;
  await kb.create('house/boiler', 'Serviced every October.');
  const before = { library: tree(root), media: tree(join(dataDir, 'media')) };
  refuseWrites(setup, true);
  const error = await expectErrorAsync(
    t,
    () => kb.create('recipes/soup/tomato', 'Simmer for twenty minutes.', { media: [{ file_name: 'soup.png', data: SAMPLES.png }] }),
    'HA_ERR_STORE_WRITE',
  );
  t.match(error.message, /the knowledge database .*knowledge\.db could not be written/);
  t.same(tree(root), before.library, 'no phantom category, no entry folder, no kept copies');
  t.same(tree(join(dataDir, 'media', 'sha256')), [], 'the media file it stored is gone again, with its folder');
  refuseWrites(setup, false);
  t.same(kb.list(), [{ name: 'house/boiler', category: 'house' }]);
  t.same(kb.categories(), ['house']);
  t.match(await kb.reindex(), { indexed: 0, removed: 0 }, 'the index and the files agree');
  const entry = await kb.create('recipes/soup/tomato', 'Simmer for twenty minutes.', {
    media: [{ file_name: 'soup.png', data: SAMPLES.png }],
  });
  t.equal(entry.media[0]?.digest, sha(SAMPLES.png), 'with room again the same write works');
});

t.test('an overwrite whose index write fails keeps the old text and attachments, and media other entries use', async (t) => {
  const setup = await openKnowledge(t);
  const { kb, root, dataDir } = setup;
  await kb.create('pets/cat', 'Mimi likes the window.', { media: [{ file_name: 'mimi.png', data: SAMPLES.png }] });
  const mediaBefore = readFileSync(join(root, 'pets/cat/media.json'), 'utf8');
  const files = tree(root);
  refuseWrites(setup, true);
  await expectErrorAsync(
    t,
    () =>
      kb.create('pets/cat', 'Mimi is twelve.', {
        overwrite: true,
        media: [
          { file_name: 'again.png', data: SAMPLES.png },
          { file_name: 'meow.wav', data: SAMPLES.wav },
        ],
      }),
    'HA_ERR_STORE_WRITE',
  );
  refuseWrites(setup, false);
  t.equal(readFileSync(join(root, 'pets/cat/content.md'), 'utf8'), 'Mimi likes the window.', 'the old text is back');
  t.equal(readFileSync(join(root, 'pets/cat/media.json'), 'utf8'), mediaBefore, 'the old media.json is back');
  t.same(tree(root), files, 'no kept copies left');
  t.ok(existsSync(join(dataDir, 'media', 'sha256', sha(SAMPLES.png).slice(0, 2), sha(SAMPLES.png))), 'the picture the entry had stays');
  t.notOk(existsSync(join(dataDir, 'media', 'sha256', sha(SAMPLES.wav).slice(0, 2))), 'the new sound is gone');
  t.equal(kb.get('pets/cat')?.content, 'Mimi likes the window.');
  t.match(await kb.reindex(), { indexed: 0, removed: 0 });
});

t.test('an attach whose index write fails puts media.json back and removes the new file', async (t) => {
  const setup = await openKnowledge(t);
  const { kb, root, dataDir } = setup;
  await kb.create('pets/dog', 'Rex.');
  refuseWrites(setup, true);
  await expectErrorAsync(t, () => kb.attach('pets/dog', { file_name: 'rex.wav', data: SAMPLES.wav }), 'HA_ERR_STORE_WRITE');
  refuseWrites(setup, false);
  t.same(tree(join(root, 'pets/dog')), ['content.md'], 'no media.json (there was none), no kept copy');
  t.same(tree(join(dataDir, 'media', 'sha256')), []);
  t.same(kb.get('pets/dog')?.media, []);
  t.match(await kb.reindex(), { indexed: 0, removed: 0 });
});

t.test('a delete whose index write fails leaves the entry whole', async (t) => {
  const setup = await openKnowledge(t);
  const { kb, root } = setup;
  await kb.create('garden/roses/pruning', 'Prune in March.');
  const files = tree(root);
  refuseWrites(setup, true);
  await expectErrorAsync(t, () => kb.delete('garden/roses/pruning'), 'HA_ERR_STORE_WRITE');
  refuseWrites(setup, false);
  t.same(tree(root), files, 'the files are all there');
  t.equal(kb.get('garden/roses/pruning')?.content, 'Prune in March.');
  t.same(kb.list(), [{ name: 'garden/roses/pruning', category: 'garden/roses' }], 'and still indexed');
  t.equal(await kb.delete('garden/roses/pruning'), true);
  t.same(tree(root), [], 'a delete with room removes it and the categories it emptied');
});

t.test('an import stops at a write the index refuses; the failed file left nothing', async (t) => {
  const setup = await openKnowledge(t);
  const { kb, root } = setup;
  const source = join(tempDir(t), 'notes');
  mkdirSync(source);
  writeFileSync(join(source, 'a.md'), 'first');
  writeFileSync(join(source, 'b.md'), 'second');
  refuseWrites(setup, true);
  // HA_ERR_STORE_WRITE is per file (a skip with its reason); only a full disk stops the import, in the tmpfs test.
  const summary = await kb.importDir(source, { category: 'notes' });
  refuseWrites(setup, false);
  t.same(summary.imported, []);
  t.equal(summary.skipped.length, 2);
  t.match(summary.skipped[0]?.reason, /HA_ERR_STORE_WRITE/);
  t.same(tree(root), [], 'no folder of the category is left');
});

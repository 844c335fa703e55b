import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import type { Embedder } from '../../../src/embed/embedder.js';
import { HashEmbedder } from '../../../src/embed/hash-embedder.js';
import { expectError, expectErrorAsync } from '../fixtures/support.js';
import { openKnowledge } from './fixtures/knowledge-fixture.js';

function rowCounts(setup: { managed: { db: { prepare(sql: string): { get(): unknown } } } }): { entries: number; fts: number } {
  const count = (table: string) => (setup.managed.db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
  return { entries: count('knowledge_entries'), fts: count('knowledge_fts') };
}

t.test('create writes content.md and indexes it; get reads the file back', async (t) => {
  const { kb, root } = await openKnowledge(t);
  const entry = await kb.create('Recipes/Soup/Tomato Soup', '# Tomato soup\n\nSimmer the **tomatoes** with garlic for twenty minutes.');
  t.match(entry, { name: 'recipes/soup/tomato_soup', category: 'recipes/soup', media: [] });
  t.ok(entry.updated_at > 0);
  t.equal(
    readFileSync(join(root, 'recipes/soup/tomato_soup/content.md'), 'utf8'),
    '# Tomato soup\n\nSimmer the **tomatoes** with garlic for twenty minutes.',
  );
  t.same(readdirSync(join(root, 'recipes/soup/tomato_soup')), ['content.md'], 'no temporary files left, no media.json without media');
  await kb.create('菜谱/番茄汤', '番茄汤：番茄切块，加水煮二十分钟，放盐。');
  t.ok(existsSync(join(root, '菜谱', '番茄汤', 'content.md')), 'Unicode names are kept on disk');
  t.same(kb.get('菜谱/番茄汤'), {
    name: '菜谱/番茄汤',
    category: '菜谱',
    content: '番茄汤：番茄切块，加水煮二十分钟，放盐。',
    media: [],
    updated_at: kb.get('菜谱/番茄汤')?.updated_at,
  });
  t.equal(kb.get('RECIPES/soup/Tomato Soup')?.name, 'recipes/soup/tomato_soup', 'get sanitises the name too');
  t.equal(kb.get('recipes/nothing'), undefined);
  expectError(t, () => kb.get('../x'), 'HA_ERR_KNOWLEDGE_NAME');
  t.same(kb.list(), [
    { name: 'recipes/soup/tomato_soup', category: 'recipes/soup' },
    { name: '菜谱/番茄汤', category: '菜谱' },
  ]);
  t.same(kb.list('recipes'), [{ name: 'recipes/soup/tomato_soup', category: 'recipes/soup' }]);
  await expectErrorAsync(t, () => kb.create('recipes/soup/tomato_soup', 'again'), 'HA_ERR_KNOWLEDGE_EXISTS');
  await expectErrorAsync(t, () => kb.create('../../etc/cron.d/x', 'boom'), 'HA_ERR_KNOWLEDGE_NAME');
  await expectErrorAsync(t, () => kb.create('/etc/passwd', 'boom'), 'HA_ERR_KNOWLEDGE_NAME');
  await expectErrorAsync(t, () => kb.create('a\u0000b', 'boom'), 'HA_ERR_KNOWLEDGE_NAME');
});

t.test('overwrite replaces the index rows: the old words are no longer found', async (t) => {
  const setup = await openKnowledge(t);
  const { kb } = setup;
  await kb.create('house/wifi', 'The guest network password is zebra-crossing.');
  await kb.create('house/boiler', 'The boiler is serviced every October.');
  t.equal((await kb.search('zebra', { paths: ['lexical'] }))[0]?.name, 'house/wifi');
  await kb.create('house/wifi', 'The guest network password is giraffe-neck.', { overwrite: true });
  t.same(await kb.search('zebra', { paths: ['lexical'] }), [], 'old words are gone');
  t.equal((await kb.search('giraffe', { paths: ['lexical'] }))[0]?.name, 'house/wifi');
  t.same(rowCounts(setup), { entries: 2, fts: 2 }, 'one row per entry in both tables');
  t.equal(kb.get('house/wifi')?.content, 'The guest network password is giraffe-neck.');
  const hybrid = await kb.search('giraffe password');
  t.equal(hybrid[0]?.name, 'house/wifi');
  t.equal(hybrid.filter((h) => h.name === 'house/wifi').length, 1, 'never listed twice');
});

t.test('size limit of an entry', async (t) => {
  const { kb } = await openKnowledge(t, { settings: { max_entry_kb: 1 } });
  const error = await expectErrorAsync(t, () => kb.create('big/one', 'x'.repeat(1025)), 'HA_ERR_KNOWLEDGE_TOO_LARGE');
  t.match(error.message, /at most 1 KiB/);
  t.equal((await kb.create('big/ok', 'x'.repeat(1024))).content.length, 1024);
});

t.test('entries cannot hold entries; a category with things in it cannot become an entry', async (t) => {
  const { kb, root } = await openKnowledge(t);
  await kb.create('tech/go', 'Go is a programming language.');
  await kb.create('garden/roses/pruning', 'Prune in March.');
  const inside = await expectErrorAsync(t, () => kb.create('tech/go/generics', 'x'), 'HA_ERR_KNOWLEDGE_NAME');
  t.match(inside.message, /tech\/go is an entry/);
  const onCategory = await expectErrorAsync(t, () => kb.create('garden/roses', 'x', { overwrite: true }), 'HA_ERR_KNOWLEDGE_NAME');
  t.match(onCategory.message, /garden\/roses is a category/);
  writeFileSync(join(root, 'garden', 'stray.txt'), 'a file where a category would go');
  const onFile = await expectErrorAsync(t, () => kb.create('garden/stray.txt/x', 'x'), 'HA_ERR_KNOWLEDGE_NAME');
  t.match(onFile.message, /is a file/);
});

t.test('delete removes the entry and the categories it emptied, keeps what people put there', async (t) => {
  const { kb, root } = await openKnowledge(t);
  await kb.create('a/b/c/leaf', 'alpha beta gamma');
  await kb.create('a/other', 'delta');
  t.same(kb.categories(), ['a', 'a/b', 'a/b/c']);
  t.equal(await kb.delete('A/B/C/Leaf'), true);
  t.notOk(existsSync(join(root, 'a', 'b')), 'a/b/c and a/b were emptied by the delete and are gone');
  t.ok(existsSync(join(root, 'a', 'other', 'content.md')));
  t.same(kb.categories(), ['a']);
  t.same(await kb.search('gamma'), []);
  t.equal(kb.get('a/b/c/leaf'), undefined);
  t.equal(await kb.delete('a/b/c/leaf'), false, 'a second delete finds nothing');

  await kb.create('photos/notes', 'see the pictures');
  writeFileSync(join(root, 'photos', 'notes', 'scan.jpg'), 'not ours');
  t.equal(await kb.delete('photos/notes'), true);
  t.ok(existsSync(join(root, 'photos', 'notes', 'scan.jpg')), 'a file someone put there stays');
  t.notOk(existsSync(join(root, 'photos', 'notes', 'content.md')));
  t.same(kb.categories(), ['a', 'photos', 'photos/notes'], 'the directory is now a category');
  t.same(kb.list(), [{ name: 'a/other', category: 'a' }]);
});

t.test('tree, categories and counts', async (t) => {
  const { kb, root } = await openKnowledge(t);
  await kb.create('tech/go/generics', 'Go generics use type parameters in square brackets.');
  await kb.create('tech/go/channels', '## Channels\n\n- connect *goroutines*\n- see [the tour](https://go.dev/tour)');
  await kb.create('tech/rust', 'Rust has ownership and borrowing.');
  await kb.create('recipes/bread', 'Bread needs flour, water, salt and yeast.');
  await kb.create('top_note', 'A note at the top of the library.');
  const tree = kb.tree({ include_items: true, preview_limit: 10 });
  t.match(tree, { name: '', path: '', item_count: 1, total_count: 5 });
  t.same(
    tree.children.map((c) => [c.name, c.path, c.item_count, c.total_count]),
    [
      ['recipes', 'recipes', 1, 1],
      ['tech', 'tech', 1, 3],
    ],
  );
  t.same(tree.items, [{ name: 'top_note', path: 'top_note', preview: 'A note at…', media: 0 }]);
  const go = kb.tree({ category: 'Tech/Go', include_items: true });
  t.match(go, { name: 'go', path: 'tech/go', item_count: 2, total_count: 2, children: [] });
  t.same(
    go.items?.map((i) => [i.name, i.path, i.preview]),
    [
      ['channels', 'tech/go/channels', 'Channels connect goroutines see the tour'],
      ['generics', 'tech/go/generics', 'Go generics use type parameters in square brackets.'],
    ],
    'previews are the text without markdown noise',
  );
  t.same(kb.tree({ max_depth: 0 }).children, [], 'depth 0: only the start');
  const depth1 = kb.tree({ max_depth: 1 });
  t.same(depth1.children[1]?.children, [], 'depth 1: children without their children');
  t.equal(depth1.children[1]?.total_count, 3, 'counts still include what is not expanded');
  t.equal(kb.tree().items, undefined, 'items only when asked for');
  t.equal(kb.tree().children[1]?.children[0]?.path, 'tech/go', 'unlimited depth by default');
  t.same(kb.categories(), ['recipes', 'tech', 'tech/go']);
  t.same(kb.categoryCounts(), [
    { category: 'tech', count: 3 },
    { category: 'tech/go', count: 2 },
    { category: 'recipes', count: 1 },
  ]);
  const error = await expectErrorAsync(t, () => kb.tree({ category: 'nope' }), 'HA_ERR_KNOWLEDGE_NOT_FOUND');
  t.equal(error.message, 'no category "nope"; the top-level categories are: recipes, tech');
  await expectErrorAsync(t, () => kb.list('tech/go/generics'), 'HA_ERR_KNOWLEDGE_NOT_FOUND');
  await expectErrorAsync(t, () => kb.search('x', { category: 'nope' }), 'HA_ERR_KNOWLEDGE_NOT_FOUND');

  // An empty category made on disk is part of the tree once indexed.
  const { mkdirSync } = await import('node:fs');
  mkdirSync(join(root, 'garden', 'roses'), { recursive: true });
  await kb.reindex();
  t.same(kb.categories(), ['garden', 'garden/roses', 'recipes', 'tech', 'tech/go']);
  t.same(kb.tree({ category: 'garden' }), {
    name: 'garden',
    path: 'garden',
    item_count: 0,
    total_count: 0,
    children: [{ name: 'roses', path: 'garden/roses', item_count: 0, total_count: 0, children: [] }],
  });
  t.same(kb.categoryCounts().slice(-2), [
    { category: 'garden', count: 0 },
    { category: 'garden/roses', count: 0 },
  ]);
});

t.test('stats: entries, categories, index state, dense path', async (t) => {
  const { kb } = await openKnowledge(t);
  t.same(kb.stats(), {
    entries: 0,
    categories: 0,
    media: { files: 0, bytes: 0 },
    index: { state: 'ready', indexed: 0 },
    dense: { enabled: true, ready: true, total: 0 },
  });
  await kb.create('a/one', 'one');
  await kb.create('a/b/two', 'two');
  t.same(kb.stats(), {
    entries: 2,
    categories: 2,
    media: { files: 0, bytes: 0 },
    index: { state: 'ready', indexed: 2 },
    dense: { enabled: true, ready: true, total: 2 },
  });
  const lexicalOnly = await openKnowledge(t, { embedder: null });
  await lexicalOnly.kb.create('a/one', 'one');
  t.same(lexicalOnly.kb.stats().dense, { enabled: false, ready: false, total: 0 });
  t.equal((await lexicalOnly.kb.search('one'))[0]?.name, 'a/one', 'search works without vectors');
});

t.test('vectors: a failing embedder leaves entries searchable by words; a new embedder re-embeds everything', async (t) => {
  class FlakyEmbedder implements Embedder {
    readonly inner = new HashEmbedder();
    readonly dim = this.inner.dim;
    readonly fingerprint = this.inner.fingerprint;
    fail = true;
    async embed(texts: readonly string[]): Promise<Float32Array[]> {
      if (this.fail) throw new Error('model crashed');
      return this.inner.embed(texts);
    }
    async close(): Promise<void> {}
  }
  const flaky = new FlakyEmbedder();
  const first = await openKnowledge(t, { embedder: flaky });
  await first.kb.create('garden/roses', 'Water the roses every morning.');
  t.equal((await first.kb.search('roses', { paths: ['lexical'] }))[0]?.name, 'garden/roses');
  t.same(first.kb.stats().dense, { enabled: true, ready: false, total: 0 });
  flaky.fail = false;
  await first.kb.reindex();
  t.same(first.kb.stats().dense, { enabled: true, ready: true, total: 1 }, 'the reindex fills in missing vectors');
  await first.kb.stop();

  const other = new HashEmbedder({ dim: 256 });
  const second = await openKnowledge(t, { dataDir: first.dataDir, embedder: other });
  t.same(second.kb.stats().dense, { enabled: true, ready: true, total: 1 }, 'vectors of the old embedder were replaced at start');
  t.equal((await second.kb.search('watering roses', { paths: ['vector'] }))[0]?.name, 'garden/roses');
});

t.test('the index outlives a restart; calls outside start/stop are refused', async (t) => {
  const first = await openKnowledge(t, { start: false });
  await expectErrorAsync(t, () => first.kb.create('a/b', 'x'), 'HA_ERR_KNOWLEDGE_UNAVAILABLE');
  expectError(t, () => first.kb.stats(), 'HA_ERR_KNOWLEDGE_UNAVAILABLE');
  t.equal(first.kb.available(), false);
  await first.kb.start(new AbortController().signal);
  t.equal(first.kb.available(), true);
  await first.kb.create('house/alarm', 'The alarm code is in the blue folder.');
  await first.kb.stop();
  t.equal(first.kb.available(), false);
  await expectErrorAsync(t, () => first.kb.search('alarm'), 'HA_ERR_KNOWLEDGE_UNAVAILABLE');
  expectError(t, () => first.kb.tree(), 'HA_ERR_KNOWLEDGE_UNAVAILABLE');

  const second = await openKnowledge(t, { dataDir: first.dataDir, start: false });
  await second.kb.start(new AbortController().signal);
  t.equal((await second.kb.search('alarm code'))[0]?.name, 'house/alarm', 'searchable before the start reindex finished');
  const summary = await second.kb.reindex();
  t.match(summary, { indexed: 0, removed: 0, skipped: [] }, 'nothing changed on disk: nothing re-read');
});

import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { expectErrorAsync, tempDir } from '../fixtures/support.js';
import { openKnowledge } from './fixtures/knowledge-fixture.js';

function files(dir: string, content: Record<string, string | Buffer>): void {
  for (const [rel, data] of Object.entries(content)) {
    mkdirSync(join(dir, rel, '..'), { recursive: true });
    writeFileSync(join(dir, rel), data);
  }
}

t.test('import: markdown and text files become entries named after their paths; the rest is reported', async (t) => {
  const { kb, root } = await openKnowledge(t, { settings: { max_entry_kb: 1 } });
  const source = tempDir(t, 'ha-kb-import-');
  files(source, {
    'Recipes/Tomato Soup.md': '# Tomato soup\nSimmer tomatoes.',
    'Recipes/bread.TXT': 'Flour, water, salt.',
    'manuals/洗衣机.markdown': '洗衣机说明书：先放衣服再加洗衣液。',
    'manuals/photo.png': 'not text',
    'big.md': 'x'.repeat(2000),
    'latin1.txt': Buffer.from([0x63, 0x61, 0x66, 0xe9]),
    '.git/config': 'hidden directories are not read',
    '.hidden.md': 'hidden files are not read',
    'existing.md': 'would replace an entry',
  });
  symlinkSync('/etc/hostname', join(source, 'link.md'));
  await kb.create('imported/existing', 'already here');
  const progress: Array<[number, number]> = [];
  const summary = await kb.importDir(source, { category: 'Imported', onProgress: (done, total) => progress.push([done, total]) });
  t.same([...summary.imported].sort(), ['imported/manuals/洗衣机', 'imported/recipes/bread', 'imported/recipes/tomato_soup']);
  const reasons = Object.fromEntries(summary.skipped.map((s) => [s.file, s.reason]));
  t.match(reasons, {
    'manuals/photo.png': /not a markdown or text file/,
    'big.md': /2 KiB; entries may have at most 1 KiB/,
    'latin1.txt': /not valid UTF-8/,
    'existing.md': /an entry named imported\/existing already exists/,
    'link.md': /symbolic link \(not followed\)/,
  });
  t.equal(summary.skipped.length, 5, 'hidden files and directories are passed over silently');
  t.same(
    progress.map(([, total]) => total),
    [6, 6, 6, 6, 6, 6],
    'progress over the markdown and text files',
  );
  t.same(
    progress.map(([done]) => done),
    [1, 2, 3, 4, 5, 6],
  );
  t.equal(kb.get('imported/recipes/tomato_soup')?.content, '# Tomato soup\nSimmer tomatoes.');
  t.equal(kb.get('imported/existing')?.content, 'already here', 'an existing entry is not replaced');
  t.equal((await kb.search('洗衣液'))[0]?.name, 'imported/manuals/洗衣机');

  await expectErrorAsync(t, () => kb.importDir(join(source, 'missing')), 'HA_ERR_KNOWLEDGE_NOT_FOUND');
  await expectErrorAsync(t, () => kb.importDir(root), 'HA_ERR_KNOWLEDGE_NAME');
});

t.test('import: at most import_max_files files; names that cannot be entries are reported', async (t) => {
  const { kb } = await openKnowledge(t, { settings: { import_max_files: 3 } });
  const source = tempDir(t, 'ha-kb-import-');
  files(source, {
    'a.md': 'a',
    'b.md': 'b',
    'c/d.md': 'an entry c/d',
    'c.md': 'c would be an entry holding c/d',
    'e.md': 'over the limit',
    'f.md': 'over the limit',
  });
  const summary = await kb.importDir(source);
  t.same(summary.imported, ['a', 'b', 'c/d']);
  t.same(summary.skipped, [{ file: '.', reason: '3 more files not read: at most 3 per import (core.knowledge.import_max_files)' }]);
  const rest = await kb.importDir(join(source, 'c'), { category: 'c' });
  t.same(rest.imported, [], 'c/d exists already');
  const clash = tempDir(t, 'ha-kb-import-');
  files(clash, { 'c.md': 'c' });
  const refused = await kb.importDir(clash);
  t.match(refused.skipped, [{ file: 'c.md', reason: /c is a category with things in it/ }]);
});

t.test('import can be cancelled', async (t) => {
  const { kb } = await openKnowledge(t);
  const source = tempDir(t, 'ha-kb-import-');
  files(source, { 'a.md': 'a', 'b.md': 'b', 'c.md': 'c' });
  const controller = new AbortController();
  await expectErrorAsync(
    t,
    () => kb.importDir(source, { signal: controller.signal, onProgress: (done) => done === 1 && controller.abort() }),
    'HA_ERR_ABORTED',
  );
  t.same(
    kb.list().map((e) => e.name),
    ['a'],
  );
});

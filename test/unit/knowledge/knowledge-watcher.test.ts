import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { KnowledgeWatcher } from '../../../src/knowledge/knowledge-watcher.js';
import { captureLogs, tempDir } from '../fixtures/support.js';

t.test('changes are reported at once and again when they have settled; hidden files are ignored', async (t) => {
  const root = tempDir(t);
  let dirty = 0;
  let settled: () => void = () => {};
  const settledOnce = () => new Promise<void>((resolve) => (settled = resolve));
  const watcher = new KnowledgeWatcher({
    root,
    debounceMs: 10,
    onDirty: () => dirty++,
    onSettled: () => settled(),
    onFailed: () => t.fail('should not fail'),
    log: captureLogs().logs.child('knowledge'),
  });
  t.teardown(() => watcher.stop());
  t.equal(watcher.start(), true);
  t.equal(watcher.watching, true);
  const first = settledOnce();
  mkdirSync(join(root, 'a', 'b'), { recursive: true });
  writeFileSync(join(root, 'a', 'b', 'content.md'), 'x');
  await first;
  t.ok(dirty >= 1, 'dirty was reported');
  const before = dirty;
  const second = settledOnce();
  writeFileSync(join(root, 'a', '.content.md.tmp-1'), 'hidden');
  writeFileSync(join(root, 'a', 'b', 'content.md'), 'y');
  await second;
  t.ok(dirty > before);
  watcher.stop();
  t.equal(watcher.watching, false);
});

t.test('a directory that cannot be watched is logged and reported, never thrown', async (t) => {
  const captured = captureLogs();
  const failures: string[] = [];
  const watcher = new KnowledgeWatcher({
    root: join(tempDir(t), 'missing'),
    debounceMs: 10,
    onDirty: () => {},
    onSettled: () => {},
    onFailed: (reason) => failures.push(reason),
    log: captured.logs.child('knowledge'),
  });
  t.equal(watcher.start(), false);
  t.equal(watcher.watching, false);
  t.match(failures, [/ENOENT/]);
  t.match(captured.records(), [{ level: 'warn', msg: /cannot watch the knowledge directory/ }]);
});

import { closeSync, mkdirSync, openSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { checkOpened, containingRoot, resolvePath, resolveRoots } from '../../../../plugins/files/file-roots.js';
import { ToolError } from '../../../../src/shared/tool.js';
import { tempDir } from '../../fixtures/support.js';

/** The info of the ToolError `fn` throws. */
function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    if (error instanceof ToolError) return error.info;
    throw error;
  }
  return 'nothing was thrown';
}

t.test('roots', async (t) => {
  const base = realpathSync(tempDir(t));
  mkdirSync(join(base, 'data'));
  mkdirSync(join(base, 'shared'));
  const { roots, skipped } = resolveRoots(join(base, 'data'), [
    { path: join(base, 'shared'), mode: 'ro' },
    { path: 'relative/dir', mode: 'rw' },
    { path: join(base, 'missing'), mode: 'rw' },
  ]);
  t.same(roots, [
    { path: join(base, 'data'), mode: 'rw' },
    { path: join(base, 'shared'), mode: 'ro' },
  ]);
  t.same(skipped, ['relative/dir is not an absolute path', `${join(base, 'missing')} does not exist`]);
});

t.test('containment', async (t) => {
  const roots = [
    { path: '/srv/data', mode: 'rw' as const },
    { path: '/srv/data/archive', mode: 'ro' as const },
  ];
  t.equal(containingRoot('/srv/data', roots)?.mode, 'rw');
  t.equal(containingRoot('/srv/data/archive/x', roots)?.mode, 'ro');
  t.equal(containingRoot('/srv/data-other/x', roots), undefined, 'a common prefix is not containment');
  t.equal(containingRoot('/srv', roots), undefined);
  t.equal(containingRoot('/anything', [{ path: '/', mode: 'ro' }])?.path, '/');
});

t.test('relative paths start at the data root; missing names stay names', async (t) => {
  const base = realpathSync(tempDir(t));
  const roots = [{ path: base, mode: 'rw' as const }];
  t.same(resolvePath('a/b/c.txt', roots, 'write'), { path: join(base, 'a', 'b', 'c.txt'), root: roots[0], exists: false });
  t.same(resolvePath('./x/./y', roots, 'read'), { path: join(base, 'x', 'y'), root: roots[0], exists: false });
  t.match(
    thrown(() => resolvePath('x/../../etc', roots, 'read')),
    { reason: 'rejected', field: 'path' },
  );
});

t.test('an opened descriptor is checked where it really points', async (t) => {
  const base = realpathSync(tempDir(t));
  mkdirSync(join(base, 'root'));
  writeFileSync(join(base, 'outside.txt'), 'x');
  writeFileSync(join(base, 'root', 'inside.txt'), 'x');
  const root = { path: join(base, 'root'), mode: 'rw' as const };
  const inside = openSync(join(base, 'root', 'inside.txt'), 'r');
  const outside = openSync(join(base, 'outside.txt'), 'r');
  t.teardown(() => {
    closeSync(inside);
    closeSync(outside);
  });
  t.doesNotThrow(() => checkOpened(inside, root));
  t.match(
    thrown(() => checkOpened(outside, root)),
    { reason: 'rejected', detail: /changed while it was being opened/ },
  );
});

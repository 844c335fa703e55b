import { createHash } from 'node:crypto';
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { isHomeAgentError } from '../../../src/shared/errors.js';
import { diffManifests, manifestOf, treePathParts } from '../../../src/tracker/tree-manifest.js';

const sha = (text: string): string => createHash('sha256').update(text).digest('hex');

t.test('manifestOf hashes regular files, records links as their target and never follows them', async (t) => {
  const dir = t.testdir({ tree: { 'a.txt': 'alpha', sub: { 'b.txt': 'bravo', empty: {} } }, outside: { 'o.txt': 'outside' } });
  const root = join(dir, 'tree');
  symlinkSync(join(dir, 'outside'), join(root, 'out'));
  symlinkSync('a.txt', join(root, 'sub/link'));
  const manifest = await manifestOf(root);
  t.same(
    [...manifest.files.entries()].sort(),
    [
      ['a.txt', sha('alpha')],
      ['out', `symlink:${join(dir, 'outside')}`],
      ['sub/b.txt', sha('bravo')],
      ['sub/link', 'symlink:a.txt'],
    ],
    'folders are not entries; the linked-to outside folder is not read',
  );
});

t.test('manifestOf of a tree not made yet is empty; other errors are not hidden', async (t) => {
  const dir = t.testdir({ file: 'not a folder' });
  t.same((await manifestOf(join(dir, 'missing'))).files.size, 0);
  await t.rejects(manifestOf(join(dir, 'file')), { code: 'ENOTDIR' });
});

t.test('diffManifests answers adds, modifies and deletes sorted by path in code-unit order', async (t) => {
  const before = {
    files: new Map([
      ['b', sha('1')],
      ['a/x', sha('2')],
      ['Z', sha('3')],
      ['l', 'symlink:one'],
    ]),
  };
  const after = {
    files: new Map([
      ['b', sha('1 changed')],
      ['a/x', sha('2')],
      ['a/y', sha('4')],
      ['l', 'symlink:two'],
    ]),
  };
  t.same(diffManifests(before, after), [
    { path: 'Z', op: 'delete', sha256_before: sha('3'), sha256_after: null },
    { path: 'a/y', op: 'add', sha256_before: null, sha256_after: sha('4') },
    { path: 'b', op: 'modify', sha256_before: sha('1'), sha256_after: sha('1 changed') },
    { path: 'l', op: 'modify', sha256_before: sha('symlink:one'), sha256_after: sha('symlink:two') },
  ]);
  t.same(diffManifests(after, after), [], 'no change, no entries');
});

t.test('manifests of real trees diff to the files touched between them', async (t) => {
  const root = t.testdir({ 'keep.txt': 'k', 'edit.txt': 'e', 'gone.txt': 'g' });
  const before = await manifestOf(root);
  writeFileSync(join(root, 'edit.txt'), 'e2');
  mkdirSync(join(root, 'new'));
  writeFileSync(join(root, 'new/n.txt'), 'n');
  rmSync(join(root, 'gone.txt'));
  t.same(
    diffManifests(before, await manifestOf(root)).map((c) => `${c.op} ${c.path}`),
    ['modify edit.txt', 'delete gone.txt', 'add new/n.txt'],
  );
});

t.test('treePathParts accepts plain relative paths and refuses anything that could leave the tree', async (t) => {
  t.same(treePathParts('a/b.txt'), ['a', 'b.txt']);
  t.same(treePathParts('..hidden'), ['..hidden'], 'a name starting with dots is a plain name');
  for (const bad of ['', '/abs', 'a/../b', '..', 'a//b', './a', 'a/', 'a\0b']) {
    let error: unknown;
    try {
      treePathParts(bad);
    } catch (e) {
      error = e;
    }
    t.ok(isHomeAgentError(error, 'HA_ERR_FILES_DENIED'), `refuses ${JSON.stringify(bad)}`);
    t.match((error as Error).message, /not a plain path inside the plugins tree/);
  }
});

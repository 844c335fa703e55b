import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
// @ts-expect-error: a plain .mjs script without declarations
import { docProblems } from '../../../scripts/check-docs.mjs';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const check = docProblems as (root: string) => string[];

/** The docs and the folders they describe, copied (folder names and marker files only). */
function copy(t: { teardown(fn: () => void): void }): string {
  const root = mkdtempSync(join(tmpdir(), 'check-docs-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  for (const doc of ['README.md', 'devices/README.md', 'adapters/README.md', 'test/contract/README.md'])
    cpSync(join(repo, doc), join(root, doc), { recursive: true });
  for (const dir of ['src', 'plugins', 'devices', 'adapters', 'test/contract'])
    cpSync(join(repo, dir), join(root, dir), { recursive: true, filter: (src) => !src.endsWith('.ts') || src.includes('contract') });
  return root;
}

t.test('the repository itself passes', async (t) => {
  t.same(check(repo), []);
});

t.test('a copy passes, and each kind of drift is named', async (t) => {
  const root = copy(t);
  t.same(check(root), [], 'the copy is as true as the repository');

  mkdirSync(join(root, 'src', 'weather'));
  mkdirSync(join(root, 'plugins', 'zwave'));
  writeFileSync(join(root, 'plugins', 'zwave', 'plugin.json'), '{}');
  rmSync(join(root, 'adapters', 'qwen.lua'));
  writeFileSync(join(root, 'test', 'contract', 'store.contract.ts'), '');
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  writeFileSync(join(root, 'README.md'), readme.replace(/^( {2}memory\/\s.*)\(L2\)$/m, '$1(L3)'));

  const problems = check(root);
  t.ok(problems.includes("README.md's layout does not name the src folder weather"), 'a new src folder');
  t.ok(problems.includes("README.md's layout puts src/memory in L3; scripts/layers.mjs says L2"), 'a wrong layer');
  t.ok(problems.includes("README.md's layout (plugins/) does not name the built-in plugin zwave"), 'a new plugin in the layout');
  t.ok(problems.includes("README.md's Built-in plugins paragraph does not name the built-in plugin zwave"), 'and in the paragraph');
  t.ok(problems.includes("README.md's layout (adapters/) names the Lua adapter qwen, which does not exist"), 'a removed adapter');
  t.ok(problems.includes("adapters/README.md's table names the Lua adapter qwen, which does not exist"), 'in the table too');
  t.ok(problems.includes('test/contract/README.md does not name the suite store.contract.ts'), 'a new suite');
  t.equal(problems.length, 7, problems.join('\n'));
});

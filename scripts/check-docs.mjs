#!/usr/bin/env node
// Docs that describe the tree, kept true (part of `npm run lint`, and run by
// test/unit/scripts/check-docs.test.ts so CI sees it): the README's layout names every src/ folder
// with its layer (scripts/layers.mjs) and every built-in plugin, device driver and Lua adapter;
// the README's plugin paragraph names every built-in plugin; devices/README.md every driver;
// adapters/README.md's table every adapter script; test/contract/README.md every suite and every
// file that runs one. Each statement is checked both ways: nothing missing, nothing that is gone.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LAYERS } from './layers.mjs';

const folders = (dir) =>
  existsSync(dir)
    ? readdirSync(dir)
        .filter((name) => statSync(join(dir, name)).isDirectory())
        .sort()
    : [];
const files = (dir, suffix) =>
  existsSync(dir)
    ? readdirSync(dir)
        .filter((name) => name.endsWith(suffix))
        .map((name) => name.slice(0, -suffix.length))
        .sort()
    : [];
const read = (path) => (existsSync(path) ? readFileSync(path, 'utf8') : '');
const words = (text) => new Set(text.match(/[A-Za-z0-9_.-]+/g) ?? []);

/** Both ways: `expected` all named in `named`, and nothing named that `expected` lacks. */
function compare(problems, where, what, expected, named) {
  for (const name of expected) if (!named.has(name)) problems.push(`${where} does not name the ${what} ${name}`);
  for (const name of named) if (!expected.includes(name)) problems.push(`${where} names the ${what} ${name}, which does not exist`);
}

/** The README's layout block: each top-level entry (`name/`) with its continuation lines, and the src/ rows. */
function layout(readme) {
  const start = readme.indexOf('## Layout');
  const open = readme.indexOf('```\n', start);
  const close = readme.indexOf('```\n', open + 4);
  const entries = new Map();
  const src = new Map();
  if (start < 0 || open < 0 || close < 0) return { entries, src };
  let current;
  for (const line of readme.slice(open + 4, close).split('\n')) {
    const top = line.match(/^([a-z]+)\/\s/);
    const row = line.match(/^ {2}([a-z]+)\/\s.*\(L(\d)\)\s*$/);
    if (top) {
      current = top[1];
      entries.set(current, line);
    } else if (row && current === 'src') src.set(row[1], Number(row[2]));
    else if (current && /^\s/.test(line)) entries.set(current, `${entries.get(current)} ${line}`);
  }
  return { entries, src };
}

export function docProblems(root) {
  const problems = [];
  const readme = read(join(root, 'README.md'));
  const plugins = folders(join(root, 'plugins')).filter((name) => existsSync(join(root, 'plugins', name, 'plugin.json')));
  const devices = folders(join(root, 'devices'));
  const adapters = files(join(root, 'adapters'), '.lua');

  const { entries, src } = layout(readme);
  const srcFolders = folders(join(root, 'src'));
  compare(problems, "README.md's layout", 'src folder', srcFolders, new Set(src.keys()));
  for (const [name, layer] of src)
    if (LAYERS[name] !== undefined && LAYERS[name] !== layer)
      problems.push(`README.md's layout puts src/${name} in L${layer}; scripts/layers.mjs says L${LAYERS[name]}`);
  // An entry's names are the list after its first colon, up to a semicolon.
  const listed = (entry) =>
    words(
      (entries.get(entry) ?? '')
        .split(':')[1]
        ?.split(';')[0]
        ?.replace(/\band\b/g, '') ?? '',
    );
  compare(problems, "README.md's layout (plugins/)", 'built-in plugin', plugins, listed('plugins'));
  compare(problems, "README.md's layout (devices/)", 'device driver', devices, listed('devices'));
  compare(problems, "README.md's layout (adapters/)", 'Lua adapter', adapters, listed('adapters'));

  const paragraph = readme.slice(readme.indexOf('Built-in plugins:'), readme.indexOf('Installed plugins run'));
  const ticked = new Set([...paragraph.matchAll(/`([a-z][a-z0-9_]*)`/g)].map((m) => m[1]).filter((w) => plugins.includes(w)));
  compare(problems, "README.md's Built-in plugins paragraph", 'built-in plugin', plugins, ticked);

  const devicesReadme = read(join(root, 'devices', 'README.md'));
  compare(
    problems,
    'devices/README.md',
    'device driver',
    devices,
    new Set([...devicesReadme.matchAll(/`([a-z0-9-]+)\/`/g)].map((m) => m[1])),
  );

  const adaptersReadme = read(join(root, 'adapters', 'README.md'));
  compare(
    problems,
    "adapters/README.md's table",
    'Lua adapter',
    adapters,
    new Set([...adaptersReadme.matchAll(/^\| `([a-z0-9_-]+)`\s*\|/gm)].map((m) => m[1])),
  );

  const contractDir = join(root, 'test', 'contract');
  const contractReadme = read(join(contractDir, 'README.md'));
  const mentioned = words(contractReadme);
  for (const suite of files(contractDir, '.contract.ts'))
    if (!mentioned.has(`${suite}.contract.ts`)) problems.push(`test/contract/README.md does not name the suite ${suite}.contract.ts`);
  for (const test of files(contractDir, '.test.ts'))
    if (!mentioned.has(test) && !mentioned.has(`${test}.test.ts`)) problems.push(`test/contract/README.md does not name ${test}.test.ts`);
  for (const [, name] of contractReadme.matchAll(/`([a-z0-9-]+(?:\.contract)?\.ts)`/g))
    if (!existsSync(join(contractDir, name))) problems.push(`test/contract/README.md names ${name}, which does not exist`);
  return problems;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const rootArg = process.argv.indexOf('--root');
  const root = rootArg > 0 ? resolve(process.argv[rootArg + 1]) : resolve(dirname(fileURLToPath(import.meta.url)), '..');
  const problems = docProblems(root);
  for (const problem of problems) process.stderr.write(`${problem}\n`);
  if (problems.length > 0) process.exit(1);
  process.stdout.write('docs ok\n');
}

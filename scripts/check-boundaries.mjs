#!/usr/bin/env node
// Import-boundary check (part of `npm run lint`). Enforces the layering of DESIGN.md:
// - src/<folder> imports only point down (or sideways within a layer), never up;
// - plugins/** and devices/** import only src/sdk (plus their own files and npm packages; plugins/voice
//   also the microphone and speaker drivers);
// - only src/store imports better-sqlite3; only devices/** import hardware libraries;
//   only plugins/mqtt imports mqtt; src/agent sees LLMs only through src/llm/spec;
// - nothing imports src/main.ts, only src/main.ts imports the composition (src/daemon.ts, src/daemon/);
//   there are no import cycles;
// - the one way up: src/config/plugin-sections.ts exports every built-in plugin's and device's
//   settings-schema.ts under its folder's name, and such a file imports only TypeBox and
//   src/sdk/settings.ts (itself only the settings vocabulary), so loading the configuration loads no
//   plugin code;
// - src/api (the wire types) imports only src/api, and src/sdk/api.ts only src/api, so the web page
//   can import them without any of the daemon's Node modules.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LAYERS } from './layers.mjs';

const rootArg = process.argv.indexOf('--root');
// --root lets the test suite run the check on a fixture tree.
const root = rootArg > 0 ? resolve(process.argv[rootArg + 1]) : resolve(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Device drivers a plugin may compose besides the SDK: the voice pipeline owns the microphone and
 * the speaker it listens and talks through (docs/decisions/0006-voice-composes-audio-drivers.md).
 */
const DRIVERS_FOR = { 'plugins/voice': ['devices/microphone', 'devices/speaker'] };
const SECTIONS_FILE = 'src/config/plugin-sections.ts';
const SETTINGS_SCHEMA = /^(plugins|devices)\/([^/]+)\/settings-schema\.ts$/;
const SDK_SETTINGS = 'src/sdk/settings.ts';
const SDK_API = 'src/sdk/api.ts';
const HARDWARE = ['onoff', 'i2c-bus', 'node-record-lpcm16', 'speaker', 'node-webcam', 'node-libgpiod'];

function walk(dir) {
  let out = [];
  let entries;
  try {
    entries = readdirSync(dir);
  } catch {
    return out;
  }
  for (const name of entries) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out = out.concat(walk(path));
    else if (/\.(ts|mts)$/.test(name) && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

const IMPORT =
  /(?:^|[^.\w])(?:import|export)\s[^'"`;]*?from\s*['"]([^'"]+)['"]|(?:^|[^.\w])import\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/gm;

function importsOf(file) {
  const text = readFileSync(file, 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/^\s*\/\/.*$/gm, '');
  const specs = [];
  for (const m of text.matchAll(IMPORT)) specs.push(m[1] ?? m[2] ?? m[3]);
  return specs;
}

function resolveLocal(from, spec) {
  const target = resolve(dirname(from), spec);
  return target.replace(/\.js$/, '.ts');
}

/** 'src/config/loader.ts' → {area:'src', folder:'config'}; plugins/cli/index.ts → {area:'plugins', folder:'cli'} */
function locate(file) {
  const parts = relative(root, file).split(sep);
  return { area: parts[0], folder: parts.length > 2 ? parts[1] : parts[1]?.replace(/\.ts$/, ''), rel: parts.join('/') };
}

const files = ['src', 'plugins', 'devices'].flatMap((d) => walk(join(root, d)));
const problems = [];
const graph = new Map();

for (const file of files) {
  const me = locate(file);
  const edges = [];
  for (const spec of importsOf(file)) {
    const bare = !spec.startsWith('.') && !spec.startsWith('/');
    if (bare && SETTINGS_SCHEMA.test(me.rel) && spec !== '@sinclair/typebox')
      problems.push(`${me.rel}: a settings schema imports only @sinclair/typebox and ${SDK_SETTINGS}, not ${spec}`);
    if (bare && (me.rel === SDK_API || (me.area === 'src' && me.folder === 'api')))
      problems.push(`${me.rel}: the wire types import only src/api, not ${spec}`);
    if (bare) {
      const pkg = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0];
      if (pkg === 'better-sqlite3' && !(me.area === 'src' && me.folder === 'store'))
        problems.push(`${me.rel}: only src/store may import better-sqlite3`);
      if (HARDWARE.includes(pkg) && me.area !== 'devices')
        problems.push(`${me.rel}: only devices/** may import the hardware library ${pkg}`);
      if (pkg === 'mqtt' && !me.rel.startsWith('plugins/mqtt/')) problems.push(`${me.rel}: only plugins/mqtt may import mqtt`);
      continue;
    }
    const target = resolveLocal(file, spec);
    const them = locate(target);
    edges.push(target);
    if (them.rel === 'src/main.ts') problems.push(`${me.rel}: nothing may import src/main.ts`);
    if (them.area === 'src' && them.folder === 'daemon' && me.folder !== 'daemon' && me.rel !== 'src/main.ts')
      problems.push(`${me.rel}: only src/main.ts may import the composition (${them.rel})`);
    if (SETTINGS_SCHEMA.test(me.rel) && them.rel !== SDK_SETTINGS) {
      problems.push(`${me.rel}: a settings schema imports only @sinclair/typebox and ${SDK_SETTINGS}, not ${them.rel}`);
      continue;
    }
    if (me.rel === SDK_SETTINGS && them.rel !== 'src/config/setting-schema.ts')
      problems.push(`${me.rel}: imports only src/config/setting-schema.ts (the configuration schema loads it), not ${them.rel}`);
    if ((me.rel === SDK_API || (me.area === 'src' && me.folder === 'api')) && !(them.area === 'src' && them.folder === 'api'))
      problems.push(`${me.rel}: the wire types import only src/api, not ${them.rel}`);
    if (me.rel === SECTIONS_FILE) {
      if (!SETTINGS_SCHEMA.test(them.rel))
        problems.push(`${me.rel}: exports only plugins' and devices' settings-schema.ts, not ${them.rel}`);
      continue;
    }
    if (me.area === 'plugins' || me.area === 'devices') {
      const own = them.area === me.area && them.folder === me.folder;
      const sdk = them.area === 'src' && them.folder === 'sdk';
      const driver = (DRIVERS_FOR[`${me.area}/${me.folder}`] ?? []).includes(`${them.area}/${them.folder}`);
      if (!own && !sdk && !driver) problems.push(`${me.rel}: ${me.area}/** may import only src/sdk and its own files, not ${them.rel}`);
      continue;
    }
    if (me.area === 'src' && them.area !== 'src') {
      problems.push(`${me.rel}: the kernel may not import ${them.rel}`);
      continue;
    }
    if (me.area === 'src' && me.folder !== 'main' && them.folder !== me.folder) {
      const mine = LAYERS[me.folder];
      const theirs = LAYERS[them.folder];
      if (mine === undefined)
        problems.push(`${me.rel}: src/${me.folder} is not a known layer folder (add it to scripts/check-boundaries.mjs)`);
      else if (theirs === undefined) problems.push(`${me.rel}: imports ${them.rel} outside the known layers`);
      else if (theirs > mine) problems.push(`${me.rel}: layer ${mine} (src/${me.folder}) may not import layer ${theirs} (${them.rel})`);
      if (me.folder === 'agent' && them.folder === 'llm' && !them.rel.startsWith('src/llm/spec/')) {
        problems.push(`${me.rel}: src/agent sees LLMs only through src/llm/spec, not ${them.rel}`);
      }
    }
  }
  graph.set(file, edges);
}

// Every plugin's and device's settings schema is composed, under its folder's name.
let sectionsText = '';
try {
  sectionsText = readFileSync(join(root, SECTIONS_FILE), 'utf8');
} catch {
  // A tree without the file (the tests' fixtures) has no sections to compose.
}
for (const file of files) {
  const match = SETTINGS_SCHEMA.exec(relative(root, file).split(sep).join('/'));
  if (!match) continue;
  const line = `export { settingsSchema as ${match[2]} } from '../../${match[1]}/${match[2]}/settings-schema.js';`;
  if (!sectionsText.includes(line)) problems.push(`${SECTIONS_FILE}: misses the line for ${match[0]}: ${line}`);
}

// Cycle detection (depth-first, reporting each cycle once).
const state = new Map();
const stack = [];
function visit(node) {
  state.set(node, 'open');
  stack.push(node);
  for (const next of graph.get(node) ?? []) {
    if (!graph.has(next)) continue;
    if (state.get(next) === 'open') {
      const cycle = stack
        .slice(stack.indexOf(next))
        .concat(next)
        .map((f) => relative(root, f));
      problems.push(`import cycle: ${cycle.join(' -> ')}`);
    } else if (!state.has(next)) visit(next);
  }
  stack.pop();
  state.set(node, 'done');
}
for (const file of graph.keys()) if (!state.has(file)) visit(file);

if (problems.length > 0) {
  for (const p of problems) console.error(p);
  console.error(`${problems.length} import-boundary problem(s)`);
  process.exit(1);
}
console.log(`import boundaries ok (${files.length} files)`);

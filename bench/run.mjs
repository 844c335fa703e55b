#!/usr/bin/env node
// `npm run bench`: one JSON object per line, {"name", "unit", "value", "n", ...}. Speed and memory
// goals are checked here, never by timed assertions in tests. Each bench/<name>.mjs exports
// run(emit); `npm run bench -- startup` runs only the named ones. Needs a build (npm run bench builds).
// `--quick` (bench/quick.mjs) runs each with few iterations, as CI does so that none can rot: its
// lines say `quick: true` and judge no goal.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const ALL = [
  'startup',
  'cli-roundtrip',
  'agent-turn',
  'lua-adapter',
  'plugin-rpc',
  'embed',
  'nlp',
  'memory',
  'knowledge',
  'home',
  'home-summary',
  'mqtt',
  'webui',
  'faults',
  'intent',
  'intent-e2e',
  'vad',
  'voice-turn',
  'wake-word',
  'voice-stream',
  'voice-satellite',
  'voice-commands',
  'seq',
  'soak',
];
const args = process.argv.slice(2);
// Set before any benchmark module loads: their sizes are read once, at import.
if (args.includes('--quick')) process.env.BENCH_QUICK = '1';
const names = args.filter((arg) => arg !== '--quick');
const wanted = names.length > 0 ? names : ALL;
const { quick } = await import('./quick.mjs');
/** A quick line: marked, and every goal_met in it (at any depth) left unjudged. */
const unjudged = (value) =>
  value === null || typeof value !== 'object'
    ? value
    : Array.isArray(value)
      ? value.map(unjudged)
      : Object.fromEntries(Object.entries(value).map(([k, v]) => [k, k === 'goal_met' ? null : unjudged(v)]));
const emit = (o) => process.stdout.write(`${JSON.stringify(quick ? { ...unjudged(o), quick: true } : o)}\n`);

let failed = 0;
for (const name of wanted) {
  const file = join(here, `${name}.mjs`);
  if (!existsSync(file)) {
    process.stderr.write(`bench: no benchmark named ${name}\n`);
    failed++;
    continue;
  }
  try {
    const { run } = await import(file);
    await run(emit);
  } catch (error) {
    process.stderr.write(`bench ${name} failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    failed++;
  }
}
process.exit(failed > 0 ? 1 : 0);

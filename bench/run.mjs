#!/usr/bin/env node
// `npm run bench`: one JSON object per line, {"name", "unit", "value", "n", ...}. Speed and memory
// goals are checked here, never by timed assertions in tests. Each bench/<name>.mjs exports
// run(emit); `npm run bench -- startup` runs only the named ones. Needs a build (npm run bench builds).
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const ALL = [
  'startup',
  'agent-turn',
  'lua-adapter',
  'plugin-rpc',
  'embed',
  'nlp',
  'memory',
  'knowledge',
  'home',
  'mqtt',
  'webui',
  'faults',
  'intent',
  'intent-e2e',
  'vad',
  'voice-turn',
  'wake-word',
  'voice-stream',
];
const wanted = process.argv.slice(2).length > 0 ? process.argv.slice(2) : ALL;
const emit = (o) => process.stdout.write(`${JSON.stringify(o)}\n`);

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

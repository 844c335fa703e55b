/**
 * Nothing acknowledged is lost on kill -9: a child process ingests events into one memory.db
 * (append, then prune into documents) and is SIGKILLed at a random moment, many times over. After
 * every kill the database passes integrity_check and every acknowledged event is exactly once in
 * the context window or in a document's source events (never lost, never both).
 *
 * Runs the built child (dist/): `npm run build` first. HA_MEMORY_CRASH_ITERATIONS and
 * HA_MEMORY_CRASH_SEED override the defaults to reproduce or lengthen a run.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import BetterSqlite3 from 'better-sqlite3';
import t from 'tap';
import { tempDir } from '../fixtures/support.js';

const ITERATIONS = Number(process.env.HA_MEMORY_CRASH_ITERATIONS ?? 12);
const SEED = Number(process.env.HA_MEMORY_CRASH_SEED ?? Date.now() % 2 ** 31);
const MAX_KILL_DELAY_MS = 300;
const CHILD = fileURLToPath(new URL('./fixtures/ingest-child.mjs', import.meta.url));
const BUILT = fileURLToPath(new URL('../../../dist/src/memory/context-window.js', import.meta.url));

/** mulberry32, so a failing run can be repeated with HA_MEMORY_CRASH_SEED. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = a;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

/** Runs the child until it is killed `delayMs` after it is ready; returns the acknowledged ids. */
async function ingestUntilKilled(file: string, prefix: string, delayMs: number): Promise<{ acked: string[]; signal: string | null }> {
  const child = spawn(process.execPath, [CHILD, file, prefix], { stdio: ['ignore', 'pipe', 'inherit'] });
  const acked: string[] = [];
  let timer: NodeJS.Timeout | undefined;
  const lines = createInterface({ input: child.stdout });
  lines.on('line', (line) => {
    if (line === 'ready') timer = setTimeout(() => child.kill('SIGKILL'), delayMs);
    else if (line.startsWith('ack ')) acked.push(line.slice(4));
  });
  const [code, signal] = (await once(child, 'exit')) as [number | null, string | null];
  clearTimeout(timer);
  // Lines already in the pipe when the child died were acknowledged too.
  if (!child.stdout.readableEnded) await once(child.stdout, 'end');
  if (signal !== 'SIGKILL') throw new Error(`the child ended with code ${code} and signal ${signal} instead of SIGKILL`);
  return { acked, signal };
}

interface Stored {
  integrity: string;
  window: Map<string, number>;
  archived: Map<string, number>;
  documents: number;
}

function readStored(file: string): Stored {
  const db = new BetterSqlite3(file, { readonly: true, fileMustExist: true });
  try {
    const count = (rows: Array<{ id: string }>) => {
      const m = new Map<string, number>();
      for (const r of rows) m.set(r.id, (m.get(r.id) ?? 0) + 1);
      return m;
    };
    return {
      integrity: String(db.pragma('integrity_check', { simple: true })),
      window: count(db.prepare('SELECT id FROM context_events').all() as Array<{ id: string }>),
      archived: count(db.prepare('SELECT j.value AS id FROM documents d, json_each(d.source_event_ids) j').all() as Array<{ id: string }>),
      documents: (db.prepare('SELECT count(*) AS n FROM documents').get() as { n: number }).n,
    };
  } finally {
    db.close();
  }
}

t.test(`acknowledged context events survive SIGKILL during ingestion and pruning (${ITERATIONS} kills)`, async (t) => {
  if (!existsSync(BUILT)) {
    t.fail('dist/ is missing: run `npm run build` before this test');
    return;
  }
  t.comment(`seed ${SEED} (set HA_MEMORY_CRASH_SEED=${SEED} to repeat this run)`);
  const rand = random(SEED);
  const file = join(tempDir(t, 'ha-memory-crash-'), 'memory.db');
  const acknowledged: string[] = [];
  let failures = 0;
  for (let i = 0; i < ITERATIONS && failures === 0; i++) {
    const { acked } = await ingestUntilKilled(file, `k${i}`, 20 + rand() * MAX_KILL_DELAY_MS);
    acknowledged.push(...acked);
    const stored = readStored(file);
    const problems: string[] = [];
    if (stored.integrity !== 'ok') problems.push(`integrity_check: ${stored.integrity}`);
    const lost = acknowledged.filter((id) => !stored.window.has(id) && !stored.archived.has(id));
    if (lost.length > 0) problems.push(`${lost.length} acknowledged events lost: ${lost.slice(0, 5).join(', ')}`);
    const twice = acknowledged.filter((id) => (stored.window.get(id) ?? 0) + (stored.archived.get(id) ?? 0) > 1);
    if (twice.length > 0) problems.push(`${twice.length} events stored twice: ${twice.slice(0, 5).join(', ')}`);
    if (stored.window.size > 13)
      problems.push(`the window holds ${stored.window.size} events; pruning should keep it at 12 (+1 in flight)`);
    if (problems.length > 0) failures++;
    t.same(problems, [], `kill ${i + 1}: ${acked.length} acknowledged, ${stored.window.size} in the window, ${stored.documents} documents`);
  }
  const final = readStored(file);
  t.ok(final.documents > 0, 'pruning archived events into documents during the run');
  t.ok(acknowledged.length >= ITERATIONS, `events were acknowledged (${acknowledged.length})`);
});

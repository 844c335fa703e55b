/**
 * recordInput is the acknowledgement point of a turn: a child process records inputs through the
 * real MemoryService, says so, and is SIGKILLed while it would be waiting for the model. After
 * the kill the database still holds every recorded input, which the agent's history skips until
 * its answer arrives, and a later remember completes it.
 *
 * The test file is its own child: with HA_MEMORY_RECORD_CHILD set it runs the child side.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { TimerScheduler } from '../../../src/memory/maintenance.js';
import { MemoryService } from '../../../src/memory/memory-service.js';
import { systemClock } from '../../../src/shared/clock.js';
import { Store } from '../../../src/store/store.js';
import { silentLogs } from '../fixtures/support.js';

const IDS = ['k1', 'k2', 'k3'];
const T0 = Date.parse('2024-05-06T08:00:00.000Z');
const noTimers: TimerScheduler = { set: () => undefined, clear: () => {} };

async function open(dir: string): Promise<{ store: Store; memory: MemoryService }> {
  const log = silentLogs().child('memory');
  const store = new Store({
    databases: [{ name: 'memory', file: join(dir, 'memory.db'), synchronous: 'FULL' }],
    busyTimeoutMs: 5000,
    startupCheck: 'quick',
    log,
    clock: systemClock,
  });
  await store.start();
  const memory = new MemoryService({
    database: () => store.database('memory'),
    limits: () => ({ max_context_size: 30, prompt_documents: 3 }),
    dataDir: dir,
    clock: systemClock,
    log,
    timers: noTimers,
  });
  await memory.start();
  return { store, memory };
}

async function child(dir: string): Promise<void> {
  const { memory } = await open(dir);
  await memory.remember({
    id: 'k0',
    timestamp: T0,
    source: 'cli',
    channel: 'cli',
    peer: 'Anna',
    input: 'Is the garage door shut?',
    response: 'Yes, it is shut.',
    tools: [],
  });
  for (const [i, id] of IDS.entries()) {
    await memory.recordInput({ id, timestamp: T0 + (i + 1) * 1000, source: 'cli', channel: 'cli', peer: 'Anna', input: `input ${id}` });
    process.stdout.write(`recorded ${id}\n`);
  }
  // Where the model would now be thinking: the parent kills us here.
  setInterval(() => {}, 60_000);
}

async function tests(): Promise<void> {
  const { default: t } = await import('tap');
  const { tempDir } = await import('../fixtures/support.js');

  t.test('inputs recorded before a kill -9 are in the window after restart', async (t) => {
    const dir = tempDir(t);
    const loader = process.execArgv.filter((arg) => /swc-register/.test(arg) || arg === '--enable-source-maps');
    const proc = spawn(process.execPath, [...loader, fileURLToPath(import.meta.url)], {
      env: { ...process.env, HA_MEMORY_RECORD_CHILD: dir },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const recorded: string[] = [];
    createInterface({ input: proc.stdout }).on('line', (line) => {
      if (!line.startsWith('recorded ')) return;
      recorded.push(line.slice('recorded '.length));
      if (recorded.length === IDS.length) proc.kill('SIGKILL');
    });
    const [code, signal] = (await once(proc, 'exit')) as [number | null, string | null];
    t.equal(signal, 'SIGKILL', `killed (exit code ${code})`);
    t.same(recorded, IDS, 'every input was acknowledged before the kill');

    const { store, memory } = await open(dir);
    t.teardown(async () => {
      await memory.stop();
      await store.stop();
    });
    const window = memory.parts().stores.window;
    for (const id of IDS) t.match(window.get(id), { input: `input ${id}`, response: '' }, `${id} survived without its answer`);
    t.same(
      memory.conversation().messages('cli'),
      [
        { role: 'user', content: 'Is the garage door shut?' },
        { role: 'assistant', content: 'Yes, it is shut.' },
      ],
      'unanswered inputs are not history',
    );
    await memory.remember({
      id: 'k3',
      timestamp: T0 + 3000,
      source: 'cli',
      channel: 'cli',
      peer: 'Anna',
      input: 'input k3',
      response: 'answered after the restart',
      tools: [],
    });
    t.equal(window.get('k3')?.response, 'answered after the restart', 'remember completes the recorded event');
    t.equal(window.size(), IDS.length + 1, 'no event twice');
  });
}

const childDir = process.env.HA_MEMORY_RECORD_CHILD;
if (childDir) await child(childDir);
else await tests();

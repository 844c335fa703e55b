import { join } from 'node:path';
import t from 'tap';
import { MemoryService } from '../../../src/memory/memory-service.js';
import { systemClock } from '../../../src/shared/clock.js';
import { Store } from '../../../src/store/store.js';
import { silentLogs, tempDir } from '../fixtures/support.js';

async function service(t: Parameters<typeof tempDir>[0]) {
  const dir = tempDir(t);
  const log = silentLogs().child('memory');
  const store = new Store({
    databases: [{ name: 'memory', file: join(dir, 'memory.db'), synchronous: 'FULL' }],
    busyTimeoutMs: 2000,
    startupCheck: 'quick',
    log,
    clock: systemClock,
  });
  await store.start();
  const memory = new MemoryService({
    database: () => store.database('memory'),
    limits: () => ({ max_context_size: 30, prompt_documents: 3 }),
    clock: systemClock,
    log,
  });
  await memory.start();
  t.teardown(async () => {
    await memory.stop();
    await store.stop();
  });
  return memory;
}

t.test('turns are remembered, recalled into the prompt block, and reachable by plugins', async (t) => {
  const memory = await service(t);
  t.equal(await memory.promptBlock('anything'), await memory.promptBlock('anything'), 'stable before any memory');
  t.ok(
    memory.tools().some((tool) => tool.name === 'memory_recall'),
    'the tools are offered while running',
  );
  await memory.remember({
    id: 'in-1',
    timestamp: Date.parse('2026-11-01T10:00:00Z'),
    source: 'cli',
    channel: 'cli',
    peer: 'Anna',
    input: 'The boiler service is booked for Friday at nine.',
    response: 'Noted.',
    tools: [],
  });
  await memory.remember({
    id: 'in-1',
    timestamp: 0,
    source: 'cli',
    channel: 'cli',
    peer: 'Anna',
    input: 'duplicate',
    response: '',
    tools: [],
  });
  const block = await memory.promptBlock('When is the boiler service?');
  t.match(block, /^- \(2026-11-01\) .*boiler service is booked for Friday/);
  t.notMatch(block, /duplicate/, 'a turn is stored once');
  t.match(await memory.promptBlock('zebra saxophone quantum'), /no record/);

  const plugin = memory.pluginMemory();
  const hits = await plugin.recall('boiler', { limit: 2 });
  t.match(hits[0], { text: /boiler/, source: 'in-1', at: '2026-11-01T10:00:00.000Z' });
  await plugin.commit([{ subject: 'Anna', relation: 'likes', object: 'green tea' }], { source: 'plugin:test' });
  t.ok(memory.tools().length > 0);
  await memory.stop();
  t.same(memory.tools(), [], 'no tools once stopped');
  await t.rejects(plugin.recall('boiler'), { code: 'HA_ERR_UNAVAILABLE' });
});

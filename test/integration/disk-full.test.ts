/**
 * A real full disk: the data directory on a small tmpfs (in a private mount namespace, as root),
 * filled until the kernel answers ENOSPC. Then every write path says so with HA_ERR_STORE_FULL
 * and keeps what it had: the state_db health check fails, `config set` fails naming the key and
 * the old value stays, memory's recordInput and remember reject, `kb add` (text, attachments,
 * import, attach) fails leaving no folder, file or media behind. Once the filler is removed the
 * same running parts work again, without a restart. First with the parts in-process (to see the
 * exact errors), then the built daemon through homeagentctl.
 */
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { BUILTIN_DEFINITIONS } from '../../src/config/definitions.js';
import { defaultConfig, loadConfig } from '../../src/config/loader.js';
import { SettingsRegistry } from '../../src/config/settings-registry.js';
import { EventBus } from '../../src/events/event-bus.js';
import { KnowledgeService } from '../../src/knowledge/knowledge-service.js';
import { MemoryService, type RememberedTurn } from '../../src/memory/memory-service.js';
import { systemClock } from '../../src/shared/clock.js';
import { isHomeAgentError } from '../../src/shared/errors.js';
import { MediaStore } from '../../src/store/media-store.js';
import { Store } from '../../src/store/store.js';
import { stateDbComponent } from '../../src/supervisor/components.js';
import { runCtl } from '../helpers/daemon.js';
import { startDaemon } from '../helpers/in-process-daemon.js';
import { fillDisk, inSmallDiskNamespace, mountSmallDisk, rerunInSmallDiskNamespace, smallDiskUnavailable } from '../helpers/small-disk.js';
import { until } from '../helpers/until.js';
import { captureLogs } from '../unit/fixtures/support.js';
import { SAMPLES } from '../unit/knowledge/fixtures/media-samples.js';

const DISK_BYTES = 24 * 1024 * 1024;

/** Every file and folder under `dir`, hidden ones included (kept copies, temporary files), sorted. */
function tree(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return (readdirSync(dir, { recursive: true }) as string[]).sort();
}

function turn(id: string, input: string): RememberedTurn {
  return { id, timestamp: Date.now(), source: 'test', channel: 'cli', peer: 'owner', input, response: 'noted', tools: [] };
}

async function inProcess(t: Test): Promise<void> {
  const dataDir = mountSmallDisk(t, DISK_BYTES);
  const captured = captureLogs();
  const logs = captured.logs;
  const store = new Store({
    databases: [
      { name: 'state', file: join(dataDir, 'state.db'), synchronous: 'FULL' },
      { name: 'memory', file: join(dataDir, 'memory.db'), synchronous: 'FULL' },
      { name: 'knowledge', file: join(dataDir, 'knowledge.db'), synchronous: 'NORMAL' },
    ],
    busyTimeoutMs: 2000,
    startupCheck: 'quick',
    log: logs.child('store'),
    clock: systemClock,
  });
  await store.start();
  t.teardown(() => store.stop());
  const settings = new SettingsRegistry({
    database: () => store.database('state'),
    definitions: BUILTIN_DEFINITIONS,
    loaded: loadConfig({ env: {}, systemFile: '/nonexistent/homeagent/config.yaml' }),
    events: new EventBus(logs.child('events')),
    logs,
    clock: systemClock,
  });
  await settings.start();
  t.teardown(() => settings.stop());
  const memory = new MemoryService({
    database: () => store.database('memory'),
    limits: () => ({ max_context_size: 30, prompt_documents: 3 }),
    memory: () => defaultConfig().core.memory,
    dataDir,
    clock: systemClock,
    log: logs.child('memory'),
    timers: { set: () => undefined, clear: () => {} },
  });
  await memory.start();
  t.teardown(() => memory.stop());
  const media = new MediaStore({ dir: join(dataDir, 'media'), maxBytes: () => 8 * 1024 * 1024 });
  const knowledge = new KnowledgeService({
    database: () => store.database('knowledge'),
    dataDir,
    media,
    settings: () => ({ ...defaultConfig().core.knowledge, watch: false }),
    clock: systemClock,
    log: logs.child('knowledge'),
  });
  await knowledge.start(new AbortController().signal);
  await knowledge.whenIdle();
  t.teardown(() => knowledge.stop());
  const health = () => stateDbComponent(() => store.database('state').checkWritable());
  const inbox = join(dataDir, 'inbox');
  mkdirSync(inbox);
  writeFileSync(join(inbox, 'a.md'), 'The fuse box is in the cellar.');
  writeFileSync(join(inbox, 'b.md'), 'The water main is under the sink.');

  // With room: everything works.
  settings.set('core.name', 'Kitchen', 'cli');
  await memory.recordInput(turn('in-1', 'My sister Anna lives in Lyon.'));
  await memory.remember(turn('in-1', 'My sister Anna lives in Lyon.'));
  await knowledge.create('house/boiler', 'Serviced every October.');
  t.equal(health().status, 'ok');
  const library = tree(join(dataDir, 'knowledge'));
  const mediaFiles = tree(join(dataDir, 'media'));

  const filler = fillDisk(dataDir);
  t.ok(filler.bytes > 0, `the disk is full (the filler took ${filler.bytes} bytes)`);

  const failed = health();
  t.equal(failed.status, 'failed', 'health: state_db failed');
  t.match(failed.detail, /^HA_ERR_STORE_FULL: the disk is full: the state database .*state\.db could not be written/);

  const set = t.throws(() => settings.set('core.name', 'Hall', 'cli')) as Error;
  t.ok(isHomeAgentError(set, 'HA_ERR_STORE_FULL'), `config set: ${set.message}`);
  t.match(set.message, /^core\.name was not changed and stays "Kitchen": the disk is full/);
  t.equal(settings.get('core.name').value, 'Kitchen', 'the old value stays');

  await t.rejects(memory.recordInput(turn('in-2', 'The plumber comes on Tuesday.')), {
    code: 'HA_ERR_STORE_FULL',
    message: /the memory database .*memory\.db could not be written/,
  });
  await t.rejects(memory.remember(turn('in-3', 'Our dog is called Rex.')), { code: 'HA_ERR_STORE_FULL' });

  await t.rejects(
    knowledge.create('recipes/soup/tomato', 'Simmer for twenty minutes. '.repeat(200), {
      media: [{ file_name: 'soup.png', data: SAMPLES.png }],
    }),
    { code: 'HA_ERR_STORE_FULL' },
  );
  await t.rejects(knowledge.attach('house/boiler', { file_name: 'noise.wav', data: SAMPLES.wav }), { code: 'HA_ERR_STORE_FULL' });
  await t.rejects(knowledge.create('house/boiler', 'Replaced in 2024.', { overwrite: true }), { code: 'HA_ERR_STORE_FULL' });
  await t.rejects(knowledge.importDir(inbox, { category: 'notes' }), {
    code: 'HA_ERR_STORE_FULL',
    message: /^import of .*inbox stopped at a\.md \(0 of 2 files done, none was imported\): /,
  });
  t.same(tree(join(dataDir, 'knowledge')), library, 'kb: no phantom category, no half entry, no kept copy');
  t.same(tree(join(dataDir, 'media')), mediaFiles, 'kb: no media file and no folder left');
  t.equal(knowledge.get('house/boiler')?.content, 'Serviced every October.', 'the entry that was there is untouched');
  t.same(
    knowledge.list().map((e) => e.name),
    ['house/boiler'],
  );

  filler.free();
  t.equal(health().status, 'ok', 'with room again: state_db ok');
  t.equal(settings.set('core.name', 'Hall', 'cli').value, 'Hall', 'config set works');
  await memory.recordInput(turn('in-2', 'The plumber comes on Tuesday.'));
  await memory.remember(turn('in-2', 'The plumber comes on Tuesday.'));
  t.ok(
    memory
      .conversation()
      .messages('cli')
      .some((m) => JSON.stringify(m.content).includes('plumber')),
    'memory took the input',
  );
  await knowledge.create('recipes/soup/tomato', 'Simmer for twenty minutes.', { media: [{ file_name: 'soup.png', data: SAMPLES.png }] });
  t.match(await knowledge.importDir(inbox, { category: 'notes' }), { imported: ['notes/a', 'notes/b'] });
  t.match(await knowledge.reindex(), { indexed: 0, removed: 0 }, 'the index and the files agree');
}

async function daemon(t: Test): Promise<void> {
  const dataDir = mountSmallDisk(t, DISK_BYTES);
  const homeagent = await startDaemon(t, {
    dataDir,
    env: { HOMEAGENT_SUPERVISOR_HEARTBEAT_INTERVAL_MS: '200', HOMEAGENT_PLUGIN_WEBUI_ENABLED: 'false' },
  });
  await homeagent.waitForReady();
  const ctl = (...args: string[]) => runCtl(dataDir, [...args, '--json']);
  const stateDb = async () => {
    const answer = (await ctl('health')).json() as { components: Array<{ name: string; status: string; detail: string }> };
    return answer.components.find((c) => c.name === 'state_db');
  };
  t.equal((await ctl('config', 'set', 'core.name', 'Kitchen')).code, 0);
  t.equal((await ctl('kb', 'add', 'house/boiler', '--content', 'Serviced every October.')).code, 0);
  const library = tree(join(dataDir, 'knowledge'));

  const filler = fillDisk(dataDir);
  const failed = await until(
    'state_db failed',
    async () => {
      const db = await stateDb();
      return db?.status === 'failed' ? db : undefined;
    },
    20_000,
  );
  t.match(failed.detail, /HA_ERR_STORE_FULL: the disk is full: the state database/, 'homeagentctl health: state_db failed');

  const set = await ctl('config', 'set', 'core.name', 'Hall');
  t.equal(set.code, 1);
  t.match(set.json(), { ok: false, error: { code: 'HA_ERR_STORE_FULL', message: /^core\.name was not changed and stays "Kitchen"/ } });
  t.match((await ctl('config', 'get', 'core.name')).json(), { value: 'Kitchen', source: 'runtime' }, 'the old value stays');

  const add = await ctl('kb', 'add', 'recipes/soup/tomato', '--content', 'Simmer for twenty minutes.');
  t.not(add.code, 0, 'kb add fails');
  t.match(add.json(), { ok: false, error: { code: 'HA_ERR_STORE_FULL' } });
  t.same(tree(join(dataDir, 'knowledge')), library, 'no phantom category');

  // A turn (offline here: no model) whose input memory could not store says so, never a silent "done".
  const chat = await runCtl(dataDir, ['chat', '-m', 'The spare key is in the blue flower pot.']);
  t.match(chat.stdout, /I answered, but could not remember this: the disk is full\./, 'the turn says it was not remembered');

  filler.free();
  await until('state_db ok', async () => ((await stateDb())?.status === 'ok' ? true : undefined), 20_000);
  t.pass('health: state_db ok again');
  t.equal((await ctl('config', 'set', 'core.name', 'Hall')).code, 0, 'config set works again');
  t.equal((await ctl('kb', 'add', 'recipes/soup/tomato', '--content', 'Simmer for twenty minutes.')).code, 0, 'kb add works again');
  t.equal(homeagent.exit, undefined, 'the same daemon, never restarted');
}

if (!inSmallDiskNamespace()) {
  const reason = await smallDiskUnavailable();
  if (reason !== null) t.plan(0, `skipped: ${reason}`);
  else await rerunInSmallDiskNamespace(t, import.meta.url, 'a full disk, on a small tmpfs in a private mount namespace');
} else {
  t.test('the parts in-process', inProcess);
  t.test('the daemon through homeagentctl', daemon);
}

import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { TIMER_FILE, TIMER_LEVEL, TimerPlugin } from '../../../../plugins/timer/index.js';
import type { StoredTimer } from '../../../../plugins/timer/timer-file.js';
import { IoManager } from '../../../../src/io/io-manager.js';
import { laterTarget } from '../../../../src/io/later-delivery.js';
import { CAPABILITY, type OutputChannel } from '../../../../src/io/types.js';
import type { PluginIo } from '../../../../src/sdk/plugin.js';
import { createTestPluginContext, type TestPluginContext } from '../../../helpers/plugin-context.js';
import { captureLogs, type Teardown, tempDir } from '../../fixtures/support.js';

const DEFAULTS = { max_duration_s: 86400, max_timers: 100 };

interface Running {
  tc: TestPluginContext;
  plugin: TimerPlugin;
  file: string;
  stop(): Promise<void>;
}

/** A started timer plugin on `dataDir`, stopped at teardown unless the test stops it first. */
async function startTimer(
  t: Teardown,
  dataDir: string,
  options: { settings?: Record<string, unknown>; log?: ReturnType<typeof captureLogs>; io?: Partial<PluginIo> } = {},
): Promise<Running> {
  const tc = createTestPluginContext({ name: 'timer', dataDir, settings: { ...DEFAULTS, ...options.settings } });
  const logged = options.log ? { ...tc.context, log: options.log.logs.child('plugin.timer') } : tc.context;
  const context = options.io ? { ...logged, io: { ...logged.io, ...options.io } } : logged;
  const plugin = new TimerPlugin(context);
  await plugin.start();
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await plugin.stop();
  };
  t.teardown(stop);
  return { tc, plugin, file: join(tc.context.paths.data, TIMER_FILE), stop };
}

function storedTimers(file: string): StoredTimer[] {
  return (JSON.parse(readFileSync(file, 'utf8')) as { timers: StoredTimer[] }).timers;
}

function writeTimers(dataDir: string, timers: unknown[]): string {
  const file = join(dataDir, 'plugin-data', 'timer', TIMER_FILE);
  // createTestPluginContext makes the folder; the file must exist before the plugin starts.
  createTestPluginContext({ name: 'timer', dataDir });
  writeFileSync(file, JSON.stringify({ version: 1, timers }));
  return file;
}

t.test('set, list and cancel', async (t) => {
  const { tc, file } = await startTimer(t, tempDir(t));
  t.same(
    tc.tools
      .list()
      .filter((tool) => tool.owner === 'plugin:timer')
      .map((tool) => tool.name),
    ['timer_adjust', 'timer_cancel', 'timer_cancel_all', 'timer_list', 'timer_pause', 'timer_resume', 'timer_set'],
  );
  for (const name of ['timer_set', 'timer_cancel', 'timer_cancel_all', 'timer_pause', 'timer_resume', 'timer_adjust']) {
    t.equal(tc.tools.get(name)?.tier, 'act', `${name} acts`);
    t.notOk(tc.tools.get(name)?.parallel_safe, `${name} is not parallel safe`);
  }
  t.equal(tc.tools.get('timer_list')?.tier, 'read');
  t.equal(tc.tools.get('timer_list')?.parallel_safe, true);

  const before = Date.now();
  const set = (await tc.call('timer_set', { duration: '1h 30m', message: 'check the oven' }, { channel: 'kitchen', source: 'voice' })) as {
    id: string;
    fires_at: string;
    in_s: number;
  };
  t.match(set.id, /^t[0-9a-f]{6}$/);
  t.equal(set.in_s, 5400);
  const firesAt = Date.parse(set.fires_at);
  t.ok(firesAt >= before + 5400_000 && firesAt <= Date.now() + 5400_000, 'fires_at is 90 minutes from now');
  t.same(
    storedTimers(file).map((timer) => ({ id: timer.id, channel: timer.channel, source: timer.source })),
    [{ id: set.id, channel: 'kitchen', source: 'voice' }],
    'the timer is on disk once timer_set answers',
  );

  await tc.call('timer_set', { duration: 60, message: 'tea' });
  const list = (await tc.call('timer_list', {})) as { timers: Array<{ id: string; message: string; remaining_s: number }> };
  t.same(
    list.timers.map((timer) => timer.message),
    ['tea', 'check the oven'],
    'sorted by expiry',
  );
  t.ok((list.timers[1]?.remaining_s ?? 0) > 5390, 'remaining time is reported');

  t.same(await tc.call('timer_cancel', { id: set.id }), { cancelled: set.id, message: 'check the oven' });
  t.same(
    ((await tc.call('timer_list', {})) as { timers: Array<{ message: string }> }).timers.map((timer) => timer.message),
    ['tea'],
  );
  t.same(
    storedTimers(file).map((timer) => timer.message),
    ['tea'],
    'the cancel is on disk',
  );
  await t.rejects(tc.call('timer_cancel', { id: set.id }), { name: 'ToolError', info: { reason: 'not_found', field: 'id' } });
});

t.test('a timer set from the CLI rings on the first announcement channel; one set from a chat app stays there', async (t) => {
  const io = new IoManager();
  const channel = (name: string, synchronous: boolean): OutputChannel => ({
    name,
    description: name,
    capabilities: CAPABILITY.TEXT,
    synchronous,
    owner: 'test',
    send: async () => {},
  });
  // The CLI answers only a waiting request; the speaker and the chat app deliver what is sent.
  for (const c of [channel('cli', true), channel('speaker', false), channel('qq', false)]) io.registerChannel(c);
  const log = captureLogs();
  const { tc } = await startTimer(t, tempDir(t), {
    log,
    io: { laterTarget: (origin) => laterTarget(io, origin, ['speaker', 'webui']) },
  });
  const rang = tc.nextInjected();
  const set = (await tc.call('timer_set', { duration: '1s', message: 'tea' }, { channel: 'cli', source: 'cli' })) as { rings_on: string };
  t.equal(set.rings_on, 'on speaker: cli cannot take a message now (it answers only a waiting request)', 'the person is told at once');
  const { input } = await rang;
  t.equal(input.channel, 'speaker', 'raised on the announcement channel');
  t.match(input.meta, { origin_channel: 'cli', delivery: 'announcement', origin_source: 'cli', timer_message: 'tea' });
  t.match(log.text(), /timer t\w+ fired on speaker: cli cannot take a message now/);

  const kept = tc.nextInjected();
  const chat = (await tc.call('timer_set', { duration: '1s', message: 'eggs' }, { channel: 'qq', source: 'onebot' })) as {
    rings_on: string;
  };
  t.equal(chat.rings_on, 'on qq, where it was set');
  const second = await kept;
  t.equal(second.input.channel, 'qq', 'the chat app can take it: it rings where it was set');
  t.match(second.input.meta, { origin_channel: 'qq', delivery: 'origin' });
});

t.test('an expired timer interrupts on the channel it was set from, and is removed', async (t) => {
  const { tc, file, stop } = await startTimer(t, tempDir(t));
  const injected = tc.nextInjected();
  const set = (await tc.call('timer_set', { duration: '1s', message: 'pizza' }, { channel: 'telegram:42', source: 'telegram' })) as {
    id: string;
  };
  const { input, level } = await injected;
  t.equal(level, TIMER_LEVEL);
  t.equal(level, 3);
  t.equal(input.source, 'timer');
  t.equal(input.channel, 'telegram:42');
  t.equal(input.payload, 'timer: pizza');
  t.match(input.meta, { no_memory: true, timer_id: set.id, set_at: String, origin_source: 'telegram' });
  t.notOk(input.meta && 'late_by_ms' in input.meta, 'a timer firing on time is not late');
  t.same(((await tc.call('timer_list', {})) as { timers: unknown[] }).timers, []);
  await stop();
  t.same(storedTimers(file), [], 'a fired timer is removed from the file');
});

t.test('timers survive a restart of the plugin', async (t) => {
  const dataDir = tempDir(t);
  const first = await startTimer(t, dataDir);
  const long = (await first.tc.call('timer_set', { duration: '2 hours', message: 'laundry' }, { channel: 'web' })) as {
    id: string;
    fires_at: string;
  };
  const short = (await first.tc.call('timer_set', { duration: 1, message: 'eggs' }, { channel: 'cli' })) as { id: string };
  await first.stop();

  const second = await startTimer(t, dataDir);
  const injected = await second.tc.nextInjected();
  t.equal(injected.input.channel, 'cli', 'the short timer fires in the new instance on its channel');
  t.match(injected.input.meta, { timer_id: short.id });
  t.same(first.tc.injected, [], 'the stopped instance left no JS timer behind');
  const list = (await second.tc.call('timer_list', {})) as {
    timers: Array<{ id: string; fires_at: string; channel: string; remaining_s: number }>;
  };
  t.same(list.timers, [
    {
      id: long.id,
      message: 'laundry',
      duration_s: 7200,
      remaining_s: list.timers[0]?.remaining_s,
      paused: false,
      fires_at: long.fires_at,
      channel: 'web',
    },
  ]);
  await second.stop();
  t.same(
    storedTimers(second.file).map((timer) => timer.id),
    [long.id],
  );
});

t.test('a timer that expired while the daemon was down fires right after start, saying how late', async (t) => {
  const dataDir = tempDir(t);
  const now = Date.now();
  const file = writeTimers(dataDir, [
    { id: 'tlate01', message: 'bread', fires_at: now - 60_000, set_at: now - 120_000, source: 'voice', channel: 'voice:kitchen' },
    { id: 'tlater', message: 'later', fires_at: now + 3600_000, set_at: now, source: 'cli', channel: 'cli' },
  ]);
  const { tc, stop } = await startTimer(t, dataDir);
  const { input, level } = await tc.nextInjected();
  t.equal(level, 3);
  t.equal(input.channel, 'voice:kitchen');
  t.equal(input.payload, 'timer: bread');
  t.match(input.meta, { no_memory: true, timer_id: 'tlate01', set_at: new Date(now - 120_000).toISOString() });
  t.ok(Number(input.meta?.late_by_ms) >= 60_000, `late_by_ms is reported (${String(input.meta?.late_by_ms)})`);
  await stop();
  t.same(
    storedTimers(file).map((timer) => timer.id),
    ['tlater'],
  );
});

t.test('limits and bad arguments are tool errors naming the field', async (t) => {
  const { tc } = await startTimer(t, tempDir(t), { settings: { max_timers: 2, max_duration_s: 3600 } });
  await t.rejects(tc.call('timer_set', { duration: '2 hours', message: 'x' }), {
    name: 'ToolError',
    info: { reason: 'range', field: 'duration', detail: /1 h; got 2 h/ },
  });
  await t.rejects(tc.call('timer_set', { duration: 'soonish', message: 'x' }), {
    name: 'ToolError',
    info: { reason: 'format', field: 'duration', hint: /"90s".*"1h30m".*"2 hours"/ },
  });
  await t.rejects(tc.call('timer_set', { duration: '0.5s', message: 'x' }), {
    name: 'ToolError',
    info: { reason: 'range', field: 'duration' },
  });
  await t.rejects(tc.call('timer_set', { duration: -5, message: 'x' }), {
    name: 'ToolError',
    info: { reason: 'format', field: 'duration' },
  });
  await t.rejects(tc.call('timer_set', { duration: '5m', message: '   ' }), {
    name: 'ToolError',
    info: { reason: 'required', field: 'message' },
  });
  await t.rejects(tc.call('timer_set', { message: 'x' }), /invalid arguments/, 'the schema requires a duration');
  await t.rejects(tc.call('timer_set', { duration: '5m' }), /invalid arguments/, 'the schema requires a message');

  t.ok(await tc.call('timer_set', { duration: '1h', message: 'one' }), 'exactly the maximum duration is fine');
  t.ok(await tc.call('timer_set', { duration: '10m', message: 'two' }));
  await t.rejects(tc.call('timer_set', { duration: '10m', message: 'three' }), {
    name: 'ToolError',
    info: { reason: 'rejected', detail: /2 timers are pending.*at once is 2/ },
  });
  tc.settings.set('max_timers', 3);
  t.ok(await tc.call('timer_set', { duration: '10m', message: 'three' }), 'the limit is read live');
});

t.test('the default limit is 24 hours', async (t) => {
  const { tc } = await startTimer(t, tempDir(t));
  t.ok(await tc.call('timer_set', { duration: '24h', message: 'a day' }));
  await t.rejects(tc.call('timer_set', { duration: '24h 1s', message: 'too long' }), {
    name: 'ToolError',
    info: { reason: 'range', field: 'duration' },
  });
});

t.test('a corrupt timer file is moved aside with a log line and never fails the plugin', async (t) => {
  const dataDir = tempDir(t);
  const file = writeTimers(dataDir, []);
  writeFileSync(file, '{"version":1,"timers":[{"id":"t1", "mess');
  const log = captureLogs();
  const { tc } = await startTimer(t, dataDir, { log });
  t.same(((await tc.call('timer_list', {})) as { timers: unknown[] }).timers, []);
  const aside = readdirSync(join(dataDir, 'plugin-data', 'timer')).filter((name) => name.startsWith(`${TIMER_FILE}.corrupt-`));
  t.equal(aside.length, 1, 'the corrupt file is kept next to the new one');
  t.ok(
    log.records().some((record) => record.level === 'warn' || record.level === 40),
    'a warning is logged',
  );
  t.match(log.text(), /timer file is corrupt; moved aside/);
  t.notOk(existsSync(file), 'no timer file until a timer is set');
  await tc.call('timer_set', { duration: '5m', message: 'after corruption' });
  t.same(
    storedTimers(file).map((timer) => timer.message),
    ['after corruption'],
  );
});

t.test('malformed entries are skipped, good ones kept', async (t) => {
  const dataDir = tempDir(t);
  const now = Date.now();
  writeTimers(dataDir, [
    { id: 'tgood', message: 'ok', fires_at: now + 600_000, set_at: now, source: 'cli', channel: 'cli' },
    { id: 'tbad', message: 'no time', source: 'cli', channel: 'cli' },
    'junk',
  ]);
  const log = captureLogs();
  const { tc } = await startTimer(t, dataDir, { log });
  t.same(
    ((await tc.call('timer_list', {})) as { timers: Array<{ id: string }> }).timers.map((timer) => timer.id),
    ['tgood'],
  );
  t.equal(log.text().match(/malformed timer in the timer file skipped/g)?.length, 2);
});

t.test('a file that is valid JSON of the wrong shape counts as corrupt', async (t) => {
  const dataDir = tempDir(t);
  const file = writeTimers(dataDir, []);
  writeFileSync(file, '[1,2,3]');
  const { tc } = await startTimer(t, dataDir);
  t.same(((await tc.call('timer_list', {})) as { timers: unknown[] }).timers, []);
  t.notOk(existsSync(file));
});

t.test('stop unregisters the tools', async (t) => {
  const { tc, stop } = await startTimer(t, tempDir(t));
  t.ok(tc.tools.get('timer_set'));
  await stop();
  t.notOk(tc.tools.get('timer_set'));
  t.notOk(tc.tools.get('timer_list'));
  t.notOk(tc.tools.get('timer_cancel'));
});

t.test('stop clears every JS timer', async (t) => {
  const timeouts = () => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;
  const before = timeouts();
  const { tc, stop } = await startTimer(t, tempDir(t));
  await tc.call('timer_set', { duration: '10m', message: 'a' });
  await tc.call('timer_set', { duration: '20m', message: 'b' });
  t.equal(timeouts(), before + 2, 'one JS timer per pending timer');
  await stop();
  t.equal(timeouts(), before, 'none left after stop');
});

/**
 * The timer tools behind the intent engine's timer intents (names, cancel all, pause, resume,
 * adjust) and how their state survives a restart, on a manual clock: nothing here waits for real time.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { TIMER_FILE, TimerPlugin } from '../../../../plugins/timer/index.js';
import { ManualTimerClock } from '../../../helpers/manual-timer-clock.js';
import { createTestPluginContext, type TestPluginContext } from '../../../helpers/plugin-context.js';
import { type Teardown, tempDir } from '../../fixtures/support.js';

const DEFAULTS = { max_duration_s: 86400, max_timers: 100 };
const START = Date.UTC(2026, 0, 5, 8, 0, 0);
const iso = (ms: number) => new Date(ms).toISOString();

interface Running {
  tc: TestPluginContext;
  file: string;
  stop(): Promise<void>;
}

/** A started timer plugin on `dataDir` driven by `clock`, stopped at teardown unless the test stops it first. */
async function startTimer(t: Teardown, dataDir: string, clock: ManualTimerClock, settings: Record<string, unknown> = {}): Promise<Running> {
  const tc = createTestPluginContext({ name: 'timer', dataDir, settings: { ...DEFAULTS, ...settings } });
  const plugin = new TimerPlugin(tc.context, { clock });
  await plugin.start();
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await plugin.stop();
  };
  t.teardown(stop);
  return { tc, file: join(tc.context.paths.data, TIMER_FILE), stop };
}

function fileText(file: string): string {
  return readFileSync(file, 'utf8');
}

function stored(file: string): Array<Record<string, unknown>> {
  return (JSON.parse(fileText(file)) as { timers: Array<Record<string, unknown>> }).timers;
}

interface Listed {
  id: string;
  name?: string;
  message: string;
  duration_s: number;
  remaining_s: number;
  paused: boolean;
  fires_at: string | null;
  channel: string;
}

async function list(tc: TestPluginContext): Promise<Listed[]> {
  return ((await tc.call('timer_list', {})) as { timers: Listed[] }).timers;
}

async function setTimer(tc: TestPluginContext, args: Record<string, unknown>, channel = 'voice:kitchen'): Promise<string> {
  return ((await tc.call('timer_set', args, { channel, source: 'voice' })) as { id: string }).id;
}

t.test('a named timer shows its name in the list and says it when it rings', async (t) => {
  const clock = new ManualTimerClock(START);
  const { tc } = await startTimer(t, tempDir(t), clock);
  const set = await tc.call(
    'timer_set',
    { duration: '10m', message: 'take the pizza out', name: '  pizza ' },
    { channel: 'voice:kitchen' },
  );
  t.same(set, { id: (set as { id: string }).id, name: 'pizza', fires_at: iso(START + 600_000), in_s: 600 }, 'the name comes back trimmed');
  const id = (set as { id: string }).id;
  const noName = (await tc.call('timer_set', { duration: 60, message: 'tea' })) as Record<string, unknown>;
  t.notOk('name' in noName, 'no name key for a timer without a name');
  await setTimer(tc, { duration: '20m', message: 'pasta', name: '意面' });

  await clock.advance(30_000);
  t.same(await list(tc), [
    { id: noName.id, message: 'tea', duration_s: 60, remaining_s: 30, paused: false, fires_at: iso(START + 60_000), channel: 'test' },
    {
      id,
      name: 'pizza',
      message: 'take the pizza out',
      duration_s: 600,
      remaining_s: 570,
      paused: false,
      fires_at: iso(START + 600_000),
      channel: 'voice:kitchen',
    },
    {
      id: (await list(tc))[2]?.id,
      name: '意面',
      message: 'pasta',
      duration_s: 1200,
      remaining_s: 1170,
      paused: false,
      fires_at: iso(START + 1_200_000),
      channel: 'voice:kitchen',
    },
  ]);

  await clock.advance(570_000);
  t.same(
    tc.injected.map(({ input }) => input.payload),
    ['timer: tea', 'timer "pizza": take the pizza out'],
  );
  t.match(tc.injected[1]?.input.meta, { timer_id: id, timer_name: 'pizza' });
  t.notOk(tc.injected[0]?.input.meta && 'timer_name' in tc.injected[0].input.meta, 'no timer_name for a timer without one');
  t.same(
    (await list(tc)).map((timer) => timer.name),
    ['意面'],
  );
});

t.test("a timer rings with the trust of the turn that set it, at most household's", async (t) => {
  const clock = new ManualTimerClock(START);
  const { tc, file } = await startTimer(t, tempDir(t), clock);
  await tc.call('timer_set', { duration: 60, message: 'owner' }, { channel: 'cli', source: 'cli', trust: 'owner' });
  await tc.call('timer_set', { duration: 61, message: 'mqtt' }, { channel: 'mqtt', source: 'mqtt', trust: 'untrusted' });
  t.same(
    stored(file).map((timer) => [timer.message, timer.trust]),
    [
      ['owner', 'household'],
      ['mqtt', 'untrusted'],
    ],
    'kept with the timer, so a restart does not raise it',
  );
  await clock.advance(61_000);
  t.same(
    tc.injected.map(({ input }) => [input.payload, input.sender?.trust, input.sender?.id]),
    [
      ['timer: owner', 'household', 'timer'],
      ['timer: mqtt', 'untrusted', 'timer'],
    ],
    'a reminder is not the owner speaking now; a timer an MQTT message set stays untrusted',
  );
});

t.test('a blank or too long name is refused and nothing is set', async (t) => {
  const clock = new ManualTimerClock(START);
  const { tc, file } = await startTimer(t, tempDir(t), clock);
  await setTimer(tc, { duration: '5m', message: 'kept' });
  const before = fileText(file);
  await t.rejects(tc.call('timer_set', { duration: '5m', message: 'x', name: '   ' }), {
    name: 'ToolError',
    info: { reason: 'format', field: 'name', detail: 'name is blank' },
  });
  await t.rejects(tc.call('timer_set', { duration: '5m', message: 'x', name: '意'.repeat(65) }), {
    name: 'ToolError',
    info: { reason: 'range', field: 'name', detail: 'name is longer than 64 characters' },
  });
  t.ok(await tc.call('timer_set', { duration: '5m', message: 'x', name: ` ${'n'.repeat(64)} ` }), '64 characters are fine once trimmed');
  t.equal((await list(tc)).length, 2);
  t.not(fileText(file), before, 'only the good one changed the file');
  t.equal(stored(file).length, 2);
});

t.test('pause keeps the remaining time, never rings while paused, and resume counts down again', async (t) => {
  const clock = new ManualTimerClock(START);
  const { tc, file } = await startTimer(t, tempDir(t), clock);
  const id = await setTimer(tc, { duration: '10m', message: 'eggs', name: 'eggs' });
  await clock.advance(240_000);
  t.same(await tc.call('timer_pause', { id }), { id, remaining_s: 360 });
  t.equal(clock.pending(), 0, 'a paused timer has no wake-up');
  t.match(await list(tc), [{ id, paused: true, fires_at: null, remaining_s: 360, duration_s: 600 }]);
  t.match(stored(file), [{ id, name: 'eggs', remaining_ms: 360_000, duration_ms: 600_000 }]);
  t.notOk('fires_at' in (stored(file)[0] ?? {}), 'a paused timer is stored without a moment to ring');

  await clock.advance(86_400_000);
  t.same(tc.injected, [], 'a day later it still has not rung');
  const before = fileText(file);
  await t.rejects(tc.call('timer_pause', { id }), {
    name: 'ToolError',
    info: { reason: 'rejected', field: 'id', detail: `timer ${id} is already paused` },
  });
  t.equal(fileText(file), before, 'the refusal leaves the file as it was');

  const resumedAt = clock.now();
  t.same(await tc.call('timer_resume', { id }), { id, fires_at: iso(resumedAt + 360_000), remaining_s: 360 });
  t.match(stored(file), [{ id, fires_at: resumedAt + 360_000 }]);
  t.notOk('remaining_ms' in (stored(file)[0] ?? {}));
  await t.rejects(tc.call('timer_resume', { id }), {
    name: 'ToolError',
    info: { reason: 'rejected', field: 'id', detail: /is not paused; it is running/ },
  });
  await clock.advance(359_000);
  t.same(tc.injected, []);
  await clock.advance(1000);
  t.same(
    tc.injected.map(({ input }) => input.payload),
    ['timer "eggs": eggs'],
    'rings when the time it had left has run out',
  );
});

t.test('unknown ids are refused by every tool that takes one', async (t) => {
  const clock = new ManualTimerClock(START);
  const { tc } = await startTimer(t, tempDir(t), clock);
  await setTimer(tc, { duration: '5m', message: 'kept' });
  for (const [tool, args] of [
    ['timer_cancel', { id: 'tnope00' }],
    ['timer_pause', { id: 'tnope00' }],
    ['timer_resume', { id: 'tnope00' }],
    ['timer_adjust', { id: 'tnope00', seconds: 60 }],
  ] as const) {
    await t.rejects(tc.call(tool, args), { name: 'ToolError', info: { reason: 'not_found', field: 'id', detail: /"tnope00"/ } }, tool);
  }
  t.equal((await list(tc)).length, 1);
});

t.test('adjust adds or takes away time, of paused timers too', async (t) => {
  const clock = new ManualTimerClock(START);
  const { tc, file } = await startTimer(t, tempDir(t), clock);
  const running = await setTimer(tc, { duration: '10m', message: 'bread' });
  const paused = await setTimer(tc, { duration: '10m', message: 'rice' });
  await tc.call('timer_pause', { id: paused });
  await clock.advance(60_000);

  t.same(await tc.call('timer_adjust', { id: running, seconds: 120 }), { id: running, remaining_s: 660, fires_at: iso(START + 720_000) });
  t.same(await tc.call('timer_adjust', { id: running, seconds: '-300' }), {
    id: running,
    remaining_s: 360,
    fires_at: iso(START + 420_000),
  });
  t.same(await tc.call('timer_adjust', { id: paused, seconds: -90 }), { id: paused, remaining_s: 510, fires_at: null });
  t.match(await list(tc), [
    { id: running, duration_s: 420, remaining_s: 360, paused: false },
    { id: paused, duration_s: 510, remaining_s: 510, paused: true },
  ]);
  t.match(stored(file), [
    { id: running, duration_ms: 420_000, fires_at: START + 420_000 },
    { id: paused, duration_ms: 510_000, remaining_ms: 510_000 },
  ]);
  await clock.advance(359_000);
  t.same(tc.injected, [], 'not before its adjusted time');
  await clock.advance(1000);
  t.same(
    tc.injected.map(({ input }) => input.payload),
    ['timer: bread'],
    'rings at its adjusted time; the paused one does not',
  );
});

t.test('adjust out of range is refused and changes nothing', async (t) => {
  const clock = new ManualTimerClock(START);
  const { tc, file } = await startTimer(t, tempDir(t), clock, { max_duration_s: 3600 });
  const id = await setTimer(tc, { duration: '50m', message: 'roast' });
  const before = fileText(file);
  await t.rejects(tc.call('timer_adjust', { id, seconds: 0 }), {
    name: 'ToolError',
    info: { reason: 'range', field: 'seconds', detail: /not 0; got 0/ },
  });
  await t.rejects(tc.call('timer_adjust', { id, seconds: -3601 }), {
    name: 'ToolError',
    info: { reason: 'range', field: 'seconds', detail: /from -3600 to 3600/ },
  });
  await t.rejects(tc.call('timer_adjust', { id, seconds: 601 }), {
    name: 'ToolError',
    info: { reason: 'range', field: 'seconds', detail: /3601 s left, more than the longest a timer may run \(3600 s\)/ },
  });
  await t.rejects(tc.call('timer_adjust', { id, seconds: 1.5 }), /invalid arguments.*"seconds"/, 'whole seconds only');
  await t.rejects(tc.call('timer_adjust', { id }), /invalid arguments.*"seconds"/, 'seconds is required');
  t.equal(fileText(file), before, 'every refusal leaves the file as it was');
  t.match(await list(tc), [{ id, remaining_s: 3000, duration_s: 3000 }]);
  t.same(
    await tc.call('timer_adjust', { id, seconds: 600 }),
    { id, remaining_s: 3600, fires_at: iso(START + 3_600_000) },
    'up to the limit is fine',
  );
});

t.test('taking away all the time left rings the timer now', async (t) => {
  const clock = new ManualTimerClock(START);
  const { tc, file, stop } = await startTimer(t, tempDir(t), clock);
  const running = await setTimer(tc, { duration: '5m', message: 'soup', name: 'soup' });
  const paused = await setTimer(tc, { duration: '5m', message: 'tea' }, 'telegram:42');
  await tc.call('timer_pause', { id: paused });
  await clock.advance(10_000);

  t.same(await tc.call('timer_adjust', { id: running, seconds: -600 }), { id: running, remaining_s: 0, fires_at: iso(START + 10_000) });
  t.same(await tc.call('timer_adjust', { id: paused, seconds: -300 }), { id: paused, remaining_s: 0, fires_at: iso(START + 10_000) });
  t.same(
    tc.injected.map(({ input, level }) => [input.channel, input.payload, level]),
    [
      ['voice:kitchen', 'timer "soup": soup', 3],
      ['telegram:42', 'timer: tea', 3],
    ],
    'both rang at once, on their channels, without the clock moving',
  );
  t.notOk(tc.injected[0]?.input.meta && 'late_by_ms' in tc.injected[0].input.meta, 'ringing early is not late');
  t.same(await list(tc), []);
  t.equal(clock.pending(), 0, 'no wake-up is left for them');
  await stop();
  t.same(stored(file), []);
});

t.test('cancel returns the name; cancel all cancels running and paused timers alike', async (t) => {
  const clock = new ManualTimerClock(START);
  const { tc, file } = await startTimer(t, tempDir(t), clock);
  t.same(await tc.call('timer_cancel_all', {}), { cancelled: [] }, 'nothing to cancel is not an error');

  const named = await setTimer(tc, { duration: '5m', message: 'pizza out', name: 'pizza' });
  t.same(await tc.call('timer_cancel', { id: named }), { cancelled: named, name: 'pizza', message: 'pizza out' });

  const one = await setTimer(tc, { duration: '5m', message: 'one', name: 'first' });
  const two = await setTimer(tc, { duration: '7m', message: 'two' });
  await tc.call('timer_pause', { id: two });
  t.same(await tc.call('timer_cancel_all', {}), {
    cancelled: [
      { id: one, name: 'first', message: 'one' },
      { id: two, message: 'two' },
    ],
  });
  t.same(await list(tc), []);
  t.same(stored(file), [], 'the file is empty once cancel all answers');
  t.equal(clock.pending(), 0);
  await clock.advance(3_600_000);
  t.same(tc.injected, [], 'no cancelled timer rings');
});

t.test('a restart keeps paused timers paused and running ones ringing at their time', async (t) => {
  const dataDir = tempDir(t);
  const clock = new ManualTimerClock(START);
  const first = await startTimer(t, dataDir, clock);
  const running = await setTimer(first.tc, { duration: '10m', message: 'laundry', name: 'wash' });
  const paused = await setTimer(first.tc, { duration: '20m', message: 'dough', name: 'dough' }, 'web');
  await clock.advance(300_000);
  await first.tc.call('timer_pause', { id: paused });
  await first.tc.call('timer_adjust', { id: running, seconds: 60 });
  await first.stop();
  t.equal(clock.pending(), 0, 'the stopped instance left no wake-up behind');

  await clock.advance(120_000);
  const second = await startTimer(t, dataDir, clock);
  t.same(await list(second.tc), [
    {
      id: running,
      name: 'wash',
      message: 'laundry',
      duration_s: 660,
      remaining_s: 240,
      paused: false,
      fires_at: iso(START + 660_000),
      channel: 'voice:kitchen',
    },
    { id: paused, name: 'dough', message: 'dough', duration_s: 1200, remaining_s: 900, paused: true, fires_at: null, channel: 'web' },
  ]);
  await clock.advance(239_000);
  t.same(second.tc.injected, []);
  await clock.advance(1000);
  t.same(
    second.tc.injected.map(({ input }) => input.payload),
    ['timer "wash": laundry'],
    'the running timer rings at its time in the new instance',
  );
  await clock.advance(86_400_000);
  t.equal(second.tc.injected.length, 1, 'the paused one never rings');
  t.same(await second.tc.call('timer_resume', { id: paused }), { id: paused, fires_at: iso(clock.now() + 900_000), remaining_s: 900 });
});

t.test('a timer file from before names and pausing loads as running timers', async (t) => {
  const dataDir = tempDir(t);
  const file = join(dataDir, 'plugin-data', 'timer', TIMER_FILE);
  createTestPluginContext({ name: 'timer', dataDir });
  writeFileSync(
    file,
    JSON.stringify({
      version: 1,
      timers: [
        { id: 'told001', message: 'bread', fires_at: START + 300_000, set_at: START - 300_000, source: 'voice', channel: 'voice:kitchen' },
        { id: 'told002', message: 'late', fires_at: START - 5000, set_at: START - 65_000, source: 'cli', channel: 'cli' },
      ],
    }),
  );
  const clock = new ManualTimerClock(START);
  const { tc, stop } = await startTimer(t, dataDir, clock);
  await clock.advance(0);
  t.same(
    tc.injected.map(({ input }) => [input.payload, input.meta?.late_by_ms]),
    [['timer: late', 5000]],
    'the overdue one rings right after start',
  );
  t.match(tc.injected[0]?.input.sender, { trust: 'untrusted', id: 'timer' }, 'an old file kept no trust: its timers ring untrusted');
  t.same(await list(tc), [
    {
      id: 'told001',
      message: 'bread',
      duration_s: 600,
      remaining_s: 300,
      paused: false,
      fires_at: iso(START + 300_000),
      channel: 'voice:kitchen',
    },
  ]);
  t.same(await tc.call('timer_pause', { id: 'told001' }), { id: 'told001', remaining_s: 300 }, 'an old timer can be paused');
  await stop();
  const rewritten = JSON.parse(fileText(file)) as { version: number; timers: unknown[] };
  t.equal(rewritten.version, 2);
  t.same(rewritten.timers, [
    {
      id: 'told001',
      message: 'bread',
      duration_ms: 600_000,
      set_at: START - 300_000,
      source: 'voice',
      channel: 'voice:kitchen',
      trust: 'untrusted',
      remaining_ms: 300_000,
    },
  ]);
});

t.test('malformed new-style entries are skipped, good ones kept', async (t) => {
  const dataDir = tempDir(t);
  const file = join(dataDir, 'plugin-data', 'timer', TIMER_FILE);
  createTestPluginContext({ name: 'timer', dataDir });
  const base = { message: 'm', set_at: START, source: 'cli', channel: 'cli', duration_ms: 60_000 };
  writeFileSync(
    file,
    JSON.stringify({
      version: 2,
      timers: [
        { ...base, id: 'tgood01', remaining_ms: 30_000, name: 'ok' },
        { ...base, id: 'tboth01', remaining_ms: 30_000, fires_at: START + 30_000 },
        { ...base, id: 'tneg001', remaining_ms: -1 },
        { ...base, id: 'tname01', fires_at: START + 30_000, name: 42 },
        { ...base, id: 'tname02', fires_at: START + 30_000, name: '  ' },
      ],
    }),
  );
  const { tc } = await startTimer(t, dataDir, new ManualTimerClock(START));
  t.same(await list(tc), [
    { id: 'tgood01', name: 'ok', message: 'm', duration_s: 60, remaining_s: 30, paused: true, fires_at: null, channel: 'cli' },
  ]);
});

/**
 * The seq plugin over a real tool registry and a real SQLite file: the life cycle of a sequence
 * (create, list, help, run, delete), `as` and `$args` with their types, a parallel group (shown
 * with deferred promises, not timing), cycles and forbidden tools refused at create time with their
 * codes, the depth limit at run time, the tier a run inherits, persistence across a reopen, a bad
 * replacement that leaves the stored row alone, and "good night" run by its name.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Type } from '@sinclair/typebox';
import t, { type Test } from 'tap';
import { SEQUENCES_FILE, SeqPlugin } from '../../../../plugins/seq/index.js';
import { newStageContext } from '../../../../src/agent/agent.js';
import { systemClock } from '../../../../src/shared/clock.js';
import type { ToolDefinition } from '../../../../src/shared/tool.js';
import { ManagedDatabase } from '../../../../src/store/database.js';
import { deferred } from '../../../helpers/deferred.js';
import { createTestPluginContext, type TestPluginContext } from '../../../helpers/plugin-context.js';
import { HOUSEHOLD, OWNER, UNTRUSTED } from '../../../helpers/senders.js';
import { silentLogs, type Teardown, tempDir } from '../../fixtures/support.js';

const DEFAULTS = {
  max_sequences: 200,
  max_groups: 20,
  max_calls_per_group: 20,
  max_call_depth: 4,
  run_timeout_s: 120,
  max_definition_chars: 20000,
  run_by_name: true,
};

interface Rig {
  tc: TestPluginContext;
  plugin: SeqPlugin;
  calls: Array<{ tool: string; args: Record<string, unknown> }>;
  stop(): Promise<void>;
}

/** Test tools: a light switch (act, parallel-safe), a sensor read, a shell (dangerous), a message sender. */
function registerHouseTools(tc: TestPluginContext, calls: Rig['calls']): void {
  const def = (name: string, tier: ToolDefinition['tier'], execute: (args: Record<string, unknown>) => unknown, parallel_safe = false) =>
    tc.tools.register({
      name,
      description: name,
      owner: 'plugin:house',
      tier,
      parallel_safe,
      parameters: { type: 'object', properties: { entity: { type: 'string' }, minutes: { type: 'integer' }, text: { type: 'string' } } },
      execute: async (args: Record<string, unknown>) => {
        calls.push({ tool: name, args });
        return execute(args);
      },
    });
  def('light_off', 'act', (args) => ({ entity: args.entity, state: 'off' }), true);
  def('sensor_read', 'read', () => ({ temperature: 21.5, unit: '°C' }), true);
  def('shell', 'dangerous', () => 'ran');
  def('output_send__speaker', 'act', () => 'sent');
  def('fail_always', 'act', () => {
    throw new Error('the bulb does not answer');
  });
}

async function start(t: Teardown, dataDir: string, settings: Record<string, unknown> = {}): Promise<Rig> {
  const tc = createTestPluginContext({ name: 'seq', dataDir, settings: { ...DEFAULTS, ...settings } });
  const calls: Rig['calls'] = [];
  registerHouseTools(tc, calls);
  const plugin = new SeqPlugin(tc.context);
  await plugin.start();
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await plugin.stop();
    await tc.close();
  };
  t.teardown(stop);
  return { tc, plugin, calls, stop };
}

const GOOD_NIGHT = {
  name: 'good night',
  description: 'lights off, then report the temperature',
  in: { room: 'string', minutes: { type: 'integer', default: 30 } },
  groups: [
    {
      name: 'lights',
      calls: [
        { tool: 'light_off', args: { entity: '$args.room' }, as: 'first' },
        { tool: 'light_off', args: { entity: 'light.hall' }, as: 'second' },
      ],
    },
    { name: 'report', calls: [{ tool: 'sensor_read', args: { text: 'after $results.first.entity' }, as: 'climate' }] },
  ],
};

async function refusal(t: Test, promise: Promise<unknown>, pattern: RegExp): Promise<void> {
  try {
    await promise;
    t.fail('expected a refusal');
  } catch (error) {
    t.match((error as { info?: { detail?: string } }).info?.detail ?? String(error), pattern);
  }
}

t.test('life cycle: create, list, help, run with $args and as, delete', async (t) => {
  const r = await start(t, tempDir(t));
  const created = (await r.tc.call('seq_create', GOOD_NIGHT)) as Record<string, unknown>;
  t.equal(created.created, 'good night');
  t.equal(created.tier, 'act', 'the highest tier of its steps');

  const listed = (await r.tc.call('seq_list', {})) as { sequences: Array<Record<string, unknown>> };
  t.equal(listed.sequences.length, 1);
  t.match(listed.sequences[0], { name: 'good night', tier: 'act', groups: [{ name: 'lights' }, { name: 'report' }] });
  t.match(await r.tc.call('seq_help', { name: 'Good  Night' }), { name: 'good night', in: { room: { type: 'string', required: true } } });

  const run = (await r.tc.call('seq_run', { name: 'good night', args: { room: 'light.kitchen' } })) as Record<string, unknown>;
  t.match(run, {
    ok: true,
    groups: [
      { name: 'lights', mode: 'parallel' },
      { name: 'report', mode: 'serial' },
    ],
  });
  t.same(
    r.calls
      .slice(0, 2)
      .map((c) => c.args.entity)
      .sort(),
    ['light.hall', 'light.kitchen'],
    '$args.room filled in',
  );
  t.same(r.calls[2]?.args, { text: 'after light.kitchen' }, '$results.first.entity inside a longer string');
  t.same(run.results, {
    first: { entity: 'light.kitchen', state: 'off' },
    second: { entity: 'light.hall', state: 'off' },
    climate: { temperature: 21.5, unit: '°C' },
  });

  await refusal(t, r.tc.call('seq_run', { name: 'good night', args: {} }), /HA_ERR_SEQ_ARGS: good night needs the argument room/);
  await refusal(t, r.tc.call('seq_run', { name: 'good night', args: { room: 5 } }), /HA_ERR_SEQ_ARGS: room must be a string/);
  await refusal(t, r.tc.call('seq_run', { name: 'good night', args: { room: 'x', colour: 'red' } }), /takes no argument colour/);

  t.same(await r.tc.call('seq_delete', { name: 'GOOD NIGHT' }), { deleted: 'good night' });
  t.same(((await r.tc.call('seq_list', {})) as { sequences: unknown[] }).sequences, []);
  await refusal(t, r.tc.call('seq_run', { name: 'good night' }), /HA_ERR_SEQ_NOT_FOUND/);
  t.same(
    r.tc.audits.map((a) => a.action),
    ['seq.create', 'seq.delete'],
  );
});

t.test('a whole-value reference keeps its type; a missing result field is an error naming it', async (t) => {
  const r = await start(t, tempDir(t));
  await r.tc.call('seq_create', {
    name: 'typed',
    in: { minutes: { type: 'integer', default: 30 } },
    groups: [
      { calls: [{ tool: 'sensor_read', args: {}, as: 'climate' }] },
      { calls: [{ tool: 'light_off', args: { minutes: '$args.minutes', text: '$results.climate.unit' } }] },
    ],
  });
  await r.tc.call('seq_run', { name: 'typed', args: { minutes: 5 } });
  t.same(r.calls[1]?.args, { minutes: 5, text: '°C' }, 'the integer stays an integer');
  await r.tc.call('seq_run', { name: 'typed' });
  t.same(r.calls[3]?.args.minutes, 30, 'the declared default');

  await r.tc.call('seq_create', {
    name: 'missing field',
    groups: [
      { calls: [{ tool: 'sensor_read', as: 'climate' }] },
      { calls: [{ tool: 'light_off', args: { text: '$results.climate.humidity' } }] },
    ],
  });
  await refusal(
    t,
    r.tc.call('seq_run', { name: 'missing field' }),
    /HA_ERR_SEQ_STEP_FAILED.*\$results\.climate\.humidity: the value has no field humidity/,
  );
});

t.test('a parallel group starts every call before any finishes; a group of unsafe tools runs in order', async (t) => {
  const r = await start(t, tempDir(t));
  const gates = [deferred<string>(), deferred<string>()];
  const started: string[] = [];
  for (const [index, name] of ['slow_a', 'slow_b'].entries())
    r.tc.tools.register({
      name,
      description: name,
      owner: 'plugin:house',
      tier: 'read',
      parallel_safe: true,
      parameters: { type: 'object', properties: {} },
      execute: () => {
        started.push(name);
        return gates[index]?.promise;
      },
    });
  await r.tc.call('seq_create', {
    name: 'both',
    groups: [
      {
        calls: [
          { tool: 'slow_a', as: 'a' },
          { tool: 'slow_b', as: 'b' },
        ],
      },
    ],
  });
  const running = r.tc.call('seq_run', { name: 'both' });
  // Both started while neither has finished: they run side by side.
  while (started.length < 2) await new Promise((resolve) => setImmediate(resolve));
  t.same(started, ['slow_a', 'slow_b']);
  gates[1]?.resolve('B');
  gates[0]?.resolve('A');
  t.match(await running, { groups: [{ mode: 'parallel' }], results: { a: 'A', b: 'B' } });

  await r.tc.call('seq_create', { name: 'unsafe', groups: [{ calls: [{ tool: 'fail_always' }, { tool: 'light_off' }] }] });
  await refusal(
    t,
    r.tc.call('seq_run', { name: 'unsafe' }),
    /HA_ERR_SEQ_STEP_FAILED: in unsafe, fail_always \(group group1\) failed: the bulb does not answer/,
  );
  t.notOk(
    r.calls.some((c) => c.tool === 'light_off'),
    'fail_always is not parallel-safe: the group ran in order and stopped at the failure',
  );
});

t.test('forbidden tools are refused at create time with a code naming the tool', async (t) => {
  const r = await start(t, tempDir(t));
  for (const tool of ['output_send__speaker', 'seq_run', 'spawn_child', 'plugin_reload', 'seq_delete']) {
    await refusal(
      t,
      r.tc.call('seq_create', { name: 'bad', groups: [{ calls: [{ tool, args: {} }] }] }),
      new RegExp(`HA_ERR_SEQ_FORBIDDEN_TOOL: a sequence may not call ${tool}`),
    );
  }
  await refusal(t, r.tc.call('seq_create', { name: 'bad', groups: [{ calls: [{ tool: 'no_such_tool' }] }] }), /no tool named no_such_tool/);
  t.same(((await r.tc.call('seq_list', {})) as { sequences: unknown[] }).sequences, [], 'nothing was stored');
  t.same(r.calls, [], 'nothing ran');
});

t.test('definitions that do not hold together are refused whole', async (t) => {
  const r = await start(t, tempDir(t), { max_groups: 2 });
  const bad: Array<[Record<string, unknown>, RegExp]> = [
    [{ name: 'x', groups: [{ calls: [{ tool: 'light_off', args: { entity: '$args.room' } }] }] }, /\$args\.room is not declared/],
    [
      {
        name: 'x',
        groups: [
          {
            calls: [
              { tool: 'sensor_read', as: 'a' },
              { tool: 'light_off', args: { text: '$results.a' } },
            ],
          },
        ],
      },
      /\$results\.a is not the result of an earlier group/,
    ],
    [{ name: 'x', out: ['nothing'], groups: [{ calls: [{ tool: 'sensor_read' }] }] }, /out names nothing/],
    [
      { name: 'x', groups: [{ calls: [{ tool: 'sensor_read', as: 'a' }] }, { calls: [{ tool: 'sensor_read', as: 'a' }] }] },
      /two calls keep their result as a/,
    ],
    [{ name: 'x', groups: [{ when: '$args.away maybe', calls: [{ tool: 'sensor_read' }] }] }, /cannot read the condition/],
    [{ name: '#x', groups: [{ calls: [{ tool: 'sensor_read' }] }] }, /not starting with #/],
    [
      { name: 'x', groups: [{ calls: [{ tool: 'seq_call', args: { target: 'nowhere' } }] }] },
      /HA_ERR_SEQ_NOT_FOUND: x has no group nowhere/,
    ],
  ];
  for (const [definition, pattern] of bad) await refusal(t, r.tc.call('seq_create', definition), pattern);
  await refusal(
    t,
    r.tc.call('seq_create', { name: 'big', groups: Array.from({ length: 3 }, () => ({ calls: [{ tool: 'sensor_read' }] })) }),
    /HA_ERR_SEQ_LIMIT: 3 groups; at most 2 \(plugin\.seq\.max_groups\)/,
  );
  t.same(((await r.tc.call('seq_list', {})) as { sequences: unknown[] }).sequences, [], 'none was stored');
});

t.test('cycles are refused at create time: itself, through a group, through another sequence', async (t) => {
  const r = await start(t, tempDir(t));
  await refusal(
    t,
    r.tc.call('seq_create', { name: 'loop', groups: [{ calls: [{ tool: 'seq_call', args: { target: '#loop' } }] }] }),
    /HA_ERR_SEQ_CYCLE: loop would call itself: loop → loop#group1 → loop/,
  );
  await refusal(
    t,
    r.tc.call('seq_create', {
      name: 'pingpong',
      groups: [
        { name: 'ping', calls: [{ tool: 'seq_call', args: { target: 'pong' } }] },
        { name: 'pong', calls: [{ tool: 'seq_call', args: { target: 'ping' } }] },
      ],
    }),
    /HA_ERR_SEQ_CYCLE/,
  );
  // A calls B before B exists (allowed, with a note); B calling A back would close the circle.
  const a = (await r.tc.call('seq_create', { name: 'A', groups: [{ calls: [{ tool: 'seq_call', args: { target: '#B' } }] }] })) as Record<
    string,
    unknown
  >;
  t.match(a.note, /it calls B, which do not exist yet/);
  await refusal(
    t,
    r.tc.call('seq_create', { name: 'B', groups: [{ calls: [{ tool: 'seq_call', args: { target: '#A' } }] }] }),
    /HA_ERR_SEQ_CYCLE: B would call itself: b → b#group1 → a → a#group1 → b/,
  );
  await r.tc.call('seq_create', { name: 'B', groups: [{ calls: [{ tool: 'sensor_read', as: 'climate' }] }] });
  t.match(await r.tc.call('seq_run', { name: 'A' }), { ok: true }, 'A runs B once B is a plain sequence');
});

t.test('seq_call and seq_when_call: a group by name, a whole sequence, the depth limit at run time', async (t) => {
  const r = await start(t, tempDir(t), { max_call_depth: 2 });
  await r.tc.call('seq_create', GOOD_NIGHT);
  const group = (await r.tc.call('seq_call', { name: 'good night', target: 'lights', args: { room: 'light.den' } })) as Record<
    string,
    unknown
  >;
  t.match(group, { groups: [{ name: 'lights' }], results: { first: { entity: 'light.den' } } });
  t.equal(r.calls.length, 2, 'only that group ran');
  t.match(await r.tc.call('seq_when_call', { target: '#good night', args: { room: 'light.den' }, when: '$args.room == "light.attic"' }), {
    skipped: true,
  });
  t.equal(r.calls.length, 2, 'a false condition runs nothing');
  await refusal(t, r.tc.call('seq_when_call', { target: '#good night', args: { room: 3 }, when: '$args.room > "x"' }), /cannot be judged/);

  await r.tc.call('seq_create', { name: 'leaf', groups: [{ calls: [{ tool: 'sensor_read', as: 'climate' }] }] });
  await r.tc.call('seq_create', { name: 'middle', groups: [{ calls: [{ tool: 'seq_call', args: { target: '#leaf' }, as: 'leaf' }] }] });
  await r.tc.call('seq_create', { name: 'top', groups: [{ calls: [{ tool: 'seq_call', args: { target: '#middle' } }] }] });
  t.match(await r.tc.call('seq_run', { name: 'middle' }), { results: { leaf: { climate: { temperature: 21.5 } } } }, 'two deep is allowed');
  await refusal(t, r.tc.call('seq_run', { name: 'top' }), /HA_ERR_SEQ_DEPTH: leaf would run 3 sequences deep; at most 2/);

  await r.tc.call('seq_create', {
    name: 'maybe',
    in: { away: 'boolean' },
    groups: [
      { calls: [{ tool: 'seq_when_call', args: { target: '#leaf', args: {}, when: 'true' }, as: 'inner' }] },
      { when: '$args.away', calls: [{ tool: 'light_off' }] },
    ],
  });
  const maybe = (await r.tc.call('seq_run', { name: 'maybe', args: { away: false } })) as { groups: Array<{ mode: string }> };
  t.same(
    maybe.groups.map((g) => g.mode),
    ['serial', 'skipped'],
    'a group whose condition is false is skipped',
  );
});

t.test('a sequence inherits the tier of its most dangerous step, through the sequences it calls', async (t) => {
  const r = await start(t, tempDir(t));
  await r.tc.call('seq_create', { name: 'look', groups: [{ calls: [{ tool: 'sensor_read' }] }] });
  await r.tc.call('seq_create', {
    name: 'switch',
    groups: [{ calls: [{ tool: 'light_off' }, { tool: 'seq_call', args: { target: '#look' } }] }],
  });
  const danger = (await r.tc.call('seq_create', {
    name: 'reboot',
    groups: [
      { name: 'safe', calls: [{ tool: 'sensor_read' }] },
      { name: 'risky', calls: [{ tool: 'seq_call', args: { target: '#switch' } }, { tool: 'shell' }] },
    ],
  })) as Record<string, unknown>;
  t.equal(danger.tier, 'dangerous');
  const run = r.tc.tools.get('seq_run');
  const tierFor = run?.tier_for as (args: unknown) => string;
  t.equal(run?.tier, 'act', 'declared tier before the arguments are known');
  t.same(
    ['look', 'switch', 'reboot', 'absent'].map((name) => tierFor({ name })),
    ['read', 'act', 'dangerous', 'read'],
  );
  const callTier = r.tc.tools.get('seq_call')?.tier_for as (args: unknown) => string;
  t.equal(callTier({ name: 'reboot', target: 'safe' }), 'read', 'one group has the tier of what it reaches');
  t.equal(callTier({ name: 'reboot', target: 'risky' }), 'dangerous');
  t.equal(callTier({ target: '#switch' }), 'act');
});

t.test('sequences survive a reopen; a bad replacement leaves the stored row as it was', async (t) => {
  const dir = tempDir(t);
  const first = await start(t, dir);
  await first.tc.call('seq_create', GOOD_NIGHT);
  await refusal(
    t,
    first.tc.call('seq_create', { name: 'good night', groups: [{ calls: [{ tool: 'output_send__speaker' }] }] }),
    /HA_ERR_SEQ_FORBIDDEN_TOOL/,
  );
  await first.stop();

  const second = await start(t, dir);
  t.match(await second.tc.call('seq_help', { name: 'good night' }), {
    name: 'good night',
    groups: [{ name: 'lights' }, { name: 'report' }],
  });
  t.match(await second.tc.call('seq_run', { name: 'good night', args: { room: 'light.kitchen' } }), { ok: true });
  t.equal(second.plugin.health().ok, true);
  t.match(second.plugin.health(), { detail: '1 sequences', detail_zh: '1 条序列' });
  await second.stop();

  // A damaged file is moved aside and the plugin starts empty instead of failing.
  writeFileSync(join(dir, 'plugin-data', 'seq', SEQUENCES_FILE), 'this is not a database');
  for (const suffix of ['-wal', '-shm']) writeFileSync(join(dir, 'plugin-data', 'seq', `${SEQUENCES_FILE}${suffix}`), '');
  const third = await start(t, dir);
  t.match(third.plugin.health(), { ok: true, detail: /0 sequences; the damaged sequences.db was moved to/ });
});

t.test(
  'a message that is just the name runs an act sequence; dangerous ones and untrusted senders are left to the conversation',
  async (t) => {
    const r = await start(t, tempDir(t));
    await r.tc.call('seq_create', { name: 'good night', groups: [{ calls: [{ tool: 'light_off', args: { entity: 'light.all' } }] }] });
    await r.tc.call('seq_create', { name: '晚安', groups: [{ calls: [{ tool: 'light_off' }, { tool: 'light_off' }] }] });
    await r.tc.call('seq_create', { name: 'reboot', groups: [{ calls: [{ tool: 'shell' }] }] });
    r.tc.control.register({
      name: 'config.get',
      description: 'test',
      params: Type.Object({ key: Type.String() }),
      handler: () => ({ value: ['*'] }),
    });
    const say = async (payload: string, sender = OWNER) => {
      const stage = newStageContext('task-1', {
        id: 'in-1',
        source: 'cli',
        channel: 'cli',
        sender,
        type: 'text',
        payload,
        meta: {},
        received_at: 0,
        level: 0,
      });
      await r.tc.stages.run('on_input', stage);
      return stage;
    };
    t.equal((await say('Good night!')).response, 'Done: good night (1 steps).');
    t.equal((await say('晚安。')).response, '已完成：晚安（2 步）。');
    t.equal((await say('/seq good night', HOUSEHOLD)).response, 'Done: good night (1 steps).', 'the household may act by default');
    t.equal(r.calls.length, 4);
    const untrusted = await say('good night', UNTRUSTED);
    t.equal(untrusted.response, undefined, 'an untrusted sender does not run it');
    const dangerous = await say('reboot');
    t.equal(dangerous.response, undefined, 'a dangerous sequence is left to the conversation and its gate');
    t.match(dangerous.fallback, /needs? the owner's approval/);
    t.equal((await say('good night everyone, see you tomorrow')).response, undefined, 'a sentence is not a name');
    t.equal(r.calls.length, 4, 'nothing else ran');
  },
);

t.test("seq_help's example passes seq_create's checks and runs as it says", async (t) => {
  const r = await start(t, tempDir(t));
  const seen: Array<Record<string, unknown>> = [];
  for (const name of ['entity_call', 'timer_set'])
    r.tc.tools.register({
      name,
      description: name,
      owner: 'plugin:house',
      tier: 'act',
      parameters: { type: 'object', properties: {} },
      execute: (args: Record<string, unknown>) => {
        seen.push({ tool: name, ...args });
        return { ok: true };
      },
    });
  const help = (await r.tc.call('seq_help', {})) as { example: Record<string, unknown> };
  t.match(await r.tc.call('seq_create', help.example), { created: 'good night', tier: 'act' });
  t.match(await r.tc.call('seq_run', { name: 'good night', args: { minutes: 20 } }), { ok: true, results: { timer: { ok: true } } });
  t.same(seen.at(-1), { tool: 'timer_set', duration: '20 minutes', message: 'lock the door' });
});

t.test('a stored row that no longer reads is listed as broken, refused with a code, and deletable; the others still work', async (t) => {
  const dir = tempDir(t);
  const first = await start(t, dir);
  await first.tc.call('seq_create', GOOD_NIGHT);
  await first.tc.call('seq_create', { name: 'look', groups: [{ calls: [{ tool: 'sensor_read' }] }] });
  await first.stop();
  const file = join(dir, 'plugin-data', 'seq', SEQUENCES_FILE);
  const db = ManagedDatabase.open(
    { name: 'sequences', file, synchronous: 'FULL' },
    { busyTimeoutMs: 1000, startupCheck: 'off', log: silentLogs().child('t'), clock: systemClock },
  );
  db.db.prepare('UPDATE sequences SET definition = \'{"written":"by hand"}\' WHERE name_key = \'good night\'').run();
  db.close();

  const second = await start(t, dir);
  t.match(await second.tc.call('seq_list', {}), {
    sequences: [
      { name: 'good night', broken: /has no groups/ },
      { name: 'look', tier: 'read' },
    ],
  });
  await refusal(
    t,
    second.tc.call('seq_run', { name: 'good night', args: { room: 'x' } }),
    /HA_ERR_SEQ_INVALID: the stored definition of good night does not read/,
  );
  t.match(await second.tc.call('seq_run', { name: 'look' }), { ok: true });
  t.same(await second.tc.call('seq_delete', { name: 'good night' }), { deleted: 'good night' });
  t.match(await second.tc.call('seq_list', {}), { sequences: [{ name: 'look' }] });
  t.equal(((await second.tc.call('seq_list', {})) as { sequences: unknown[] }).sequences.length, 1);
});

t.test('an input the intent engine carries out itself is not run again as a sequence', async (t) => {
  const r = await start(t, tempDir(t));
  await r.tc.call('seq_create', { name: 'lights off', groups: [{ calls: [{ tool: 'light_off', args: { entity: 'light.all' } }] }] });
  // The intent engine's hook marks the input before its first await, as src/intent/intent-stage.ts does.
  r.tc.stages.register('intent', 'on_input', (stage) => {
    if (stage.input.payload === 'lights off') stage.extra.intent = { name: 'HassTurnOff', handled: false };
  });
  const stage = newStageContext('task-1', {
    id: 'in-1',
    source: 'cli',
    channel: 'cli',
    sender: OWNER,
    type: 'text',
    payload: 'lights off',
    meta: {},
    received_at: 0,
    level: 0,
  });
  await r.tc.stages.run('on_input', stage);
  t.equal(stage.response, undefined);
  t.same(r.calls, [], 'the sequence did not run beside the intent');
});

t.test('control methods: seq.list for anyone, seq.run and seq.delete for owner callers only (any tier), audited', async (t) => {
  const r = await start(t, tempDir(t));
  await r.tc.call('seq_create', {
    name: 'reboot',
    groups: [{ calls: [{ tool: 'sensor_read', as: 'before' }] }, { calls: [{ tool: 'shell' }] }],
  });
  t.match(await r.tc.control.call('seq.list', {}, { actor: 'webui:guest' }), { sequences: [{ name: 'reboot', tier: 'dangerous' }] });
  await t.rejects(r.tc.control.call('seq.run', { name: 'reboot' }, { actor: 'webui:guest' }), /owner/i);
  t.same(r.calls, [], 'a caller not proven to be the owner ran nothing');
  t.match(await r.tc.control.call('seq.run', { name: 'reboot' }, { actor: 'cli', owner: true, proof: 'the CLI socket' }), {
    ok: true,
    tier: 'dangerous',
    results: { before: { temperature: 21.5 } },
  });
  t.same(
    r.calls.map((c) => c.tool),
    ['sensor_read', 'shell'],
  );
  t.match(r.tc.audits.at(-1), { action: 'seq.run', details: { name: 'reboot', tier: 'dangerous', actor: 'cli', via: 'control' } });
  await t.rejects(r.tc.control.call('seq.delete', { name: 'reboot' }, { actor: 'webui:guest' }), /owner/i);
  t.same(await r.tc.control.call('seq.delete', { name: 'reboot' }, { actor: 'cli', owner: true }), { deleted: 'reboot' });
  t.match(r.tc.audits.at(-1), { action: 'seq.delete', details: { name: 'reboot', actor: 'cli' } });
});

// `homeagentctl automations …` (src/cli/automations.ts): argument parsing, readable output, and the
// commands end to end over the real cli plugin's socket to a real automation engine.
process.env.TZ = 'UTC';

import { join } from 'node:path';
import t, { type Test } from 'tap';
import { CliPlugin } from '../../../plugins/cli/index.js';
import { registerAutomationMethods } from '../../../src/automation/automation-methods.js';
import {
  type AutomationsCommand,
  AutomationsUsageError,
  formatAutomationList,
  parseAutomationsCommand,
  runAutomations,
} from '../../../src/cli/automations.js';
import type { CommandClient } from '../../../src/cli/command-client.js';
import { RpcClient } from '../../../src/cli/rpc-client.js';
import { ControlRegistry } from '../../../src/plugin/control-registry.js';
import { asContext, createTestPluginContext } from '../../helpers/plugin-context.js';
import { type EngineSetup, rule, startEngine } from '../automation/automation-fixture.js';
import { tempDir } from '../fixtures/support.js';

t.test('parseAutomationsCommand reads each command and refuses what does not fit', async (t) => {
  const parse = parseAutomationsCommand;
  t.same(parse([], {}), { command: 'list' }, 'no sub-command lists');
  t.same(parse(['list'], {}), { command: 'list' });
  t.same(parse(['run', 'hall_light'], {}), { command: 'run', id: 'hall_light', skip_conditions: false });
  t.same(parse(['run', 'hall_light'], { 'skip-conditions': true }), { command: 'run', id: 'hall_light', skip_conditions: true });
  t.same(parse(['enable', 'kettle'], {}), { command: 'enable', id: 'kettle' });
  t.same(parse(['disable', 'kettle'], {}), { command: 'disable', id: 'kettle' });
  t.same(parse(['runs'], {}), { command: 'runs' });
  t.same(parse(['runs', 'kettle'], { limit: '5' }), { command: 'runs', id: 'kettle', limit: 5 });

  const refused: Array<[string[], Record<string, string | boolean>, RegExp]> = [
    [['show'], {}, /unknown automations command show; use list, run, enable, disable or runs/],
    [['list', 'x'], {}, /automations list takes no arguments/],
    [['run'], {}, /automations run needs an automation ID .*none given/],
    [['run', 'Hall Light'], {}, /needs an automation ID \(lowercase letters, digits and _\), not "Hall Light"/],
    [['run', 'a', 'b'], {}, /takes exactly one ID/],
    [['enable'], {}, /automations enable needs an automation ID/],
    [['disable', 'x'], { 'skip-conditions': true }, /--skip-conditions does not belong to automations disable/],
    [['runs', 'a', 'b'], {}, /at most one ID/],
    [['runs'], { limit: '0' }, /--limit must be a whole number from 1 to 1000/],
    [['runs'], { limit: 'ten' }, /--limit/],
    [['list'], { limit: '3' }, /--limit does not belong to automations list/],
  ];
  for (const [positionals, flags, message] of refused) {
    t.throws(
      () => parse(positionals, flags),
      { constructor: AutomationsUsageError, message },
      `${positionals.join(' ')} ${JSON.stringify(flags)}`,
    );
  }
});

t.test('formatAutomationList: state, triggers, last run and problems; a hint when there are none', async (t) => {
  t.equal(formatAutomationList({ automations: [] }), 'no automations (write them in core.automations.rules; see docs/automations.md)');
  t.equal(
    formatAutomationList({
      automations: [
        {
          id: 'hall_light',
          name: 'Hall light',
          enabled: false,
          enabled_by: 'cli',
          mode: 'restart',
          triggers: ['edge hall_button rising', 'time at 07:00'],
          running: 1,
          queued: 2,
          last_run: {
            run_id: 'r1',
            status: 'failed',
            trigger: 'edge hall_button rising',
            started_at: Date.UTC(2026, 0, 5, 7),
            finished_at: 0,
            error: 'HA_ERR_X: y',
          },
          problems: ['actions[0].entity_id "switch.hall": not there'],
        },
        {
          id: 'kettle',
          name: '',
          enabled: true,
          enabled_by: 'config',
          mode: 'single',
          triggers: ['time cron "45 6 * * mon-fri"'],
          running: 0,
          queued: 0,
          last_run: null,
          problems: [],
        },
      ],
    }),
    [
      'hall_light  disabled (by cli)  mode restart  "Hall light"',
      '  on edge hall_button rising',
      '  on time at 07:00',
      '  now: 1 running, 2 waiting',
      '  last run: failed at 2026-01-05 07:00:00 (edge hall_button rising): HA_ERR_X: y',
      '  problem: actions[0].entity_id "switch.hall": not there',
      'kettle  enabled  mode single',
      '  on time cron "45 6 * * mon-fri"',
      '  last run: never',
    ].join('\n'),
  );
});

interface Served extends EngineSetup {
  connect: () => Promise<CommandClient>;
}

/** The automations.* methods on a real engine, served by the real cli plugin on a Unix socket. */
async function serve(t: Test): Promise<Served> {
  const s = await startEngine(
    t,
    [
      rule({
        id: 'hall_light',
        name: 'Hall light',
        triggers: [{ type: 'edge', pin: 'hall_button', edge: 'rising' }],
        conditions: [{ type: 'state', entity_id: 'switch.home_mode', state: 'on' }],
        actions: [
          { type: 'service', entity_id: 'switch.hall_light', service: 'turn_on', data: {} },
          { type: 'delay', seconds: 300 },
        ],
      }),
    ],
    { entities: { 'switch.hall_light': 'off', 'switch.home_mode': 'off' } },
  );
  const control = new ControlRegistry();
  registerAutomationMethods(control, s.engine, { logs: s.logs.logs });
  const dataDir = tempDir(t);
  const test = createTestPluginContext({
    name: 'cli',
    dataDir,
    settings: { socket_path: '', socket_mode: '660', max_frame_bytes: 1048576, max_connections: 4, idle_timeout_ms: 60_000 },
  });
  const plugin = new CliPlugin(asContext({ ...test.context, control }));
  await plugin.start();
  t.teardown(async () => {
    await plugin.stop();
    test.close();
  });
  const socket = join(dataDir, 'run', 'homeagent.sock');
  return { ...s, connect: () => RpcClient.connect(socket, 5000) };
}

async function run(s: Served, command: AutomationsCommand, json = false) {
  let out = '';
  const code = await runAutomations(command, {
    connect: s.connect,
    json,
    timeoutMs: 10_000,
    stdout: { write: (text: string) => (out += text) },
  });
  return { code, out };
}

t.test('automations over the socket: list, run, runs, disable, enable; readable text and --json', async (t) => {
  const s = await serve(t);
  const list = await run(s, { command: 'list' });
  t.equal(list.code, 0);
  t.equal(list.out, 'hall_light  enabled  mode restart  "Hall light"\n  on edge hall_button rising\n  last run: never\n');

  const refused = await run(s, { command: 'run', id: 'hall_light', skip_conditions: false });
  t.same(
    refused,
    { code: 1, out: 'hall_light did not run: its conditions do not hold now (skip_conditions runs it anyway)\n' },
    'exit 1: nothing ran',
  );
  const started = await run(s, { command: 'run', id: 'hall_light', skip_conditions: true });
  t.equal(started.code, 0);
  t.match(started.out, /^started hall_light \(run [0-9a-f-]{36}\); homeagentctl automations runs hall_light shows how it ends\n$/);
  t.same(
    s.entities.calls.map((c) => [c.entity_id, c.context.actor]),
    [['switch.hall_light', 'automation:hall_light']],
  );

  const disabled = await run(s, { command: 'disable', id: 'hall_light' });
  t.same(disabled, { code: 0, out: 'hall_light disabled\n' });
  t.match(JSON.parse((await run(s, { command: 'list' }, true)).out), {
    automations: [{ id: 'hall_light', enabled: false, enabled_by: 'cli' }],
  });
  t.same(await run(s, { command: 'enable', id: 'hall_light' }), { code: 0, out: 'hall_light enabled\n' });

  const runs = await run(s, { command: 'runs', id: 'hall_light' });
  t.equal(
    runs.out,
    [
      '2026-01-05 08:00:00  hall_light  aborted  0 ms  manual by cli',
      '  error: HA_ERR_ABORTED: the automation was disabled by cli',
      '  1. service turn_on switch.hall_light: done, 0 ms',
      '  2. delay 300 s: aborted, 0 ms (HA_ERR_ABORTED: the automation was disabled by cli)',
      '',
    ].join('\n'),
  );
  t.match(JSON.parse((await run(s, { command: 'runs', limit: 1 }, true)).out), {
    runs: [{ automation_id: 'hall_light', status: 'aborted' }],
  });
  t.equal((await run(s, { command: 'runs', id: 'hall_light' })).code, 0);

  await t.rejects(run(s, { command: 'run', id: 'nope', skip_conditions: false }), {
    code: 'HA_ERR_AUTOMATION_NOT_FOUND',
    message: /no automation has the id "nope"/,
  });
  const audit = s.logs
    .records()
    .filter((r) => r.audit === true)
    .map((r) => [r.actor, r.action]);
  t.same(
    audit,
    [
      ['cli', 'automations.run'],
      ['cli', 'automations.run'],
      ['cli', 'automations.disable'],
      ['cli', 'automations.enable'],
    ],
    'the socket forwards the cli actor to the audit log',
  );
});

t.test('runs of an automation that never ran, and of none', async (t) => {
  const s = await serve(t);
  t.same(await run(s, { command: 'runs', id: 'hall_light' }), { code: 0, out: 'hall_light has not run yet\n' });
  t.same(await run(s, { command: 'runs' }), { code: 0, out: 'no automation runs yet\n' });
});

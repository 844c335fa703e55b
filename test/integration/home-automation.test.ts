/**
 * Home automation end to end, in one process: the real GPIO plugin on a simulated header, the real
 * entity registry on a temporary home.db and the real automation engine on the same file, all on
 * ONE manual clock. A button press with contact bounce travels edge filter → entity → gpio.edge →
 * rule → entity service → pin guard → wire, and minutes of delays pass without sleeping.
 *
 * Issue 7's required test is the first one: button edge → relay on → off after 5 minutes of
 * simulated time, with a second press restarting the 5 minutes.
 */
import { join } from 'node:path';
import t, { type Test } from 'tap';
import type { GpioClock } from '../../devices/gpio/gpio-clock.js';
import { GpioPlugin } from '../../devices/gpio/gpio-plugin.js';
import { SimulatedGpioBackend } from '../../devices/gpio/simulated-backend.js';
import { AutomationEngine } from '../../src/automation/automation-engine.js';
import type { AutomationsSettings } from '../../src/automation/types.js';
import type { AutomationAction, AutomationRule } from '../../src/config/schema.js';
import type { EventMap } from '../../src/events/event-bus.js';
import { ManagedDatabase } from '../../src/store/database.js';
import { ManualTimerClock } from '../helpers/manual-timer-clock.js';
import { createTestPluginContext, type TestPluginContext } from '../helpers/plugin-context.js';
import { captureLogs } from '../unit/fixtures/support.js';

const BUTTON = {
  id: 'hall_button',
  bcm: 22,
  direction: 'in',
  domain: 'button',
  active_low: true,
  debounce_ms: 20,
  // Presses are inputs for the agent only when asked for (the default is none); this test counts them.
  input_edges: 'rising',
} as const;
const RELAY = { id: 'hall_relay', bcm: 17, direction: 'out', active_low: true, safe: 0 } as const;
const PUMP = { id: 'pump', bcm: 23, direction: 'out', safe: 0, max_on_time_s: 60 } as const;

const SECOND = 1000;
const PRESS = rising(BUTTON.id);

/**
 * The GPIO code and the engine take different clock interfaces (GpioClock.setTimer(ms, fn),
 * TimerClock.setTimer(fn, ms)); both are served by the one manual clock, so advancing it moves the
 * debounce windows, max_on_time guards and automation delays together, in due order.
 */
function gpioClockOf(clock: ManualTimerClock): GpioClock {
  return { now: () => clock.now(), setTimer: (ms, fn) => clock.setTimer(fn, ms) };
}

function rising(pin: string) {
  return { type: 'edge', pin, edge: 'rising' } as const;
}

function service(entity_id: string, name: string): AutomationAction {
  return { type: 'service', entity_id, service: name, data: {} };
}

function delay(seconds: number): AutomationAction {
  return { type: 'delay', seconds };
}

function rule(partial: Pick<AutomationRule, 'id' | 'triggers' | 'actions'> & Partial<AutomationRule>): AutomationRule {
  return { name: '', enabled: true, mode: 'restart', conditions: [], ...partial };
}

interface Home {
  clock: ManualTimerClock;
  backend: SimulatedGpioBackend;
  tc: TestPluginContext;
  engine: AutomationEngine;
  /** Engine log records at warn level and above. */
  warnings(): Array<Record<string, unknown>>;
  edges: Array<EventMap['gpio.edge']>;
  runs: Array<EventMap['automation.run']>;
  changes: Array<EventMap['entity.state_changed']>;
  state(entityId: string): unknown;
}

/** GPIO plugin, then the engine (so entity references resolve at its start); both stopped, files closed at teardown. */
async function startHome(
  t: Test,
  pins: readonly object[],
  rules: AutomationRule[],
  automations: Partial<AutomationsSettings> = {},
): Promise<Home> {
  const dir = t.testdir();
  const clock = new ManualTimerClock();
  const gpioClock = gpioClockOf(clock);
  const backend = new SimulatedGpioBackend({ clock: gpioClock });
  const tc = createTestPluginContext({
    name: 'gpio',
    dataDir: dir,
    clock,
    settings: { backend: 'simulated', chip: '', poll_interval_ms: 10, pins },
  });
  const logs = captureLogs('info');
  const database = ManagedDatabase.open(
    { name: 'home', file: join(dir, 'home.db'), synchronous: 'NORMAL' },
    { busyTimeoutMs: 2000, startupCheck: 'off', log: logs.logs.child('store'), clock },
  );
  const settings: AutomationsSettings = {
    max_runs_per_minute: 60,
    self_trigger_per_minute: 3,
    max_queued_runs: 10,
    run_history: 1000,
    ...automations,
    rules,
  };
  const engine = new AutomationEngine({
    entities: tc.entities,
    events: tc.events,
    io: { notify: async () => undefined, input: () => undefined },
    database: () => database,
    log: logs.logs.child('automation'),
    clock,
    settings: () => settings,
  });
  const plugin = new GpioPlugin(tc.context, { clock: gpioClock, backend, watcher: false });
  t.teardown(async () => {
    await engine.stop();
    await plugin.stop();
    database.close();
    await tc.close();
  });
  const edges: Home['edges'] = [];
  const runs: Home['runs'] = [];
  const changes: Home['changes'] = [];
  tc.events.on('test', 'gpio.edge', (e) => void edges.push(e));
  tc.events.on('test', 'automation.run', (e) => void runs.push(e));
  tc.events.on('test', 'entity.state_changed', (e) => void changes.push(e));
  await plugin.start(new AbortController().signal);
  await engine.start(new AbortController().signal);
  return {
    clock,
    backend,
    tc,
    engine,
    warnings: () => logs.records().filter((r) => r.level === 'warn' || r.level === 'error'),
    edges,
    runs,
    changes,
    state: (entityId) => tc.entities.resolve(entityId).state,
  };
}

t.test('an automation end to end (button edge → relay on → off after 5 minutes of simulated time)', async (t) => {
  const h = await startHome(
    t,
    [BUTTON, RELAY],
    [
      rule({
        id: 'hall_light_button',
        triggers: [PRESS],
        actions: [service('switch.hall_relay', 'turn_on'), delay(300), service('switch.hall_relay', 'turn_off')],
      }),
    ],
  );
  const wire = () => h.backend.control.level(RELAY.bcm);
  t.equal(wire(), 1, 'the active-low relay rests high (off) after start');
  t.equal(h.state('switch.hall_relay'), 'off');
  t.equal(h.state('button.hall_button'), 'off', 'the button is released');

  const start = h.clock.now();
  /** Moves the clock to `ms` after the first press. */
  const at = (ms: number) => h.clock.advance(start + ms - h.clock.now());
  h.backend.control.press(BUTTON.bcm, { holdMs: 100 });
  await h.clock.advance(0);
  t.equal(h.state('button.hall_button'), 'on', 'the button entity is pressed');
  t.equal(wire(), 0, 'the first contact switches the relay at once: low wire = on for an active-low relay');
  t.equal(h.state('switch.hall_relay'), 'on', 'the entity says on');
  t.match(
    h.changes.find((c) => c.entity_id === 'switch.hall_relay'),
    { old_state: 'off', new_state: 'on', context: { actor: 'automation:hall_light_button' } },
    'the state change carries the automation as its cause',
  );

  // The contact bounces 3 times, 1 ms apart; the 20 ms lockout swallows them all.
  await h.clock.advance(BUTTON.debounce_ms - 1);
  t.equal(h.edges.length, 1, 'one edge inside the debounce window, whatever the bounce');
  t.match(h.edges[0], { pin: 'hall_button', entity_id: 'button.hall_button', edge: 'rising', value: 1, at: start });
  t.match(h.engine.list(), [{ id: 'hall_light_button', running: 1, queued: 0 }], 'one run started, no second one');
  t.equal(h.changes.filter((c) => c.entity_id === 'switch.hall_relay').length, 1, 'the relay was switched once');
  t.equal(h.tc.injected.length, 1, 'one input for the agent');
  await h.clock.advance(1);
  t.equal(h.edges.length, 1, 'the window ends on the pressed level: no edge to catch up');

  // The release (at 100 ms, bouncing too) is a falling edge: the rule waits for rising ones.
  await h.clock.advance(200);
  t.same(
    h.edges.map((e) => e.edge),
    ['rising', 'falling'],
  );
  t.equal(h.state('button.hall_button'), 'off', 'the button entity follows the release');
  t.match(h.engine.list(), [{ running: 1 }], 'the release starts nothing');

  // A second press 200 s after the first restarts the 5 minutes (mode restart).
  await at(200 * SECOND);
  h.backend.control.press(BUTTON.bcm, { holdMs: 100 });
  await h.clock.advance(0);
  t.equal(wire(), 0, 'the relay stays on');
  t.same(
    h.runs.map((r) => r.status),
    ['aborted'],
    'the first run was cancelled in its delay',
  );
  t.match(h.runs[0], { automation_id: 'hall_light_button', error: /restarted by a new trigger \(mode restart\)/ });

  await at(300 * SECOND);
  t.equal(wire(), 0, 'still on at +300 s, when the first run would have switched off');
  await at(500 * SECOND - 1);
  t.equal(wire(), 0, 'still on 1 ms before +500 s');
  t.equal(h.state('switch.hall_relay'), 'on');
  await h.clock.advance(1);
  t.equal(wire(), 1, 'off at +500 s: the wire is high again');
  t.equal(h.state('switch.hall_relay'), 'off', 'the entity says off');

  const [second, first] = h.engine.runs({ automation_id: 'hall_light_button', limit: 10 });
  t.match(first, {
    status: 'aborted',
    trigger: { type: 'edge', pin: 'hall_button', edge: 'rising' },
    started_at: start,
    finished_at: start + 200 * SECOND,
    steps: [
      { index: 0, type: 'service', status: 'done' },
      { index: 1, type: 'delay', status: 'aborted', ms: 200 * SECOND },
    ],
  });
  t.match(second, {
    status: 'done',
    error: null,
    started_at: start + 200 * SECOND,
    finished_at: start + 500 * SECOND,
    steps: [
      { index: 0, status: 'done' },
      { index: 1, type: 'delay', status: 'done', ms: 300 * SECOND },
      { index: 2, type: 'service', status: 'done' },
    ],
  });
  t.same(
    h.runs.map((r) => r.status),
    ['aborted', 'done'],
    'two runs, as the automation.run events say too',
  );
  const history = h.tc.entities.history('switch.hall_relay', { from: 0 });
  t.same(
    history.map((r) => r.state),
    ['off', 'on', 'off'],
    'home.db holds off → on → off: no flicker at the restart',
  );
  t.same(
    history.slice(1).map((r) => r.at - start),
    [0, 500 * SECOND],
    'on at the first press, off 300 s after the second',
  );
  t.equal(h.clock.pending(), 0, 'no timer left behind');
  t.same(h.warnings(), [], 'nothing to warn about');
});

t.test('max_on_time_s wins over an automation delay: the relay is off at 60 s and the entity says so', async (t) => {
  const h = await startHome(
    t,
    [BUTTON, PUMP],
    [
      rule({
        id: 'pump_ten_minutes',
        triggers: [PRESS],
        actions: [service('switch.pump', 'turn_on'), delay(600), service('switch.pump', 'turn_off')],
      }),
    ],
  );
  const wire = () => h.backend.control.level(PUMP.bcm);
  h.backend.control.press(BUTTON.bcm, { holdMs: 100 });
  await h.clock.advance(0);
  t.equal(wire(), 1, 'the pump is on (active high)');
  t.equal(h.state('switch.pump'), 'on');

  await h.clock.advance(60 * SECOND - 1);
  t.equal(wire(), 1, 'on until its max_on_time_s');
  await h.clock.advance(1);
  t.equal(wire(), 0, 'the guard switched it off at 60 s');
  t.equal(h.state('switch.pump'), 'off', 'and the entity says off');
  t.match(h.engine.list(), [{ id: 'pump_ten_minutes', running: 1 }], 'the run is still in its delay');
  t.match(
    h.changes.filter((c) => c.entity_id === 'switch.pump').at(-1),
    { new_state: 'off', context: null },
    'not the automation: the guard',
  );

  await h.clock.advance(540 * SECOND);
  t.equal(wire(), 0, 'still off when the delay ends');
  t.match(h.engine.runs({ automation_id: 'pump_ten_minutes', limit: 5 }), [{ status: 'done', steps: [{}, { ms: 600 * SECOND }, {}] }]);
  t.same(
    h.tc.entities.history('switch.pump', { from: 0 }).map((r) => r.state),
    ['off', 'on', 'off'],
    'one on, one off: the late turn_off changed nothing',
  );
});

t.test('a rule that toggles the entity it triggers on is stopped by the self-trigger limit', async (t) => {
  const h = await startHome(
    t,
    [RELAY],
    [
      rule({
        id: 'flip_flop',
        triggers: [{ type: 'state', entity_id: 'switch.hall_relay' }],
        actions: [service('switch.hall_relay', 'toggle')],
      }),
    ],
    { self_trigger_per_minute: 3 },
  );
  await h.tc.entities.call('switch.hall_relay', 'turn_on', {}, { actor: 'test' });
  await h.clock.advance(SECOND);
  const relayChanges = () => h.changes.filter((c) => c.entity_id === 'switch.hall_relay');
  t.same(
    relayChanges().map((c) => [c.new_state, c.context?.actor]),
    [
      ['on', 'test'],
      ['off', 'automation:flip_flop'],
      ['on', 'automation:flip_flop'],
      ['off', 'automation:flip_flop'],
      ['on', 'automation:flip_flop'],
    ],
    'the first change came from outside; its run and three self-caused ones toggled, the fourth was refused',
  );
  t.match(
    h.runs.filter((r) => r.status === 'skipped'),
    [{ automation_id: 'flip_flop', error: /loop stopped: its own actions triggered it more than 3 times in a minute/ }],
  );
  t.match(
    h.warnings(),
    [{ automation_id: 'flip_flop', reason: 'loop', msg: /automation flip_flop skipped: loop stopped/ }],
    'a warning in the log',
  );
  t.equal(h.state('switch.hall_relay'), 'on');
  t.equal(h.backend.control.level(RELAY.bcm), 0, 'the wire agrees with the entity (on = low, active low)');

  await h.clock.advance(120 * SECOND);
  t.equal(relayChanges().length, 5, 'nothing moves afterwards');
});

/**
 * The home automation parts of the built daemon as a process: GPIO pins on the simulated back end
 * and a BME280 on a simulated I2C bus (both loaded as built-in plugins from dist/devices), the
 * entity registry and the automation engine, driven through the CLI socket's control methods as
 * homeagentctl drives them. Then the outputs' safety: the relay's simulated wire (a file the
 * simulator writes, as a multimeter would read the pin) is at its safe level after SIGTERM, and the
 * crash watcher puts it there after SIGKILL. Configuration mistakes refuse the start with exit 78.
 *
 * Time here is real (a daemon): every wait polls with a deadline instead of sleeping a fixed time.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { type DaemonHandle, runHomeagent, spawnDaemon, tempDir } from '../helpers/daemon.js';
import { RpcConnection } from '../helpers/rpc.js';
import { until } from '../helpers/until.js';

const WAIT_MS = 10_000;

const BUTTON = { id: 'hall_button', bcm: 22, direction: 'in', domain: 'button', active_low: true, debounce_ms: 20 };
// An active-low relay board channel: on = low wire, its safe (off) level is a high wire.
const RELAY = { id: 'hall_relay', bcm: 17, direction: 'out', active_low: true, safe: 0 };
// A door strike: locks are critical entities (the agent must ask first; the CLI is the owner).
const LOCK = { id: 'front_door', bcm: 27, direction: 'out', domain: 'lock', safe: 1 };
const SENSOR = { id: 'attic', driver: 'bme280', bus: 1, interval_s: 1, unavailable_after: 2 };

const RELAY_ON = {
  id: 'hall_light_button',
  triggers: [{ type: 'edge', pin: 'hall_button', edge: 'rising' }],
  actions: [{ type: 'service', entity_id: 'switch.hall_relay', service: 'turn_on' }],
};
const GOOD_NIGHT = {
  id: 'good_night',
  triggers: [{ type: 'input', match: 'good ?night', reply: 'Good night, from the rules.' }],
  actions: [{ type: 'delay', seconds: 0 }],
};

const CONFIG = {
  core: { automations: { rules: [RELAY_ON, GOOD_NIGHT] } },
  plugin: {
    gpio: { backend: 'simulated', pins: [BUTTON, RELAY, LOCK] },
    i2c: { buses: [{ bus: 1, backend: 'simulated' }], sensors: [SENSOR] },
  },
};

interface Entity {
  entity_id: string;
  state: unknown;
  attributes: Record<string, unknown>;
  critical: boolean;
}

/** A configuration file (JSON is YAML) in a fresh directory, and the data directory next to it. */
function writeConfig(t: Test, config: object): { config: string; dataDir: string } {
  const dir = tempDir(t, 'ha-home-');
  const file = join(dir, 'config.yaml');
  writeFileSync(file, JSON.stringify(config, null, 2));
  return { config: file, dataDir: join(dir, 'data') };
}

/** The wire level the simulator last wrote for an output ("0" / "1"), or undefined before the first write. */
function wire(dataDir: string, bcm: number): string | undefined {
  const file = join(dataDir, 'plugin-data', 'gpio', 'simulated-gpio', `gpio${bcm}`);
  return existsSync(file) ? readFileSync(file, 'utf8').trim() : undefined;
}

/** The control methods over one CLI socket connection, as homeagentctl calls them. */
class Control {
  private constructor(readonly connection: RpcConnection) {}

  static async open(t: Test, daemon: DaemonHandle): Promise<Control> {
    const connection = await RpcConnection.connect(daemon.socketPath);
    t.teardown(() => connection.close());
    return new Control(connection);
  }

  /** The result; a daemon error fails with its code and message. */
  async call<T>(method: string, params: object = {}): Promise<T> {
    const r = await this.connection.request(method, params);
    if (!r.ok) throw new Error(`${method} failed: ${r.error?.code}: ${r.error?.message}`);
    return r.result as T;
  }

  /** The error of a call that must fail. */
  async error(method: string, params: object): Promise<{ code: string; message: string }> {
    const r = await this.connection.request(method, params);
    if (r.ok || r.error === undefined) throw new Error(`${method} succeeded: ${JSON.stringify(r.result)}`);
    return r.error;
  }

  /** Failed polls in a row of an I2C sensor (i2c.sensors). */
  async failures(sensor: string): Promise<number> {
    const { sensors } = await this.call<{ sensors: Array<{ id: string; failures: number }> }>('i2c.sensors');
    const found = sensors.find((s) => s.id === sensor);
    if (found === undefined) throw new Error(`i2c.sensors does not list ${sensor}`);
    return found.failures;
  }

  async entity(id: string): Promise<Entity> {
    return (await this.call<{ entity: Entity }>('entities.get', { entity: id, history_limit: 0 })).entity;
  }

  /** Waits until the entity's state is `state`; returns the entity. */
  stateBecomes(id: string, state: unknown): Promise<Entity> {
    return until(`${id} to become ${JSON.stringify(state)}`, async () => {
      const entity = await this.entity(id);
      return entity.state === state ? entity : undefined;
    });
  }
}

t.test('GPIO, I2C and automations in the running daemon, through the CLI socket', async (t) => {
  const { config, dataDir } = writeConfig(t, CONFIG);
  const daemon = spawnDaemon(t, { dataDir, env: { HOMEAGENT_CONFIG: config } });
  await daemon.waitForReady();
  const ctl = await Control.open(t, daemon);

  await t.test('entities.list shows the pins and the sensor quantities', async (t) => {
    const entities = await ctl.call<Entity[]>('entities.list');
    const ids = entities.map((e) => e.entity_id);
    for (const id of [
      'button.hall_button',
      'switch.hall_relay',
      'lock.front_door',
      'sensor.attic_temperature',
      'sensor.attic_humidity',
      'sensor.attic_pressure',
    ]) {
      t.ok(ids.includes(id), `${id} is listed`);
    }
    t.match(
      entities.find((e) => e.entity_id === 'switch.hall_relay'),
      { state: 'off', attributes: { bcm: 17, active_low: true } },
    );
    t.match(
      entities.find((e) => e.entity_id === 'lock.front_door'),
      { state: 'locked', critical: true },
    );
    t.equal(wire(dataDir, RELAY.bcm), '1', 'the relay rests at its safe level: high wire (off, active low)');
    const { backend } = await ctl.call<{ backend: { kind: string; crash_protection: string } }>('gpio.pins');
    t.match(backend, { kind: 'simulated', crash_protection: /crash watcher armed/ });
  });

  await t.test('gpio.simulate press → the automation switches the relay on, and its run is logged', async (t) => {
    const pressed = await ctl.call<{ pin: string; press_ms: number }>('gpio.simulate', { pin: 'hall_button', press_ms: 100 });
    t.match(pressed, { pin: 'hall_button', press_ms: 100 });
    const relay = await ctl.stateBecomes('switch.hall_relay', 'on');
    t.equal(relay.state, 'on', 'the relay entity is on');
    t.equal(wire(dataDir, RELAY.bcm), '0', 'and its wire is low');
    const { runs } = await until('the run in the run log', async () => {
      const result = await ctl.call<{ runs: Array<Record<string, unknown>> }>('automations.runs', { id: 'hall_light_button' });
      return result.runs.length > 0 ? result : undefined;
    });
    t.match(runs, [
      {
        automation_id: 'hall_light_button',
        status: 'done',
        trigger: { type: 'edge', pin: 'hall_button', edge: 'rising' },
        steps: [{ type: 'service', status: 'done' }],
      },
    ]);
    t.equal(runs.length, 1, 'one run for one press: the contact bounce was debounced');
  });

  await t.test('i2c.simulate moves the BME280: 23.5 °C reaches the entity', async (t) => {
    await ctl.call('i2c.simulate', { sensor: 'attic', values: { temperature: 23.5 } });
    const temperature = await ctl.stateBecomes('sensor.attic_temperature', 23.5);
    t.match(temperature, { state: 23.5, attributes: { driver: 'bme280', simulated: true } });
  });

  await t.test(`i2c.simulate offline → unavailable after ${SENSOR.unavailable_after} failed readings`, async (t) => {
    const offlineAt = Date.now();
    await ctl.call('i2c.simulate', { sensor: 'attic', offline: true });
    // Polls are interval_s apart: watched every 50 ms (until), a failed reading that did not yet make it
    // unavailable is seen. Failures in a row only grow while it is offline, so two equal counts
    // around one entity read pin that read to that count.
    const whileFailing: unknown[] = [];
    const gone = await until('sensor.attic_temperature to become unavailable', async () => {
      const failuresBefore = await ctl.failures('attic');
      const entity = await ctl.entity('sensor.attic_temperature');
      const failuresAfter = await ctl.failures('attic');
      if (entity.state === 'unavailable') {
        t.ok(failuresAfter >= SENSOR.unavailable_after, `unavailable with ${failuresAfter} failures in a row`);
        return entity;
      }
      if (failuresBefore === failuresAfter && failuresAfter > 0) whileFailing.push(entity.state);
      return undefined;
    });
    t.ok(whileFailing.length > 0, 'a failed reading short of unavailable_after was seen');
    t.same([...new Set(whileFailing)], [23.5], 'and it left the last value standing');
    t.match(gone.attributes, { error: /HA_ERR_I2C_NACK/ }, 'the error names the NACK');
    const history = await ctl.call<{ rows: Array<{ at: number; state: unknown }> }>('entities.history', {
      entity: 'sensor.attic_temperature',
      from: offlineAt - 60_000,
    });
    t.same(
      history.rows.slice(-2).map((r) => r.state),
      [23.5, 'unavailable'],
      'home.db: straight from the last good value to unavailable',
    );
  });

  await t.test('entities.call on a critical entity: the CLI is the owner, no confirmation needed', async (t) => {
    const after = await ctl.call<Entity>('entities.call', { entity: 'lock.front_door', service: 'unlock' });
    t.match(after, { entity_id: 'lock.front_door', state: 'unlocked', critical: true });
    t.equal(wire(dataDir, LOCK.bcm), '0', 'the strike pin is low');
  });

  await t.test('config set core.automations.rules with an invalid cron is refused, naming the rule', async (t) => {
    const broken = { id: 'broken_schedule', triggers: [{ type: 'time', cron: '61 25 * * *' }], actions: [{ type: 'delay', seconds: 1 }] };
    const error = await ctl.error('config.set', { key: 'core.automations.rules', value: [RELAY_ON, GOOD_NIGHT, broken] });
    t.equal(error.code, 'HA_ERR_SETTINGS_INVALID_VALUE');
    t.match(error.message, /core\.automations\.rules/, 'names the key');
    t.match(error.message, /broken_schedule/, 'names the rule');
    t.match(error.message, /cron/, 'and the field');
    const setting = await ctl.call<{ value: Array<{ id: string }>; source: string }>('config.get', { key: 'core.automations.rules' });
    t.same(
      setting.value.map((r) => r.id),
      ['hall_light_button', 'good_night'],
      'the rules stay as they were',
    );
    t.equal(setting.source, config, 'from the file');
    const { automations } = await ctl.call<{ automations: Array<{ id: string; enabled: boolean }> }>('automations.list');
    t.same(
      automations.map((a) => a.id),
      ['hall_light_button', 'good_night'],
      'and the engine still runs them',
    );
  });

  await t.test('a chat message matching an input trigger gets its reply without a language model', async (t) => {
    const receipt = await ctl.call<{ status: string; text?: string }>('agent.chat', { text: 'Good night' });
    t.match(receipt, { status: 'done', text: 'Good night, from the rules.' });
    const { runs } = await until('the good_night run', async () => {
      const result = await ctl.call<{ runs: Array<Record<string, unknown>> }>('automations.runs', { id: 'good_night' });
      return result.runs.length > 0 ? result : undefined;
    });
    t.match(runs, [{ status: 'done', trigger: { type: 'input', text: 'Good night', channel: 'cli' } }]);
  });

  await t.test('SIGTERM: the relay is back at its safe level when the daemon has exited', async (t) => {
    t.equal(wire(dataDir, RELAY.bcm), '0', 'the relay is still on before the stop');
    ctl.connection.close();
    daemon.kill('SIGTERM');
    t.match(await daemon.waitForExit(WAIT_MS), { code: 0, signal: null }, 'a clean exit');
    t.equal(wire(dataDir, RELAY.bcm), '1', 'the relay wire is high: off');
    t.equal(wire(dataDir, LOCK.bcm), '1', 'the strike is back at its safe value (locked)');
  });

  await t.test('SIGKILL: the crash watcher sets the safe level', async (t) => {
    const again = spawnDaemon(t, { dataDir, env: { HOMEAGENT_CONFIG: config } });
    await again.waitForReady();
    const control = await Control.open(t, again);
    await control.call('entities.call', { entity: 'switch.hall_relay', service: 'turn_on' });
    t.equal(wire(dataDir, RELAY.bcm), '0', 'the relay is on');
    const { backend } = await control.call<{ backend: { watcher_pid: number | null } }>('gpio.pins');
    t.type(backend.watcher_pid, 'number', 'a crash watcher runs');
    control.connection.close();
    again.kill('SIGKILL');
    t.match(await again.waitForExit(WAIT_MS), { signal: 'SIGKILL' });
    await until('the crash watcher to write the safe level', () => (wire(dataDir, RELAY.bcm) === '1' ? true : undefined));
    t.pass('the relay wire went high after the crash');
    t.equal(wire(dataDir, LOCK.bcm), '1', 'the strike is locked too');
  });
});

t.test('configuration mistakes refuse the start with exit 78, naming the item', async (t) => {
  await t.test('a pin with bcm 99', async (t) => {
    const { config, dataDir } = writeConfig(t, { plugin: { gpio: { backend: 'simulated', pins: [{ ...RELAY, bcm: 99 }] } } });
    const r = await runHomeagent(['run'], { dataDir, env: { HOMEAGENT_CONFIG: config } });
    t.equal(r.code, 78, 'exit 78 (EX_CONFIG)');
    t.match(r.stderr, /plugin\.gpio\.pins:? ?\[0\]\.bcm/, 'names plugin.gpio.pins [0].bcm');
    t.match(r.stderr, /57/, 'with the largest BCM number');
    t.match(r.stderr, /found 99/, 'and what was found');
    t.notOk(existsSync(join(dataDir, 'home.db')), 'nothing was written');
  });

  await t.test('an automation with an invalid cron', async (t) => {
    const broken = { id: 'broken_schedule', triggers: [{ type: 'time', cron: '61 25 * * *' }], actions: [{ type: 'delay', seconds: 1 }] };
    const { config, dataDir } = writeConfig(t, { core: { automations: { rules: [RELAY_ON, broken] } } });
    const r = await runHomeagent(['run'], { dataDir, env: { HOMEAGENT_CONFIG: config } });
    t.equal(r.code, 78, 'exit 78 (EX_CONFIG)');
    t.match(r.stderr, /core\.automations\.rules/, 'names the key');
    t.match(r.stderr, /broken_schedule: triggers\[0\]\.cron/, 'names the rule and its field');
    t.notMatch(r.stderr, /hall_light_button/, 'not the valid rule');
    t.notOk(existsSync(join(dataDir, 'home.db')), 'nothing was written');
  });
});

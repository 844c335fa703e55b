/**
 * The homeassistant plugin in the built daemon (dist/plugins/homeassistant, loaded by the plugin
 * host from its manifest and the plugin.homeassistant section) against the scripted Home
 * Assistant on loopback: the exposed entities show up in `homeagentctl entities list`, a call from
 * the CLI reaches HA as call_service and the new state comes back, an offline local intent in
 * Chinese finds the HA light by its HA alias and switches it through HA, and after HA restarts with
 * a changed house the daemon reconnects and shows the new states.
 *
 * Time here is real (a daemon): every wait polls with a deadline instead of sleeping a fixed time.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { spawnDaemon, tempDir } from '../helpers/daemon.js';
import { HaPeer } from '../helpers/ha-peer.js';
import { until } from '../helpers/until.js';

const TOKEN = 'integration-ha-long-lived-token';

interface Entity {
  entity_id: string;
  state: unknown;
  owner: string;
  critical: boolean;
  area: string | null;
}

t.test('Home Assistant entities in the daemon: listed, called through HA, back after an HA restart', async (t) => {
  const peer = new HaPeer({ token: TOKEN });
  await peer.start();
  t.teardown(() => peer.stop());
  const dir = tempDir(t, 'ha-homeassistant-');
  const config = join(dir, 'config.yaml');
  writeFileSync(
    config,
    JSON.stringify({
      plugin: {
        homeassistant: {
          enabled: true,
          url: peer.url,
          token: TOKEN,
          include: ['input_boolean'],
          reconnect_min_ms: 100,
          reconnect_max_ms: 1000,
        },
      },
    }),
  );
  const daemon = spawnDaemon(t, { dataDir: join(dir, 'data'), env: { HOMEAGENT_CONFIG: config } });
  await daemon.waitForReady();

  const status = await until('the plugin connected and read HA', async () => {
    const result = await daemon.ctl(['--json', 'homeassistant']);
    const answer = result.code === 0 ? (result.json() as { state: string; last_sync: string | null; entities: number }) : undefined;
    return answer?.state === 'ready' && answer.last_sync !== null ? answer : undefined;
  });
  t.equal(status.entities, 5);

  const list = await daemon.ctl(['--json', 'entities', 'list']);
  const entities = list.json() as Entity[];
  const ours = entities.filter((e) => e.owner === 'plugin:homeassistant').map((e) => e.entity_id);
  t.same(ours.sort(), ['cover.garage_door', 'light.kitchen', 'lock.front_door', 'sensor.living_room_temperature', 'switch.guest_mode']);
  t.match(
    entities.find((e) => e.entity_id === 'lock.front_door'),
    { critical: true, area: 'hallway', state: 'locked' },
  );

  const call = await daemon.ctl(['--json', 'entities', 'call', 'kitchen ceiling', 'turn_on', '--data', '{"brightness":128}']);
  t.equal(call.code, 0, call.stderr);
  t.same(peer.calls.at(-1), {
    domain: 'light',
    service: 'turn_on',
    service_data: { brightness: 128 },
    target: { entity_id: 'light.kitchen' },
  });
  t.match(call.json(), { entity_id: 'light.kitchen', state: 'on' });

  // Offline (no LLM): the local intent engine finds the HA light by its HA alias and switches it through HA.
  const chat = await daemon.ctl(['chat', '-m', '把厨房灯关掉'], { timeoutMs: 30_000 });
  t.equal(chat.code, 0, chat.stderr);
  await until('the intent reached HA', () => (peer.calls.at(-1)?.service === 'turn_off' ? true : undefined));
  t.match(peer.calls.at(-1), { domain: 'light', service: 'turn_off', target: { entity_id: 'light.kitchen' } });

  const health = await daemon.ctl(['--json', 'plugins', 'health', 'homeassistant']);
  t.match(health.stdout, /connected to Home Assistant 2025\.11\.3/);

  await peer.restart((house) => {
    const sensor = house.states.find((s) => s.entity_id === 'sensor.living_room_temperature');
    if (sensor) sensor.state = '19.0';
    house.ha_version = '2025.12.0';
  });
  await until('the new temperature after the restart', async () => {
    const result = await daemon.ctl(['--json', 'entities', 'get', 'sensor.living_room_temperature']);
    const answer = result.code === 0 ? (result.json() as { entity?: Entity } & Entity) : undefined;
    const state = answer?.entity?.state ?? answer?.state;
    return state === 19 ? true : undefined;
  });
  const after = (await daemon.ctl(['--json', 'homeassistant'])).json() as { ha_version: string; connections: number };
  t.equal(after.ha_version, '2025.12.0');
  t.ok(after.connections >= 2, 'reconnected');
});

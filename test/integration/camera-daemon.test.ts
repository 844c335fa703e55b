/**
 * The camera plugin in the built daemon (dist/devices/camera, loaded as a built-in plugin) with
 * fswebcam's TEST device (HOMEAGENT_PLUGIN_CAMERA_DEVICE=TEST): a snapshot asked through
 * homeagentctl lands as a JPEG in <data>/media/sha256/.. and is named by the entity's attributes,
 * and an automation takes one when a switch turns on (a state trigger: the relay of a simulated
 * GPIO pin, switched through the CLI socket). Without a camera, the daemon starts all the same.
 *
 * Time here is real (a daemon): every wait polls with a deadline instead of sleeping a fixed time.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { readJpegSize } from '../../devices/camera/jpeg-size.js';
import { tempDir } from '../helpers/daemon.js';
import { type InProcessDaemonHandle as DaemonHandle, startDaemon } from '../helpers/in-process-daemon.js';
import { RpcConnection } from '../helpers/rpc.js';
import { fswebcamMissing } from '../helpers/system-tools.js';
import { until } from '../helpers/until.js';

const RELAY = { id: 'hall_light', bcm: 17, direction: 'out', safe: 0 };
const PICTURE_WHEN_LIGHT = {
  id: 'hall_light_picture',
  triggers: [{ type: 'state', entity_id: 'switch.hall_light', to: 'on' }],
  actions: [{ type: 'service', entity_id: 'camera.hall_camera', service: 'snapshot' }],
};
const CONFIG = {
  core: { automations: { rules: [PICTURE_WHEN_LIGHT] } },
  plugin: {
    gpio: { backend: 'simulated', pins: [RELAY] },
    camera: { name: 'Hall camera', area: 'hall', resolution: '320x240', skip_frames: 0 },
  },
};

interface Run {
  id: string;
  status: string;
  steps: Array<{ type: string; status: string }>;
}

interface Entity {
  entity_id: string;
  state: unknown;
  area: string | null;
  attributes: Record<string, unknown>;
}

/** A configuration file (JSON is YAML) in a fresh directory, and the data directory next to it. */
function writeConfig(t: Test, config: object): { config: string; dataDir: string } {
  const dir = tempDir(t, 'ha-camera-');
  const file = join(dir, 'config.yaml');
  writeFileSync(file, JSON.stringify(config, null, 2));
  return { config: file, dataDir: join(dir, 'data') };
}

async function call<T>(connection: RpcConnection, method: string, params: object = {}): Promise<T> {
  const r = await connection.request(method, params);
  if (!r.ok) throw new Error(`${method} failed: ${r.error?.code}: ${r.error?.message}`);
  return r.result as T;
}

/** The stored picture a digest names, checked to be a JPEG of 320x240. */
function storedJpeg(t: Test, dataDir: string, digest: unknown): Buffer {
  t.match(digest, /^[0-9a-f]{64}$/, 'the entity names a sha256 digest');
  const file = join(dataDir, 'media', 'sha256', String(digest).slice(0, 2), String(digest));
  t.ok(existsSync(file), `the picture is in the media store (${file})`);
  const jpeg = readFileSync(file);
  t.same([...jpeg.subarray(0, 3)], [0xff, 0xd8, 0xff], 'it is a JPEG');
  t.same(readJpegSize(jpeg), { width: 320, height: 240 }, 'of the configured size');
  return jpeg;
}

t.test('snapshots from homeagentctl and from an automation', { skip: fswebcamMissing() }, async (t) => {
  const { config, dataDir } = writeConfig(t, CONFIG);
  const daemon: DaemonHandle = await startDaemon(t, {
    dataDir,
    env: { HOMEAGENT_CONFIG: config, HOMEAGENT_PLUGIN_CAMERA_DEVICE: 'TEST' },
  });
  await daemon.waitForReady();
  const connection = await RpcConnection.connect(daemon.socketPath);
  t.teardown(() => connection.close());
  const entity = async (id: string) =>
    (await call<{ entity: Entity }>(connection, 'entities.get', { entity: id, history_limit: 0 })).entity;

  await t.test('the camera is an entity in its area, idle', async (t) => {
    const camera = await entity('camera.hall_camera');
    t.equal(camera.state, 'idle');
    t.equal(camera.area, 'hall');
    t.same(camera.attributes, {}, 'no picture yet');
  });

  await t.test('homeagentctl entities call ... snapshot stores a picture', async (t) => {
    const r = await daemon.ctl(['entities', 'call', 'camera.hall_camera', 'snapshot', '--json']);
    t.equal(r.code, 0, r.stderr);
    const after = r.json() as Entity;
    t.equal(after.entity_id, 'camera.hall_camera');
    const jpeg = storedJpeg(t, dataDir, after.attributes.last_picture_digest);
    t.equal(after.attributes.bytes, jpeg.length);
    t.same([after.attributes.width, after.attributes.height], [320, 240]);
    t.match(after.attributes.last_picture_at, /^\d{4}-\d\d-\d\dT/);
  });

  await t.test('an automation takes a picture when the hall light turns on', async (t) => {
    const before = (await entity('camera.hall_camera')).attributes.last_picture_at;
    await call(connection, 'entities.call', { entity: 'switch.hall_light', service: 'turn_on' });
    const after = await until('the automation to take a picture', async () => {
      const camera = await entity('camera.hall_camera');
      return camera.attributes.last_picture_at !== before ? camera : undefined;
    });
    storedJpeg(t, dataDir, after.attributes.last_picture_digest);
    const { runs } = await until('the run to be recorded', async () => {
      const result = await call<{ runs: Run[] }>(connection, 'automations.runs', { id: PICTURE_WHEN_LIGHT.id });
      return result.runs.length > 0 ? result : undefined;
    });
    t.equal(runs.length, 1, 'one run');
    t.equal(runs[0]?.status, 'done');
    t.same(
      runs[0]?.steps.map((step) => [step.type, step.status]),
      [['service', 'done']],
    );
    const audit = await daemon.waitForLog(
      (line) => line.json?.action === 'camera.snapshot' && line.json.asked_by === `automation:${PICTURE_WHEN_LIGHT.id}`,
      5000,
    );
    t.equal(audit.json?.actor, 'plugin:camera', 'audited, the plugin as actor');
    t.equal(audit.json?.digest, after.attributes.last_picture_digest, 'naming the picture');
    t.equal(audit.json?.run_id, runs[0]?.id, 'and the run that asked');
  });

  await t.test('the plugin runs and offers the camera_snapshot tool', async (t) => {
    const { plugins } = await call<{ plugins: Array<{ name: string; state: string; tools: string[] }> }>(connection, 'plugins.list');
    const camera = plugins.find((p) => p.name === 'camera');
    t.equal(camera?.state, 'running');
    t.same(camera?.tools, ['camera_snapshot']);
  });
});

t.test('without a camera the daemon starts and offers none', async (t) => {
  const { config, dataDir } = writeConfig(t, { plugin: { camera: { device: '/dev/video97' } } });
  const daemon = await startDaemon(t, { dataDir, env: { HOMEAGENT_CONFIG: config } });
  await daemon.waitForReady();
  const connection = await RpcConnection.connect(daemon.socketPath);
  t.teardown(() => connection.close());
  t.same(await call(connection, 'entities.list', { domain: 'camera' }), []);
  const line = await daemon.waitForLog((l) => l.msg === 'camera not offered: no camera at /dev/video97 (plugin.camera.device)', 5000);
  t.ok(line, 'the log says why');
});

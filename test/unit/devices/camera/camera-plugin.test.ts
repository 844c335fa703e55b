// The camera device plugin (devices/camera/camera-plugin.ts) with fswebcam's TEST device (colour
// bars) through a context whose media store is a real MediaStore in a temporary folder: the entity
// and its snapshot service, the camera_snapshot tool, settings read at each capture, one fswebcam
// per device at a time, and a home without a camera (no device node, no fswebcam).
import { chmodSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { CAMERA_IDLE, CameraPlugin, type CameraPluginOptions, SNAPSHOT_TOOL } from '../../../../devices/camera/camera-plugin.js';
import { readJpegSize } from '../../../../devices/camera/jpeg-size.js';
import { checkRules } from '../../../../src/automation/rule-check.js';
import type { AutomationRule } from '../../../../src/config/schema.js';
import { DOMAIN_SERVICES, ENTITY_DOMAINS, type EntityInfo, ToolError } from '../../../../src/sdk/index.js';
import { findOnPath } from '../../../../src/shared/find-on-path.js';
import type { MediaStore } from '../../../../src/store/media-store.js';
import { createTestPluginContext, type TestPluginContext } from '../../../helpers/plugin-context.js';
import { fswebcamMissing } from '../../../helpers/system-tools.js';

const SETTINGS = {
  enabled: true,
  device: 'TEST',
  name: 'Front door',
  area: 'hall',
  resolution: '320x240',
  jpeg_quality: 85,
  skip_frames: 0,
  timeout_ms: 20_000,
  max_bytes: 8 * 1024 * 1024,
};
const CLI = { actor: 'cli' };
const WALL = Date.UTC(2026, 11, 1, 4, 0, 0);
const skip = fswebcamMissing();

const testdirs = new WeakSet<Test>();

/** A new empty folder in the test's directory (t.testdir() wipes the directory when called again, so it is called once). */
function folder(t: Test, name: string): string {
  if (!testdirs.has(t)) {
    t.testdir({});
    testdirs.add(t);
  }
  const dir = join(t.testdirName, name);
  mkdirSync(dir);
  return dir;
}
let folders = 0;

interface Camera {
  tc: TestPluginContext;
  plugin: CameraPlugin;
  mediaDir: string;
  store: MediaStore;
  /** Files in the media store. */
  files(): string[];
  snapshot(): Promise<EntityInfo>;
  tool(attached?: Array<{ digest: string; mime: string }>): Promise<Record<string, unknown>>;
}

/** The plugin on a test context plus a real MediaStore (as ctx.media); stopped and closed at teardown. */
async function startCamera(t: Test, settings: Record<string, unknown> = {}, options: CameraPluginOptions = {}): Promise<Camera> {
  const dir = folder(t, `camera-${++folders}`);
  const mediaDir = join(dir, 'media');
  const tc = createTestPluginContext({ name: 'camera', dataDir: dir, settings: { ...SETTINGS, ...settings } });
  const store = tc.media;
  const plugin = new CameraPlugin(tc.context, { now: () => WALL, ...options });
  t.teardown(async () => {
    await plugin.stop();
    await tc.close();
  });
  await plugin.start();
  const files = (): string[] => {
    try {
      return readdirSync(join(mediaDir, 'sha256'), { recursive: true, withFileTypes: true })
        .filter((entry) => entry.isFile())
        .map((entry) => entry.name);
    } catch {
      return [];
    }
  };
  return {
    tc,
    plugin,
    mediaDir,
    store,
    files,
    snapshot: () => tc.entities.call('camera.front_door', 'snapshot', {}, CLI),
    tool: async (attached = []) =>
      (await tc.call(SNAPSHOT_TOOL, {}, { attachImage: (image) => void attached.push(image) })) as Record<string, unknown>,
  };
}

/** A folder with an `fswebcam` script that logs its runs to `log` and runs `body`; its PATH makes the plugin use it. */
function fakeFswebcam(t: Test, body: string): { env: NodeJS.ProcessEnv; log: string } {
  const dir = folder(t, `bin-${++folders}`);
  const log = join(dir, 'runs.log');
  writeFileSync(log, '');
  const script = join(dir, 'fswebcam');
  writeFileSync(script, `#!/bin/sh\nLOG='${log}'\necho start >> "$LOG"\n${body}\n`);
  chmodSync(script, 0o755);
  return { env: { PATH: dir }, log };
}

async function toolError(promise: Promise<unknown>): Promise<ToolError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ToolError) return error;
    throw error;
  }
  throw new Error('expected a ToolError');
}

t.test('camera is a domain with one service, not critical, and a rule may call it', async (t) => {
  t.ok(ENTITY_DOMAINS.includes('camera'));
  t.same(DOMAIN_SERVICES.camera, ['snapshot']);
  const rule: AutomationRule = {
    id: 'door_picture',
    name: '',
    enabled: true,
    mode: 'single',
    conditions: [],
    triggers: [{ type: 'state', entity_id: 'binary_sensor.door', to: 'on' }],
    actions: [{ type: 'service', entity_id: 'camera.front_door', service: 'snapshot', data: {} }],
  };
  t.equal(checkRules([rule]).length, 1, 'camera.snapshot passes the rule check');
  const wrong: AutomationRule = { ...rule, actions: [{ type: 'service', entity_id: 'camera.front_door', service: 'turn_on', data: {} }] };
  t.throws(() => checkRules([wrong]), /camera entities have no service turn_on \(they offer snapshot\)/);
  const withData: AutomationRule = {
    ...rule,
    actions: [{ type: 'service', entity_id: 'camera.front_door', service: 'snapshot', data: { x: 1 } }],
  };
  t.throws(() => checkRules([withData]), /it takes no data/);
});

t.test('the entity: snapshot stores a JPEG of the configured size and names it', { skip }, async (t) => {
  const cam = await startCamera(t);
  const before = await cam.tc.context.entities.get('camera.front_door');
  t.equal(before.state, CAMERA_IDLE);
  t.equal(before.area, 'hall');
  t.equal(before.name, 'Front door');
  t.same(before.services, ['snapshot']);
  t.equal(before.critical, false);

  const after = await cam.snapshot();
  const digest = after.attributes.last_picture_digest as string;
  t.match(digest, /^[0-9a-f]{64}$/);
  t.equal(after.state, CAMERA_IDLE, 'a picture changes attributes, not the state');
  t.same(after.attributes, {
    last_picture_digest: digest,
    last_picture_at: new Date(WALL).toISOString(),
    width: 320,
    height: 240,
    bytes: after.attributes.bytes,
  });
  const file = join(cam.mediaDir, 'sha256', digest.slice(0, 2), digest);
  const jpeg = readFileSync(file);
  t.same([...jpeg.subarray(0, 3)], [0xff, 0xd8, 0xff], 'the stored file is a JPEG');
  t.same(readJpegSize(jpeg), { width: 320, height: 240 }, 'of the configured size');
  t.equal(after.attributes.bytes, jpeg.length);
  t.same(cam.tc.audits, [{ action: 'camera.snapshot', details: { asked_by: 'cli', digest, width: 320, height: 240, bytes: jpeg.length } }]);
  t.match((await cam.plugin.health()).detail, /camera\.front_door on TEST, last picture 2026-12-01T04:00:00\.000Z/);

  // fswebcam's TEST picture is the same every time: the second one is not stored again.
  const again = await cam.snapshot();
  t.equal(again.attributes.last_picture_digest, digest, 'same bytes, same digest');
  t.same(cam.files(), [digest], 'stored once');
  t.equal(cam.tc.audits.length, 2, 'each picture is audited');
});

t.test('settings are read again at each capture', { skip }, async (t) => {
  const cam = await startCamera(t);
  cam.tc.context.settings.set('resolution', '160x120');
  const small = await cam.snapshot();
  t.same([small.attributes.width, small.attributes.height], [160, 120]);
  t.same(readJpegSize(cam.store.read(small.attributes.last_picture_digest as string) ?? Buffer.alloc(0)), { width: 160, height: 120 });

  cam.tc.context.settings.set('resolution', '9999x9999');
  await t.rejects(cam.snapshot(), { code: 'HA_ERR_CAMERA_OPTION', message: /^plugin\.camera\.resolution: must be WxH/ });
  const error = await toolError(cam.tool());
  t.equal(error.info.reason, 'failed');
  t.match(error.info.detail, /plugin\.camera\.resolution/);
});

t.test('the tool takes a picture, shows it to the model and says what it is', { skip }, async (t) => {
  const cam = await startCamera(t);
  const def = cam.tc.tools.get(SNAPSHOT_TOOL);
  t.equal(def?.tier, 'act');
  t.match(def?.description, /private/);
  const attached: Array<{ digest: string; mime: string }> = [];
  const result = await cam.tool(attached);
  const digest = result.digest as string;
  t.same(result, {
    ok: true,
    digest,
    mime: 'image/jpeg',
    width: 320,
    height: 240,
    bytes: cam.store.read(digest)?.length,
    taken_at: new Date(WALL).toISOString(),
  });
  t.same(attached, [{ digest, mime: 'image/jpeg' }], 'attached for the next request');
  t.equal((await cam.tc.context.entities.get('camera.front_door')).attributes.last_picture_digest, digest);
  t.equal(cam.tc.audits[0]?.details.asked_by, 'agent');
});

t.test('concurrent snapshots share one fswebcam run', { skip }, async (t) => {
  const real = findOnPath('fswebcam') as string;
  // The real fswebcam inside a wrapper that logs when it starts and ends.
  const fake = fakeFswebcam(t, `'${real}' "$@"\nrc=$?\necho end >> "$LOG"\nexit $rc`);
  const cam = await startCamera(t, {}, { env: fake.env });
  const [a, b, c] = await Promise.all([cam.snapshot(), cam.snapshot(), cam.tool()]);
  t.equal(readFileSync(fake.log, 'utf8'), 'start\nend\n', 'one fswebcam for three requests');
  t.equal(a.attributes.last_picture_digest, b.attributes.last_picture_digest);
  t.equal(c.digest, a.attributes.last_picture_digest);
  await cam.snapshot();
  t.equal(readFileSync(fake.log, 'utf8'), 'start\nend\nstart\nend\n', 'a later request runs fswebcam again, after the first ended');
});

t.test('capture failures reach the tool as unavailable / timeout', async (t) => {
  const silent = fakeFswebcam(t, 'exit 0');
  const cam = await startCamera(t, {}, { env: silent.env });
  const unavailable = await toolError(cam.tool());
  t.equal(unavailable.info.reason, 'unavailable');
  t.match(unavailable.info.detail, /camera TEST is not available: fswebcam produced no picture/);
  await t.rejects(cam.snapshot(), { code: 'HA_ERR_CAMERA_UNAVAILABLE' });
  t.same(cam.files(), [], 'nothing stored');
  t.same(cam.tc.audits, [], 'nothing audited');

  const slow = fakeFswebcam(t, `exec '${findOnPath('sleep')}' 30`);
  const late = await startCamera(t, { timeout_ms: 300 }, { env: slow.env });
  const timeout = await toolError(late.tool());
  t.equal(timeout.info.reason, 'timeout');
  t.match(timeout.info.detail, /gave no picture within 300 ms/);
});

t.test('a home without a camera: no entity, no tool, healthy, and says why', async (t) => {
  const noDevice = await startCamera(t, { device: '/dev/video97' });
  t.same(await noDevice.tc.context.entities.list({ domain: 'camera' }), []);
  t.equal(noDevice.tc.tools.get(SNAPSHOT_TOOL), undefined);
  t.same(await noDevice.plugin.health(), {
    ok: true,
    detail: 'no camera at /dev/video97 (plugin.camera.device)',
    detail_zh: '/dev/video97 没有摄像头（plugin.camera.device）',
  });

  const emptyPath = folder(t, 'empty-bin');
  const noProgram = await startCamera(t, {}, { env: { PATH: emptyPath } });
  t.same(await noProgram.tc.context.entities.list({ domain: 'camera' }), []);
  t.equal(noProgram.tc.tools.get(SNAPSHOT_TOOL), undefined);
  t.same(await noProgram.plugin.health(), {
    ok: true,
    detail: 'fswebcam is not installed (apt install fswebcam)',
    detail_zh: '没有安装 fswebcam（apt install fswebcam）',
  });
});

t.test('a setting fswebcam cannot be given refuses the start, naming the key', async (t) => {
  for (const [key, value, pattern] of [
    ['resolution', '9999x9999', /^plugin\.camera\.resolution: must be WxH with each side 16\.\.4096, got "9999x9999"$/],
    ['device', '/dev/sda', /^plugin\.camera\.device: must be TEST, \/dev\/videoN/],
    ['jpeg_quality', 0, /^plugin\.camera\.jpeg_quality: must be an integer from 1 to 100/],
  ] as const) {
    const dir = folder(t, key);
    const tc = createTestPluginContext({ name: 'camera', dataDir: dir, settings: { ...SETTINGS, [key]: value } });
    t.teardown(() => tc.close());
    const plugin = new CameraPlugin(tc.context);
    await t.rejects(plugin.start(), { code: 'HA_ERR_CAMERA_OPTION', message: pattern, details: { key: `plugin.camera.${key}` } });
    t.same(await tc.context.entities.list(), [], `${key}: nothing registered`);
  }
});

t.test('stop removes the entity and the tool', { skip }, async (t) => {
  const cam = await startCamera(t);
  const picture = cam.snapshot();
  await cam.plugin.stop();
  await picture;
  t.same(await cam.tc.context.entities.list({ domain: 'camera' }), []);
  t.equal(cam.tc.tools.get(SNAPSHOT_TOOL), undefined);
  t.equal(cam.files().length, 1, 'the picture under way when stop was called was finished and stored');
});

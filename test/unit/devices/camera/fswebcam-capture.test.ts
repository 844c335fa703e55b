import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { type CaptureOptions, captureJpeg, checkCaptureOptions, fswebcamArgs } from '../../../../devices/camera/fswebcam-capture.js';
import { readJpegSize } from '../../../../devices/camera/jpeg-size.js';
import { fswebcamMissing } from '../../../helpers/system-tools.js';

const GOOD: CaptureOptions = { device: 'TEST', resolution: '320x240', jpegQuality: 85, skipFrames: 0, timeoutMs: 20_000 };

/** A folder holding a fake `fswebcam` shell script; PATH set to it makes captureJpeg run the fake. */
function fakeFswebcam(t: Test, body: string): { env: NodeJS.ProcessEnv; marker: string; argsFile: string } {
  const dir = t.testdir({});
  const marker = join(dir, 'ran');
  const argsFile = join(dir, 'args');
  const script = join(dir, 'fswebcam');
  writeFileSync(script, `#!/bin/sh\necho ran > '${marker}'\nfor a in "$@"; do printf '%s\\n' "$a"; done > '${argsFile}'\n${body}\n`);
  chmodSync(script, 0o755);
  return { env: { PATH: dir }, marker, argsFile };
}

async function rejection(promise: Promise<unknown>): Promise<{ code?: string; message: string; details?: Record<string, unknown> }> {
  try {
    await promise;
  } catch (error) {
    return error as { code?: string; message: string; details?: Record<string, unknown> };
  }
  throw new Error('expected a rejection');
}

for (const [resolution, width, height] of [
  ['320x240', 320, 240],
  ['640x480', 640, 480],
] as const) {
  t.test(`TEST device gives a ${resolution} JPEG`, { skip: fswebcamMissing() }, async (t) => {
    let tick = 1000;
    const result = await captureJpeg({ ...GOOD, resolution }, { now: () => (tick += 7) });
    t.same([...result.jpeg.subarray(0, 3)], [0xff, 0xd8, 0xff], 'starts with the JPEG magic');
    t.equal(result.width, width);
    t.equal(result.height, height);
    t.equal(result.ms, 7, 'duration comes from the injected clock');
    t.same(readJpegSize(result.jpeg), { width, height }, 'the SOF parser reads the produced JPEG');
  });
}

t.test('fswebcam gets an argument array, not a shell line', async (t) => {
  const fake = fakeFswebcam(t, 'exit 0');
  const options: CaptureOptions = {
    device: '/dev/v4l/by-id/usb-Logi_C270_ABC-video-index0',
    resolution: '640x480',
    jpegQuality: 90,
    skipFrames: 5,
    timeoutMs: 5000,
  };
  const error = await rejection(captureJpeg(options, { env: fake.env }));
  t.equal(error.code, 'HA_ERR_CAMERA_UNAVAILABLE', 'no picture on stdout');
  t.match(error.message, /usb-Logi_C270_ABC-video-index0/);
  t.ok(existsSync(fake.marker), 'the fake fswebcam ran (so the refusals below prove something)');
  t.same(readFileSync(fake.argsFile, 'utf8').trimEnd().split('\n'), fswebcamArgs(options));
  t.same(fswebcamArgs(options), ['-d', options.device, '-r', '640x480', '--jpeg', '90', '-S', '5', '--no-banner', '-q', '-']);
});

const BAD: Array<[keyof CaptureOptions, unknown]> = [
  ['device', '/dev/video0; touch /tmp/pwned'],
  ['device', '$(touch /tmp/pwned)'],
  ['device', '`id`'],
  ['device', '/dev/video0 && id'],
  ['device', '/dev/video0\n'],
  ['device', '/dev/v4l/by-id/../../../etc/passwd'],
  ['device', '/dev/v4l/by-id/-d'],
  ['device', '-d'],
  ['device', 'test'],
  ['device', '/dev/sda'],
  ['device', ''],
  ['device', 42],
  ['resolution', '320x240;id'],
  ['resolution', '320x240 --exec id'],
  ['resolution', '$(id)'],
  ['resolution', '320X240'],
  ['resolution', '15x240'],
  ['resolution', '320x4097'],
  ['resolution', '0x0'],
  ['resolution', ' 320x240'],
  ['resolution', '320x240\n'],
  ['jpegQuality', 0],
  ['jpegQuality', 101],
  ['jpegQuality', 50.5],
  ['jpegQuality', Number.NaN],
  ['jpegQuality', '80'],
  ['skipFrames', -1],
  ['skipFrames', 101],
  ['skipFrames', 1.5],
  ['timeoutMs', 0],
  ['timeoutMs', 600_001],
];

t.test('every bad option is refused before fswebcam is spawned', async (t) => {
  const fake = fakeFswebcam(t, 'exit 0');
  for (const [option, value] of BAD) {
    const options = { ...GOOD, [option]: value } as CaptureOptions;
    const error = await rejection(captureJpeg(options, { env: fake.env }));
    t.equal(error.code, 'HA_ERR_CAMERA_OPTION', `${option}=${JSON.stringify(value)} refused`);
    t.equal(error.details?.option, option, 'the error names the option');
    t.match(error.message, option);
    t.throws(() => checkCaptureOptions(options), { code: 'HA_ERR_CAMERA_OPTION' });
  }
  t.notOk(existsSync(fake.marker), 'the fake fswebcam never ran');
});

t.test('good edge values pass the check', async (t) => {
  for (const options of [
    { ...GOOD, device: '/dev/video0', resolution: '16x16', jpegQuality: 1, skipFrames: 0, timeoutMs: 1 },
    { ...GOOD, device: '/dev/video255', resolution: '4096x4096', jpegQuality: 100, skipFrames: 100, timeoutMs: 600_000 },
    { ...GOOD, device: '/dev/v4l/by-path/platform-fe980000.usb-usb-0:1.2:1.0-video-index0' },
  ]) {
    t.same(checkCaptureOptions(options), {
      width: Number(options.resolution.split('x')[0]),
      height: Number(options.resolution.split('x')[1]),
    });
  }
});

t.test('a device that does not exist is unavailable, named in the error', { skip: fswebcamMissing() }, async (t) => {
  const error = await rejection(captureJpeg({ ...GOOD, device: '/dev/video9' }));
  t.equal(error.code, 'HA_ERR_CAMERA_UNAVAILABLE');
  t.match(error.message, '/dev/video9');
});

t.test('fswebcam missing from PATH is unavailable with the install hint', async (t) => {
  const error = await rejection(captureJpeg(GOOD, { env: { PATH: t.testdir({}) } }));
  t.equal(error.code, 'HA_ERR_CAMERA_UNAVAILABLE');
  t.equal(error.message, 'fswebcam is not installed (apt install fswebcam)');
});

t.test('a failing fswebcam is unavailable, with its last message', async (t) => {
  const fake = fakeFswebcam(t, 'printf "\\033[31mNo such device\\033[0m\\n" >&2\nexit 1');
  const error = await rejection(captureJpeg({ ...GOOD, device: '/dev/video3' }, { env: fake.env }));
  t.equal(error.code, 'HA_ERR_CAMERA_UNAVAILABLE');
  t.match(error.message, '/dev/video3');
  t.match(error.message, 'exited with status 1 (fswebcam: No such device)');
});

t.test('output that is not a JPEG is unavailable; a JPEG without a frame header is an image error', async (t) => {
  const text = fakeFswebcam(t, 'echo "hello"');
  const notJpeg = await rejection(captureJpeg(GOOD, { env: text.env }));
  t.equal(notJpeg.code, 'HA_ERR_CAMERA_UNAVAILABLE');
  t.match(notJpeg.message, '6 bytes that are not a JPEG');

  const truncated = fakeFswebcam(t, "printf '\\377\\330\\377\\340\\000\\020JFIF'");
  const cut = await rejection(captureJpeg(GOOD, { env: truncated.env }));
  t.equal(cut.code, 'HA_ERR_CAMERA_IMAGE');
  t.match(cut.message, 'truncated');
});

t.test('a hanging fswebcam is killed at the timeout', async (t) => {
  const fake = fakeFswebcam(t, 'exec /bin/sleep 600');
  const error = await rejection(captureJpeg({ ...GOOD, timeoutMs: 50 }, { env: fake.env }));
  t.equal(error.code, 'HA_ERR_CAMERA_TIMEOUT');
  t.match(error.message, '50 ms');
});

t.test('output beyond maxBytes is refused', async (t) => {
  const fake = fakeFswebcam(t, "printf '\\377\\330\\377'; exec /bin/cat /dev/zero");
  const error = await rejection(captureJpeg(GOOD, { env: fake.env, maxBytes: 1024 }));
  t.equal(error.code, 'HA_ERR_CAMERA_IMAGE');
  t.match(error.message, 'more than 1024 bytes');
});

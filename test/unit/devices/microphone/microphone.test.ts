import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { arecordMessage, checkCaptureName, Microphone, type MicrophoneStatus } from '../../../../devices/microphone/microphone.js';
import { alsaTestDevices } from '../../../helpers/alsa-test-devices.js';
import { arecordMissing } from '../../../helpers/system-tools.js';
import { until } from '../../../helpers/until.js';
import { expectError } from '../../fixtures/support.js';

/** A clock whose timers fire only when the test says so. */
class StepClock {
  timers: { fn: () => void; ms: number; cancelled: boolean }[] = [];
  now = (): number => 1000;
  setTimer = (fn: () => void, ms: number) => {
    const timer = { fn, ms, cancelled: false };
    this.timers.push(timer);
    return { cancel: () => (timer.cancelled = true) };
  };
  fireLast(): number {
    const timer = this.timers.at(-1);
    if (!timer || timer.cancelled) throw new Error('no timer to fire');
    timer.fn();
    return timer.ms;
  }
}

/** Records from `mic` until `count` samples arrived, then stops (the file PCM is unpaced and endless). */
async function recordSamples(
  t: Test,
  infile: Buffer,
  format: { channels: 1 | 2; format: 'S16_LE' | 'S32_LE' },
  count: number,
): Promise<Int16Array> {
  const dir = t.testdir({ 'mic.raw': infile });
  const { env } = alsaTestDevices(dir, { micInfile: join(dir, 'mic.raw') });
  const got: Int16Array[] = [];
  let total = 0;
  let stopped: Promise<void> | undefined;
  const mic = new Microphone({
    device: 'mic',
    sampleRate: 16000,
    ...format,
    restartBackoffMs: 100,
    restartBackoffMaxMs: 1000,
    env,
    onAudio(samples) {
      got.push(samples);
      total += samples.length;
      if (total >= count && !stopped) stopped = mic.stop();
    },
  });
  mic.start();
  await until('the samples', () => (stopped ? true : undefined));
  await stopped;
  t.equal(mic.status().state, 'stopped');
  const all = new Int16Array(total);
  let at = 0;
  for (const part of got) {
    all.set(part, at);
    at += part.length;
  }
  return all.subarray(0, count);
}

function pattern(count: number, seed: number): number[] {
  let x = seed;
  return Array.from({ length: count }, () => {
    x = (x * 1103515245 + 12345) >>> 0;
    return (x >>> 8) & 0xffff;
  });
}

t.test('mono S16_LE from an ALSA file device arrives bit-exact', { skip: arecordMissing() }, async (t) => {
  const values = pattern(48000, 7).map((v) => (v << 16) >> 16);
  const infile = Buffer.alloc(values.length * 2);
  for (const [i, v] of values.entries()) infile.writeInt16LE(v, i * 2);
  const samples = await recordSamples(t, infile, { channels: 1, format: 'S16_LE' }, 40000);
  t.equal(samples.length, 40000);
  t.same(Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength), infile.subarray(0, 80000));
});

t.test('stereo S16_LE is mixed down to the mean of the channels', { skip: arecordMissing() }, async (t) => {
  const values = pattern(40000, 11).map((v) => (v << 16) >> 16);
  const infile = Buffer.alloc(values.length * 2);
  for (const [i, v] of values.entries()) infile.writeInt16LE(v, i * 2);
  const samples = await recordSamples(t, infile, { channels: 2, format: 'S16_LE' }, 16000);
  const expected = Array.from({ length: 16000 }, (_, i) => Math.floor(((values[2 * i] ?? 0) + (values[2 * i + 1] ?? 0)) / 2));
  t.same([...samples], expected);
});

t.test('S32_LE mono and stereo keep the top 16 bits', { skip: arecordMissing() }, async (t) => {
  const words = pattern(40000, 13).map((v, i) => (v << 16) | (i & 0xffff) | 0);
  const infile = Buffer.alloc(words.length * 4);
  for (const [i, v] of words.entries()) infile.writeInt32LE(v, i * 4);
  const mono = await recordSamples(t, infile, { channels: 1, format: 'S32_LE' }, 16000);
  t.same(
    [...mono],
    words.slice(0, 16000).map((w) => w >> 16),
  );
  const stereo = await recordSamples(t, infile, { channels: 2, format: 'S32_LE' }, 16000);
  const expected = Array.from({ length: 16000 }, (_, i) => Math.floor(((words[2 * i] ?? 0) + (words[2 * i + 1] ?? 0)) / 131072));
  t.same([...stereo], expected);
});

t.test('a missing device waits with arecord’s reason and retries with a doubling back-off', { skip: arecordMissing() }, async (t) => {
  const dir = t.testdir({});
  const { env } = alsaTestDevices(dir);
  const log = join(dir, 'spawns.log');
  // Wraps arecord to count the spawns.
  const recorder = join(dir, 'counting-recorder.cjs');
  writeFileSync(
    recorder,
    `const fs = require('node:fs');
module.exports = (o) => {
  fs.appendFileSync(${JSON.stringify(log)}, 'spawn\\n');
  return { cmd: 'arecord', args: ['-q', '-D', o.device, '-t', 'raw', '-f', o.format, '-r', String(o.sampleRate), '-c', String(o.channels), '-'], spawnOptions: { env: o.env, stdio: ['ignore', 'pipe', 'pipe'] } };
};
`,
  );
  const spawns = (): number => (existsSync(log) ? readFileSync(log, 'utf8').split('\n').length - 1 : 0);
  const clock = new StepClock();
  const statuses: MicrophoneStatus[] = [];
  const mic = new Microphone({
    device: 'nosuch',
    sampleRate: 16000,
    channels: 1,
    format: 'S16_LE',
    restartBackoffMs: 100,
    restartBackoffMaxMs: 500,
    env,
    recorder,
    clock,
    onAudio: () => t.fail('no audio expected'),
    onStatus: (s) => statuses.push(s),
  });
  mic.start();
  const waits: number[] = [];
  for (let attempt = 1; attempt <= 5; attempt++) {
    await until(`failure ${attempt}`, () => (clock.timers.length === attempt ? true : undefined));
    t.equal(spawns(), attempt);
    const status = mic.status();
    t.equal(status.state, 'waiting');
    t.equal(status.restarts, attempt - 1);
    t.match(status.problem, /^microphone "nosuch": .*Unknown PCM nosuch/);
    if (attempt < 5) waits.push(clock.fireLast());
  }
  waits.push(clock.timers.at(-1)?.ms ?? -1);
  t.same(waits, [100, 200, 400, 500, 500]);
  t.notOk(
    statuses.some((s) => s.state === 'recording'),
    'never reported as recording',
  );
  await mic.stop();
  t.equal(clock.timers.at(-1)?.cancelled, true, 'stop cancels the pending retry');
  t.equal(mic.status().state, 'stopped');
});

t.test('without arecord on PATH the microphone waits and names arecord', async (t) => {
  const clock = new StepClock();
  const mic = new Microphone({
    device: 'default',
    sampleRate: 16000,
    channels: 1,
    format: 'S16_LE',
    restartBackoffMs: 100,
    restartBackoffMaxMs: 500,
    env: { PATH: '/nonexistent' },
    clock,
    onAudio: () => t.fail('no audio expected'),
  });
  mic.start();
  await until('the failure', () => (clock.timers.length === 1 ? true : undefined));
  t.match(mic.status(), { state: 'waiting', problem: /arecord is not installed \(apt install alsa-utils\)/, restarts: 0 });
  clock.fireLast();
  await until('the second failure', () => (clock.timers.length === 2 ? true : undefined));
  t.match(mic.status(), { state: 'waiting', restarts: 1 });
  await mic.stop();
});

t.test('stop() leaves no arecord behind', { skip: arecordMissing() }, async (t) => {
  const dir = t.testdir({ 'mic.raw': Buffer.alloc(64000, 3) });
  const { env } = alsaTestDevices(dir, { micInfile: join(dir, 'mic.raw') });
  let audio = 0;
  const mic = new Microphone({
    device: 'mic',
    sampleRate: 16000,
    channels: 1,
    format: 'S16_LE',
    restartBackoffMs: 100,
    restartBackoffMaxMs: 500,
    env,
    onAudio: (samples) => {
      audio += samples.length;
    },
  });
  mic.start();
  const pid = mic.pid;
  t.type(pid, 'number');
  await until('audio', () => (audio > 0 ? true : undefined));
  t.equal(mic.status().state, 'recording');
  await mic.stop();
  t.equal(mic.pid, undefined);
  t.throws(() => process.kill(pid ?? 0, 0), { code: 'ESRCH' }, 'the arecord process is gone');
  t.equal(mic.status().state, 'stopped');
  mic.start();
  t.not(mic.pid, pid, 'a new start spawns a new arecord');
  await mic.stop();
});

t.test('a healthy recording of 30 s starts the back-off over', async (t) => {
  const dir = t.testdir({ mode: 'fail' });
  const recorder = join(dir, 'scripted-recorder.cjs');
  // fail: exits at once like a busy device; healthy: 32 s of silence at 16 kHz, then exits.
  writeFileSync(
    recorder,
    `const fs = require('node:fs');
module.exports = () => {
  const mode = fs.readFileSync(${JSON.stringify(join(dir, 'mode'))}, 'utf8');
  const script = mode === 'fail'
    ? 'echo "arecord: main:830: audio open error: Device or resource busy" >&2; exit 1'
    : 'head -c 1024000 /dev/zero; exit 1';
  return { cmd: 'sh', args: ['-c', script], spawnOptions: { stdio: ['ignore', 'pipe', 'pipe'] } };
};
`,
  );
  const clock = new StepClock();
  let audio = 0;
  const mic = new Microphone({
    device: 'default',
    sampleRate: 16000,
    channels: 1,
    format: 'S16_LE',
    restartBackoffMs: 100,
    restartBackoffMaxMs: 10_000,
    recorder,
    clock,
    onAudio: (samples) => {
      audio += samples.length;
    },
  });
  mic.start();
  await until('failure 1', () => (clock.timers.length === 1 ? true : undefined));
  t.match(mic.status().problem, /Device or resource busy/);
  t.equal(clock.fireLast(), 100);
  await until('failure 2', () => (clock.timers.length === 2 ? true : undefined));
  t.equal(clock.fireLast(), 200);
  await until('failure 3', () => (clock.timers.length === 3 ? true : undefined));
  writeFileSync(join(dir, 'mode'), 'healthy');
  t.equal(clock.fireLast(), 400);
  await until('the end of the healthy run', () => (clock.timers.length === 4 ? true : undefined));
  t.equal(audio, 512000);
  t.match(mic.status(), { state: 'waiting', problem: /exit code 1/, restarts: 3 });
  t.equal(clock.timers.at(-1)?.ms, 100, 'back to the first back-off');
  await mic.stop();
});

t.test('device names that are not ALSA PCM names are refused', async (t) => {
  t.equal(checkCaptureName('plughw:CARD=Device,DEV=0'), 'plughw:CARD=Device,DEV=0');
  for (const bad of ['', 'mic; rm -rf /', '-D', 'a b', 'x'.repeat(201)]) {
    expectError(t, () => checkCaptureName(bad), 'HA_ERR_MICROPHONE_UNAVAILABLE');
  }
});

t.test('arecord’s stderr is boiled down to its reason', async (t) => {
  t.equal(
    arecordMessage(
      'ALSA lib pcm.c:2666:(snd_pcm_open_noupdate) Unknown PCM nosuch\narecord: main:831: audio open error: No such file or directory\n',
    ),
    'Unknown PCM nosuch; audio open error: No such file or directory',
  );
  t.equal(arecordMessage('something odd\n'), 'something odd');
  t.equal(arecordMessage(''), '');
});

t.test('start() while stop() is still waiting for arecord keeps the new recording', { skip: arecordMissing() }, async (t) => {
  const dir = t.testdir({ 'mic.raw': Buffer.alloc(64000, 5) });
  const { env } = alsaTestDevices(dir, { micInfile: join(dir, 'mic.raw') });
  let audio = 0;
  const mic = new Microphone({
    device: 'mic',
    sampleRate: 16000,
    channels: 1,
    format: 'S16_LE',
    restartBackoffMs: 100,
    restartBackoffMaxMs: 500,
    env,
    onAudio: (samples) => {
      audio += samples.length;
    },
  });
  mic.start();
  const first = mic.pid;
  const stopping = mic.stop();
  mic.start();
  await stopping;
  t.not(mic.pid, undefined);
  t.not(mic.pid, first);
  t.not(mic.status().state, 'stopped');
  await until('audio', () => (audio > 0 ? true : undefined));
  t.equal(mic.status().state, 'recording');
  await mic.stop();
  t.equal(mic.status().state, 'stopped');
});

import { execFileSync, spawn } from 'node:child_process';
import { closeSync, constants, existsSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { AplayPlayer } from '../../../../devices/speaker/aplay-player.js';
import { SpeakerOutput } from '../../../../plugins/voice/speaker-output.js';
import type { TextToSpeech } from '../../../../plugins/voice/speech.js';
import { synthesizeEspeak } from '../../../../plugins/voice/tts-espeak.js';
import { parseWav, pcmToWav } from '../../../../plugins/voice/wav.js';
import { HomeAgentError } from '../../../../src/shared/errors.js';
import { aplayMissing, speechPlaybackMissing } from '../../../helpers/system-tools.js';
import { until } from '../../../helpers/until.js';
import { expectErrorAsync } from '../../fixtures/support.js';

const TIMEOUT_MS = 20_000;

/** `default` writes raw PCM to `file` (a regular file or a FIFO); found through ALSA_CONFIG_PATH only. */
function alsaEnv(dir: string, file: string): NodeJS.ProcessEnv {
  const conf = join(dir, 'asound.conf');
  writeFileSync(conf, `pcm.!default { type file; slave.pcm "null"; file "${file}"; format "raw" }\n`);
  return { ...process.env, ALSA_CONFIG_PATH: `/usr/share/alsa/alsa.conf:${conf}` };
}

/**
 * Reads the FIFO to its end (the writer's exit). When the writer is already gone (a loaded machine
 * let the stop's SIGKILL come first), `cat` waits in open() for a writer that never comes: it must
 * neither keep this process alive nor outlive the test.
 */
function drain(t: Test, fifo: string): void {
  const reader = spawn('cat', [fifo], { stdio: 'ignore' });
  reader.unref();
  t.teardown(() => {
    reader.kill('SIGKILL');
  });
}

const espeak: TextToSpeech = {
  name: 'espeak',
  synthesize: (text, options) => synthesizeEspeak(text, { language: options.language, timeoutMs: TIMEOUT_MS }),
};
const asIs = (text: string) => ({ text, language: 'en' as const });

t.test('barge-in stops the playing item and drops the queue', { skip: aplayMissing() }, async (t) => {
  const dir = t.testdir({});
  const fifo = join(dir, 'speaker.fifo');
  execFileSync('mkfifo', [fifo]);
  // A reader that never reads: aplay fills the pipe and then blocks, as on a device that is playing.
  const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
  t.teardown(() => closeSync(reader));
  const player = new AplayPlayer({ timeoutMs: TIMEOUT_MS, env: alsaEnv(dir, fifo) });
  const speaker = new SpeakerOutput({ player, tts: () => espeak, speakable: asIs });
  const long = pcmToWav(Buffer.alloc(16000 * 2 * 60, 1), 16000, 1);
  const first = speaker.playWav(long);
  const second = speaker.playWav(long);
  const third = speaker.say('This is never spoken.');
  await until('aplay playing', () => player.playing || undefined);
  t.equal(speaker.active, true);
  t.match(speaker.status(), { playing: true, queued: 2 });

  t.equal(speaker.interrupt(), true);
  t.same(await second, { played: false, stopped: true }, 'queued WAV dropped at once');
  // aplay's SIGTERM handler closes the PCM, and closing the file plugin writes what it buffered:
  // into a full FIFO that blocks, so the test now drains it and the stopped aplay can exit.
  drain(t, fifo);
  t.same(await first, { played: false, stopped: true });
  t.same(await third, { played: false, stopped: true }, 'queued text dropped');
  t.equal(player.playing, false);
  t.equal(speaker.active, false);
  t.equal(speaker.interrupt(), false, 'nothing left to stop');
});

t.test('the queue is bounded', { skip: aplayMissing() }, async (t) => {
  const dir = t.testdir({});
  const fifo = join(dir, 'speaker.fifo');
  execFileSync('mkfifo', [fifo]);
  const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
  t.teardown(() => closeSync(reader));
  const player = new AplayPlayer({ timeoutMs: TIMEOUT_MS, env: alsaEnv(dir, fifo) });
  const speaker = new SpeakerOutput({ player, tts: () => espeak, speakable: asIs, maxQueue: 2 });
  const wav = pcmToWav(Buffer.alloc(16000 * 2 * 60, 1), 16000, 1);
  const accepted = [speaker.playWav(wav), speaker.playWav(wav), speaker.playWav(wav)];
  await until('aplay playing', () => player.playing || undefined);
  await expectErrorAsync(t, () => speaker.playWav(wav), 'HA_ERR_SPEAKER_UNAVAILABLE');
  speaker.interrupt();
  drain(t, fifo);
  for (const outcome of await Promise.all(accepted)) t.same(outcome, { played: false, stopped: true });
});

t.test('a text is spoken: the device gets the synthesized PCM', { skip: speechPlaybackMissing() }, async (t) => {
  const dir = t.testdir({});
  const out = join(dir, 'out.raw');
  const player = new AplayPlayer({ timeoutMs: TIMEOUT_MS, env: alsaEnv(dir, out) });
  const speaker = new SpeakerOutput({ player, tts: () => espeak, speakable: asIs });
  const text = 'The kitchen light is on.';
  t.same(await speaker.send({ id: 'o1', channel: 'speaker', type: 'text', payload: text, meta: {}, created_at: 0 }), undefined);
  const expected = await synthesizeEspeak(text, { language: 'en', timeoutMs: TIMEOUT_MS });
  const info = parseWav(expected.wav);
  const written = readFileSync(out);
  // aplay pads the last period (a quarter of its 500 ms buffer) with silence.
  const periodBytes = Math.ceil(info.sampleRate * 0.125) * info.channels * 2;
  const extra = written.length - info.dataLength;
  t.ok(extra >= 0 && extra <= periodBytes, `output ${written.length} B vs PCM ${info.dataLength} B`);
  t.ok(written.subarray(0, info.dataLength).equals(expected.wav.subarray(info.dataOffset)), 'PCM identical');
});

t.test('an audio send plays a WAV given as a data URL or a file path', { skip: aplayMissing() }, async (t) => {
  const dir = t.testdir({});
  const out = join(dir, 'out.raw');
  const player = new AplayPlayer({ timeoutMs: TIMEOUT_MS, env: alsaEnv(dir, out) });
  const speaker = new SpeakerOutput({ player, tts: () => espeak, speakable: asIs });
  const wav = pcmToWav(Buffer.alloc(16000 * 2, 7), 16000, 1);
  const file = join(dir, 'chime.wav');
  writeFileSync(file, wav);
  const event = { id: 'o1', channel: 'speaker', type: 'audio' as const, meta: {}, created_at: 0 };
  await speaker.send({ ...event, payload: `data:audio/wav;base64,${wav.toString('base64')}` });
  t.ok(readFileSync(out).subarray(0, 32000).equals(Buffer.alloc(32000, 7)));
  await speaker.send({ ...event, payload: file });
  await expectErrorAsync(t, () => speaker.send({ ...event, payload: 'chime.mp3' }), 'HA_ERR_MEDIA_TYPE');
});

t.test('a missing device: coded error per send, the problem reported once', { skip: speechPlaybackMissing() }, async (t) => {
  const dir = t.testdir({});
  const env = alsaEnv(dir, join(dir, 'out.raw'));
  const problems: Array<string | undefined> = [];
  const player = new AplayPlayer({ device: 'nosuchdevice', timeoutMs: TIMEOUT_MS, env });
  const speaker = new SpeakerOutput({ player, tts: () => espeak, speakable: asIs, onProblem: (p) => problems.push(p) });
  await speaker.probe();
  t.match(speaker.status(), { device: 'nosuchdevice', available: false, problem: /nosuchdevice/ });
  await expectErrorAsync(t, () => speaker.say('Hello.'), 'HA_ERR_SPEAKER_UNAVAILABLE');
  await expectErrorAsync(t, () => speaker.say('Hello again.'), 'HA_ERR_SPEAKER_UNAVAILABLE');
  t.equal(problems.length, 1, 'one status line, not one per send');
  t.match(problems[0], /speaker "nosuchdevice"/);
  t.equal(existsSync(join(dir, 'out.raw')), false);
});

t.test('a working device clears the problem', async (t) => {
  const problems: Array<string | undefined> = [];
  let ok = false;
  const player = {
    device: 'fake',
    playing: false,
    play: async () => {
      if (!ok) throw new HomeAgentError('HA_ERR_SPEAKER_UNAVAILABLE', 'busy');
      return { played: true, stopped: false, ms: 1 };
    },
    stop: () => false,
    probe: async () => ({ ok: true as const }),
  };
  const speaker = new SpeakerOutput({ player, tts: () => espeak, speakable: asIs, onProblem: (p) => problems.push(p) });
  const wav = pcmToWav(Buffer.alloc(320), 16000, 1);
  await expectErrorAsync(t, () => speaker.playWav(wav), 'HA_ERR_SPEAKER_UNAVAILABLE');
  ok = true;
  t.same(await speaker.playWav(wav), { played: true, stopped: false });
  t.same(problems, ['busy', undefined]);
  t.equal(speaker.status().available, true);
});

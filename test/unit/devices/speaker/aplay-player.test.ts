import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { AplayPlayer, checkPcmName } from '../../../../devices/speaker/aplay-player.js';
import { synthesizeEspeak } from '../../../../plugins/voice/tts-espeak.js';
import { parseWav, pcmToWav } from '../../../../plugins/voice/wav.js';
import { aplayMissing, speechPlaybackMissing } from '../../../helpers/system-tools.js';
import { expectError, expectErrorAsync } from '../../fixtures/support.js';

const TIMEOUT_MS = 20_000;

/** ALSA file-plugin devices in a test directory, picked up through ALSA_CONFIG_PATH only. */
function alsaDevices(dir: string): { dir: string; env: NodeJS.ProcessEnv } {
  const conf = join(dir, 'asound.conf');
  writeFileSync(
    conf,
    [
      `pcm.!default { type file; slave.pcm "null"; file "${dir}/out_default.raw"; format "raw" }`,
      `pcm.towav { type file; slave.pcm "null"; file "${dir}/out_towav.wav"; format "wav" }`,
      '',
    ].join('\n'),
  );
  return { dir, env: { ...process.env, ALSA_CONFIG_PATH: `/usr/share/alsa/alsa.conf:${conf}` } };
}

t.test('an espeak WAV played to a WAV file device arrives whole', { skip: speechPlaybackMissing() }, async (t) => {
  const { dir, env } = alsaDevices(t.testdir({}));
  const speech = await synthesizeEspeak('Good morning. It is seven degrees outside.', { language: 'en', timeoutMs: TIMEOUT_MS });
  const player = new AplayPlayer({ device: 'towav', timeoutMs: TIMEOUT_MS, env });
  const result = await player.play(speech.wav);
  t.match(result, { played: true, stopped: false });
  t.equal(player.playing, false);

  const input = parseWav(speech.wav);
  const output = parseWav(readFileSync(join(dir, 'out_towav.wav')));
  t.match(output, { sampleRate: input.sampleRate, channels: input.channels, bitsPerSample: 16 });
  // aplay pads the last period with silence; its default period is a quarter of a 500 ms buffer.
  const periodBytes = Math.ceil(input.sampleRate * 0.125) * input.channels * 2;
  const extra = output.dataLength - input.dataLength;
  t.ok(extra >= 0 && extra <= periodBytes, `output PCM ${output.dataLength} B vs input ${input.dataLength} B (period ${periodBytes} B)`);
  const outputPcm = readFileSync(join(dir, 'out_towav.wav')).subarray(output.dataOffset, output.dataOffset + input.dataLength);
  t.ok(outputPcm.equals(speech.wav.subarray(input.dataOffset)), 'PCM bytes identical');
});

t.test('stop() ends a playback part way through', { skip: aplayMissing() }, async (t) => {
  const { dir, env } = alsaDevices(t.testdir({}));
  const out = join(dir, 'out_default.raw');
  const written = (): number => (existsSync(out) ? statSync(out).size : 0);
  // The null slave is unpaced, so only a buffer far larger than a pipe keeps aplay busy long enough.
  const pcm = Buffer.alloc(256 * 1024 * 1024, 1);
  const player = new AplayPlayer({ timeoutMs: TIMEOUT_MS, env });
  const playing = player.play(pcmToWav(pcm, 16000, 1));
  t.equal(player.playing, true);
  while (written() === 0) await new Promise((resolve) => setImmediate(resolve));
  t.equal(player.stop(), true);
  t.equal(player.stop(), false, 'a second stop() has nothing to stop');
  const result = await playing;
  t.match(result, { played: false, stopped: true });
  t.equal(player.playing, false);
  t.ok(written() > 0 && written() < pcm.length, `${written()} B written of ${pcm.length}`);
  t.equal(player.stop(), false, 'stop() when idle');

  const next = await player.play(pcmToWav(Buffer.alloc(3200), 16000, 1));
  t.match(next, { played: true, stopped: false }, 'the player plays again after a stop');
});

t.test('one playback at a time', { skip: aplayMissing() }, async (t) => {
  const { env } = alsaDevices(t.testdir({}));
  const player = new AplayPlayer({ timeoutMs: TIMEOUT_MS, env });
  const first = player.play(pcmToWav(Buffer.alloc(32 * 1024 * 1024), 16000, 1));
  const error = await expectErrorAsync(t, () => player.play(pcmToWav(Buffer.alloc(3200), 16000, 1)), 'HA_ERR_SPEAKER_UNAVAILABLE');
  t.match(error.message, /already playing/);
  player.stop();
  t.match(await first, { stopped: true });
});

t.test('a missing device is a coded error naming it, and the process carries on', { skip: aplayMissing() }, async (t) => {
  const { env } = alsaDevices(t.testdir({}));
  const player = new AplayPlayer({ device: 'nosuchdevice', timeoutMs: TIMEOUT_MS, env });
  const error = await expectErrorAsync(t, () => player.play(pcmToWav(Buffer.alloc(3200), 16000, 1)), 'HA_ERR_SPEAKER_UNAVAILABLE');
  t.match(error.message, /speaker "nosuchdevice": .*Unknown PCM nosuchdevice/);
  t.equal(player.playing, false);
  const probe = await player.probe();
  t.equal(probe.ok, false);
  if (!probe.ok) t.match(probe.problem, /Unknown PCM nosuchdevice/);
});

t.test('probe opens a good device without playing the caller anything', { skip: aplayMissing() }, async (t) => {
  const { dir, env } = alsaDevices(t.testdir({}));
  t.same(await new AplayPlayer({ device: 'towav', timeoutMs: TIMEOUT_MS, env }).probe(), { ok: true });
  const output = parseWav(readFileSync(join(dir, 'out_towav.wav')));
  t.equal(
    readFileSync(join(dir, 'out_towav.wav'))
      .subarray(output.dataOffset)
      .every((byte) => byte === 0),
    true,
    'only silence',
  );
});

t.test('aplay missing from PATH', async (t) => {
  const player = new AplayPlayer({ timeoutMs: TIMEOUT_MS, env: { PATH: t.testdir({}) } });
  const error = await expectErrorAsync(t, () => player.play(pcmToWav(Buffer.alloc(3200), 16000, 1)), 'HA_ERR_SPEAKER_UNAVAILABLE');
  t.equal(error.message, 'speaker "default": aplay is not installed (apt install alsa-utils)');
  t.equal(player.playing, false);
  const probe = await player.probe();
  t.same(probe, { ok: false, problem: 'speaker "default": aplay is not installed (apt install alsa-utils)' });
});

t.test('device names outside the ALSA PCM alphabet never reach aplay', async (t) => {
  for (const name of ['plughw:CARD=Headphones,DEV=0', 'hw:0,0', 'default', 'dmix.x_y-z']) t.equal(checkPcmName(name), name);
  for (const name of ['-D', '', 'hw 0', 'a;rm', 'x"y', '$HOME', `a${'b'.repeat(300)}`]) {
    expectError(t, () => new AplayPlayer({ device: name, timeoutMs: TIMEOUT_MS }), 'HA_ERR_SPEAKER_UNAVAILABLE');
  }
});

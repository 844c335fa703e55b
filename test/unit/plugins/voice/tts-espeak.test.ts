import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { synthesizeEspeak } from '../../../../plugins/voice/tts-espeak.js';
import { parseWav } from '../../../../plugins/voice/wav.js';
import { espeakMissing } from '../../../helpers/system-tools.js';
import { expectErrorAsync } from '../../fixtures/support.js';

const TIMEOUT_MS = 20_000;
const SENTENCE = 'The kitchen light is now on, and the front door is locked.';

t.test(
  'English: a sentence gives a well-formed WAV of plausible length; longer text, longer audio',
  { skip: espeakMissing() },
  async (t) => {
    const short = await synthesizeEspeak(SENTENCE, { language: 'en', timeoutMs: TIMEOUT_MS });
    t.equal(short.channels, 1);
    t.equal(short.sampleRate, 22050);
    t.ok(short.durationMs > 300, `duration ${short.durationMs} ms`);
    const info = parseWav(short.wav);
    t.equal(short.wav.readUInt32LE(4), short.wav.length - 8, 'RIFF size matches the bytes');
    t.equal(info.dataOffset + info.dataLength, short.wav.length, 'data size matches the bytes');
    t.equal(info.durationMs, short.durationMs);

    const long = await synthesizeEspeak(`${SENTENCE} ${SENTENCE} ${SENTENCE}`, { language: 'en', timeoutMs: TIMEOUT_MS });
    t.ok(long.durationMs > short.durationMs * 2, `${long.durationMs} ms > 2 × ${short.durationMs} ms`);
  },
);

t.test('Chinese: cmn voice speaks Han characters', { skip: espeakMissing() }, async (t) => {
  const short = await synthesizeEspeak('客厅的灯已经打开了。', { language: 'zh', timeoutMs: TIMEOUT_MS });
  t.ok(short.durationMs > 300, `duration ${short.durationMs} ms`);
  const long = await synthesizeEspeak('客厅的灯已经打开了。卧室的空调温度设为二十六度。前门已经锁好了。', {
    language: 'zh',
    timeoutMs: TIMEOUT_MS,
  });
  t.ok(long.durationMs > short.durationMs, `${long.durationMs} ms > ${short.durationMs} ms`);
});

t.test('a text that looks like options is spoken, not parsed', { skip: espeakMissing() }, async (t) => {
  // As arguments, --help would print usage instead of a WAV and "-v xx" would pick a missing voice.
  const help = await synthesizeEspeak('--help me turn on the lights', { language: 'en', timeoutMs: TIMEOUT_MS });
  t.ok(help.durationMs > 300, `duration ${help.durationMs} ms`);
  const voice = await synthesizeEspeak('-v xx hello', { language: 'en', timeoutMs: TIMEOUT_MS });
  t.ok(voice.durationMs > 300, `duration ${voice.durationMs} ms`);
});

t.test('refusals before espeak-ng runs', async (t) => {
  for (const text of ['', '   \n']) {
    const error = await expectErrorAsync(t, () => synthesizeEspeak(text, { language: 'en', timeoutMs: TIMEOUT_MS }), 'HA_ERR_VOICE_TTS');
    t.match(error.message, /empty/);
  }
  const long = await expectErrorAsync(
    t,
    () => synthesizeEspeak('a'.repeat(11), { language: 'en', timeoutMs: TIMEOUT_MS, maxChars: 10 }),
    'HA_ERR_VOICE_TTS',
  );
  t.match(long.message, /11 characters.*plugin\.voice\.tts\.max_chars \(10\)/);
  const voice = await expectErrorAsync(
    t,
    () => synthesizeEspeak('hi', { language: 'en', voice: '-x', timeoutMs: TIMEOUT_MS }),
    'HA_ERR_VOICE_TTS',
  );
  t.match(voice.message, /voice name "-x"/);
  const rate = await expectErrorAsync(
    t,
    () => synthesizeEspeak('hi', { language: 'en', rate: 5, timeoutMs: TIMEOUT_MS }),
    'HA_ERR_VOICE_TTS',
  );
  t.match(rate.message, /rate 5/);
});

t.test('espeak-ng missing from PATH → install hint', async (t) => {
  const emptyBin = t.testdir({});
  const error = await expectErrorAsync(
    t,
    () => synthesizeEspeak('hello', { language: 'en', timeoutMs: TIMEOUT_MS, env: { PATH: emptyBin } }),
    'HA_ERR_VOICE_TTS',
  );
  t.equal(error.message, 'espeak-ng is not installed (apt install espeak-ng)');
});

t.test('espeak-ng failing reports its stderr', { skip: espeakMissing() }, async (t) => {
  const error = await expectErrorAsync(
    t,
    () => synthesizeEspeak('hello', { language: 'en', voice: 'nosuchvoice', timeoutMs: TIMEOUT_MS }),
    'HA_ERR_VOICE_TTS',
  );
  t.match(error.message, /exit 1.*voice does not exist/);
});

t.test('a hung espeak-ng is killed at the timeout', async (t) => {
  // A stand-in that never finishes: the real program is too fast to hang on demand.
  const bin = t.testdir({});
  const fake = join(bin, 'espeak-ng');
  writeFileSync(fake, '#!/bin/sh\nexec sleep 600\n');
  chmodSync(fake, 0o755);
  const error = await expectErrorAsync(
    t,
    () => synthesizeEspeak('hello', { language: 'en', timeoutMs: 50, env: { PATH: `${bin}:/usr/bin:/bin` } }),
    'HA_ERR_VOICE_TTS',
  );
  t.match(error.message, /did not finish within 50 ms/);
});

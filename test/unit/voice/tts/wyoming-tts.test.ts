import t from 'tap';
import { WyomingTts, type WyomingTtsOptions } from '../../../../plugins/voice/tts/wyoming-tts.js';
import { parseWav } from '../../../../plugins/voice/wav.js';
import { tonePcm } from '../../../helpers/openai-audio-server.js';
import { startWyomingServer } from '../../../helpers/wyoming-server.js';
import { expectErrorAsync } from '../../fixtures/support.js';

function tts(port: number, options: Partial<WyomingTtsOptions> = {}): WyomingTts {
  return new WyomingTts({ host: '127.0.0.1', port, voice: '', timeoutMs: 5000, maxPayloadBytes: 1 << 20, maxChars: 2000, ...options });
}

t.test('the PCM chunks become one exact WAV; voice and language are asked for', async (t) => {
  const pcm = tonePcm(800, 22050);
  const server = await startWyomingServer({ synthesized: { pcm, rate: 22050, width: 2, channels: 1, chunkBytes: 4096 } });
  t.teardown(() => server.close());
  const speech = await tts(server.port, { voice: 'zh_CN-huayan-medium' }).synthesize('客厅的灯打开了', { language: 'zh' });
  t.equal(speech.sampleRate, 22050);
  t.equal(speech.durationMs, 800);
  const info = parseWav(speech.wav);
  t.same(speech.wav.subarray(info.dataOffset), pcm, 'the same samples, in order');
  t.equal(speech.wav.readUInt32LE(4), speech.wav.length - 8);
  const asked = server.events.find((event) => event.type === 'synthesize');
  t.same(asked?.data, { text: '客厅的灯打开了', voice: { name: 'zh_CN-huayan-medium', language: 'zh' } });

  await tts(server.port).synthesize('hello', { language: 'en' });
  t.same(
    server.events.filter((event) => event.type === 'synthesize')[1]?.data,
    { text: 'hello', voice: { language: 'en' } },
    'no voice name: the server default',
  );
});

t.test('failures are HA_ERR_VOICE_TTS carrying the Wyoming reason', async (t) => {
  const server = await startWyomingServer({ misbehave: 'error' });
  t.teardown(() => server.close());
  const error = await expectErrorAsync(t, () => tts(server.port).synthesize('hello', { language: 'en' }), 'HA_ERR_VOICE_TTS');
  t.match(error.message, /^Wyoming server 127\.0\.0\.1:\d+: .*model not loaded/);
  server.script.misbehave = 'close-early';
  const closed = await expectErrorAsync(t, () => tts(server.port).synthesize('hello', { language: 'en' }), 'HA_ERR_VOICE_TTS');
  t.match(closed.message, /closed the connection/);

  server.script.misbehave = 'none';
  server.script.synthesized = { pcm: Buffer.alloc(100), rate: 16000, width: 1, channels: 1, chunkBytes: 100 };
  const eightBit = await expectErrorAsync(t, () => tts(server.port).synthesize('hello', { language: 'en' }), 'HA_ERR_VOICE_TTS');
  t.match(eightBit.message, /8-bit audio/);
  server.script.synthesized = { pcm: Buffer.alloc(0), rate: 16000, width: 2, channels: 1, chunkBytes: 100 };
  const silent = await expectErrorAsync(t, () => tts(server.port).synthesize('hello', { language: 'en' }), 'HA_ERR_VOICE_TTS');
  t.match(silent.message, /produced no audio/);
});

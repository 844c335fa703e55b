import t from 'tap';
import type { PcmAudio } from '../../../../plugins/voice/speech.js';
import { WyomingStt, type WyomingSttOptions } from '../../../../plugins/voice/stt/wyoming-stt.js';
import { startWyomingServer } from '../../../helpers/wyoming-server.js';
import { expectErrorAsync } from '../../fixtures/support.js';

function utterance(ms: number, sampleRate = 16000): PcmAudio {
  const samples = new Int16Array(Math.round((ms / 1000) * sampleRate));
  for (let i = 0; i < samples.length; i += 1) samples[i] = i % 2000;
  return { samples, sampleRate };
}

function stt(port: number, options: Partial<WyomingSttOptions> = {}): WyomingStt {
  return new WyomingStt({
    host: '127.0.0.1',
    port,
    timeoutMs: 5000,
    maxPayloadBytes: 1 << 20,
    language: 'auto',
    maxOutputChars: 4000,
    ...options,
  });
}

t.test('the utterance goes to the server as S16LE mono at its rate, with the hint', async (t) => {
  const server = await startWyomingServer({ transcript: { text: ' 打开客厅的灯 ', language: 'zh' } });
  t.teardown(() => server.close());
  const audio = utterance(2500);
  const result = await stt(server.port).transcribe(audio, { language: 'zh' });
  t.same(result, { text: '打开客厅的灯', language: 'zh' });
  const [received] = server.transcriptions;
  t.equal(received?.language, 'zh');
  t.same([received?.rate, received?.width, received?.channels], [16000, 2, 1]);
  t.equal(received?.totalBytes, audio.samples.length * 2);
  t.same(received?.chunkSizes, [32000, 32000, 16000], 'one-second chunks');

  await stt(server.port, { language: 'en' }).transcribe(utterance(100, 22050), {});
  await stt(server.port, { language: 'auto' }).transcribe(utterance(100), {});
  t.same(
    server.transcriptions.slice(1).map((r) => [r.language, r.rate]),
    [
      ['en', 22050],
      [undefined, 16000],
    ],
  );
  await server.allClosed();
  t.equal(server.openConnections(), 0);
});

t.test('server failures stay HA_ERR_VOICE_WYOMING; local refusals are HA_ERR_VOICE_STT', async (t) => {
  const server = await startWyomingServer({ misbehave: 'error' });
  t.teardown(() => server.close());
  const error = await expectErrorAsync(t, () => stt(server.port).transcribe(utterance(100), {}), 'HA_ERR_VOICE_WYOMING');
  t.match(error.message, /model not loaded/);
  server.script.misbehave = 'silent';
  const silent = await expectErrorAsync(
    t,
    () => stt(server.port, { timeoutMs: 200 }).transcribe(utterance(100), {}),
    'HA_ERR_VOICE_WYOMING',
  );
  t.match(silent.message, /within 200 ms/);

  server.script.misbehave = 'none';
  server.script.transcript = { text: 'y'.repeat(40) };
  const long = await expectErrorAsync(t, () => stt(server.port, { maxOutputChars: 16 }).transcribe(utterance(100), {}), 'HA_ERR_VOICE_STT');
  t.match(long.message, /40 characters/);
  await expectErrorAsync(t, () => stt(server.port).transcribe({ samples: new Int16Array(0), sampleRate: 16000 }, {}), 'HA_ERR_VOICE_STT');
  await expectErrorAsync(t, () => stt(server.port).transcribe({ samples: new Int16Array(10), sampleRate: 0 }, {}), 'HA_ERR_VOICE_STT');
});

t.test('cancelled by the caller', async (t) => {
  const server = await startWyomingServer({ misbehave: 'silent' });
  t.teardown(() => server.close());
  const controller = new AbortController();
  const call = stt(server.port).transcribe(utterance(100), { signal: controller.signal });
  controller.abort();
  const error = await expectErrorAsync(t, () => call, 'HA_ERR_VOICE_STT');
  t.match(error.message, /cancelled/);
});

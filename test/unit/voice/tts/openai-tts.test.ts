import t, { type Test } from 'tap';
import { OpenAiTts, type OpenAiTtsOptions } from '../../../../plugins/voice/tts/openai-tts.js';
import { parseWav } from '../../../../plugins/voice/wav.js';
import { buildWav, type OpenAiAudioServer, startOpenAiAudioServer, tonePcm } from '../../../helpers/openai-audio-server.js';
import { expectErrorAsync } from '../../fixtures/support.js';

async function serve(t: Test): Promise<OpenAiAudioServer> {
  const server = await startOpenAiAudioServer();
  t.teardown(() => server.close());
  return server;
}

function tts(server: { baseUrl: string }, options: Partial<OpenAiTtsOptions> = {}): OpenAiTts {
  return new OpenAiTts({
    baseUrl: server.baseUrl,
    apiKey: 'sk-tts',
    model: 'tts-1',
    voice: 'alloy',
    timeoutMs: 10_000,
    maxChars: 2000,
    ...options,
  });
}

t.test('POST /audio/speech asks for a WAV; streamed header sizes are fixed', async (t) => {
  const server = await serve(t);
  const pcm = tonePcm(1200, 24000);
  server.enqueue({ wav: buildWav(pcm, 24000, { unknownSizes: true }) });
  const speech = await tts(server).synthesize('The kitchen light is on.', { language: 'en' });
  t.same(server.requests[0]?.json, { model: 'tts-1', voice: 'alloy', input: 'The kitchen light is on.', response_format: 'wav' });
  t.equal(server.requests[0]?.headers.authorization, 'Bearer sk-tts');
  t.equal(server.requests[0]?.headers['content-type'], 'application/json');
  t.same([speech.sampleRate, speech.channels, speech.durationMs], [24000, 1, 1200]);
  t.equal(speech.wav.readUInt32LE(4), speech.wav.length - 8, 'RIFF size fixed');
  t.equal(parseWav(speech.wav).dataLength, pcm.length, 'data size fixed');

  const plain = await tts(server).synthesize('好的', { language: 'zh' });
  t.equal(plain.durationMs, 500, 'an exact WAV passes as it is');
});

t.test('errors: HTTP status with message, not a WAV, no audio, timeout, cancel', async (t) => {
  const server = await serve(t);
  server.apiKey = 'sk-other';
  const denied = await expectErrorAsync(t, () => tts(server).synthesize('hi', { language: 'en' }), 'HA_ERR_VOICE_TTS');
  t.match(
    denied.message,
    /^openai text-to-speech at 127\.0\.0\.1:\d+: HTTP 401: Incorrect API key provided: \[redacted\]\.$/,
    'the key the server echoes is scrubbed',
  );
  server.apiKey = '';

  server.enqueue(
    { status: 429, message: 'You exceeded your current quota' },
    { malformed: '{"error":null}', contentType: 'audio/wav' },
    { wav: Buffer.alloc(0) },
    { wav: buildWav(Buffer.alloc(0), 24000) },
    { hang: true },
    { hang: true },
  );
  const quota = await expectErrorAsync(t, () => tts(server).synthesize('hi', { language: 'en' }), 'HA_ERR_VOICE_TTS');
  t.match(quota.message, /HTTP 429: You exceeded your current quota$/);
  const notWav = await expectErrorAsync(t, () => tts(server).synthesize('hi', { language: 'en' }), 'HA_ERR_VOICE_TTS');
  t.match(notWav.message, /not a PCM WAV: .*no RIFF\/WAVE header/);
  const empty = await expectErrorAsync(t, () => tts(server).synthesize('hi', { language: 'en' }), 'HA_ERR_VOICE_TTS');
  t.match(empty.message, /answered with no audio/);
  const silent = await expectErrorAsync(t, () => tts(server).synthesize('hi', { language: 'en' }), 'HA_ERR_VOICE_TTS');
  t.match(silent.message, /produced no audio/);
  const hung = await expectErrorAsync(t, () => tts(server, { timeoutMs: 200 }).synthesize('hi', { language: 'en' }), 'HA_ERR_VOICE_TTS');
  t.match(hung.message, /no answer within 200 ms/);
  const controller = new AbortController();
  const call = tts(server).synthesize('hi', { language: 'en', signal: controller.signal });
  controller.abort();
  const cancelled = await expectErrorAsync(t, () => call, 'HA_ERR_VOICE_TTS');
  t.match(cancelled.message, /cancelled/);

  const before = server.requests.length;
  await expectErrorAsync(t, () => tts(server, { maxChars: 10 }).synthesize('x'.repeat(11), { language: 'en' }), 'HA_ERR_VOICE_TTS');
  t.equal(server.requests.length, before, 'an overlong text is refused before any request');
});

import { createServer } from 'node:net';
import t, { type Test } from 'tap';
import type { PcmAudio } from '../../../../plugins/voice/speech.js';
import { OpenAiStt, type OpenAiSttOptions } from '../../../../plugins/voice/stt/openai-stt.js';
import { type OpenAiAudioServer, startOpenAiAudioServer } from '../../../helpers/openai-audio-server.js';
import { expectErrorAsync } from '../../fixtures/support.js';

const KEY = 'sk-test-0123456789abcdef';

function utterance(ms: number, sampleRate = 16000): PcmAudio {
  const samples = new Int16Array(Math.round((ms / 1000) * sampleRate));
  for (let i = 0; i < samples.length; i += 1) samples[i] = Math.round(3000 * Math.sin(i / 5));
  return { samples, sampleRate };
}

async function serve(t: Test): Promise<OpenAiAudioServer> {
  const server = await startOpenAiAudioServer();
  t.teardown(() => server.close());
  return server;
}

function stt(server: { baseUrl: string }, options: Partial<OpenAiSttOptions> = {}): OpenAiStt {
  return new OpenAiStt({
    baseUrl: server.baseUrl,
    apiKey: KEY,
    model: 'whisper-1',
    timeoutMs: 10_000,
    language: 'auto',
    maxOutputChars: 4000,
    ...options,
  });
}

t.test('a WAV of the utterance goes up as multipart with model, language and the key', async (t) => {
  const server = await serve(t);
  server.apiKey = KEY;
  server.enqueue({ transcript: '  把 Kitchen Light 打开  ', language: 'chinese' });
  const audio = utterance(750);
  const result = await stt(server).transcribe(audio, { language: 'zh' });
  t.same(result, { text: '把 Kitchen Light 打开', language: 'chinese' });

  const [request] = server.requests;
  t.equal(request?.path, '/v1/audio/transcriptions');
  t.equal(request?.headers.authorization, `Bearer ${KEY}`);
  t.match(request?.headers['content-type'], /^multipart\/form-data; boundary=/);
  t.same(request?.fields, { model: 'whisper-1', language: 'zh', response_format: 'json' });
  t.equal(request?.file?.contentType, 'audio/wav');
  t.same(request?.file?.wav, { sampleRate: 16000, channels: 1, bitsPerSample: 16, dataLength: audio.samples.length * 2 });
  t.same(request?.file?.bytes.subarray(44), Buffer.from(audio.samples.buffer), 'the samples, little-endian');
});

t.test('language: the caller wins, then the configured one; auto sends none', async (t) => {
  const server = await serve(t);
  await stt(server, { language: 'en' }).transcribe(utterance(100), {});
  await stt(server, { language: 'en' }).transcribe(utterance(100), { language: 'zh' });
  await stt(server, { language: 'auto' }).transcribe(utterance(100, 8000), {});
  t.same(
    server.requests.map((r) => r.fields.language),
    ['en', 'zh', undefined],
  );
  t.match(server.requests[2]?.file?.wav, { sampleRate: 8000, dataLength: 1600 }, 'the rate of the audio');
});

t.test('no key: no Authorization header (a local server)', async (t) => {
  const server = await serve(t);
  const result = await stt(server, { apiKey: '' }).transcribe(utterance(100), {});
  t.equal(result.text, 'turn on the kitchen light');
  t.equal(server.requests[0]?.headers.authorization, undefined);
});

t.test('HTTP errors name the status and the server message, never the key', async (t) => {
  const server = await serve(t);
  server.apiKey = 'sk-the-right-one-xyz';
  const denied = await expectErrorAsync(t, () => stt(server).transcribe(utterance(100), {}), 'HA_ERR_VOICE_STT');
  t.match(denied.message, /^openai speech-to-text at 127\.0\.0\.1:\d+: HTTP 401: Incorrect API key provided/);
  t.notMatch(denied.message, KEY);

  server.apiKey = '';
  server.enqueue(
    { status: 500 },
    { status: 503, body: 'upstream busy' },
    { status: 400, body: JSON.stringify({ error: `bad key ${KEY}` }) },
  );
  const five = await expectErrorAsync(t, () => stt(server).transcribe(utterance(100), {}), 'HA_ERR_VOICE_STT');
  t.match(five.message, /HTTP 500: The server had an error while processing your request\./);
  const text = await expectErrorAsync(t, () => stt(server).transcribe(utterance(100), {}), 'HA_ERR_VOICE_STT');
  t.match(text.message, /HTTP 503: upstream busy$/);
  const echoed = await expectErrorAsync(t, () => stt(server).transcribe(utterance(100), {}), 'HA_ERR_VOICE_STT');
  t.match(echoed.message, /HTTP 400: bad key \[redacted\]$/, 'a key the server echoes is scrubbed');

  const badModel = await expectErrorAsync(t, () => stt(server, { model: ' ' }).transcribe(utterance(100), {}), 'HA_ERR_VOICE_STT');
  t.match(badModel.message, /HTTP 400/);
});

t.test('a malformed answer', async (t) => {
  const server = await serve(t);
  server.enqueue({ malformed: '<html>gateway</html>', contentType: 'text/html' }, { malformed: '{"txt":"x"}' });
  const html = await expectErrorAsync(t, () => stt(server).transcribe(utterance(100), {}), 'HA_ERR_VOICE_STT');
  t.match(html.message, /not JSON: <html>gateway/);
  const noText = await expectErrorAsync(t, () => stt(server).transcribe(utterance(100), {}), 'HA_ERR_VOICE_STT');
  t.match(noText.message, /no "text" string/);
});

t.test('a server that never answers: the timeout ends the call; so does the caller', async (t) => {
  const server = await serve(t);
  server.enqueue({ hang: true }, { hang: true });
  const timedOut = await expectErrorAsync(t, () => stt(server, { timeoutMs: 200 }).transcribe(utterance(100), {}), 'HA_ERR_VOICE_STT');
  t.match(timedOut.message, /no answer within 200 ms/);

  const controller = new AbortController();
  const call = stt(server).transcribe(utterance(100), { signal: controller.signal });
  controller.abort();
  const cancelled = await expectErrorAsync(t, () => call, 'HA_ERR_VOICE_STT');
  t.match(cancelled.message, /was cancelled/);
});

t.test('network errors name the host', async (t) => {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const port = (probe.address() as { port: number }).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  const error = await expectErrorAsync(
    t,
    () => stt({ baseUrl: `http://127.0.0.1:${port}/v1` }).transcribe(utterance(100), {}),
    'HA_ERR_VOICE_STT',
  );
  t.equal(error.message, `openai speech-to-text at 127.0.0.1:${port} failed: connection refused`);
});

t.test('limits: empty audio and an overlong transcript are refused', async (t) => {
  const server = await serve(t);
  const empty = await expectErrorAsync(
    t,
    () => stt(server).transcribe({ samples: new Int16Array(0), sampleRate: 16000 }, {}),
    'HA_ERR_VOICE_STT',
  );
  t.match(empty.message, /audio is empty/);
  t.equal(server.requests.length, 0, 'nothing was sent');
  server.enqueue({ transcript: 'x'.repeat(17) });
  const long = await expectErrorAsync(t, () => stt(server, { maxOutputChars: 16 }).transcribe(utterance(100), {}), 'HA_ERR_VOICE_STT');
  t.match(long.message, /17 characters, over plugin\.voice\.stt\.max_output_chars \(16\)/);
});

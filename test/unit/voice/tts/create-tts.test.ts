import t from 'tap';
import { createTextToSpeech, type TtsSettings } from '../../../../plugins/voice/tts/create-tts.js';
import { EspeakTts } from '../../../../plugins/voice/tts/espeak-tts.js';
import { OpenAiTts } from '../../../../plugins/voice/tts/openai-tts.js';
import { PiperTts } from '../../../../plugins/voice/tts/piper-tts.js';
import { WyomingTts } from '../../../../plugins/voice/tts/wyoming-tts.js';
import { startOpenAiAudioServer } from '../../../helpers/openai-audio-server.js';
import { espeakMissing } from '../../../helpers/system-tools.js';
import { startWyomingServer } from '../../../helpers/wyoming-server.js';
import { captureLogs, expectError } from '../../fixtures/support.js';

/** The schema defaults (src/config/schema.ts, VoiceTtsSchema). */
function settings(overrides: Partial<TtsSettings> = {}): TtsSettings {
  return {
    backend: 'espeak',
    fallback_to_espeak: true,
    max_chars: 2000,
    timeout_ms: 10000,
    espeak_voice_en: 'en-us',
    espeak_voice_zh: 'cmn',
    espeak_rate: 175,
    piper_program: 'piper',
    piper_model_en: '',
    piper_model_zh: '',
    wyoming_host: '',
    wyoming_port: 10200,
    wyoming_voice: '',
    openai_base_url: '',
    openai_api_key: '',
    openai_model: 'tts-1',
    openai_voice: 'alloy',
    wyoming_max_payload_bytes: 10485760,
    ...overrides,
  };
}

t.test('each back end, with the espeak fallback unless it is espeak or the fallback is off', async (t) => {
  const espeak = createTextToSpeech(settings());
  t.type(espeak.primary, EspeakTts);
  t.equal(espeak.fallback, undefined, 'espeak does not fall back to itself');
  const piper = createTextToSpeech(settings({ backend: 'piper', piper_model_en: '/models/en.onnx' }));
  t.type(piper.primary, PiperTts);
  t.type(piper.fallback, EspeakTts);
  t.equal(piper.name, 'piper');
  const noFallback = createTextToSpeech(settings({ backend: 'piper', piper_model_zh: '/m/zh.onnx', fallback_to_espeak: false }));
  t.equal(noFallback.fallback, undefined);
  t.type(createTextToSpeech(settings({ backend: 'wyoming', wyoming_host: 'tts.lan' })).primary, WyomingTts);
  t.type(createTextToSpeech(settings({ backend: 'openai', openai_base_url: 'https://api.openai.com/v1' })).primary, OpenAiTts);
});

t.test("without the fallback a failure is the back end's own error", async (t) => {
  const tts = createTextToSpeech(
    settings({ backend: 'piper', piper_program: '/nonexistent/piper', piper_model_en: '/nonexistent/en.onnx', fallback_to_espeak: false }),
  );
  await t.rejects(tts.synthesize('hi', { language: 'en' }), { code: 'HA_ERR_VOICE_TTS', message: /en\.onnx\.json cannot be read/ });
});

t.test('a back end without its required setting names the key', async (t) => {
  const piper = expectError(t, () => createTextToSpeech(settings({ backend: 'piper' })), 'HA_ERR_CONFIG_INVALID');
  t.match(piper.message, /piper_model_en and plugin\.voice\.tts\.piper_model_zh are both empty/);
  const wyoming = expectError(t, () => createTextToSpeech(settings({ backend: 'wyoming', wyoming_host: ' ' })), 'HA_ERR_CONFIG_INVALID');
  t.match(wyoming.message, /^plugin\.voice\.tts\.wyoming_host is empty/);
  const openai = expectError(t, () => createTextToSpeech(settings({ backend: 'openai' })), 'HA_ERR_CONFIG_INVALID');
  t.match(openai.message, /^plugin\.voice\.tts\.openai_base_url is empty/);
});

t.test('openai: its own settings only (an empty key sends none)', async (t) => {
  const server = await startOpenAiAudioServer();
  t.teardown(() => server.close());
  const own = createTextToSpeech(
    settings({
      backend: 'openai',
      openai_base_url: server.baseUrl,
      openai_api_key: 'sk-voice',
      openai_model: 'gpt-4o-mini-tts',
      openai_voice: 'nova',
    }),
  );
  t.equal((await own.synthesize('hi', { language: 'en' })).durationMs, 500);
  const keyless = createTextToSpeech(settings({ backend: 'openai', openai_base_url: server.baseUrl }));
  await keyless.synthesize('hi', { language: 'en' });
  t.same(
    server.requests.map((r) => [r.headers.authorization, r.json.model, r.json.voice]),
    [
      ['Bearer sk-voice', 'gpt-4o-mini-tts', 'nova'],
      [undefined, 'tts-1', 'alloy'],
    ],
  );
});

t.test('wyoming through the factory speaks; when its server dies espeak-ng takes over', { skip: espeakMissing() }, async (t) => {
  const server = await startWyomingServer({
    synthesized: { pcm: Buffer.alloc(16000), rate: 16000, width: 2, channels: 1, chunkBytes: 4000 },
  });
  const captured = captureLogs();
  const tts = createTextToSpeech(
    settings({ backend: 'wyoming', wyoming_host: '127.0.0.1', wyoming_port: server.port }),
    captured.logs.child('voice'),
  );
  const served = await tts.synthesize('hello', { language: 'en' });
  t.same([served.backend, served.durationMs], ['wyoming', 500]);
  await server.close();
  const fallen = await tts.synthesize('hello', { language: 'en' });
  t.same([fallen.backend, fallen.sampleRate], ['espeak', 22050]);
  t.equal(captured.records().filter((r) => r.level === 'warn').length, 1);
});

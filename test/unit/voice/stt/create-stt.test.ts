import t from 'tap';
import { createSpeechToText, type SttSettings } from '../../../../plugins/voice/stt/create-stt.js';
import { startOpenAiAudioServer } from '../../../helpers/openai-audio-server.js';
import { startWyomingServer } from '../../../helpers/wyoming-server.js';
import { expectError } from '../../fixtures/support.js';

/** The schema defaults (src/config/schema.ts, VoiceSttSchema). */
function settings(overrides: Partial<SttSettings> = {}): SttSettings {
  return {
    backend: 'none',
    fallback_backend: 'none',
    language: 'auto',
    timeout_ms: 30000,
    wyoming_host: '',
    wyoming_port: 10300,
    openai_base_url: '',
    openai_api_key: '',
    openai_model: 'whisper-1',
    command: [],
    max_output_chars: 4000,
    wyoming_max_payload_bytes: 10485760,
    ...overrides,
  };
}

const AUDIO = { samples: new Int16Array(1600).fill(500), sampleRate: 16000 };

t.test('none: no back end', async (t) => {
  t.equal(createSpeechToText(settings()), undefined);
});

t.test('a back end without its required setting names the key', async (t) => {
  const wyoming = expectError(t, () => createSpeechToText(settings({ backend: 'wyoming' })), 'HA_ERR_CONFIG_INVALID');
  t.match(wyoming.message, /^plugin\.voice\.stt\.wyoming_host is empty/);
  const openai = expectError(t, () => createSpeechToText(settings({ backend: 'openai' })), 'HA_ERR_CONFIG_INVALID');
  t.match(openai.message, /^plugin\.voice\.stt\.openai_base_url is empty/);
  const url = expectError(
    t,
    () => createSpeechToText(settings({ backend: 'openai', openai_base_url: 'not a url' })),
    'HA_ERR_CONFIG_INVALID',
  );
  t.match(url.message, /"not a url" is not a URL/);
  const command = expectError(t, () => createSpeechToText(settings({ backend: 'command' })), 'HA_ERR_CONFIG_INVALID');
  t.match(command.message, /^plugin\.voice\.stt\.command is empty/);
  const noWav = expectError(
    t,
    () => createSpeechToText(settings({ backend: 'command', command: ['whisper-cli', '-f'] })),
    'HA_ERR_CONFIG_INVALID',
  );
  t.match(noWav.message, /has no \{wav\} argument/);
});

t.test('wyoming: host, port, language and timeout reach the server', async (t) => {
  const server = await startWyomingServer({ transcript: { text: 'hello' } });
  t.teardown(() => server.close());
  const stt = createSpeechToText(settings({ backend: 'wyoming', wyoming_host: '127.0.0.1', wyoming_port: server.port, language: 'en' }));
  t.equal(stt?.name, 'wyoming');
  t.same(await stt?.transcribe(AUDIO, {}), { text: 'hello' });
  t.equal(server.transcriptions[0]?.language, 'en');
});

t.test('openai: its own URL and key only (an empty key sends none)', async (t) => {
  const server = await startOpenAiAudioServer();
  t.teardown(() => server.close());
  const own = createSpeechToText(
    settings({ backend: 'openai', openai_base_url: server.baseUrl, openai_api_key: 'sk-voice', openai_model: 'whisper-large-v3' }),
  );
  t.equal(own?.name, 'openai');
  await own?.transcribe(AUDIO, {});
  const keyless = createSpeechToText(settings({ backend: 'openai', openai_base_url: `${server.baseUrl}/` }));
  await keyless?.transcribe(AUDIO, {});
  t.same(
    server.requests.map((r) => [r.path, r.headers.authorization, r.fields.model]),
    [
      ['/v1/audio/transcriptions', 'Bearer sk-voice', 'whisper-large-v3'],
      ['/v1/audio/transcriptions', undefined, 'whisper-1'],
    ],
  );
});

t.test('command: the configured list runs', async (t) => {
  const stt = createSpeechToText(
    settings({
      backend: 'command',
      command: [process.execPath, '-e', 'console.log(process.argv[1].endsWith(".wav") ? "ok" : "no")', '{wav}'],
    }),
  );
  t.equal(stt?.name, 'command');
  t.same(await stt?.transcribe(AUDIO, {}), { text: 'ok' });
});

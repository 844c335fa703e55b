/**
 * The settings of the voice plugin, `plugin.voice.*`: defaults, bounds, descriptions and
 * `requires_restart` for each. The configuration schema composes it (src/config/plugin-sections.ts);
 * the plugin reads its values through `PluginSettings<VoiceSettings>`.
 */
import { type Static, Type } from '@sinclair/typebox';
import { pluginEnabled, pluginMeta, type SettingMeta } from '../../src/sdk/settings.js';

const voiceMeta = (description: string, extra: Partial<SettingMeta> = {}) => pluginMeta('voice', description, extra);
const NETWORK_HOST = { maxLength: 253, pattern: '^[A-Za-z0-9._:-]*$' };

const VoiceMicrophoneSchema = Type.Object(
  {
    device: Type.String({
      default: 'default',
      minLength: 1,
      maxLength: 128,
      pattern: '^[A-Za-z0-9_:,.=-]+$',
      ...voiceMeta('ALSA capture device (arecord -D): default, plughw:1,0, a name from asound.conf.', { requires_restart: true }),
    }),
    sample_rate: Type.Union([Type.Literal(16000), Type.Literal(8000)], {
      default: 16000,
      ...voiceMeta('Capture rate in Hz; voice activity detection runs at this rate (Silero takes 16000 or 8000).', {
        requires_restart: true,
      }),
    }),
    channels: Type.Integer({
      default: 1,
      minimum: 1,
      maximum: 2,
      ...voiceMeta('Channels captured; two are mixed down to one.', { requires_restart: true }),
    }),
    format: Type.Union([Type.Literal('S16_LE'), Type.Literal('S32_LE')], {
      default: 'S16_LE',
      ...voiceMeta('Sample format arecord is asked for; converted to 16-bit internally.', { requires_restart: true }),
    }),
    restart_backoff_ms: Type.Integer({
      default: 1000,
      minimum: 100,
      maximum: 600000,
      ...voiceMeta('First wait before restarting a recorder that exited; doubles on each exit in a row.'),
    }),
    restart_backoff_max_ms: Type.Integer({
      default: 60000,
      minimum: 100,
      maximum: 3600000,
      ...voiceMeta('Longest wait between recorder restarts.'),
    }),
  },
  { additionalProperties: false, default: {} },
);

const VoiceVadSchema = Type.Object(
  {
    threshold: Type.Number({
      default: 0.5,
      minimum: 0.05,
      maximum: 0.99,
      ...voiceMeta('Speech probability at which an utterance starts.'),
    }),
    negative_threshold: Type.Number({
      default: 0.35,
      minimum: 0.01,
      maximum: 0.95,
      ...voiceMeta('Speech probability under which silence is counted (hysteresis; below threshold).'),
    }),
    min_speech_ms: Type.Integer({
      default: 250,
      minimum: 32,
      maximum: 5000,
      ...voiceMeta('Shorter bursts of speech are dropped as noise.'),
    }),
    min_silence_ms: Type.Integer({
      default: 500,
      minimum: 64,
      maximum: 5000,
      ...voiceMeta('Silence that ends an utterance.'),
    }),
    pre_roll_ms: Type.Integer({
      default: 300,
      minimum: 0,
      maximum: 2000,
      ...voiceMeta('Audio kept from before the speech started, so the first syllable is not cut.'),
    }),
    max_utterance_ms: Type.Integer({
      default: 15000,
      minimum: 1000,
      maximum: 60000,
      ...voiceMeta('An utterance is cut here even if speech goes on.'),
    }),
  },
  { additionalProperties: false, default: {} },
);

const VoiceActivationSchema = Type.Object(
  {
    wake_phrases: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
      default: ['小宅', '你好小宅', '嘿小宅', 'hey home', 'hi home', 'ok home', 'hello home'],
      maxItems: 32,
      ...voiceMeta(
        'An utterance whose transcript starts with one of these is for HomeAgent (the phrase is removed before the command is understood). Empty: no wake phrase.',
      ),
    }),
    wake_phrase_with_cloud_stt: Type.Boolean({
      default: false,
      ...voiceMeta(
        'Allow wake phrases with the openai speech-to-text back end. Matching a phrase in the transcript sends every utterance heard in the room to that service, so it is off unless you say so.',
      ),
    }),
    push_to_talk_entity: Type.String({
      default: '',
      maxLength: 128,
      ...voiceMeta(
        'A button or binary sensor entity (e.g. binary_sensor.talk_button): turning on opens the microphone for one utterance, without a wake phrase. Empty: none.',
      ),
    }),
    wake_word_model_dir: Type.String({
      default: '',
      maxLength: 4096,
      ...voiceMeta(
        'A directory with openWakeWord models (melspectrogram.onnx, embedding_model.onnx and one classifier *.onnx): a detected wake word opens the microphone for one utterance. Empty: none.',
        { requires_restart: true },
      ),
    }),
    wake_word_threshold: Type.Number({
      default: 0.5,
      minimum: 0.05,
      maximum: 0.99,
      ...voiceMeta('Wake word classifier score that counts as a detection.'),
    }),
    keyphrase: Type.String({
      default: 'hey home',
      maxLength: 64,
      pattern: "^[A-Za-z' ]*$",
      ...voiceMeta(
        "The local wake word: English words that pocketsphinx spots in the microphone's audio (Debian packages pocketsphinx and pocketsphinx-en-us); hearing it opens the microphone for one utterance. Empty: none.",
        { requires_restart: true },
      ),
    }),
    keyphrase_threshold: Type.Number({
      default: 1e-5,
      minimum: 1e-60,
      maximum: 1,
      ...voiceMeta(
        'pocketsphinx kws_threshold for the local wake word: lower hears the phrase more readily and more falsely (tuned by bench/wake-word.mjs).',
        { requires_restart: true },
      ),
    }),
    keyphrase_phone_loop_penalty: Type.Number({
      default: 1e-5,
      minimum: 1e-60,
      maximum: 1,
      ...voiceMeta('pocketsphinx kws_plp for the local wake word: lower lets the phrase win over other sounds more often.', {
        requires_restart: true,
      }),
    }),
    keyphrase_model_dir: Type.String({
      default: '/usr/share/pocketsphinx/model/en-us',
      minLength: 1,
      maxLength: 4096,
      ...voiceMeta('The pocketsphinx English model directory (en-us/ and cmudict-en-us.dict).', { requires_restart: true }),
    }),
    keyphrase_restart_ms: Type.Integer({
      default: 1000,
      minimum: 100,
      maximum: 600000,
      ...voiceMeta('First wait before restarting a wake word spotter that exited; doubles on each exit in a row.'),
    }),
    keyphrase_restart_max_ms: Type.Integer({
      default: 60000,
      minimum: 100,
      maximum: 3600000,
      ...voiceMeta('Longest wait between wake word spotter restarts.'),
    }),
    listen_window_ms: Type.Integer({
      default: 8000,
      minimum: 1000,
      maximum: 60000,
      ...voiceMeta('After push-to-talk or a wake word: how long the next utterance may take to begin.'),
    }),
    refractory_ms: Type.Integer({
      default: 2000,
      minimum: 0,
      maximum: 60000,
      ...voiceMeta('After an activation, further triggers are ignored this long (one press or phrase, one turn).'),
    }),
    log_entries: Type.Integer({
      default: 500,
      minimum: 0,
      maximum: 100000,
      ...voiceMeta('Activations and near misses kept in <data>/plugin-data/voice/activations.jsonl for tuning false triggers.'),
    }),
  },
  { additionalProperties: false, default: {} },
);

const VoiceSttSchema = Type.Object(
  {
    backend: Type.Union([Type.Literal('none'), Type.Literal('wyoming'), Type.Literal('openai'), Type.Literal('command')], {
      default: 'none',
      ...voiceMeta(
        'Speech-to-text: wyoming (a faster-whisper or whisper.cpp Wyoming server on the LAN), openai (POST /v1/audio/transcriptions), command (a program that reads a WAV and prints the text). none: the microphone stays closed.',
      ),
    }),
    language: Type.Union([Type.Literal('auto'), Type.Literal('zh'), Type.Literal('en')], {
      default: 'auto',
      ...voiceMeta('Language hint given to the back end; auto lets it decide.'),
    }),
    timeout_ms: Type.Integer({
      default: 30000,
      minimum: 1000,
      maximum: 300000,
      ...voiceMeta('A transcription that takes longer is given up.'),
    }),
    wyoming_host: Type.String({ default: '', ...NETWORK_HOST, ...voiceMeta('Wyoming speech-to-text server host.') }),
    wyoming_port: Type.Integer({ default: 10300, minimum: 1, maximum: 65535, ...voiceMeta('Wyoming speech-to-text server port.') }),
    openai_base_url: Type.String({
      default: '',
      maxLength: 2048,
      ...voiceMeta(
        'Base URL of an OpenAI-compatible API (…/v1), e.g. https://api.openai.com/v1 or a server on the LAN. Not taken from core.llm: audio goes only where you send it.',
      ),
    }),
    openai_api_key: Type.String({
      default: '',
      maxLength: 4096,
      ...voiceMeta('API key (empty: none, for a server on the LAN).', { secret: true }),
    }),
    openai_model: Type.String({ default: 'whisper-1', minLength: 1, maxLength: 256, ...voiceMeta('Transcription model.') }),
    command: Type.Array(Type.String({ minLength: 1, maxLength: 4096 }), {
      default: [],
      maxItems: 64,
      ...voiceMeta(
        'Program and arguments, run without a shell; {wav} is replaced by the utterance WAV file and {language} by the language hint. It prints the text on standard output.',
      ),
    }),
    max_output_chars: Type.Integer({
      default: 4000,
      minimum: 16,
      maximum: 100000,
      ...voiceMeta('Longest transcript accepted.'),
    }),
  },
  { additionalProperties: false, default: {} },
);

const VoiceTtsSchema = Type.Object(
  {
    backend: Type.Union([Type.Literal('espeak'), Type.Literal('piper'), Type.Literal('wyoming'), Type.Literal('openai')], {
      default: 'espeak',
      ...voiceMeta(
        'Text-to-speech: espeak (espeak-ng, Chinese and English), piper (the piper program), wyoming (a Piper Wyoming server), openai (POST /v1/audio/speech).',
      ),
    }),
    fallback_to_espeak: Type.Boolean({
      default: true,
      ...voiceMeta('When the chosen back end fails, speak with espeak-ng instead of staying silent.'),
    }),
    max_chars: Type.Integer({
      default: 2000,
      minimum: 10,
      maximum: 20000,
      ...voiceMeta('Longer texts are cut at a sentence end before speaking.'),
    }),
    timeout_ms: Type.Integer({ default: 10000, minimum: 500, maximum: 120000, ...voiceMeta('A synthesis that takes longer is given up.') }),
    espeak_voice_en: Type.String({ default: 'en-us', pattern: '^[A-Za-z0-9_+-]{1,32}$', ...voiceMeta('espeak-ng voice for English.') }),
    espeak_voice_zh: Type.String({ default: 'cmn', pattern: '^[A-Za-z0-9_+-]{1,32}$', ...voiceMeta('espeak-ng voice for Chinese.') }),
    espeak_rate: Type.Integer({ default: 175, minimum: 80, maximum: 450, ...voiceMeta('espeak-ng words per minute.') }),
    piper_program: Type.String({
      default: 'piper',
      minLength: 1,
      maxLength: 4096,
      ...voiceMeta('The piper program (a name on PATH or an absolute path).'),
    }),
    piper_model_en: Type.String({
      default: '',
      maxLength: 4096,
      ...voiceMeta('Piper voice model (.onnx) for English; empty: espeak-ng speaks English.'),
    }),
    piper_model_zh: Type.String({
      default: '',
      maxLength: 4096,
      ...voiceMeta('Piper voice model (.onnx) for Chinese; empty: espeak-ng speaks Chinese.'),
    }),
    wyoming_host: Type.String({ default: '', ...NETWORK_HOST, ...voiceMeta('Wyoming text-to-speech server host.') }),
    wyoming_port: Type.Integer({ default: 10200, minimum: 1, maximum: 65535, ...voiceMeta('Wyoming text-to-speech server port.') }),
    wyoming_voice: Type.String({
      default: '',
      maxLength: 128,
      ...voiceMeta('Voice name asked of the Wyoming server; empty: its default.'),
    }),
    openai_base_url: Type.String({
      default: '',
      maxLength: 2048,
      ...voiceMeta(
        'Base URL of an OpenAI-compatible API (…/v1), e.g. https://api.openai.com/v1 or a server on the LAN. Not taken from core.llm: audio goes only where you send it.',
      ),
    }),
    openai_api_key: Type.String({
      default: '',
      maxLength: 4096,
      ...voiceMeta('API key (empty: none, for a server on the LAN).', { secret: true }),
    }),
    openai_model: Type.String({ default: 'tts-1', minLength: 1, maxLength: 256, ...voiceMeta('Speech model.') }),
    openai_voice: Type.String({ default: 'alloy', minLength: 1, maxLength: 64, ...voiceMeta('Voice name.') }),
  },
  { additionalProperties: false, default: {} },
);

export const settingsSchema = Type.Object(
  {
    enabled: pluginEnabled('voice'),
    channel: Type.String({
      default: 'voice',
      pattern: '^[A-Za-z0-9_:.-]{1,64}$',
      ...voiceMeta('The conversation spoken commands belong to.', { requires_restart: true }),
    }),
    area: Type.String({
      default: '',
      maxLength: 64,
      ...voiceMeta('The area (room) the microphone is in: "turn on the light" means this room’s light.'),
    }),
    wyoming_max_payload_bytes: Type.Integer({
      default: 10485760,
      minimum: 65536,
      maximum: 104857600,
      ...voiceMeta('Largest Wyoming message payload accepted from a server.'),
    }),
    microphone: VoiceMicrophoneSchema,
    vad: VoiceVadSchema,
    activation: VoiceActivationSchema,
    stt: VoiceSttSchema,
    tts: VoiceTtsSchema,
    speaker_enabled: Type.Boolean({
      default: true,
      ...voiceMeta('Offer the speaker output channel (announcements, spoken answers).', { requires_restart: true }),
    }),
    speaker_device: Type.String({
      default: 'default',
      minLength: 1,
      maxLength: 128,
      pattern: '^[A-Za-z0-9_:,.=-]+$',
      ...voiceMeta('ALSA playback device (aplay -D).'),
    }),
    speaker_timeout_ms: Type.Integer({
      default: 120000,
      minimum: 1000,
      maximum: 1800000,
      ...voiceMeta('Longest playback; longer is stopped.'),
    }),
    barge_in: Type.Boolean({
      default: true,
      ...voiceMeta('Speech heard while HomeAgent is speaking stops the playback and the answer still being written.'),
    }),
    stream_speech: Type.Boolean({
      default: true,
      ...voiceMeta(
        'Speak each finished sentence of an answer while the model is still writing the rest; off: speak the whole answer at the end.',
      ),
    }),
  },
  { additionalProperties: false, default: {} },
);

export type VoiceSettings = Static<typeof settingsSchema>;

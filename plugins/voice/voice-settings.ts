/**
 * Reads the plugin.voice.* leaves the pipeline's parts take, in the shapes they take them, so the
 * plugin's wiring does not repeat forty dotted keys. Every reader reads afresh, so a setting
 * changed at run time applies to the next utterance or playback.
 */
import type { PluginSettings } from '../../src/sdk/index.js';
import type { ActivationSettings } from './activation-policy.js';
import type { SttSettings } from './stt/create-stt.js';
import type { TtsSettings } from './tts/create-tts.js';

type Get = Pick<PluginSettings, 'get'>;

/** The leaves under plugin.voice.vad, as the voice activity detector reads them. */
export interface VadLeaves {
  threshold: number;
  negative_threshold: number;
  min_speech_ms: number;
  min_silence_ms: number;
  pre_roll_ms: number;
  max_utterance_ms: number;
}

export function vadSettings(settings: Get): VadLeaves {
  return {
    threshold: settings.get<number>('vad.threshold'),
    negative_threshold: settings.get<number>('vad.negative_threshold'),
    min_speech_ms: settings.get<number>('vad.min_speech_ms'),
    min_silence_ms: settings.get<number>('vad.min_silence_ms'),
    pre_roll_ms: settings.get<number>('vad.pre_roll_ms'),
    max_utterance_ms: settings.get<number>('vad.max_utterance_ms'),
  };
}

export function sttSettings(settings: Get): SttSettings {
  const get = <T>(key: string) => settings.get<T>(`stt.${key}`);
  return {
    backend: get('backend'),
    language: get('language'),
    timeout_ms: get('timeout_ms'),
    wyoming_host: get('wyoming_host'),
    wyoming_port: get('wyoming_port'),
    openai_base_url: get('openai_base_url'),
    openai_api_key: get('openai_api_key'),
    openai_model: get('openai_model'),
    command: get('command'),
    max_output_chars: get('max_output_chars'),
    wyoming_max_payload_bytes: settings.get<number>('wyoming_max_payload_bytes'),
  };
}

export function ttsSettings(settings: Get): TtsSettings {
  const get = <T>(key: string) => settings.get<T>(`tts.${key}`);
  return {
    backend: get('backend'),
    fallback_to_espeak: get('fallback_to_espeak'),
    max_chars: get('max_chars'),
    timeout_ms: get('timeout_ms'),
    espeak_voice_en: get('espeak_voice_en'),
    espeak_voice_zh: get('espeak_voice_zh'),
    espeak_rate: get('espeak_rate'),
    piper_program: get('piper_program'),
    piper_model_en: get('piper_model_en'),
    piper_model_zh: get('piper_model_zh'),
    wyoming_host: get('wyoming_host'),
    wyoming_port: get('wyoming_port'),
    wyoming_voice: get('wyoming_voice'),
    openai_base_url: get('openai_base_url'),
    openai_api_key: get('openai_api_key'),
    openai_model: get('openai_model'),
    openai_voice: get('openai_voice'),
    wyoming_max_payload_bytes: settings.get<number>('wyoming_max_payload_bytes'),
  };
}

/**
 * Why wake phrases are off, or undefined when they are on. Matching a phrase needs a transcript of
 * every utterance, which a cloud back end must not get unless the user allowed it.
 */
export function wakePhrasesOff(settings: Get): string | undefined {
  if (settings.get<string[]>('activation.wake_phrases').length === 0) return 'no wake phrases (plugin.voice.activation.wake_phrases)';
  if (settings.get<string>('stt.backend') === 'openai' && !settings.get<boolean>('activation.wake_phrase_with_cloud_stt')) {
    return 'wake phrases are off with the openai speech-to-text back end unless plugin.voice.activation.wake_phrase_with_cloud_stt is true (every utterance would be sent to it)';
  }
  return undefined;
}

export function activationSettings(settings: Get): ActivationSettings {
  return {
    listenWindowMs: settings.get<number>('activation.listen_window_ms'),
    refractoryMs: settings.get<number>('activation.refractory_ms'),
    wakePhrases: wakePhrasesOff(settings) === undefined,
  };
}

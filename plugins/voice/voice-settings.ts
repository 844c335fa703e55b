/**
 * Reads the plugin.voice.* leaves the pipeline's parts take, in the shapes they take them, so the
 * plugin's wiring does not repeat forty dotted keys. Every reader reads afresh, so a setting
 * changed at run time applies to the next utterance or playback.
 */
import type { TypedPluginSettings } from '../../src/sdk/index.js';
import type { ActivationSettings } from './activation-policy.js';
import type { VoiceSettings } from './settings-schema.js';
import type { SttSettings } from './stt/create-stt.js';
import type { TtsSettings } from './tts/create-tts.js';

type Source = Pick<TypedPluginSettings<VoiceSettings>, 'get' | 'values'>;

/** The leaves under plugin.voice.vad, as the voice activity detector reads them. */
export type VadLeaves = VoiceSettings['vad'];

export function vadSettings(settings: Source): VadLeaves {
  return settings.values().vad;
}

export function sttSettings(settings: Source): SttSettings {
  const { stt, wyoming_max_payload_bytes } = settings.values();
  return { ...stt, wyoming_max_payload_bytes };
}

export function ttsSettings(settings: Source): TtsSettings {
  const { tts, wyoming_max_payload_bytes } = settings.values();
  return { ...tts, wyoming_max_payload_bytes };
}

/**
 * Why wake phrases are off, or undefined when they are on. Matching a phrase needs a transcript of
 * every utterance, which a cloud back end must not get unless the user allowed it.
 */
export function wakePhrasesOff(settings: Source): { en: string; zh: string } | undefined {
  if (settings.get('activation.wake_phrases').length === 0) {
    return { en: 'no wake phrases (plugin.voice.activation.wake_phrases)', zh: '没有唤醒词（plugin.voice.activation.wake_phrases）' };
  }
  if (settings.get('stt.backend') === 'openai' && !settings.get('activation.wake_phrase_with_cloud_stt')) {
    return {
      en: 'wake phrases are off with the openai speech-to-text back end unless plugin.voice.activation.wake_phrase_with_cloud_stt is true (every utterance would be sent to it)',
      zh: '使用 openai 语音转文字后端时唤醒词关闭，除非 plugin.voice.activation.wake_phrase_with_cloud_stt 为 true（否则每句话都会发给它）',
    };
  }
  return undefined;
}

export function activationSettings(settings: Source): ActivationSettings {
  return {
    listenWindowMs: settings.get('activation.listen_window_ms'),
    refractoryMs: settings.get('activation.refractory_ms'),
    wakePhrases: wakePhrasesOff(settings) === undefined,
  };
}

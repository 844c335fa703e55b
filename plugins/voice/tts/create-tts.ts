/**
 * Builds the configured text-to-speech back end from the plugin.voice.tts settings, wrapped with
 * the espeak-ng fallback when fallback_to_espeak is on. A back end whose required setting is
 * missing is a configuration error naming the key, raised when the plugin starts.
 */
import { HomeAgentError } from '../../../src/sdk/index.js';
import type { TextToSpeech } from '../speech.js';
import { EspeakTts } from './espeak-tts.js';
import { type FallbackLog, FallbackTts } from './fallback-tts.js';
import { OpenAiTts } from './openai-tts.js';
import { PiperTts } from './piper-tts.js';
import { WyomingTts } from './wyoming-tts.js';

/** The leaves under plugin.voice.tts, plus the plugin-wide Wyoming payload limit. */
export interface TtsSettings {
  backend: 'espeak' | 'piper' | 'wyoming' | 'openai';
  fallback_to_espeak: boolean;
  max_chars: number;
  timeout_ms: number;
  espeak_voice_en: string;
  espeak_voice_zh: string;
  espeak_rate: number;
  piper_program: string;
  piper_model_en: string;
  piper_model_zh: string;
  wyoming_host: string;
  wyoming_port: number;
  wyoming_voice: string;
  openai_base_url: string;
  openai_api_key: string;
  openai_model: string;
  openai_voice: string;
  wyoming_max_payload_bytes: number;
}

function invalid(message: string): HomeAgentError {
  return new HomeAgentError('HA_ERR_CONFIG_INVALID', message);
}

function chosenBackend(settings: TtsSettings, espeak: EspeakTts): TextToSpeech {
  const common = { timeoutMs: settings.timeout_ms, maxChars: settings.max_chars };
  switch (settings.backend) {
    case 'espeak':
      return espeak;
    case 'piper':
      if (settings.piper_model_en.trim() === '' && settings.piper_model_zh.trim() === '') {
        throw invalid('plugin.voice.tts.piper_model_en and plugin.voice.tts.piper_model_zh are both empty, so piper has no voice');
      }
      return new PiperTts({
        ...common,
        program: settings.piper_program,
        models: { en: settings.piper_model_en.trim(), zh: settings.piper_model_zh.trim() },
      });
    case 'wyoming':
      if (settings.wyoming_host.trim() === '')
        throw invalid('plugin.voice.tts.wyoming_host is empty (the Wyoming text-to-speech server to use)');
      return new WyomingTts({
        ...common,
        host: settings.wyoming_host.trim(),
        port: settings.wyoming_port,
        voice: settings.wyoming_voice,
        maxPayloadBytes: settings.wyoming_max_payload_bytes,
      });
    case 'openai': {
      const baseUrl = settings.openai_base_url.trim();
      if (baseUrl === '') throw invalid('plugin.voice.tts.openai_base_url is empty (the OpenAI-compatible API to ask for speech)');
      if (!URL.canParse(baseUrl)) throw invalid(`plugin.voice.tts.openai_base_url "${baseUrl}" is not a URL`);
      return new OpenAiTts({
        ...common,
        baseUrl,
        apiKey: settings.openai_api_key,
        model: settings.openai_model,
        voice: settings.openai_voice,
      });
    }
    default:
      throw invalid(`plugin.voice.tts.backend "${String(settings.backend)}" is not espeak, piper, wyoming or openai`);
  }
}

/**
 * Always a FallbackTts, so every result names the back end that spoke (SpokenSpeech.backend). The
 * openai back end has its own URL and key, never core.llm's (see createSpeechToText).
 */
export function createTextToSpeech(settings: TtsSettings, log?: FallbackLog): FallbackTts {
  const espeak = new EspeakTts({
    voices: { en: settings.espeak_voice_en, zh: settings.espeak_voice_zh },
    rate: settings.espeak_rate,
    timeoutMs: settings.timeout_ms,
    maxChars: settings.max_chars,
  });
  const chosen = chosenBackend(settings, espeak);
  const fallback = chosen === espeak || !settings.fallback_to_espeak ? undefined : espeak;
  return new FallbackTts(chosen, fallback, log);
}

/**
 * Builds the configured speech-to-text back end from the plugin.voice.stt settings. A back end
 * whose required setting is missing is a configuration error naming the key, raised when the
 * plugin starts rather than at the first utterance.
 */
import { HomeAgentError } from '../../../src/sdk/index.js';
import type { SpeechToText } from '../speech.js';
import { CommandStt } from './command-stt.js';
import { OpenAiStt } from './openai-stt.js';
import type { LanguageSetting } from './stt-common.js';
import { WyomingStt } from './wyoming-stt.js';

/** The leaves under plugin.voice.stt, plus the plugin-wide Wyoming payload limit. */
export type RemoteSttBackend = 'none' | 'wyoming' | 'openai' | 'command';

export interface SttSettings {
  /** auto and local are built by the plugin (local-stt.ts); the others here. */
  backend: 'auto' | 'local' | RemoteSttBackend;
  fallback_backend: RemoteSttBackend;
  language: LanguageSetting;
  timeout_ms: number;
  wyoming_host: string;
  wyoming_port: number;
  openai_base_url: string;
  openai_api_key: string;
  openai_model: string;
  command: string[];
  max_output_chars: number;
  wyoming_max_payload_bytes: number;
}

function missing(key: string, extra = ''): HomeAgentError {
  return new HomeAgentError('HA_ERR_CONFIG_INVALID', `plugin.voice.stt.${key} is empty${extra}`);
}

/**
 * The configured back end, or undefined for none. The openai one has its own URL and key on purpose,
 * never core.llm's: what the microphone hears goes only where the owner sent it.
 */
export function createSpeechToText(settings: SttSettings, backend: SttSettings['backend'] = settings.backend): SpeechToText | undefined {
  const common = { timeoutMs: settings.timeout_ms, language: settings.language, maxOutputChars: settings.max_output_chars };
  switch (backend) {
    case 'auto':
    case 'local':
      throw new HomeAgentError('HA_ERR_CONFIG_INVALID', `plugin.voice.stt.backend "${backend}" is built by the voice plugin, not here`);
    case 'none':
      return undefined;
    case 'wyoming':
      if (settings.wyoming_host.trim() === '') throw missing('wyoming_host', ' (the Wyoming speech-to-text server to use)');
      return new WyomingStt({
        ...common,
        host: settings.wyoming_host.trim(),
        port: settings.wyoming_port,
        maxPayloadBytes: settings.wyoming_max_payload_bytes,
      });
    case 'openai': {
      const baseUrl = settings.openai_base_url.trim();
      if (baseUrl === '')
        throw missing('openai_base_url', ' (the OpenAI-compatible API to send the audio to, e.g. https://api.openai.com/v1)');
      if (!URL.canParse(baseUrl))
        throw new HomeAgentError('HA_ERR_CONFIG_INVALID', `plugin.voice.stt.openai_base_url "${baseUrl}" is not a URL`);
      // A local server may need no key: an empty one sends no Authorization header.
      return new OpenAiStt({ ...common, baseUrl, apiKey: settings.openai_api_key, model: settings.openai_model });
    }
    case 'command':
      if (settings.command.length === 0 || settings.command[0]?.trim() === '') {
        throw missing('command', ' (program and arguments, e.g. ["whisper-cli","-m","/models/ggml-base.bin","-nt","-f","{wav}"])');
      }
      if (!settings.command.some((part) => part.includes('{wav}'))) {
        throw new HomeAgentError(
          'HA_ERR_CONFIG_INVALID',
          'plugin.voice.stt.command has no {wav} argument, so the program would never get the audio',
        );
      }
      return new CommandStt({ ...common, command: settings.command });
    default:
      throw new HomeAgentError(
        'HA_ERR_CONFIG_INVALID',
        `plugin.voice.stt.backend "${String(backend)}" is not auto, local, none, wyoming, openai or command`,
      );
  }
}

/**
 * The voice control methods behind `homeagentctl`: voice.status (every part of the pipeline and
 * why one is off), voice.say (an announcement on the speaker), voice.listen (the next utterance is
 * a command, as after a push-to-talk press), voice.activations (the activation log, for tuning
 * false triggers) and voice.satellites (each satellite's room, connection and last turn).
 */
import { Type } from '@sinclair/typebox';
import type {
  ActivationEntry,
  SatelliteStatus,
  VoiceActivationsResult,
  VoiceListenResult,
  VoiceSatellitesResult,
  VoiceSayResult,
} from '../../src/sdk/api.js';
import { HomeAgentError, type PluginControl } from '../../src/sdk/index.js';
import type { SpeechLanguage } from './speech.js';

export interface VoiceStatus {
  microphone: unknown;
  vad: unknown;
  stt: unknown;
  tts: unknown;
  speaker: unknown;
  activation: unknown;
  /** Each configured satellite's connection, when there are any (voice.satellites has the details). */
  satellites?: unknown;
}

/** What the methods need of the running plugin. */
export interface VoiceMethodTarget {
  status(): VoiceStatus;
  /** Speaks an announcement; resolves when it was played. */
  say(text: string, language?: SpeechLanguage): Promise<VoiceSayResult>;
  /** Arms the listen window; false when the refractory period refused it or input is off. */
  listen(): VoiceListenResult;
  activations(limit: number): Promise<ActivationEntry[]>;
  /** The configured satellites, in the order of plugin.voice.satellites.list. */
  satellites(): SatelliteStatus[];
}

const MAX_SAY_CHARS = 20_000;

export function registerVoiceMethods(control: Pick<PluginControl, 'register'>, target: VoiceMethodTarget): Array<() => void> {
  const undo: Array<() => void> = [];
  try {
    undo.push(
      control.register({
        name: 'voice.status',
        description:
          'The microphone, voice activity detector, speech-to-text, text-to-speech, speaker and activation state, with why a part is off.',
        params: Type.Object({}, { additionalProperties: false }),
        handler: (): VoiceStatus => target.status(),
      }),
    );
    undo.push(
      control.register({
        name: 'voice.say',
        description: 'Speaks a text on the speaker (an announcement); answers when it was played.',
        params: Type.Object(
          {
            text: Type.String({ minLength: 1, maxLength: MAX_SAY_CHARS }),
            language: Type.Optional(Type.Union([Type.Literal('en'), Type.Literal('zh')])),
          },
          { additionalProperties: false },
        ),
        handler: async (params): Promise<VoiceSayResult> => {
          if (params.text.trim() === '') throw new HomeAgentError('HA_ERR_RPC_INVALID_PARAMS', 'voice.say: text is empty');
          return target.say(params.text, params.language);
        },
      }),
    );
    undo.push(
      control.register({
        name: 'voice.listen',
        description: 'Listens for one utterance without a wake phrase (as a push-to-talk press does).',
        params: Type.Object({}, { additionalProperties: false }),
        handler: (): VoiceListenResult => target.listen(),
      }),
    );
    undo.push(
      control.register({
        name: 'voice.activations',
        description: 'The newest activations and rejected triggers, newest first (for tuning false triggers).',
        params: Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000 })) }, { additionalProperties: false }),
        handler: async (params): Promise<VoiceActivationsResult> => ({ activations: await target.activations(params.limit ?? 50) }),
      }),
    );
    undo.push(
      control.register({
        name: 'voice.satellites',
        description: 'The Wyoming satellites: room, connection state and why it is not connected, last event seen, last turn.',
        params: Type.Object({}, { additionalProperties: false }),
        handler: (): VoiceSatellitesResult => ({ satellites: target.satellites() }),
      }),
    );
  } catch (error) {
    for (const remove of undo) remove();
    throw error;
  }
  return undo;
}

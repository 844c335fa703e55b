/**
 * Settings and stand-ins shared by the satellite tests: the voice plugin's defaults from the schema
 * as flat keys, one satellite at a loopback port, a command back end that always hears "turn on
 * the light", and a local microphone that stays out of the way.
 */
import { Value } from '@sinclair/typebox/value';
import type { OpenVad } from '../../../../plugins/voice/index.js';
import { ConfigSchema } from '../../../../src/config/schema.js';

/** plugin.voice.* defaults from the schema as flat dotted keys, with the test's changes. */
export function voiceSettings(changes: Record<string, unknown>): Record<string, unknown> {
  const flat: Record<string, unknown> = {};
  const walk = (value: unknown, prefix: string) => {
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      for (const [key, inner] of Object.entries(value)) walk(inner, prefix === '' ? key : `${prefix}.${key}`);
    } else flat[prefix] = value;
  };
  walk((Value.Default(ConfigSchema, {}) as { plugin: { voice: object } }).plugin.voice, '');
  return { ...flat, ...changes };
}

/** The local microphone stays out of the way: no detector, no recorder that works, no wake word spotter. */
export const quietLocal: OpenVad = async () => ({ push: () => {}, close: () => {} });

export function satelliteSettings(port: number, changes: Record<string, unknown> = {}): Record<string, unknown> {
  return voiceSettings({
    speaker_enabled: false,
    'stt.backend': 'command',
    'stt.command': [process.execPath, '-e', 'console.log("turn on the light")', '{wav}'],
    'microphone.device': 'nosuchmic',
    'microphone.restart_backoff_ms': 600_000,
    'microphone.restart_backoff_max_ms': 600_000,
    'activation.keyphrase': '',
    'satellites.list': [{ id: 'kitchen', name: 'Kitchen satellite', host: '127.0.0.1', port, area: 'kitchen' }],
    'satellites.reconnect_min_ms': 100,
    'satellites.reconnect_max_ms': 400,
    ...changes,
  });
}

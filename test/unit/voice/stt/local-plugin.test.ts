/**
 * The voice plugin with its default speech-to-text back end (auto) where pocketsphinx is installed
 * (issue 30): the offline recogniser is picked, an utterance heard after push-to-talk reaches the
 * voice conversation as the command's words, and a device registered later is heard once the
 * grammar was rebuilt. The speech is espeak-ng's, made here.
 */
import { execFileSync } from 'node:child_process';
import { Value } from '@sinclair/typebox/value';
import t from 'tap';
import { type OpenVad, VoicePlugin } from '../../../../plugins/voice/index.js';
import type { Utterance } from '../../../../plugins/voice/speech.js';
import { checkLocalModel, DEFAULT_MODEL_DIR } from '../../../../plugins/voice/stt/pocketsphinx-stt.js';
import { ConfigSchema } from '../../../../src/config/schema.js';
import { createTestPluginContext } from '../../../helpers/plugin-context.js';
import { until } from '../../../helpers/until.js';

function voiceSettings(changes: Record<string, unknown>): Record<string, unknown> {
  const flat: Record<string, unknown> = {};
  const walk = (value: unknown, prefix: string) => {
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      for (const [key, inner] of Object.entries(value)) walk(inner, prefix === '' ? key : `${prefix}.${key}`);
    } else flat[prefix] = value;
  };
  walk((Value.Default(ConfigSchema, {}) as { plugin: { voice: object } }).plugin.voice, '');
  return { ...flat, ...changes };
}

function espeakMissing(): string | false {
  try {
    execFileSync('espeak-ng', ['--version']);
    return false;
  } catch {
    return 'espeak-ng is not installed';
  }
}

function spoken(text: string): Utterance {
  const wav = execFileSync('espeak-ng', ['-v', 'en-us', '--stdout', text]);
  const raw = execFileSync('sox', ['-t', 'wav', '-', '-t', 'raw', '-r', '16000', '-c', '1', '-b', '16', '-e', 'signed', '-'], {
    input: wav,
  });
  const samples = new Int16Array(raw.buffer, raw.byteOffset, raw.length / 2);
  return { samples, sampleRate: 16000, speechStartMs: 0, speechEndMs: Math.round(samples.length / 16), truncated: false };
}

const local = checkLocalModel(DEFAULT_MODEL_DIR);
const caller = { actor: 'cli' };

t.test(
  'auto picks the offline recogniser; a command reaches the voice conversation; a new device is heard after the rebuild',
  { skip: local.ok ? espeakMissing() : (local.why ?? 'pocketsphinx is missing') },
  async (t) => {
    const vad: { events?: Parameters<OpenVad>[0]['events'] } = {};
    const openVad: OpenVad = async (options) => {
      vad.events = options.events;
      return { push: () => {}, close: () => {} };
    };
    const test = createTestPluginContext({
      name: 'voice',
      dataDir: t.testdir({}),
      home: { areas: [{ id: 'kitchen', name: 'Kitchen', aliases: [] }] },
      settings: voiceSettings({
        speaker_enabled: false,
        'microphone.device': 'nosuchmic',
        'microphone.restart_backoff_ms': 60_000,
        'stt.local_grammar_delay_ms': 100,
      }),
    });
    t.teardown(() => test.close());
    test.entities.register('plugin:test', { domain: 'light', object_id: 'kitchen_light', name: 'Kitchen Light', area: 'kitchen' });
    let now = 1_000_000;
    const plugin = new VoicePlugin(test.context, { openVad, now: () => now, eagerDetectors: true });
    t.teardown(() => plugin.stop());
    await plugin.start();
    t.match(plugin.status().stt, { backend: 'local' });

    const command = async (text: string): Promise<unknown> => {
      now += 10_000;
      t.match(await test.control.call('voice.listen', {}, caller), { armed: true });
      now += 500;
      vad.events?.onSpeechStart(0);
      now += 1500;
      vad.events?.onUtterance(spoken(text));
      return (await test.nextInjected()).input.payload;
    };
    t.equal(await command('turn on the kitchen light'), 'turn on the kitchen light');
    const first = (plugin.status().stt as { grammar?: { path: string } }).grammar?.path;
    t.ok(first, 'the status shows the grammar in use');

    test.entities.register('plugin:test', { domain: 'fan', object_id: 'desk_fan', name: 'Desk Fan', area: 'kitchen' });
    // The rebuild is used by the next utterance; until then the old grammar serves.
    await until('the grammar was rebuilt', () => {
      const path = (plugin.status().stt as { grammar?: { path: string } }).grammar?.path;
      return path !== undefined && path !== first ? path : undefined;
    });
    // "on": espeak-ng's "off" is often heard as "on" (bench/voice-commands.mjs counts those); this test is about the rebuild.
    t.match(await command('turn on the desk fan'), /^turn on (the )?desk fan$/);
  },
);

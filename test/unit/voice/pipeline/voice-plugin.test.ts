import { Value } from '@sinclair/typebox/value';
import t from 'tap';
import { type OpenVad, VoicePlugin } from '../../../../plugins/voice/index.js';
import type { Utterance } from '../../../../plugins/voice/speech.js';
import { ConfigSchema } from '../../../../src/config/schema.js';
import { CAPABILITY } from '../../../../src/io/types.js';
import { createTestPluginContext } from '../../../helpers/plugin-context.js';
import { aplayMissing } from '../../../helpers/system-tools.js';
import { until } from '../../../helpers/until.js';
import { expectErrorAsync } from '../../fixtures/support.js';

/** plugin.voice.* defaults from the schema as flat dotted keys, with the test's changes. */
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

const caller = { actor: 'cli' };

t.test('speech-to-text off: the speaker channel only, a missing device as a status', { skip: aplayMissing() }, async (t) => {
  const test = createTestPluginContext({
    name: 'voice',
    dataDir: t.testdir({}),
    settings: voiceSettings({ speaker_device: 'nosuchdevice', channel: 'voice' }),
  });
  t.teardown(() => test.close());
  // stt.backend auto on a machine without pocketsphinx.
  const missing = { ok: false, why: 'pocketsphinx_continuous is not installed (apt-get install pocketsphinx pocketsphinx-en-us)' };
  const plugin = new VoicePlugin(test.context, { checkLocalModel: () => missing });
  await plugin.start();
  const channel = test.channels.get('speaker');
  t.match(channel, { capabilities: CAPABILITY.TEXT | CAPABILITY.AUDIO, synchronous: false, answers: ['voice'] });
  await until('the speaker probe answered', () => (plugin.status().speaker as { available?: boolean }).available === false || undefined);
  const status = (await test.control.call('voice.status', {}, caller)) as Record<string, Record<string, unknown>>;
  t.match(status.microphone, {
    state: 'stopped',
    problem: /voice input off: no speech-to-text back end.*apt-get install pocketsphinx pocketsphinx-en-us/,
  });
  t.match(status.speaker, { device: 'nosuchdevice', available: false, problem: /nosuchdevice/ });
  t.match(status.stt, { backend: 'none' });
  t.match(plugin.health(), { ok: true, detail: /speaker "nosuchdevice": / });
  await expectErrorAsync(t, () => test.control.call('voice.say', { text: 'Hello.' }, caller), 'HA_ERR_SPEAKER_UNAVAILABLE');
  t.match(await test.control.call('voice.listen', {}, caller), { armed: false, reason: /voice input off/ });
  await plugin.stop();
  t.equal(test.channels.has('speaker'), false, 'the channel left with the plugin');
});

t.test('push-to-talk by entity: the next utterance becomes an input on the voice conversation', async (t) => {
  const vad: { events?: Parameters<OpenVad>[0]['events']; closed: boolean } = { closed: false };
  const openVad: OpenVad = async (options) => {
    vad.events = options.events;
    return {
      push: () => {},
      close: () => {
        vad.closed = true;
      },
    };
  };
  const test = createTestPluginContext({
    name: 'voice',
    dataDir: t.testdir({}),
    settings: voiceSettings({
      speaker_enabled: false,
      area: 'kitchen',
      'stt.backend': 'command',
      'stt.command': [process.execPath, '-e', 'console.log("hey home, turn on the light")', '{wav}'],
      'activation.push_to_talk_entity': 'binary_sensor.talk',
      'microphone.device': 'nosuchmic',
      'microphone.restart_backoff_ms': 60_000,
    }),
  });
  t.teardown(() => test.close());
  let now = 1_000_000;
  // The detector's events are driven here; without a microphone it would never open (see below).
  const plugin = new VoicePlugin(test.context, { openVad, now: () => now, eagerDetectors: true });
  await plugin.start();
  t.ok(vad.events, 'the detector was opened');
  const utterance: Utterance = { samples: new Int16Array(1600), sampleRate: 16000, speechStartMs: 0, speechEndMs: 100, truncated: false };

  test.events.emit('entity.state_changed', {
    entity_id: 'binary_sensor.talk',
    domain: 'binary_sensor',
    old_state: 'off',
    new_state: 'on',
    state_changed: true,
    attributes: {},
    at: now,
    context: null,
  });
  now += 500;
  vad.events?.onSpeechStart(0);
  now += 1000;
  vad.events?.onUtterance(utterance);
  const { input } = await test.nextInjected();
  t.match(input.id, /^voice_[0-9a-f]{32}$/, 'its own input id, to follow the streamed answer');
  t.same(input, {
    id: input.id,
    channel: 'voice',
    payload: 'turn on the light',
    meta: { area: 'kitchen', language: 'en', activation: 'push_to_talk' },
    sender: { trust: 'household', id: 'voice', proof: 'a voice heard through the microphone (push_to_talk)', shared: true },
  });

  const { activations } = (await test.control.call('voice.activations', { limit: 5 }, caller)) as { activations: unknown[] };
  t.match(activations, [{ method: 'push_to_talk', accepted: true }]);
  const status = (await test.control.call('voice.status', {}, caller)) as Record<string, Record<string, unknown>>;
  t.match(status.stt, { backend: 'command', commands: 1 });
  t.match(status.activation, { wake_phrases: { on: true }, push_to_talk: 'binary_sensor.talk' });
  await until(
    'the microphone reports its device missing',
    () => (plugin.status().microphone as { state?: string }).state === 'waiting' || undefined,
  );

  await plugin.stop();
  t.equal(vad.closed, true, 'the detector was closed');
  t.match(plugin.status().microphone, { state: 'stopped' });
});

t.test('without a microphone that records, the detectors are never loaded', async (t) => {
  let opened = 0;
  const test = createTestPluginContext({
    name: 'voice',
    dataDir: t.testdir({}),
    settings: voiceSettings({
      speaker_enabled: false,
      'stt.backend': 'command',
      'stt.command': [process.execPath, '-e', 'console.log("x")', '{wav}'],
      'microphone.device': 'nosuchmic',
      'microphone.restart_backoff_ms': 60_000,
    }),
  });
  t.teardown(() => test.close());
  const plugin = new VoicePlugin(test.context, {
    openVad: async () => {
      opened += 1;
      return { push: () => {}, close: () => {} };
    },
  });
  await plugin.start();
  await until(
    'the microphone reports its device missing',
    () => (plugin.status().microphone as { state?: string }).state === 'waiting' || undefined,
  );
  t.equal(opened, 0, 'the voice activity detector was not opened');
  t.match(plugin.status().vad, { state: 'waiting' });
  await plugin.stop();
  t.equal(opened, 0);
});

t.test('a back end that cannot be built breaks only that part, and health says so', async (t) => {
  const test = createTestPluginContext({
    name: 'voice',
    dataDir: t.testdir({}),
    settings: voiceSettings({ speaker_enabled: false, 'stt.backend': 'wyoming', 'stt.wyoming_host': '' }),
  });
  t.teardown(() => test.close());
  const plugin = new VoicePlugin(test.context, { openVad: async () => t.fail('no detector without speech-to-text') as never });
  await plugin.start();
  t.match(plugin.health(), { ok: false, detail: /speech-to-text off: plugin\.voice\.stt\.wyoming_host is empty/ });
  t.ok(
    test.control.methods().some((m) => m.name === 'voice.status'),
    'the methods still answer',
  );
  await plugin.stop();
});

t.test('a changed text-to-speech setting rebuilds the back end at once', async (t) => {
  const test = createTestPluginContext({ name: 'voice', dataDir: t.testdir({}), settings: voiceSettings({ speaker_enabled: false }) });
  t.teardown(() => test.close());
  const plugin = new VoicePlugin(test.context);
  await plugin.start();
  t.match(plugin.status().tts, { backend: 'espeak' });
  test.context.settings.set('tts.backend', 'wyoming');
  t.match(plugin.health(), { ok: false, detail: /text-to-speech off: .*wyoming_host/ });
  t.match(plugin.status().tts, { backend: 'espeak' }, 'the last working back end stays');
  test.context.settings.set('tts.wyoming_host', '127.0.0.1');
  t.match(plugin.health(), { ok: true });
  t.match(plugin.status().tts, { backend: /wyoming/ });
  await plugin.stop();
});

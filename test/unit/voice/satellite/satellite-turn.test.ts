// Voice satellites end to end against a scripted Wyoming satellite on loopback: the plugin connects
// (describe/info, run-satellite), the satellite hears its wake word and streams espeak-ng speech in
// noise, the real Silero detector finds the command's end, a command back end transcribes it, the
// command becomes an input in the satellite's room, and the answer goes back as synthesize and
// audio. The input then runs through the real intent engine: the kitchen's light, not another.
import t from 'tap';
import { VoicePlugin } from '../../../../plugins/voice/index.js';
import type { VoiceActivationsResult, VoiceSatellitesResult } from '../../../../src/sdk/api.js';
import type { InputSender } from '../../../../src/sdk/index.js';
import { createTestPluginContext } from '../../../helpers/plugin-context.js';
import { speechInNoise } from '../../../helpers/speech-fixture.js';
import { espeakMissing } from '../../../helpers/system-tools.js';
import { until } from '../../../helpers/until.js';
import { ScriptedSatellite } from '../../../helpers/wyoming-satellite.js';
import { intentRig } from '../../intent/intent-rig.js';
import { quietLocal, satelliteSettings } from './satellite-settings.js';

const caller = { actor: 'cli' };

t.test(
  'a wake word on the satellite: its audio is a command in its room, and the answer plays on it',
  { skip: espeakMissing() },
  async (t) => {
    const satellite = await ScriptedSatellite.start();
    t.teardown(() => satellite.close());
    const test = createTestPluginContext({ name: 'voice', dataDir: t.testdir({}), settings: satelliteSettings(satellite.port) });
    t.teardown(() => test.close());
    const plugin = new VoicePlugin(test.context, { openVad: quietLocal });
    await plugin.start();
    t.teardown(() => plugin.stop());

    await satellite.next('run-satellite');
    t.same(
      satellite.received.slice(0, 2).map((e) => e.type),
      ['describe', 'run-satellite'],
      'describe first, then ready for its pipelines',
    );
    const listed = async () => ((await test.control.call('voice.satellites', {}, caller)) as VoiceSatellitesResult).satellites;
    const connected = await until('the satellite connected', async () => (await listed()).find((s) => s.state === 'connected'));
    t.match(connected, {
      id: 'kitchen',
      name: 'Kitchen satellite',
      area: 'kitchen',
      port: satellite.port,
      failures: 0,
      reported: { name: 'scripted satellite', area: 'Kitchen', wake_words: ['hey_jarvis'] },
      turns: 0,
    });
    t.ok(test.channels.has('satellite_kitchen'), 'the satellite is an output channel');

    const speech = await speechInNoise('turn on the light', { atMs: 400, totalMs: 2600 });
    const from = satellite.received.length;
    satellite.wake(speech.samples);
    const transcript = await satellite.next('transcript', from);
    t.same(transcript.data, { text: 'turn on the light', language: 'en' });
    t.same(satellite.typesSince(from), ['voice-started', 'voice-stopped', 'transcript'], 'speech start, its end, then what was heard');

    // The transcript goes out just before the input is handed over, so the input is already there.
    const { input } = await until('the command handed to the agent', () => test.injected[0]);
    t.match(input, {
      channel: 'satellite_kitchen',
      payload: 'turn on the light',
      meta: { area: 'kitchen', language: 'en', activation: 'wake_word', satellite: 'kitchen' },
      sender: { trust: 'household', id: 'voice', shared: true },
    });

    // The agent's answer for that conversation goes to the satellite's channel.
    const channel = test.channels.get('satellite_kitchen');
    const answered = satellite.received.length;
    await channel?.send({
      id: 'out-1',
      input_id: input.id as string,
      channel: 'satellite_kitchen',
      type: 'text',
      payload: 'The kitchen light is on.',
      meta: {},
      created_at: Date.now(),
    });
    const said = satellite.received.slice(answered);
    t.same(said[0], { type: 'synthesize', data: { text: 'The kitchen light is on.' }, payload: Buffer.alloc(0) }, 'the text first');
    t.match(said[1], { type: 'audio-start', data: { rate: 22050, width: 2, channels: 1 } });
    const chunks = said.filter((e) => e.type === 'audio-chunk');
    const bytes = chunks.reduce((sum, e) => sum + e.payload.length, 0);
    t.ok(bytes > 22050, `about a second of speech or more (${bytes} bytes in ${chunks.length} chunks)`);
    t.equal(said.at(-1)?.type, 'audio-stop');
    t.ok(
      chunks.every((e) => e.payload.length % 2 === 0 && e.data.rate === 22050),
      'every chunk carries its format and whole samples',
    );

    const [status] = await listed();
    t.match(status, { turns: 1, last_turn: { outcome: 'command', heard: 'turn on the light' } });
    const { activations } = (await test.control.call('voice.activations', { limit: 5 }, caller)) as VoiceActivationsResult;
    t.match(activations[0], { method: 'wake_word', accepted: true, model: 'satellite:kitchen:hey_jarvis' }, 'in the one activation log');

    // The same input through the real intent engine: the satellite's room decides which light.
    const rig = await intentRig(t);
    const kitchen = rig.device({
      domain: 'light',
      object_id: 'kitchen_light',
      name: 'Kitchen Light',
      area: 'Kitchen',
      initial_state: 'off',
    });
    const living = rig.device({
      domain: 'light',
      object_id: 'living_light',
      name: 'Living Light',
      area: 'Living Room',
      initial_state: 'off',
    });
    const turn = await rig.say(input.payload as string, input.meta ?? {}, 'voice', input.sender as InputSender);
    t.same(kitchen.calls, [{ service: 'turn_on', data: {} }], 'the kitchen light');
    t.same(living.calls, [], 'not the living room’s');
    t.equal(turn.response, 'Turned on Kitchen Light.');
  },
);

t.test('a turn in which nobody speaks ends with an error event, and the next one still works', { skip: espeakMissing() }, async (t) => {
  const satellite = await ScriptedSatellite.start();
  t.teardown(() => satellite.close());
  const test = createTestPluginContext({
    name: 'voice',
    dataDir: t.testdir({}),
    settings: satelliteSettings(satellite.port, { 'activation.refractory_ms': 0 }),
  });
  t.teardown(() => test.close());
  const plugin = new VoicePlugin(test.context, { openVad: quietLocal });
  await plugin.start();
  t.teardown(() => plugin.stop());
  await satellite.next('run-satellite');

  // Silence, then the satellite gives up streaming (audio-stop).
  let from = satellite.received.length;
  satellite.wake(new Int16Array(16000), { audioStop: true });
  const error = await satellite.next('error', from);
  t.match(error.data, { code: 'stt-no-text-recognized', text: /stopped streaming before a command/ });
  t.notOk(satellite.typesSince(from).includes('transcript'));

  // A command cut off by audio-stop before its trailing silence is still heard whole.
  const speech = await speechInNoise('turn on the light', { atMs: 300, totalMs: 1500 });
  from = satellite.received.length;
  satellite.wake(speech.samples, { audioStop: true });
  t.match((await satellite.next('transcript', from)).data, { text: 'turn on the light' });
  t.match((await until('the command handed to the agent', () => test.injected[0])).input, { meta: { area: 'kitchen' } });
});

t.test('no command within turn_timeout_ms ends the turn with an error event', async (t) => {
  const satellite = await ScriptedSatellite.start();
  t.teardown(() => satellite.close());
  const test = createTestPluginContext({
    name: 'voice',
    dataDir: t.testdir({}),
    settings: satelliteSettings(satellite.port, { 'satellites.turn_timeout_ms': 1000 }),
  });
  t.teardown(() => test.close());
  const plugin = new VoicePlugin(test.context, { openVad: quietLocal });
  await plugin.start();
  t.teardown(() => plugin.stop());
  await satellite.next('run-satellite');
  const from = satellite.received.length;
  // Half a second of silence, and the satellite keeps the stream open.
  satellite.wake(new Int16Array(8000));
  const error = await satellite.next('error', from);
  t.match(error.data, { code: 'stt-no-text-recognized', text: 'no command heard within 1000 ms' });
  const { satellites } = (await test.control.call('voice.satellites', {}, caller)) as VoiceSatellitesResult;
  t.match(satellites[0], { turns: 1, last_turn: { outcome: 'timeout' } });
  t.equal(test.injected.length, 0);
});

t.test(
  'a satellite without a local wake word: HomeAgent finds the wake phrase in what it streams',
  { skip: espeakMissing() },
  async (t) => {
    const satellite = await ScriptedSatellite.start({ wakeWords: [] });
    t.teardown(() => satellite.close());
    const test = createTestPluginContext({
      name: 'voice',
      dataDir: t.testdir({}),
      settings: satelliteSettings(satellite.port, {
        'stt.command': [process.execPath, '-e', 'console.log("hey home, turn on the light")', '{wav}'],
      }),
    });
    t.teardown(() => test.close());
    const plugin = new VoicePlugin(test.context, { openVad: quietLocal });
    await plugin.start();
    t.teardown(() => plugin.stop());
    await satellite.next('run-satellite');

    const speech = await speechInNoise('hey home, turn on the light', { atMs: 400, totalMs: 3200 });
    const from = satellite.received.length;
    satellite.wake(speech.samples, { startStage: 'wake' });
    const transcript = await satellite.next('transcript', from);
    t.same(transcript.data, { text: 'turn on the light', language: 'en' }, 'the wake phrase is not part of the command');
    t.same(satellite.typesSince(from), ['voice-started', 'voice-stopped', 'detection', 'transcript']);
    const { input } = await until('the command handed to the agent', () => test.injected[0]);
    t.match(input, { payload: 'turn on the light', meta: { area: 'kitchen', activation: 'wake_phrase' } });
  },
);

t.test(
  'streamed speech: finished sentences play on the satellite while the model writes, the final answer adds only the rest',
  { skip: espeakMissing() },
  async (t) => {
    const satellite = await ScriptedSatellite.start();
    t.teardown(() => satellite.close());
    const test = createTestPluginContext({ name: 'voice', dataDir: t.testdir({}), settings: satelliteSettings(satellite.port) });
    t.teardown(() => test.close());
    const plugin = new VoicePlugin(test.context, { openVad: quietLocal });
    await plugin.start();
    t.teardown(() => plugin.stop());
    await satellite.next('run-satellite');

    const speech = await speechInNoise('turn on the light', { atMs: 300, totalMs: 2300 });
    satellite.wake(speech.samples);
    const { input } = await until('the command handed to the agent', () => test.injected[0]);
    const inputId = input.id as string;
    const delta = (text: string) =>
      test.events.emit('agent.text_delta', {
        task_id: 'task-1',
        input_id: inputId,
        channel: 'satellite_kitchen',
        turn: 0,
        delta: text,
        restart: false,
      });

    const from = satellite.received.length;
    delta('The kitchen light ');
    delta('is on. And the');
    const first = await satellite.next('synthesize', from);
    t.same(first.data, { text: 'The kitchen light is on.' }, 'the first sentence, while the rest is being written');

    const rest = satellite.received.length;
    await test.channels.get('satellite_kitchen')?.send({
      id: 'out-1',
      input_id: inputId,
      channel: 'satellite_kitchen',
      type: 'text',
      payload: 'The kitchen light is on. And the hall light was already on.',
      meta: {},
      created_at: Date.now(),
    });
    const said = satellite.received.slice(from).filter((e) => e.type === 'synthesize');
    t.same(
      said.map((e) => e.data.text),
      ['The kitchen light is on.', 'And the hall light was already on.'],
      'each sentence once, in order',
    );
    t.ok(
      satellite.received.slice(rest).some((e) => e.type === 'audio-stop'),
      'the rest was played',
    );
  },
);

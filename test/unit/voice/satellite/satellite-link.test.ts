// A satellite's connection when things go wrong: it goes away and comes back (exponential back-off,
// health and voice.satellites say why meanwhile), it stops answering pings, it sends malformed or
// oversized frames, or a turn brings audio or a pipeline HomeAgent cannot run. Each is a coded
// problem (HA_ERR_VOICE_SATELLITE) or an error event to the satellite; the plugin stays healthy and
// the satellite is connected again.
import { createServer } from 'node:net';
import t, { type Test } from 'tap';
import { VoicePlugin } from '../../../../plugins/voice/index.js';
import { readSatelliteInfo } from '../../../../plugins/voice/satellites/satellite-events.js';
import { SatelliteLink } from '../../../../plugins/voice/satellites/satellite-link.js';
import type { SatelliteStatus, VoiceSatellitesResult } from '../../../../src/sdk/api.js';
import { HomeAgentError } from '../../../../src/sdk/index.js';
import { createTestPluginContext } from '../../../helpers/plugin-context.js';
import { until } from '../../../helpers/until.js';
import { ScriptedSatellite } from '../../../helpers/wyoming-satellite.js';
import { quietLocal, satelliteSettings } from './satellite-settings.js';

const caller = { actor: 'cli' };

async function rig(t: Test, changes: Record<string, unknown> = {}, options: { answerPings?: boolean } = {}) {
  const satellite = await ScriptedSatellite.start(options);
  t.teardown(() => satellite.close());
  const test = createTestPluginContext({ name: 'voice', dataDir: t.testdir({}), settings: satelliteSettings(satellite.port, changes) });
  t.teardown(() => test.close());
  const plugin = new VoicePlugin(test.context, { openVad: quietLocal });
  await plugin.start();
  t.teardown(() => plugin.stop());
  const status = async (): Promise<SatelliteStatus> => {
    const { satellites } = (await test.control.call('voice.satellites', {}, caller)) as VoiceSatellitesResult;
    return satellites[0] as SatelliteStatus;
  };
  const state = (wanted: SatelliteStatus['state'], problem?: RegExp) =>
    until(`the satellite ${wanted}${problem ? ` (${problem})` : ''}`, async () => {
      const now = await status();
      return now.state === wanted && (!problem || problem.test(now.problem ?? '')) ? now : undefined;
    });
  await state('connected');
  return { satellite, test, plugin, status, state };
}

t.test('a satellite that goes away is failed with the reason, retried with back-off, and connected again', async (t) => {
  const { satellite, plugin, state } = await rig(t);
  t.match(plugin.health(), { ok: true });
  t.notMatch(plugin.health().detail, /satellite/);

  const port = satellite.port;
  await satellite.goAway();
  const down = await until('two refused attempts', async () => {
    const now = await state('failed');
    return now.failures >= 2 && /connection refused/.test(now.problem ?? '') ? now : undefined;
  });
  t.match(down.problem, `satellite kitchen (127.0.0.1:${port}): connection refused`);
  t.ok(down.retry_at, 'the next attempt is scheduled');
  const health = plugin.health();
  t.equal(health.ok, true, 'a satellite away is a status line, not a broken plugin');
  t.match(health.detail, /satellite kitchen \(127\.0\.0\.1:\d+\): connection refused/);
  t.match(health.detail_zh, /语音卫星 kitchen 未连接/);

  await satellite.listen(port);
  const back = await state('connected');
  t.equal(back.failures, 0);
  t.notOk(back.problem, 'no problem while connected');
  t.equal(satellite.connections, 2, 'one new connection');
  t.notMatch(plugin.health().detail, /satellite/, 'the status line went with the problem');
});

t.test('the waits between attempts double from reconnect_min_ms up to reconnect_max_ms', async (t) => {
  // A port that refuses: listen, note the port, close.
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  await new Promise<void>((resolve) => server.close(() => resolve()));

  const waits: number[] = [];
  const problems: HomeAgentError[] = [];
  const NOW = 1_000_000;
  const link: SatelliteLink = new SatelliteLink({
    label: 'satellite test',
    host: '127.0.0.1',
    port,
    limits: () => ({
      min_ms: 20,
      max_ms: 80,
      connect_timeout_ms: 2000,
      ping_interval_ms: 5000,
      pong_timeout_ms: 5000,
      max_payload_bytes: 65536,
    }),
    now: () => NOW,
    // The top of each range, so the waits are the ceilings themselves.
    random: () => 1,
    onConnected: () => t.fail('nothing listens there'),
    onEvent: () => {},
    onDisconnected: (problem) => {
      problems.push(problem);
      waits.push((link.status().retryAt ?? NOW) - NOW);
    },
  });
  link.start();
  t.teardown(() => link.stop());
  await until('five refused attempts', () => (waits.length >= 5 ? true : undefined));
  t.same(waits.slice(0, 5), [20, 40, 80, 80, 80]);
  t.ok(
    problems.every((p) => p.code === 'HA_ERR_VOICE_SATELLITE' && /connection refused/.test(p.message)),
    'each failure is a coded problem',
  );
  t.equal(link.status().state, 'failed');
  t.ok(link.status().failures >= 5, 'failures in a row are counted');
});

t.test('a satellite that stops answering pings is dropped and connected again', async (t) => {
  const { satellite, state } = await rig(
    t,
    { 'satellites.ping_interval_ms': 500, 'satellites.pong_timeout_ms': 200 },
    { answerPings: false },
  );
  const failed = await state('failed', /no pong within 200 ms/);
  t.match(failed.problem, /^satellite kitchen \(127\.0\.0\.1:\d+\): no pong within 200 ms$/);
  await until('connected again', () => (satellite.connections >= 2 ? true : undefined));
});

t.test('malformed and oversized frames break the connection with a coded reason, never the plugin', async (t) => {
  const { satellite, plugin, state } = await rig(t);

  satellite.sendRaw('this is not json\n');
  const garbage = await state('failed', /broke the protocol/);
  t.match(garbage.problem, /broke the protocol: malformed event header: not JSON/);
  await until('connected after the garbage', () => (satellite.connections >= 2 ? true : undefined));
  await state('connected');

  satellite.sendRaw(`${JSON.stringify({ type: 'audio-chunk', payload_length: 10_000_000 })}\n`);
  const oversized = await state('failed', /over the limit/);
  t.match(oversized.problem, /announces a 10000000-byte payload, over the limit of 262144 bytes/);
  await until('connected after the oversized frame', () => (satellite.connections >= 3 ? true : undefined));
  await state('connected');

  satellite.sendRaw('{"type": "audio-chunk", "data": [1, 2]}\n');
  await state('failed', /data of "audio-chunk" is not an object/);
  await until('connected after the bad data', () => (satellite.connections >= 4 ? true : undefined));
  t.match(plugin.health(), { ok: true }, 'the plugin stayed healthy throughout');
});

t.test('a turn HomeAgent cannot run is answered with an error event; the connection stays', async (t) => {
  const { satellite, status } = await rig(t, { 'activation.refractory_ms': 0 });

  let from = satellite.received.length;
  satellite.wake(new Int16Array(4410), { rate: 44100 });
  const wrongRate = await satellite.next('error', from);
  t.match(wrongRate.data, { text: /audio is 44100 Hz, 16-bit, 1 channel\(s\); a satellite must send 16000 Hz/ });
  t.match(await status(), { state: 'connected', last_turn: { outcome: 'error', problem: /44100 Hz/ } });

  from = satellite.received.length;
  satellite.send('run-pipeline', { start_stage: 'intent', end_stage: 'tts', text: 'turn on the light' });
  const intent = await satellite.next('error', from);
  t.match(intent.data, { text: /run-pipeline starts at "intent"; HomeAgent runs pipelines that start at wake or asr/ });

  from = satellite.received.length;
  satellite.send('audio-chunk', { rate: 16000, width: 2, channels: 1 }, Buffer.alloc(3));
  satellite.send('run-pipeline', { start_stage: 'asr', end_stage: 'tts' });
  satellite.send('audio-chunk', { rate: 16000, width: 2, channels: 1 }, Buffer.alloc(3));
  const odd = await satellite.next('error', from);
  t.match(
    odd.data,
    { text: /an audio chunk of 3 bytes is not a whole number of 2-byte frames/ },
    'audio outside a turn is ignored, inside it is checked',
  );
  t.equal(satellite.connections, 1, 'still the first connection');
});

t.test('two satellites with one id: the second is a status line, the first runs', async (t) => {
  const satellite = await ScriptedSatellite.start();
  t.teardown(() => satellite.close());
  const list = [
    { id: 'kitchen', host: '127.0.0.1', port: satellite.port, area: 'kitchen' },
    { id: 'kitchen', host: '127.0.0.1', port: satellite.port, area: 'hall' },
  ];
  const test = createTestPluginContext({
    name: 'voice',
    dataDir: t.testdir({}),
    settings: satelliteSettings(satellite.port, { 'satellites.list': list }),
  });
  t.teardown(() => test.close());
  const plugin = new VoicePlugin(test.context, { openVad: quietLocal });
  await plugin.start();
  t.teardown(() => plugin.stop());
  const { satellites } = (await test.control.call('voice.satellites', {}, caller)) as VoiceSatellitesResult;
  t.match(satellites, [{ id: 'kitchen', area: 'kitchen', name: 'kitchen' }]);
  t.equal(satellites.length, 1);
  t.match(plugin.health().detail, /satellite kitchen is listed twice in plugin\.voice\.satellites\.list/);

  // A changed list applies at once: one satellite, the status line gone.
  test.context.settings.set('satellites.list', [list[0]]);
  await until('the list rebuilt', () => (/listed twice/.test(plugin.health().detail) ? undefined : true));
  await until('connected', async () => {
    const now = (await test.control.call('voice.satellites', {}, caller)) as VoiceSatellitesResult;
    return now.satellites[0]?.state === 'connected' ? true : undefined;
  });
});

t.test('a voice activity detector that cannot open ends the turn with an error event, and the plugin lives', async (t) => {
  const satellite = await ScriptedSatellite.start();
  t.teardown(() => satellite.close());
  const test = createTestPluginContext({ name: 'voice', dataDir: t.testdir({}), settings: satelliteSettings(satellite.port) });
  t.teardown(() => test.close());
  let opened = 0;
  const plugin = new VoicePlugin(test.context, {
    openVad: quietLocal,
    openSatelliteVad: async () => {
      opened++;
      throw new HomeAgentError('HA_ERR_VOICE_VAD', 'the Silero VAD model is missing');
    },
  });
  await plugin.start();
  t.teardown(() => plugin.stop());
  await satellite.next('run-satellite');
  const from = satellite.received.length;
  satellite.wake(new Int16Array(4096));
  const error = await satellite.next('error', from);
  t.match(error.data, { text: /voice activity detection could not start: the Silero VAD model is missing/ });
  t.ok(opened >= 1);
  t.match(plugin.health(), { ok: true });
  t.equal(satellite.connections, 1, 'the connection stays');
});

t.test('what a satellite says about itself is clipped', async (t) => {
  const info = readSatelliteInfo({
    type: 'info',
    data: { satellite: { name: 'x'.repeat(10_000), active_wake_words: Array.from({ length: 100 }, (_, i) => `w${i}`.repeat(50)) } },
  });
  t.equal(info?.name?.length, 64);
  t.equal(info?.wakeWords.length, 16);
  t.ok(info?.wakeWords.every((w) => w.length <= 64));
});

/**
 * A voice satellite in the built daemon (in process): a scripted Wyoming satellite in the kitchen
 * hears its wake word and streams espeak-ng speech, a scripted Wyoming server transcribes it, the
 * local intent engine switches the kitchen's simulated GPIO light (not the living room's) because
 * the satellite's room is the turn's area, and the answer is spoken on the satellite. Then
 * `homeagentctl voice satellites` lists it. No model is configured: the intent engine answers.
 *
 * Time here is real (a daemon): every wait polls with a deadline or waits for an event.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { tempDir } from '../helpers/daemon.js';
import { startDaemon } from '../helpers/in-process-daemon.js';
import { RpcConnection } from '../helpers/rpc.js';
import { speechInNoise } from '../helpers/speech-fixture.js';
import { espeakMissing } from '../helpers/system-tools.js';
import { until } from '../helpers/until.js';
import { ScriptedSatellite } from '../helpers/wyoming-satellite.js';
import { startWyomingServer } from '../helpers/wyoming-server.js';

const WAIT_MS = 60_000;

t.test(
  '"turn on the light" said to the kitchen satellite switches the kitchen light and is answered there',
  { skip: espeakMissing() },
  async (t) => {
    const satellite = await ScriptedSatellite.start();
    t.teardown(() => satellite.close());
    const stt = await startWyomingServer({ transcript: { text: 'turn on the light', language: 'en' } });
    t.teardown(() => stt.close());
    const light = (id: string, name: string, area: string, bcm: number) => ({ id, name, area, bcm, direction: 'out', domain: 'light' });
    const dir = tempDir(t, 'ha-satellite-');
    const configFile = join(dir, 'config.yaml');
    writeFileSync(
      configFile,
      JSON.stringify({
        plugin: {
          gpio: {
            backend: 'simulated',
            pins: [light('kitchen_light', 'Kitchen Light', 'kitchen', 17), light('living_light', 'Living Light', 'living_room', 27)],
          },
          voice: {
            stt: { backend: 'wyoming', wyoming_host: '127.0.0.1', wyoming_port: stt.port },
            speaker_enabled: false,
            microphone: { device: 'nosuchmic', restart_backoff_ms: 600000, restart_backoff_max_ms: 600000 },
            activation: { keyphrase: '' },
            satellites: { list: [{ id: 'kitchen', name: 'Kitchen satellite', host: '127.0.0.1', port: satellite.port, area: 'kitchen' }] },
          },
        },
      }),
    );
    const daemon = await startDaemon(t, { configFile, dataDir: join(dir, 'data') });
    await daemon.waitForReady(WAIT_MS);
    await satellite.next('run-satellite', 0, WAIT_MS);

    const speech = await speechInNoise('turn on the light', { atMs: 400, totalMs: 2600 });
    const from = satellite.received.length;
    satellite.wake(speech.samples);
    t.same((await satellite.next('transcript', from, WAIT_MS)).data, { text: 'turn on the light', language: 'en' });
    t.match(stt.transcriptions[0], { rate: 16000, width: 2, channels: 1 }, 'the satellite’s audio went to speech-to-text');

    const answer = await satellite.next('synthesize', from, WAIT_MS);
    t.same(answer.data, { text: 'Turned on Kitchen Light.' }, 'the intent engine’s answer, on the satellite');
    await satellite.next('audio-stop', answer.index, WAIT_MS);

    const rpc = await RpcConnection.connect(daemon.socketPath);
    t.teardown(() => rpc.close());
    const state = async (entity: string) => {
      const reply = await rpc.request('entities.get', { entity, history_limit: 0 });
      return (reply.result as { entity: { state: unknown } }).entity.state;
    };
    t.equal(await state('light.kitchen_light'), 'on', 'the kitchen light is on');
    t.equal(await state('light.living_light'), 'off', 'the living room light is not');

    const shown = await until('the last turn listed', async () => {
      const out = await daemon.ctl(['voice', 'satellites']);
      return /command: turn on the light/.test(out.stdout) ? out : undefined;
    });
    t.equal(shown.code, 0);
    t.match(shown.stdout, /^ID\s+ROOM\s+STATE\s+LAST SEEN\s+LAST TURN$/m);
    t.match(shown.stdout, /^kitchen\s+kitchen\s+connected\s+\S+\s+\S+ command: turn on the light$/m);
    const zh = await daemon.ctl(['voice', 'satellites'], { env: { LANG: 'zh_CN.UTF-8', LC_ALL: 'zh_CN.UTF-8' } });
    t.match(zh.stdout, /^kitchen\s+kitchen\s+已连接/m);
  },
);

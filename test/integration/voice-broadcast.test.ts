/**
 * Announcements reach the room's speaker, through the built daemon with no sound card (a file-plugin
 * playback device, test/helpers/voice-room.ts): an automation's `notify` action to the channel
 * `speaker`, and the local intent HassBroadcast ("broadcast dinner is ready") typed on the command
 * line, each written to the device as exactly the PCM espeak-ng makes of the announced text.
 * Neither needs the model: the scripted LLM server must see no request.
 *
 * Time here is real (a daemon): every wait polls with a deadline.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { type DaemonHandle, spawnDaemon, tempDir } from '../helpers/daemon.js';
import { RpcConnection } from '../helpers/rpc.js';
import { type ScriptedServer, startScriptedServer } from '../helpers/scripted-llm-server.js';
import { speechPlaybackMissing } from '../helpers/system-tools.js';
import { until } from '../helpers/until.js';
import { checkSpoken, ESPEAK_RATE, expectedSpeech, type SpeakerRoom, speakerRoom, spokenBytes } from '../helpers/voice-room.js';

const WAIT_MS = 60_000;
const SKIP = speechPlaybackMissing();

const DOORBELL = { id: 'doorbell', bcm: 17, direction: 'out', safe: 0 };
const ANNOUNCE_DOORBELL = {
  id: 'doorbell_announcement',
  triggers: [{ type: 'state', entity_id: 'switch.doorbell', to: 'on' }],
  actions: [{ type: 'notify', channel: 'speaker', text: 'Someone is at the door.' }],
};

/** The daemon with the voice plugin speaking into `room` (speech-to-text off: no microphone) and a model that must stay idle. */
async function start(
  t: Test,
  room: SpeakerRoom,
  core: object,
  plugin: object = {},
): Promise<{ daemon: DaemonHandle; llm: ScriptedServer }> {
  const llm = await startScriptedServer(t);
  const dir = tempDir(t, 'ha-broadcast-');
  const config = join(dir, 'config.yaml');
  writeFileSync(
    config,
    JSON.stringify({
      core: { llm: { base_url: llm.url, api_key: 'sk-test', model: 'test-model' }, ...core },
      // stt off: where pocketsphinx is installed the default (auto) would open the room's capture device too.
      plugin: { voice: { tts: { backend: 'espeak', espeak_rate: ESPEAK_RATE }, stt: { backend: 'none' } }, ...plugin },
    }),
  );
  const daemon = spawnDaemon(t, { dataDir: join(dir, 'data'), env: { ...room.env, HOMEAGENT_CONFIG: config } });
  await daemon.waitForReady(WAIT_MS);
  return { daemon, llm };
}

const chatRequests = (llm: ScriptedServer) => llm.requests.filter((r) => r.path.endsWith('/chat/completions'));

t.test('an automation announces on the speaker', { skip: SKIP }, async (t) => {
  const room = speakerRoom(t);
  const { daemon, llm } = await start(
    t,
    room,
    { automations: { rules: [ANNOUNCE_DOORBELL] } },
    { gpio: { backend: 'simulated', pins: [DOORBELL] } },
  );
  const connection = await RpcConnection.connect(daemon.socketPath);
  t.teardown(() => connection.close());
  const pressed = await connection.request('entities.call', { entity: 'switch.doorbell', service: 'turn_on' });
  t.ok(pressed.ok, 'the doorbell switch turned on');

  const expected = await expectedSpeech('Someone is at the door.');
  checkSpoken(t, await spokenBytes(room.out, expected.length, WAIT_MS), expected);
  // A run is recorded when it ended, which may be a moment after the speaker's last sample.
  const runs = await until('the run to end', async () => {
    const reply = await connection.request('automations.runs', { id: ANNOUNCE_DOORBELL.id });
    const found = (reply.result as { runs: Array<{ status: string }> } | undefined)?.runs;
    return found?.length ? found : undefined;
  });
  t.match(runs, [{ status: 'done', steps: [{ type: 'notify', status: 'done' }] }], 'the run is recorded as done');
  t.equal(chatRequests(llm).length, 0, 'no request to the model');
});

t.test('"broadcast dinner is ready" is said on the speaker', { skip: SKIP }, async (t) => {
  const room = speakerRoom(t);
  const { daemon, llm } = await start(t, room, { intent: { broadcast_channels: ['speaker'] } });
  const r = await daemon.ctl(['chat', '-m', 'broadcast dinner is ready'], { timeoutMs: WAIT_MS });
  t.equal(r.code, 0, r.stderr);
  t.equal(r.stdout.trim(), 'Announced on speaker.', 'the intent answers on the command line');

  const expected = await expectedSpeech('dinner is ready');
  checkSpoken(t, await spokenBytes(room.out, expected.length, WAIT_MS), expected);
  t.equal(chatRequests(llm).length, 0, 'no request to the model');
});

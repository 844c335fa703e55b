/**
 * The voice plugin in the built daemon as a process, with no sound card: ALSA file-plugin devices
 * through ALSA_CONFIG_PATH (playback `default` writes raw PCM to a file) and a stand-in `arecord`
 * first on the daemon's PATH (test/helpers/paced-arecord.mjs) that plays an espeak-ng recording
 * of the spoken command at real-time pace, because arecord from a file-plugin device is unpaced
 * and endless. A scripted Wyoming server is the speech-to-text back end and the scripted LLM
 * server the model.
 *
 * Checked: the wake phrase is cut before the agent sees the command; the answer comes out of the
 * speaker as exactly the PCM espeak-ng makes of it (plus aplay's period padding); a local intent by
 * voice switches a simulated GPIO light without any model request and is spoken; no sound device
 * is a status line and a living daemon.
 *
 * Time here is real (a daemon): every wait polls with a deadline or waits for a log line.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { synthesizeEspeak } from '../../plugins/voice/tts-espeak.js';
import { parseWav } from '../../plugins/voice/wav.js';
import { type DaemonHandle, REPO_ROOT, spawnDaemon, tempDir } from '../helpers/daemon.js';
import { alive } from '../helpers/processes.js';
import { RpcConnection } from '../helpers/rpc.js';
import { type ScriptedServer, type ScriptStep, startScriptedServer } from '../helpers/scripted-llm-server.js';
import { resample } from '../helpers/speech-fixture.js';
import { speechPlaybackMissing } from '../helpers/system-tools.js';
import { until } from '../helpers/until.js';
import { checkSpoken, ESPEAK_RATE, expectedSpeech, spokenBytes as spokenBytesWithin } from '../helpers/voice-room.js';
import { startWyomingServer } from '../helpers/wyoming-server.js';

const WAIT_MS = 60_000;
const SKIP = speechPlaybackMissing();

interface Room {
  dir: string;
  out: string;
  env: Record<string, string>;
}

/** The sound devices of a room without a sound card, and the spoken command the "microphone" hears. */
async function room(t: Test, spoken: string, options: { micDevice?: string } = {}): Promise<Room> {
  const dir = tempDir(t, 'ha-voice-');
  const out = join(dir, 'speaker.raw');
  const conf = join(dir, 'asound.conf');
  writeFileSync(conf, `pcm.!default { type file; slave.pcm "null"; file "${out}"; format "raw" }\n`);
  const speech = await synthesizeEspeak(spoken, { language: 'en', timeoutMs: 20_000 });
  const raw = join(dir, 'spoken16k.raw');
  const info = parseWav(speech.wav);
  const pcm = speech.wav.subarray(info.dataOffset, info.dataOffset + info.dataLength);
  const at16k = resample(new Int16Array(pcm.buffer.slice(pcm.byteOffset, pcm.byteOffset + pcm.length)), info.sampleRate, 16000);
  // Half a second of room silence first, so the detector has heard quiet before the speech.
  writeFileSync(raw, Buffer.concat([Buffer.alloc(16000), Buffer.from(at16k.buffer)]));
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  symlinkSync(join(REPO_ROOT, 'test', 'helpers', 'paced-arecord.mjs'), join(bin, 'arecord'));
  const env: Record<string, string> = {
    PATH: `${bin}:${process.env.PATH ?? ''}`,
    ALSA_CONFIG_PATH: `/usr/share/alsa/alsa.conf:${conf}`,
    PACED_ARECORD_FILE: raw,
  };
  if (options.micDevice) env.PACED_ARECORD_DEVICE = options.micDevice;
  return { dir, out, env };
}

function configFile(t: Test, config: object): { config: string; dataDir: string } {
  const dir = tempDir(t, 'ha-voice-config-');
  const file = join(dir, 'config.yaml');
  writeFileSync(file, JSON.stringify(config, null, 2));
  return { config: file, dataDir: join(dir, 'data') };
}

function voiceConfig(sttPort: number, extra: object = {}): object {
  return {
    stt: { backend: 'wyoming', wyoming_host: '127.0.0.1', wyoming_port: sttPort },
    tts: { backend: 'espeak', espeak_rate: ESPEAK_RATE },
    ...extra,
  };
}

function chunk(delta: Record<string, unknown>, finish: string | null = null): object {
  return {
    id: 'c',
    object: 'chat.completion.chunk',
    created: 1764460800,
    model: 'test-model',
    choices: [{ index: 0, delta, finish_reason: finish }],
  };
}
const textReply = (text: string): ScriptStep => ({
  sse: [chunk({ role: 'assistant', content: '' }), chunk({ content: text }), chunk({}, 'stop')],
  done: true,
});
const chatRequests = (server: ScriptedServer) => server.requests.filter((r) => r.path.endsWith('/chat/completions'));

const spokenBytes = (out: string, bytes: number) => spokenBytesWithin(out, bytes, WAIT_MS);

/** Every process below `pid` (Linux /proc). */
function descendants(pid: number): number[] {
  const found: number[] = [];
  const visit = (parent: number) => {
    for (const task of readdirSync(`/proc/${parent}/task`)) {
      const file = `/proc/${parent}/task/${task}/children`;
      const children = existsSync(file) ? readFileSync(file, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number) : [];
      for (const child of children) {
        found.push(child);
        visit(child);
      }
    }
  };
  visit(pid);
  return found;
}

/** One control method over the CLI socket, as homeagentctl calls it. */
async function call<T>(t: Test, daemon: DaemonHandle, method: string, params: object = {}): Promise<T> {
  const connection = await RpcConnection.connect(daemon.socketPath);
  t.teardown(() => connection.close());
  const reply = await connection.request(method, params);
  if (!reply.ok) throw new Error(`${method} failed: ${reply.error?.code}: ${reply.error?.message}`);
  return reply.result as T;
}

async function started(t: Test, config: object, env: Record<string, string>): Promise<DaemonHandle> {
  const files = configFile(t, config);
  const daemon = spawnDaemon(t, { dataDir: files.dataDir, env: { ...env, HOMEAGENT_CONFIG: files.config } });
  await daemon.waitForReady(WAIT_MS);
  return daemon;
}

t.test('a spoken question: wake phrase cut, the model answers, the answer is spoken', { skip: SKIP }, async (t) => {
  const wyoming = await startWyomingServer({ transcript: { text: 'hey home tell me a joke', language: 'en' } });
  t.teardown(() => wyoming.close());
  const llm = await startScriptedServer(t);
  const answer = 'Why did the lamp go to school? To get brighter.';
  llm.enqueue(textReply(answer));
  const devices = await room(t, 'hey home, tell me a joke');
  const daemon = await started(
    t,
    // Whole answers: the file device keeps only the last clip it was opened for, and streaming
    // speech plays each sentence as its own clip (test/unit/voice/pipeline/spoken-stream.test.ts).
    {
      core: { llm: { base_url: llm.url, api_key: 'sk-test', model: 'test-model' } },
      plugin: { voice: voiceConfig(wyoming.port, { stream_speech: false }) },
    },
    devices.env,
  );

  await until('the model was asked', () => chatRequests(llm)[0], WAIT_MS);
  const messages = chatRequests(llm)[0]?.body.messages as Array<{ role: string; content: string }>;
  t.equal(messages.at(-1)?.content, 'tell me a joke', 'the wake phrase was removed');
  t.ok(wyoming.transcriptions.length >= 1, 'the utterance was transcribed');
  t.match(wyoming.transcriptions[0], { rate: 16000, width: 2, channels: 1 });

  const expected = await expectedSpeech(answer);
  checkSpoken(t, await spokenBytes(devices.out, expected.length), expected);

  const children = descendants(daemon.pid);
  t.ok(children.length > 0, 'the stand-in arecord runs under the daemon');
  daemon.kill('SIGTERM');
  t.match(await daemon.waitForExit(WAIT_MS), { code: 0 });
  t.same(children.filter(alive), [], 'stopping left no child process');
});

t.test('a local intent by voice switches the light without the model and is spoken', { skip: SKIP }, async (t) => {
  const wyoming = await startWyomingServer({ transcript: { text: 'hey home turn on the kitchen light', language: 'en' } });
  t.teardown(() => wyoming.close());
  const llm = await startScriptedServer(t);
  const devices = await room(t, 'hey home, turn on the kitchen light');
  const light = { id: 'kitchen_light', name: 'Kitchen Light', area: 'kitchen', bcm: 17, direction: 'out', domain: 'light' };
  const daemon = await started(
    t,
    {
      core: { llm: { base_url: llm.url, api_key: 'sk-test', model: 'test-model' } },
      plugin: { gpio: { backend: 'simulated', pins: [light] }, voice: voiceConfig(wyoming.port, { area: 'kitchen' }) },
    },
    devices.env,
  );
  await daemon.waitForLog((line) => line.json?.subsystem === 'intent' && /handled without the model/.test(line.msg ?? ''), WAIT_MS);
  const entity = await call<{ entity: { state: unknown } }>(t, daemon, 'entities.get', { entity: 'light.kitchen_light', history_limit: 0 });
  t.equal(entity.entity.state, 'on', 'the light is on');
  const expected = await expectedSpeech('Turned on Kitchen Light.');
  checkSpoken(t, await spokenBytes(devices.out, expected.length), expected);
  t.equal(chatRequests(llm).length, 0, 'no request to the model');
});

t.test('no sound device: a status line, and the daemon lives', { skip: SKIP }, async (t) => {
  const wyoming = await startWyomingServer({ transcript: { text: 'hey home hello' } });
  t.teardown(() => wyoming.close());
  const devices = await room(t, 'hello', { micDevice: 'a-device-that-exists-elsewhere' });
  const daemon = await started(t, { plugin: { voice: voiceConfig(wyoming.port, { speaker_device: 'nosuchdevice' }) } }, devices.env);
  const line = await daemon.waitForLog((l) => /^speaker "nosuchdevice": /.test(l.msg ?? ''), WAIT_MS);
  t.ok(line, 'the speaker status line');
  await daemon.waitForLog((l) => /^microphone: .*No such file or directory/.test(l.msg ?? ''), WAIT_MS);
  const status = await daemon.ctl(['status']);
  t.equal(status.code, 0, 'homeagentctl status works');
  const voice = await call<{ speaker: { available: boolean } }>(t, daemon, 'voice.status');
  t.equal(voice.speaker.available, false);
  const shown = await daemon.ctl(['voice']);
  t.equal(shown.code, 0, 'homeagentctl voice shows the status');
  t.match(shown.stdout, /^speaker\s.*available=false/m);
  t.match(shown.stdout, /^microphone\s.*No such file or directory/m);
  const said = await daemon.ctl(['voice', 'say', 'hello']);
  t.not(said.code, 0, 'an announcement without a speaker fails');
  t.match(said.stderr, /HA_ERR_SPEAKER_UNAVAILABLE|nosuchdevice/);
  t.equal(daemon.child.exitCode, null, 'the daemon is still running');
});

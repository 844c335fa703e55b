/**
 * The wake word path of the voice plugin as a whole: the real microphone driver and the real
 * openWakeWord-shaped detector (synthetic models that detect a 1 kHz tone burst,
 * test/helpers/wake-word-models.ts) wired by plugins/voice/index.ts into the activation policy.
 *
 * The microphone runs test/helpers/paced-arecord.mjs as `arecord`, which plays a raw PCM file at
 * real-time pace. The plugin starts arecord with this process's environment, which a test must not
 * change, so the file runs itself again as a child (a tap subtest) with the stand-in first on PATH.
 *
 * The voice activity detector is a fake the test drives: it counts the samples the microphone
 * delivers, and that count is the plugin's clock (stream time), so refractory and listen windows
 * are measured in audio, not in how fast this machine is. The test says when speech starts and
 * ends, after it has seen what the wake word did; the command back end prints a transcript with no
 * wake phrase, and wake phrases are off, so only the wake word can make an utterance a command.
 */
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Value } from '@sinclair/typebox/value';
import t, { type Test } from 'tap';
import { type OpenVad, VoicePlugin } from '../../../../plugins/voice/index.js';
import type { Utterance } from '../../../../plugins/voice/speech.js';
import { ConfigSchema } from '../../../../src/config/schema.js';
import { REPO_ROOT } from '../../../helpers/daemon.js';
import { createTestPluginContext, type TestPluginContext } from '../../../helpers/plugin-context.js';
import { until } from '../../../helpers/until.js';
import { type AudioPart, SAMPLE_RATE, synthAudio, writeWakeWordModels } from '../../../helpers/wake-word-models.js';

/** Set in the re-run child, which has the stand-in arecord first on its PATH. */
const CHILD = 'HOMEAGENT_TEST_PACED_MICROPHONE';
const MIC_DEVICE = 'paced-test-mic';
/** Real time: the audio plays at its own pace; this bounds each wait well above it. */
const WAIT_MS = 60_000;
const BASE_CLOCK = Date.UTC(2025, 10, 30, 8, 0, 0);
const REFRACTORY_MS = 5000;
const COMMAND = 'turn on the light';
const caller = { actor: 'cli' };

const quiet = (ms: number, seed: number): AudioPart => ({ kind: 'noise', ms, amplitude: 300, seed });
const burst: AudioPart = { kind: 'tone', ms: 500, amplitude: 8000 };

/** The parent: the same file again, as a child whose `arecord` is the paced stand-in. */
if (process.env[CHILD] === undefined) {
  t.test('the voice plugin with a paced microphone', async (t) => {
    const dir = t.testdir({});
    const bin = join(dir, 'bin');
    mkdirSync(bin);
    symlinkSync(join(REPO_ROOT, 'test', 'helpers', 'paced-arecord.mjs'), join(bin, 'arecord'));
    const env = {
      ...process.env,
      [CHILD]: '1',
      PATH: `${bin}:${process.env.PATH ?? ''}`,
      PACED_ARECORD_FILE: join(dir, 'room.raw'),
      PACED_ARECORD_DEVICE: MIC_DEVICE,
    };
    await t.spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url)], { env }, 'child with a paced microphone');
  });
} else {
  childTests();
}

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

interface Room {
  test: TestPluginContext;
  plugin: VoicePlugin;
  vad: { events?: Parameters<OpenVad>[0]['events']; pushed: number };
  /** How many times the speech-to-text command ran (it appends a byte to a file each time). */
  transcriptions: () => number;
  /** Stream time in ms (the plugin's clock, from BASE_CLOCK). */
  streamMs: () => number;
}

/** The plugin hearing `audio` through the paced microphone, with wake word models and a counting command back end. */
async function listeningRoom(t: Test, audio: Int16Array): Promise<Room> {
  const file = process.env.PACED_ARECORD_FILE as string;
  writeFileSync(file, Buffer.from(audio.buffer, audio.byteOffset, audio.byteLength));
  const dir = t.testdir({ models: {}, data: {} });
  const models = writeWakeWordModels(join(dir, 'models'));
  const runs = join(dir, 'stt-runs');
  const vad: Room['vad'] = { pushed: 0 };
  const openVad: OpenVad = async (options) => {
    vad.events = options.events;
    return {
      push: (samples) => {
        vad.pushed += samples.length;
      },
      close: () => {},
    };
  };
  const streamMs = () => (vad.pushed * 1000) / SAMPLE_RATE;
  const test = createTestPluginContext({
    name: 'voice',
    dataDir: join(dir, 'data'),
    settings: voiceSettings({
      speaker_enabled: false,
      'microphone.device': MIC_DEVICE,
      'activation.wake_word_model_dir': models,
      'activation.wake_phrases': [],
      // Only the openWakeWord path here; the pocketsphinx one has its own tests.
      'activation.keyphrase': '',
      'activation.refractory_ms': REFRACTORY_MS,
      'stt.backend': 'command',
      'stt.command': [
        process.execPath,
        '-e',
        `require('node:fs').appendFileSync(${JSON.stringify(runs)}, 'x'); console.log(${JSON.stringify(COMMAND)})`,
        '{wav}',
      ],
    }),
  });
  const plugin = new VoicePlugin(test.context, { openVad, now: () => BASE_CLOCK + streamMs() });
  // The plugin first (it stops arecord and the wake word worker), then its context.
  t.teardown(async () => {
    await plugin.stop();
    await test.close();
  });
  await plugin.start();
  // The detectors load when the microphone first records.
  await until(
    'the wake word models loaded',
    () => ((plugin.status().activation as { wake_word?: { models?: string[] } }).wake_word?.models ?? []).length > 0 || undefined,
  );
  t.ok(vad.events, 'the voice activity detector was opened');
  t.match(plugin.status().activation, { wake_word: { models: ['hey_tone'] } }, 'the wake word models are loaded');
  return { test, plugin, vad, streamMs, transcriptions: () => (existsSync(runs) ? readFileSync(runs, 'utf8').length : 0) };
}

/** The activation log, oldest first. */
async function activations(room: Room): Promise<Array<Record<string, unknown>>> {
  const { activations } = (await room.test.control.call('voice.activations', { limit: 50 }, caller)) as {
    activations: Array<Record<string, unknown>>;
  };
  return activations.reverse();
}

const logged = (room: Room, n: number) =>
  until(`${n} activation(s) in the log`, async () => ((await activations(room)).length >= n ? true : undefined), WAIT_MS);

/** The fake detector's speech: it begins now and ends after a second of stream time. */
function speak(room: Room): void {
  room.vad.events?.onSpeechStart(room.streamMs());
  const utterance: Utterance = {
    samples: new Int16Array(SAMPLE_RATE),
    sampleRate: SAMPLE_RATE,
    speechStartMs: 0,
    speechEndMs: 1000,
    truncated: false,
  };
  room.vad.events?.onUtterance(utterance);
}

/** The method that armed the listen window, if it is open. */
const armedBy = (room: Room) => (room.plugin.status().activation as { armed?: { method: string } }).armed?.method;

const handled = (room: Room, n: number) =>
  until(
    `${n} utterance(s) handled`,
    () => ((room.plugin.status().stt as { utterances?: number }).utterances === n ? true : undefined),
    WAIT_MS,
  );

function childTests(): void {
  t.test('a tone burst (the wake word) makes the next utterance a command; refractory respected', async (t) => {
    // Bursts at 1 s, 3.5 s and 9 s of stream time: the second inside the refractory period of the
    // first (5 s), the third well past it. Each score stays high for 1.28 s (the classifier's 16 steps).
    const voice = await listeningRoom(t, synthAudio([quiet(1000, 1), burst, quiet(2000, 2), burst, quiet(5000, 3), burst, quiet(1000, 4)]));

    await until('the wake word armed the listen window', () => armedBy(voice) === 'wake_word' || undefined, WAIT_MS);
    speak(voice);
    const first = await voice.test.nextInjected();
    t.same(
      first.input,
      {
        id: first.input.id,
        channel: 'voice',
        payload: COMMAND,
        meta: { language: 'en', activation: 'wake_word' },
        sender: { trust: 'household', id: 'voice', proof: 'a voice heard through the microphone (wake_word)', shared: true },
      },
      'accepted as a command, no wake phrase needed',
    );
    t.equal(voice.transcriptions(), 1, 'transcribed once');

    await logged(voice, 2);
    const [accepted, rejected] = await activations(voice);
    t.match(accepted, { method: 'wake_word', accepted: true, model: 'hey_tone' }, 'the activation log has the wake word');
    t.ok(Number(accepted?.score) >= 0.5, `with its score (${accepted?.score})`);
    t.match(
      rejected,
      { method: 'wake_word', accepted: false, reason: 'refractory', model: 'hey_tone' },
      'the second burst fell in the refractory period',
    );
    t.equal(armedBy(voice), undefined, 'and armed nothing');

    speak(voice);
    await handled(voice, 2);
    t.match(
      voice.plugin.status().stt,
      { utterances: 2, dropped: 1, transcribed: 1, commands: 1 },
      'speech after the rejected burst was dropped',
    );
    t.equal(voice.transcriptions(), 1, 'untranscribed');

    await logged(voice, 3);
    t.match((await activations(voice))[2], { method: 'wake_word', accepted: true }, 'a burst past the refractory period activates again');
    await until('armed again', () => armedBy(voice) === 'wake_word' || undefined, WAIT_MS);
    speak(voice);
    const second = await voice.test.nextInjected();
    t.match(second.input, { payload: COMMAND, meta: { activation: 'wake_word' } }, 'the next utterance is a command again');
    t.equal(voice.test.injected.length, 2, 'two commands in all');
  });

  t.test('without the burst (and without a wake phrase) an utterance is dropped untranscribed', async (t) => {
    // Loud broadband noise and a tone of another pitch: sound, but not the wake word.
    const voice = await listeningRoom(
      t,
      synthAudio([
        quiet(500, 5),
        { kind: 'noise', ms: 1000, amplitude: 12000, seed: 6 },
        { kind: 'tone', ms: 500, amplitude: 8000, hz: 3000 },
        quiet(1000, 7),
      ]),
    );
    // 1.5 s of silence past the last sound, so a detection the worker was still scoring has arrived.
    await until('the microphone delivered the room', () => (voice.streamMs() >= 4500 ? true : undefined), WAIT_MS);
    speak(voice);
    await handled(voice, 1);
    t.match(voice.plugin.status().stt, { utterances: 1, dropped: 1, transcribed: 0, commands: 0 });
    t.equal(voice.transcriptions(), 0, 'speech-to-text never ran');
    t.same(voice.test.injected, [], 'no input');
    t.same(await activations(voice), [], 'no activation');
    t.equal(armedBy(voice), undefined, 'nothing armed');
  });
}

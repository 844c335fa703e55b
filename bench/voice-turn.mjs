// End of speech to the first reply audio (issue 12), in process on the real modules: the voice
// pipeline and activation policy, an instant speech-to-text stub that returns the transcript, an
// instant "agent" (what a local intent or an instant LLM stub answers) that sends its reply to the
// speaker output channel, espeak-ng text to speech, and aplay playing to an ALSA file-plugin
// device whose file is a FIFO this bench reads.
// voice_end_of_speech_to_audio: from the voice activity detector's utterance event (the pipeline's
//   utterance() call) to the first byte aplay writes (goal ≤ 300 ms plus synthesis time);
//   synthesis_ms is espeak-ng's own time for the reply, measured alone.
import { execFileSync } from 'node:child_process';
import { createReadStream, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { size } from './quick.mjs';
import { round, spread } from './stats.mjs';

const dist = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist');
const load = (path) => import(join(dist, path));

const WARMUP = size(3, 1);
const RUNS = size(30, 2);
const TRANSCRIPT = 'hey home turn on the kitchen light';
const REPLY = 'Turned on Kitchen Light.';

export async function run(emit) {
  const [
    { AplayPlayer },
    { SpeakerOutput },
    { VoicePipeline },
    { ActivationPolicy },
    { matchWakePhrase },
    { spokenLanguage },
    { synthesizeEspeak },
  ] = await Promise.all([
    load('devices/speaker/aplay-player.js'),
    load('plugins/voice/speaker-output.js'),
    load('plugins/voice/voice-pipeline.js'),
    load('plugins/voice/activation-policy.js'),
    load('plugins/voice/activation/wake-phrase.js'),
    load('plugins/voice/spoken-text.js'),
    load('plugins/voice/tts-espeak.js'),
  ]);
  const dir = mkdtempSync(join(tmpdir(), 'ha-bench-voice-'));
  try {
    const fifo = join(dir, 'speaker.fifo');
    execFileSync('mkfifo', [fifo]);
    const conf = join(dir, 'asound.conf');
    writeFileSync(conf, `pcm.!default { type file; slave.pcm "null"; file "${fifo}"; format "raw" }\n`);
    const env = { ...process.env, ALSA_CONFIG_PATH: `/usr/share/alsa/alsa.conf:${conf}` };
    const tts = { name: 'espeak', synthesize: (text, o) => synthesizeEspeak(text, { language: o.language, timeoutMs: 10_000 }) };
    const speaker = new SpeakerOutput({
      player: new AplayPlayer({ timeoutMs: 10_000, env }),
      tts: () => tts,
      speakable: (text) => ({ text, language: spokenLanguage(text) }),
    });
    const log = { debug() {}, info() {}, warn() {}, error() {} };
    const policy = new ActivationPolicy({
      now: Date.now,
      settings: () => ({ listenWindowMs: 8000, refractoryMs: 0, wakePhrases: true }),
      record: () => {},
    });
    const pipeline = new VoicePipeline({
      now: Date.now,
      policy,
      stt: () => ({ name: 'stub', transcribe: async () => ({ text: TRANSCRIPT, language: 'en' }) }),
      speaker,
      bargeIn: () => true,
      wakePhrases: () => ['hey home'],
      matchWakePhrase,
      spokenLanguage,
      languageHint: () => undefined,
      // The agent's answer reaches the speaker channel as a send.
      command: async () => speaker.send({ id: 'o', channel: 'speaker', type: 'text', payload: REPLY, meta: {}, created_at: Date.now() }),
      log,
    });
    const utterance = { samples: new Int16Array(16000), sampleRate: 16000, speechStartMs: 0, speechEndMs: 1000, truncated: false };

    const times = [];
    for (let i = 0; i < WARMUP + RUNS; i++) {
      const firstByte = new Promise((resolve, reject) => {
        const stream = createReadStream(fifo);
        stream.once('data', () => resolve(performance.now()));
        stream.on('error', reject);
        stream.on('end', () => stream.destroy());
        stream.resume();
      });
      const start = performance.now();
      pipeline.speechStarted();
      await pipeline.utterance(utterance);
      const at = await firstByte;
      if (i >= WARMUP) times.push(at - start);
      while (speaker.active) await new Promise((r) => setTimeout(r, 5));
    }
    const synth = [];
    for (let i = 0; i < 10; i++) {
      const start = performance.now();
      await synthesizeEspeak(REPLY, { language: 'en', timeoutMs: 10_000 });
      synth.push(performance.now() - start);
    }
    const s = spread(times, [50, 95]);
    emit({
      name: 'voice_end_of_speech_to_audio',
      unit: 'ms',
      value: s.p95,
      n: times.length,
      ...s,
      synthesis_ms: round(spread(synth, [50]).p50),
      goal: '≤ 300 ms + synthesis',
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

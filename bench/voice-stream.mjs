// Streaming speech (issue 30): from the model's first text delta of a spoken turn to the first
// byte aplay writes, on the real modules: SpokenStream (as the voice plugin wires it to
// agent.text_delta), SpeakerOutput, espeak-ng and aplay playing to an ALSA file-plugin device whose
// file is a FIFO this bench reads. The model "writes" a three-sentence answer one word every 30 ms
// (a fast cloud model); the first sentence is complete after its sixth word.
//   voice_stream_first_token_to_audio: first delta → first audio byte (goal ≤ the first
//   sentence's synthesis time + 50 ms, i.e. the words still to come plus synthesis + 50 ms);
//   first_sentence_synthesis_ms and first_sentence_written_ms are reported beside it.
import { execFileSync } from 'node:child_process';
import { closeSync, constants, createReadStream, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { size } from './quick.mjs';
import { round, spread } from './stats.mjs';

const dist = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist');
const load = (path) => import(join(dist, path));

const WARMUP = size(3, 1);
const RUNS = size(20, 2);
const WORD_MS = 30;
const ANSWER = 'The kitchen light is now on. The oven will be ready in ten minutes. Dinner is at seven tonight.';
const FIRST = 'The kitchen light is now on.';

export async function run(emit) {
  const [{ AplayPlayer }, { SpeakerOutput }, { SpokenStream }, { spokenLanguage }, { synthesizeEspeak }] = await Promise.all([
    load('devices/speaker/aplay-player.js'),
    load('plugins/voice/speaker-output.js'),
    load('plugins/voice/spoken-stream.js'),
    load('plugins/voice/spoken-text.js'),
    load('plugins/voice/tts-espeak.js'),
  ]);
  const dir = mkdtempSync(join(tmpdir(), 'ha-bench-stream-'));
  try {
    const fifo = join(dir, 'speaker.fifo');
    execFileSync('mkfifo', [fifo]);
    const conf = join(dir, 'asound.conf');
    writeFileSync(conf, `pcm.!default { type file; slave.pcm "null"; file "${fifo}"; format "raw" }\n`);
    const env = { ...process.env, ALSA_CONFIG_PATH: `/usr/share/alsa/alsa.conf:${conf}` };
    const tts = { name: 'espeak', synthesize: (text, o) => synthesizeEspeak(text, { language: o.language, timeoutMs: 10_000 }) };
    const speaker = new SpeakerOutput({
      player: new AplayPlayer({ timeoutMs: 20_000, env }),
      tts: () => tts,
      speakable: (text) => ({ text, language: spokenLanguage(text) }),
    });
    const stream = new SpokenStream({ speaker, language: spokenLanguage });
    // Each sentence is one aplay run, which opens the FIFO anew: a reader is always there for it.
    let onByte;
    let closed = false;
    const read = () => {
      if (closed) return;
      const fifoStream = createReadStream(fifo);
      fifoStream.on('data', () => {
        onByte?.(performance.now());
        onByte = undefined;
      });
      fifoStream.on('end', read);
      fifoStream.on('error', () => {});
    };
    read();
    const words = ANSWER.split(' ');
    const times = [];
    const written = [];
    for (let i = 0; i < WARMUP + RUNS; i++) {
      const firstByte = new Promise((resolve) => {
        onByte = resolve;
      });
      const id = `bench_${i}_stream`;
      stream.begin(id);
      const start = performance.now();
      let firstDone = 0;
      for (let w = 0; w < words.length; w++) {
        stream.delta({ input_id: id, turn: 0, restart: false, delta: `${w === 0 ? '' : ' '}${words[w]}` });
        if (firstDone === 0 && `${words.slice(0, w + 1).join(' ')}` === FIRST) firstDone = performance.now() - start;
        if (w < words.length - 1) await new Promise((r) => setTimeout(r, WORD_MS));
      }
      const rest = stream.final(id, ANSWER);
      if (rest) void speaker.say(rest);
      const at = await firstByte;
      if (i >= WARMUP) {
        times.push(at - start);
        written.push(firstDone);
      }
      while (speaker.active) await new Promise((r) => setTimeout(r, 5));
    }
    closed = true;
    // The reader may already wait in open() for the next aplay: that open holds a threadpool thread
    // the process cannot exit past. A writer that opens and closes at once lets it see the end.
    try {
      closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK));
    } catch {
      // ENXIO: no reader is waiting.
    }
    const synth = [];
    for (let i = 0; i < 10; i++) {
      const start = performance.now();
      await synthesizeEspeak(FIRST, { language: 'en', timeoutMs: 10_000 });
      synth.push(performance.now() - start);
    }
    const s = spread(times, [50, 95]);
    const synthesis = round(spread(synth, [50]).p50);
    const writtenMs = round(spread(written, [50]).p50);
    emit({
      name: 'voice_stream_first_token_to_audio',
      unit: 'ms',
      value: s.p50,
      n: times.length,
      ...s,
      first_sentence_written_ms: writtenMs,
      first_sentence_synthesis_ms: synthesis,
      over_goal_ms: round(s.p50 - (writtenMs + synthesis + 50)),
      goal: '≤ first sentence written + its synthesis + 50 ms',
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// A satellite turn over loopback TCP (issue 30 point 3), in process on the built modules: a minimal
// Wyoming satellite written here streams espeak-ng speech at real-time pace (32 ms chunks), the
// plugin's SatelliteDevice runs the real Silero detector over it, an instant speech-to-text stub
// returns the transcript, and the "agent" answers at once on the satellite's channel, synthesized
// by espeak-ng and sent back as audio.
// satellite_end_of_speech_to_transcript: from the chunk in which the speech ends to the transcript
//   event at the satellite; it includes the detector's vad.min_silence_ms hang-over (500 ms), which
//   is also reported subtracted (goal for the rest: ≤ 200 ms).
// satellite_answer_to_first_audio: from the answer's send on the channel to its first audio-chunk at
//   the satellite (goal ≤ synthesis time + 50 ms); synthesis is espeak-ng's own time for the reply,
//   alone, measured after each turn.
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { size } from './quick.mjs';
import { round, spread } from './stats.mjs';

const dist = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist');
const load = (path) => import(join(dist, path));

const WARMUP = size(2, 1);
const RUNS = size(20, 2);
const TRANSCRIPT = 'turn on the kitchen light';
const REPLY = 'Turned on Kitchen Light.';
const CHUNK = 512;

function frame(type, data = {}, payload) {
  const body = Buffer.from(JSON.stringify(data));
  const header = { type, version: '1.5.2', data_length: body.length, payload_length: payload?.length ?? 0 };
  return Buffer.concat([Buffer.from(`${JSON.stringify(header)}\n`), body, payload ?? Buffer.alloc(0)]);
}

function parse(buffer, onEvent) {
  let rest = buffer;
  for (;;) {
    const nl = rest.indexOf(10);
    if (nl < 0) return rest;
    const header = JSON.parse(rest.subarray(0, nl).toString());
    const dl = header.data_length ?? 0;
    const pl = header.payload_length ?? 0;
    if (rest.length < nl + 1 + dl + pl) return rest;
    const data = dl > 0 ? JSON.parse(rest.subarray(nl + 1, nl + 1 + dl).toString()) : {};
    onEvent({ type: header.type, data: { ...(header.data ?? {}), ...data } });
    rest = rest.subarray(nl + 1 + dl + pl);
  }
}

function resample(input, from, to) {
  const out = new Int16Array(Math.floor((input.length * to) / from));
  for (let i = 0; i < out.length; i++) {
    const x = (i * from) / to;
    const j = Math.floor(x);
    const a = input[j] ?? 0;
    const b = input[j + 1] ?? a;
    out[i] = Math.round(a + (b - a) * (x - j));
  }
  return out;
}

export async function run(emit) {
  const [{ SatelliteDevice }, { VoiceActivityDetector }, { DEFAULT_VAD_SETTINGS }, { matchWakePhrase }, { spokenLanguage }, tts, wav] =
    await Promise.all([
      load('plugins/voice/satellites/satellite-device.js'),
      load('plugins/voice/vad/voice-activity-detector.js'),
      load('plugins/voice/vad/speech-segmenter.js'),
      load('plugins/voice/activation/wake-phrase.js'),
      load('plugins/voice/spoken-text.js'),
      load('plugins/voice/tts-espeak.js'),
      load('plugins/voice/wav.js'),
    ]);
  // The command: espeak-ng at 16 kHz, 300 ms of silence before and 900 ms after.
  const spoken = await tts.synthesizeEspeak(TRANSCRIPT, { language: 'en', timeoutMs: 20_000 });
  const info = wav.parseWav(spoken.wav);
  const pcm = spoken.wav.subarray(info.dataOffset, info.dataOffset + info.dataLength);
  const voice = resample(new Int16Array(pcm.buffer.slice(pcm.byteOffset, pcm.byteOffset + pcm.byteLength)), info.sampleRate, 16000);
  const samples = new Int16Array(4800 + voice.length + 14400);
  samples.set(voice, 4800);
  // Where the voice really ends: the last sample at 2 % of the peak (espeak-ng's WAV ends in silence of its own).
  let peak = 0;
  for (const v of voice) peak = Math.max(peak, Math.abs(v));
  let last = voice.length - 1;
  while (last > 0 && Math.abs(voice[last]) < peak * 0.02) last--;
  const speechEndChunk = Math.floor((4800 + last) / CHUNK);

  // The satellite: info on describe, played after the answer's audio-stop; events are timed as they arrive.
  const arrivals = [];
  let client;
  const server = createServer((socket) => {
    client = socket;
    let buffer = Buffer.alloc(0);
    socket.on('data', (chunk) => {
      buffer = parse(Buffer.concat([buffer, chunk]), (event) => {
        arrivals.push({ type: event.type, at: performance.now() });
        if (event.type === 'describe') socket.write(frame('info', { satellite: { name: 'bench', area: 'Kitchen' } }));
        if (event.type === 'ping') socket.write(frame('pong', event.data));
        if (event.type === 'audio-stop') socket.write(frame('played'));
      });
    });
    socket.on('error', () => {});
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = server.address().port;
  const next = async (type, from) => {
    for (;;) {
      const found = arrivals.findIndex((a, i) => i >= from && a.type === type);
      if (found >= 0) return arrivals[found];
      await new Promise((r) => setTimeout(r, 1));
    }
  };

  let channel;
  let answeredAt = 0;
  const log = { debug() {}, info() {}, warn() {}, error() {} };
  const espeak = { name: 'espeak', synthesize: (text, o) => tts.synthesizeEspeak(text, { language: o.language, timeoutMs: 10_000 }) };
  const device = new SatelliteDevice({
    config: { id: 'bench', name: '', host: '127.0.0.1', port, area: 'kitchen' },
    limits: () => ({
      min_ms: 100,
      max_ms: 1000,
      connect_timeout_ms: 5000,
      ping_interval_ms: 5000,
      pong_timeout_ms: 5000,
      max_payload_bytes: 262144,
      turn_timeout_ms: 20000,
      play_timeout_ms: 10000,
    }),
    now: Date.now,
    log,
    openVad: (options) => VoiceActivityDetector.open(options),
    vadSettings: () => DEFAULT_VAD_SETTINGS,
    stt: () => ({ name: 'stub', transcribe: async () => ({ text: TRANSCRIPT, language: 'en' }) }),
    tts: () => espeak,
    activation: () => ({ listenWindowMs: 8000, refractoryMs: 0, wakePhrases: false }),
    record: () => {},
    wakePhrases: () => [],
    matchWakePhrase,
    spokenLanguage,
    languageHint: () => undefined,
    speakable: (text) => ({ text, language: spokenLanguage(text) }),
    // The agent answers at once on the satellite's channel.
    inject: async (input) => {
      answeredAt = performance.now();
      await channel.send({
        id: 'o',
        input_id: input.id,
        channel: 'satellite_bench',
        type: 'text',
        payload: REPLY,
        meta: {},
        created_at: Date.now(),
      });
    },
    registerChannel: (registered) => {
      channel = registered;
      return () => {};
    },
    streamSpeech: () => false,
    subscribeDeltas: () => () => {},
    onProblem: () => {},
  });
  device.start();
  try {
    while (device.status().state !== 'connected') await new Promise((r) => setTimeout(r, 5));
    const toTranscript = [];
    const toAudio = [];
    const synth = [];
    for (let i = 0; i < WARMUP + RUNS; i++) {
      const from = arrivals.length;
      client.write(frame('detection', { name: 'hey_jarvis' }));
      client.write(frame('run-pipeline', { start_stage: 'asr', end_stage: 'tts', wake_word_name: 'hey_jarvis' }));
      // Real-time pace: one 32 ms chunk every 32 ms, until the transcript says the turn is over.
      let speechEndAt = 0;
      const started = performance.now();
      for (let c = 0; c * CHUNK < samples.length; c++) {
        const wait = started + c * 32 - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        if (arrivals.slice(from).some((a) => a.type === 'transcript')) break;
        const part = samples.subarray(c * CHUNK, (c + 1) * CHUNK);
        client.write(
          frame('audio-chunk', { rate: 16000, width: 2, channels: 1 }, Buffer.from(part.buffer, part.byteOffset, part.byteLength)),
        );
        if (c === speechEndChunk) speechEndAt = performance.now();
      }
      const transcript = await next('transcript', from);
      const firstAudio = await next('audio-chunk', from);
      await next('audio-stop', from);
      if (i >= WARMUP) {
        toTranscript.push(transcript.at - speechEndAt);
        toAudio.push(firstAudio.at - answeredAt);
        // The reply's synthesis alone, in the same moment (the machine's load varies over a run).
        const start = performance.now();
        await tts.synthesizeEspeak(REPLY, { language: 'en', timeoutMs: 10_000 });
        synth.push(performance.now() - start);
      }
    }
    const hangover = DEFAULT_VAD_SETTINGS.min_silence_ms;
    const t = spread(toTranscript, [50, 95]);
    const rest = round(t.p95 - hangover);
    emit({
      name: 'satellite_end_of_speech_to_transcript',
      unit: 'ms',
      value: t.p95,
      n: toTranscript.length,
      ...t,
      min_silence_ms: hangover,
      p95_after_hangover: rest,
      goal: '≤ min_silence_ms + 200 ms',
      goal_met: rest <= 200,
    });
    const a = spread(toAudio, [50, 95]);
    const synthesis = spread(synth, [50, 95]);
    emit({
      name: 'satellite_answer_to_first_audio',
      unit: 'ms',
      value: a.p95,
      n: toAudio.length,
      ...a,
      synthesis_p50_ms: synthesis.p50,
      synthesis_p95_ms: synthesis.p95,
      goal: 'p95 ≤ synthesis p95 + 50 ms',
      goal_met: a.p95 <= synthesis.p95 + 50,
    });
  } finally {
    await device.stop();
    client?.destroy();
    await new Promise((resolve) => server.close(resolve));
  }
}

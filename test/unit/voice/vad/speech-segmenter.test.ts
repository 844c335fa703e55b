import t from 'tap';
import type { Utterance } from '../../../../plugins/voice/speech.js';
import {
  checkVadSettings,
  DEFAULT_VAD_SETTINGS,
  SpeechSegmenter,
  type VadSettings,
} from '../../../../plugins/voice/vad/speech-segmenter.js';
import { expectError } from '../../fixtures/support.js';

// 8 kHz with 8-sample frames keeps the arithmetic readable: one frame is 1 ms.
const RATE = 8000;
const FRAME = 8;

interface Run {
  starts: number[];
  utterances: Utterance[];
  seg: SpeechSegmenter;
  /** Feeds one frame per probability; each frame's samples all equal its index, so cuts can be checked. */
  feed(probs: number[]): void;
}

function segmenter(overrides: Partial<VadSettings> = {}, settings?: () => VadSettings): Run {
  const starts: number[] = [];
  const utterances: Utterance[] = [];
  const seg = new SpeechSegmenter(RATE, settings ?? (() => ({ ...DEFAULT_VAD_SETTINGS, ...overrides })), {
    onSpeechStart: (ms) => starts.push(ms),
    onUtterance: (u) => utterances.push(u),
  });
  let index = 0;
  return {
    starts,
    utterances,
    seg,
    feed(probs) {
      for (const p of probs) seg.frame(new Int16Array(FRAME).fill(index++), p);
    },
  };
}

const repeat = (p: number, frames: number): number[] => new Array<number>(frames).fill(p);
/** The frame indexes an utterance's audio came from, one per frame. */
const frameIds = (u: Utterance): number[] => Array.from({ length: u.samples.length / FRAME }, (_, i) => u.samples[i * FRAME] ?? -1);
const range = (from: number, to: number): number[] => Array.from({ length: to - from }, (_, i) => from + i);

const base = { min_speech_ms: 50, min_silence_ms: 100, pre_roll_ms: 20, max_utterance_ms: 1000 };

t.test('speech between silences is one utterance with pre-roll, ending at the last speech frame', async (t) => {
  const run = segmenter(base);
  run.feed([...repeat(0.1, 200), ...repeat(0.9, 300), ...repeat(0.1, 150)]);
  t.same(run.starts, [200], 'speech start at the first frame over threshold');
  t.equal(run.utterances.length, 1);
  const u = run.utterances[0] as Utterance;
  t.match(u, { speechStartMs: 200, speechEndMs: 500, truncated: false, sampleRate: RATE });
  t.same(frameIds(u), range(180, 500), '20 ms of pre-roll, then the speech, no trailing silence');
});

t.test('onSpeechStart fires as soon as min_speech_ms of speech is confirmed, before the end', async (t) => {
  const run = segmenter(base);
  run.feed(repeat(0.9, 49));
  t.same(run.starts, []);
  run.feed(repeat(0.9, 1));
  t.same(run.starts, [0]);
  t.equal(run.utterances.length, 0);
});

t.test('hysteresis: probabilities between the thresholds keep speech going but do not start it', async (t) => {
  const run = segmenter(base);
  run.feed(repeat(0.4, 300));
  t.same(run.starts, [], 'never reaching threshold starts nothing');
  run.feed([...repeat(0.9, 60), ...repeat(0.4, 300), ...repeat(0.9, 10), ...repeat(0.2, 100)]);
  t.equal(run.utterances.length, 1);
  t.match(run.utterances[0], { speechStartMs: 300, speechEndMs: 670 });
});

t.test('silence shorter than min_silence_ms does not split an utterance', async (t) => {
  const run = segmenter(base);
  run.feed([...repeat(0.9, 100), ...repeat(0.1, 99), ...repeat(0.9, 100), ...repeat(0.1, 100)]);
  t.equal(run.utterances.length, 1);
  t.match(run.utterances[0], { speechStartMs: 0, speechEndMs: 299 });
  const two = segmenter(base);
  two.feed([...repeat(0.9, 100), ...repeat(0.1, 100), ...repeat(0.9, 100), ...repeat(0.1, 100)]);
  t.same(
    two.utterances.map((u) => [u.speechStartMs, u.speechEndMs]),
    [
      [0, 100],
      [200, 300],
    ],
  );
  t.same(frameIds(two.utterances[1] as Utterance), range(180, 300), 'the second pre-roll comes from the silence between');
});

t.test('bursts shorter than min_speech_ms are dropped, and their audio can still be pre-roll', async (t) => {
  const run = segmenter(base);
  run.feed([...repeat(0.9, 49), ...repeat(0.1, 100)]);
  t.same(run.starts, []);
  t.same(run.utterances, []);
  const next = segmenter({ ...base, pre_roll_ms: 150 });
  next.feed([...repeat(0.1, 10), ...repeat(0.9, 30), ...repeat(0.1, 110), ...repeat(0.9, 60), ...repeat(0.1, 100)]);
  t.equal(next.utterances.length, 1);
  t.match(next.utterances[0], { speechStartMs: 150, speechEndMs: 210 });
  t.same(frameIds(next.utterances[0] as Utterance), range(0, 210), 'pre-roll holds the dropped burst');
});

t.test('pre-roll is clipped to the audio there is', async (t) => {
  const run = segmenter({ ...base, pre_roll_ms: 300 });
  run.feed([...repeat(0.1, 5), ...repeat(0.9, 60), ...repeat(0.1, 100)]);
  t.same(frameIds(run.utterances[0] as Utterance), range(0, 65));
  const none = segmenter({ ...base, pre_roll_ms: 0 });
  none.feed([...repeat(0.1, 5), ...repeat(0.9, 60), ...repeat(0.1, 100)]);
  t.same(frameIds(none.utterances[0] as Utterance), range(5, 65));
});

t.test('max_utterance_ms cuts speech that goes on, and the next utterance follows at once', async (t) => {
  const run = segmenter(base);
  run.feed([...repeat(0.1, 50), ...repeat(0.9, 1500), ...repeat(0.1, 100)]);
  t.same(
    run.utterances.map((u) => [u.speechStartMs, u.speechEndMs, u.truncated]),
    [
      [50, 1050, true],
      [1050, 1550, false],
    ],
  );
  t.same(run.starts, [50, 1050]);
  t.same(frameIds(run.utterances[1] as Utterance), range(1050, 1550), 'no pre-roll repeats the cut utterance');
});

t.test('reset drops an utterance under way and restarts stream time', async (t) => {
  const run = segmenter(base);
  run.feed([...repeat(0.1, 100), ...repeat(0.9, 100)]);
  t.equal(run.seg.inSpeech, true);
  run.seg.reset();
  t.equal(run.seg.inSpeech, false);
  run.feed([...repeat(0.1, 10), ...repeat(0.1, 100)]);
  t.same(run.utterances, []);
  const fresh = segmenter(base);
  fresh.feed(repeat(0.1, 100));
  fresh.seg.reset();
  fresh.feed([...repeat(0.9, 60), ...repeat(0.1, 100)]);
  t.match(fresh.utterances[0], { speechStartMs: 0, speechEndMs: 60 });
  t.equal(fresh.utterances[0]?.samples.length, 60 * FRAME, 'no pre-roll from before the reset');
});

t.test('settings are read for every frame, so a change applies at once', async (t) => {
  let settings: VadSettings = { ...DEFAULT_VAD_SETTINGS, ...base };
  const run = segmenter({}, () => settings);
  run.feed(repeat(0.6, 60));
  t.same(run.starts, [0]);
  run.feed(repeat(0.1, 100));
  settings = { ...settings, threshold: 0.7 };
  run.feed([...repeat(0.6, 100), ...repeat(0.1, 100)]);
  t.equal(run.utterances.length, 1, '0.6 no longer starts speech');
});

t.test('bad settings are rejected', async (t) => {
  t.same(checkVadSettings({ ...DEFAULT_VAD_SETTINGS }), DEFAULT_VAD_SETTINGS);
  const bad: Partial<VadSettings>[] = [
    { threshold: 0 },
    { threshold: 1 },
    { negative_threshold: 0.5 },
    { negative_threshold: 0.6 },
    { negative_threshold: 0 },
    { min_speech_ms: -1 },
    { min_silence_ms: 0 },
    { pre_roll_ms: -5 },
    { max_utterance_ms: 250 },
    { threshold: Number.NaN },
    { min_silence_ms: 'x' as unknown as number },
  ];
  for (const change of bad) {
    const error = expectError(t, () => checkVadSettings({ ...DEFAULT_VAD_SETTINGS, ...change }), 'HA_ERR_CONFIG_INVALID');
    t.match(error.message, /^plugin\.voice\.vad: /);
  }
  const run = segmenter({ negative_threshold: 0.9 });
  expectError(t, () => run.feed([0.5]), 'HA_ERR_CONFIG_INVALID');
});

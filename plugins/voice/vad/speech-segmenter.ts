/**
 * From per-frame speech probabilities to utterances. Kept apart from the model so every rule can be
 * tested on made-up probabilities: an utterance starts at a frame whose probability reaches
 * `threshold`; only frames under `negative_threshold` count as silence (the hysteresis keeps a soft
 * syllable from splitting a sentence); it ends after `min_silence_ms` of silence, at the end of the
 * last frame that was not silent; bursts shorter than `min_speech_ms` are dropped as noise;
 * `pre_roll_ms` of audio from before the start is kept so the first syllable is whole; and
 * `max_utterance_ms` cuts an utterance that goes on (truncated: true). Times are stream time:
 * samples since the last reset divided by the rate.
 */
import { HomeAgentError } from '../../../src/sdk/index.js';
import type { Utterance } from '../speech.js';

/** The leaves of plugin.voice.vad, as the config names them. */
export interface VadSettings {
  threshold: number;
  negative_threshold: number;
  min_speech_ms: number;
  min_silence_ms: number;
  pre_roll_ms: number;
  max_utterance_ms: number;
}

export const DEFAULT_VAD_SETTINGS: Readonly<VadSettings> = Object.freeze({
  threshold: 0.5,
  negative_threshold: 0.35,
  min_speech_ms: 250,
  min_silence_ms: 500,
  pre_roll_ms: 300,
  max_utterance_ms: 15000,
});

export interface SegmenterEvents {
  /** Speech lasted min_speech_ms: an utterance is coming (barge-in can stop playback now). */
  onSpeechStart(atMs: number): void;
  onUtterance(utterance: Utterance): void;
}

/** Rejects settings the schema cannot rule out on its own (it checks each leaf, not how they relate). */
export function checkVadSettings(settings: VadSettings): VadSettings {
  const problems: string[] = [];
  const { threshold, negative_threshold, min_speech_ms, min_silence_ms, pre_roll_ms, max_utterance_ms } = settings;
  const finite = Object.entries(settings).filter(([, value]) => typeof value !== 'number' || !Number.isFinite(value));
  if (finite.length > 0) problems.push(`${finite.map(([key]) => key).join(', ')} must be numbers`);
  else {
    if (!(threshold > 0 && threshold < 1)) problems.push(`threshold ${threshold} must be between 0 and 1`);
    if (!(negative_threshold > 0 && negative_threshold < threshold))
      problems.push(`negative_threshold ${negative_threshold} must be above 0 and below threshold ${threshold}`);
    if (min_speech_ms < 0 || min_silence_ms <= 0 || pre_roll_ms < 0)
      problems.push('min_speech_ms, min_silence_ms and pre_roll_ms must not be negative, min_silence_ms above 0');
    if (!(max_utterance_ms > min_speech_ms))
      problems.push(`max_utterance_ms ${max_utterance_ms} must exceed min_speech_ms ${min_speech_ms}`);
  }
  if (problems.length > 0) throw new HomeAgentError('HA_ERR_CONFIG_INVALID', `plugin.voice.vad: ${problems.join('; ')}`);
  return settings;
}

interface Speech {
  startSample: number;
  /** Audio kept from before the start. */
  preRoll: Int16Array;
  /** Every frame since the start, the trailing silence included. */
  frames: Int16Array[];
  /** End of the last frame that was not silence. */
  speechEndSample: number;
  silenceSamples: number;
  confirmed: boolean;
}

function concat(parts: readonly Int16Array[]): Int16Array {
  const out = new Int16Array(parts.reduce((n, part) => n + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

export class SpeechSegmenter {
  private position = 0;
  /** Recent audio outside any utterance, at least pre_roll_ms of it once there is that much. */
  private history: Int16Array[] = [];
  private historySamples = 0;
  private speech: Speech | undefined;

  constructor(
    private readonly sampleRate: number,
    private readonly settings: () => VadSettings,
    private readonly events: SegmenterEvents,
  ) {}

  /** Is an utterance (confirmed or not yet) under way? */
  get inSpeech(): boolean {
    return this.speech !== undefined;
  }

  /** One frame of audio, in stream order, with the model's speech probability for it. */
  frame(samples: Int16Array, probability: number): void {
    const s = checkVadSettings(this.settings());
    const frameStart = this.position;
    const frameEnd = frameStart + samples.length;
    this.position = frameEnd;
    let speech = this.speech;
    if (!speech) {
      if (probability < s.threshold) {
        this.remember(samples, s);
        return;
      }
      speech = {
        startSample: frameStart,
        preRoll: this.takePreRoll(s),
        frames: [],
        speechEndSample: frameEnd,
        silenceSamples: 0,
        confirmed: false,
      };
      this.speech = speech;
    }
    speech.frames.push(samples);
    if (probability < s.negative_threshold) speech.silenceSamples += samples.length;
    else {
      speech.silenceSamples = 0;
      speech.speechEndSample = frameEnd;
    }
    if (this.ms(speech.silenceSamples) >= s.min_silence_ms) {
      this.end(speech, false, s);
      return;
    }
    if (!speech.confirmed && speech.silenceSamples === 0 && this.ms(speech.speechEndSample - speech.startSample) >= s.min_speech_ms) {
      speech.confirmed = true;
      this.events.onSpeechStart(this.ms(speech.startSample));
    }
    if (speech.confirmed && this.ms(frameEnd - speech.startSample) >= s.max_utterance_ms) this.end(speech, true, s);
  }

  /** Forgets the stream: time starts again at 0 and an utterance under way is dropped. */
  reset(): void {
    this.position = 0;
    this.history = [];
    this.historySamples = 0;
    this.speech = undefined;
  }

  private end(speech: Speech, truncated: boolean, s: VadSettings): void {
    this.speech = undefined;
    const audio = concat(speech.frames);
    const speechSamples = speech.speechEndSample - speech.startSample;
    if (!speech.confirmed) {
      // Too short: noise. Its audio goes back to the history, where the next pre-roll comes from.
      this.remember(concat([speech.preRoll, audio]), s);
      return;
    }
    this.remember(audio.subarray(speechSamples), s);
    this.events.onUtterance({
      samples: concat([speech.preRoll, audio.subarray(0, speechSamples)]),
      sampleRate: this.sampleRate,
      speechStartMs: this.ms(speech.startSample),
      speechEndMs: this.ms(speech.speechEndSample),
      truncated,
    });
  }

  private remember(samples: Int16Array, s: VadSettings): void {
    if (samples.length === 0) return;
    this.history.push(samples);
    this.historySamples += samples.length;
    const keep = this.samples(s.pre_roll_ms);
    let first = this.history[0];
    while (first && this.historySamples - first.length >= keep) {
      this.history.shift();
      this.historySamples -= first.length;
      first = this.history[0];
    }
  }

  private takePreRoll(s: VadSettings): Int16Array {
    const all = concat(this.history);
    this.history = [];
    this.historySamples = 0;
    return all.slice(Math.max(0, all.length - this.samples(s.pre_roll_ms)));
  }

  private ms(samples: number): number {
    return (samples * 1000) / this.sampleRate;
  }

  private samples(ms: number): number {
    return Math.round((ms * this.sampleRate) / 1000);
  }
}

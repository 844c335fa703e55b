/**
 * A satellite's speaker as the SpeakerOutput's player: a WAV goes out as `synthesize` (the text, for
 * the satellite's LEDs and event hooks), then audio-start, audio-chunk… audio-stop, and the play is
 * over when the satellite says `played` (wyoming-satellite does once its sound program finished).
 * So the local speaker and every satellite share one queue, ordering and barge-in logic.
 *
 * A satellite that is not connected, or never reports `played` within the audio's length plus
 * play_timeout_ms, fails the play with HA_ERR_SPEAKER_UNAVAILABLE like a missing sound card.
 */
import { HomeAgentError } from '../../../src/sdk/index.js';
import type { SpeakerPlayer } from '../speaker-output.js';
import { parseWav } from '../wav.js';
import { audioEvents, event } from './satellite-events.js';
import type { SatelliteLink } from './satellite-link.js';

/** About 60 ms of 16 kHz audio per chunk, as wyoming-satellite's own sound events. */
const CHUNK_BYTES = 2048;

export interface SatellitePlayerOptions {
  /** "kitchen": the device as status lines name it. */
  device: string;
  label: string;
  link: Pick<SatelliteLink, 'connected' | 'send' | 'status'>;
  /** The text a WAV was synthesized from (for the synthesize event), when it was. */
  textOf: (wav: Buffer) => string | undefined;
  playTimeoutMs: () => number;
}

export class SatellitePlayer implements SpeakerPlayer {
  readonly device: string;
  readonly #options: SatellitePlayerOptions;
  #waiting: { done: (played: boolean) => void; timer: NodeJS.Timeout } | undefined;

  constructor(options: SatellitePlayerOptions) {
    this.#options = options;
    this.device = options.device;
  }

  get playing(): boolean {
    return this.#waiting !== undefined;
  }

  async probe(): Promise<{ ok: true } | { ok: false; problem: string }> {
    return this.#options.link.connected ? { ok: true } : { ok: false, problem: this.#notConnected() };
  }

  async play(wav: Buffer): Promise<{ played: boolean; stopped: boolean; ms: number }> {
    const info = parseWav(wav);
    if (info.bitsPerSample !== 16)
      throw new HomeAgentError('HA_ERR_SPEAKER_UNAVAILABLE', `${this.#options.label}: only 16-bit audio is sent to satellites`);
    const pcm = wav.subarray(info.dataOffset, info.dataOffset + info.dataLength);
    const text = this.#options.textOf(wav);
    const events = [
      ...(text === undefined ? [] : [event('synthesize', { text })]),
      ...audioEvents(pcm, { rate: info.sampleRate, width: 2, channels: info.channels }, CHUNK_BYTES),
    ];
    this.#finish(false);
    const played = new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => this.#finish(false), info.durationMs + this.#options.playTimeoutMs());
      this.#waiting = { done: resolve, timer };
    });
    if (!this.#options.link.send(events)) {
      this.#finish(false);
      throw new HomeAgentError('HA_ERR_SPEAKER_UNAVAILABLE', this.#notConnected());
    }
    const ok = await played;
    if (!ok && this.#options.link.connected) {
      throw new HomeAgentError(
        'HA_ERR_SPEAKER_UNAVAILABLE',
        `${this.#options.label}: the audio was sent but the satellite did not report it played within ${info.durationMs + this.#options.playTimeoutMs()} ms`,
      );
    }
    if (!ok) throw new HomeAgentError('HA_ERR_SPEAKER_UNAVAILABLE', this.#notConnected());
    return { played: true, stopped: false, ms: info.durationMs };
  }

  /** The satellite said `played`. */
  played(): void {
    this.#finish(true);
  }

  /** The connection dropped: a play waiting for `played` fails now rather than at its deadline. */
  disconnected(): void {
    this.#finish(false);
  }

  /** Barge-in: the audio already sent plays on (Wyoming has no way to stop it); nothing waits for it. */
  stop(): boolean {
    const had = this.#waiting !== undefined;
    this.#finish(true);
    return had;
  }

  #finish(played: boolean): void {
    const waiting = this.#waiting;
    if (!waiting) return;
    this.#waiting = undefined;
    clearTimeout(waiting.timer);
    waiting.done(played);
  }

  #notConnected(): string {
    const problem = this.#options.link.status().problem;
    return `${this.#options.label} is not connected${problem ? ` (${problem.replace(`${this.#options.label}: `, '')})` : ''}`;
  }
}

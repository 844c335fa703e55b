/**
 * Decides which utterances are for HomeAgent. The microphone hears the whole room, so an utterance
 * is acted on only when something activated the pipeline: a push-to-talk press, a wake word, the
 * `voice.listen` method (each arms a listen window for the next utterance), or a wake phrase at the
 * start of the transcript. Everything else is dropped before it is transcribed, so speech in the
 * room never leaves the microphone unless the wake phrase needs a transcript to be found.
 *
 * Pure and clock-injected: the pipeline reports what happened, the policy answers what to do, and
 * every activation and rejected trigger goes to `record` (the activation log) for tuning.
 */
import type { ActivationEntry, ActivationMethod } from '../../src/sdk/api.js';

export type { ActivationMethod };

/** One activation or rejected trigger as the policy reports it: the log's entry, timed in epoch ms. */
export interface ActivationRecord extends Omit<ActivationEntry, 'at'> {
  /** Epoch ms. */
  at: number;
}

export interface ActivationSettings {
  /** How long after arming the next utterance may begin. */
  listenWindowMs: number;
  /** After an accepted activation, further triggers are ignored this long. */
  refractoryMs: number;
  /** Whether utterances are transcribed to look for a wake phrase. */
  wakePhrases: boolean;
}

/** A wake phrase found at the start of a transcript (the shape of matchWakePhrase's answer). */
export interface WakePhraseHit {
  phrase: string;
  heard: string;
  /** The transcript after the phrase; empty when the phrase was said alone. */
  command: string;
  similarity: number;
}

/** What to do with a finished utterance, before any transcription. */
export type UtteranceDecision =
  /** Armed: transcribe it and treat all of it as the command. */
  | { kind: 'accept'; method: ActivationMethod }
  /** Transcribe it and look for a wake phrase. */
  | { kind: 'wake_phrase' }
  /** Not for HomeAgent: drop it untranscribed. */
  | { kind: 'drop' };

/** What to do once a transcript was searched for a wake phrase. */
export type WakePhraseDecision =
  | { kind: 'command'; command: string; phrase: string }
  /** The phrase alone: answer briefly and listen for the command. */
  | { kind: 'prompt'; phrase: string }
  | { kind: 'ignore'; reason: 'no_wake_phrase' | 'refractory' };

export interface ActivationPolicyOptions {
  now: () => number;
  settings: () => ActivationSettings;
  record: (entry: ActivationRecord) => void;
}

interface Armed {
  method: ActivationMethod;
  from: number;
  until: number;
}

export interface ActivationState {
  armed: { method: ActivationMethod; until: number } | undefined;
  refractory_until: number | undefined;
}

export class ActivationPolicy {
  readonly #now: () => number;
  readonly #settings: () => ActivationSettings;
  readonly #record: (entry: ActivationRecord) => void;
  #armed: Armed | undefined;
  #lastAccepted: number | undefined;

  constructor(options: ActivationPolicyOptions) {
    this.#now = options.now;
    this.#settings = options.settings;
    this.#record = options.record;
  }

  /**
   * A push-to-talk press or a wake word: arms the listen window unless an activation was accepted
   * less than refractory_ms ago. Returns whether it was accepted.
   */
  trigger(method: 'push_to_talk' | 'wake_word', details: { score?: number; model?: string } = {}): boolean {
    const at = this.#now();
    if (this.#inRefractory(at)) {
      this.#record({ at, method, accepted: false, reason: 'refractory', ...details });
      return false;
    }
    this.#record({ at, method, accepted: true, ...details });
    this.#lastAccepted = at;
    this.#arm(method, at);
    return true;
  }

  /**
   * A finished utterance whose speech began at `speechStartedAt` (epoch ms). One that began inside
   * the listen window is accepted whole and uses the window up; one that began before the window
   * opened (speech already going on at the press) does not count for it.
   */
  decide(speechStartedAt: number): UtteranceDecision {
    const armed = this.#armed;
    if (armed && speechStartedAt > armed.until) this.#armed = undefined;
    else if (armed && speechStartedAt >= armed.from && speechStartedAt <= armed.until) {
      this.#armed = undefined;
      return { kind: 'accept', method: armed.method };
    }
    return this.#settings().wakePhrases ? { kind: 'wake_phrase' } : { kind: 'drop' };
  }

  /**
   * The answer of the wake phrase search for an utterance that ended at `utteranceEndedAt`. The phrase
   * alone opens the listen window from the end of that utterance, so a command spoken right after
   * it counts even if the transcription took a while.
   */
  wakePhrase(hit: WakePhraseHit | undefined, utteranceEndedAt: number): WakePhraseDecision {
    if (!hit) return { kind: 'ignore', reason: 'no_wake_phrase' };
    const at = this.#now();
    const details = { phrase: hit.phrase, heard: hit.heard, score: hit.similarity };
    if (this.#inRefractory(at)) {
      this.#record({ at, method: 'wake_phrase', accepted: false, reason: 'refractory', ...details });
      return { kind: 'ignore', reason: 'refractory' };
    }
    this.#record({ at, method: 'wake_phrase', accepted: true, ...details });
    this.#lastAccepted = at;
    if (hit.command.trim() !== '') return { kind: 'command', command: hit.command.trim(), phrase: hit.phrase };
    this.#arm('wake_phrase', Math.min(utteranceEndedAt, at));
    return { kind: 'prompt', phrase: hit.phrase };
  }

  /** Closes the listen window. */
  disarm(): void {
    this.#armed = undefined;
  }

  state(): ActivationState {
    const now = this.#now();
    const armed = this.#armed && this.#armed.until >= now ? { method: this.#armed.method, until: this.#armed.until } : undefined;
    const refractoryUntil = this.#lastAccepted === undefined ? undefined : this.#lastAccepted + this.#settings().refractoryMs;
    return { armed, refractory_until: refractoryUntil !== undefined && refractoryUntil > now ? refractoryUntil : undefined };
  }

  #arm(method: ActivationMethod, from: number): void {
    this.#armed = { method, from, until: from + this.#settings().listenWindowMs };
  }

  #inRefractory(at: number): boolean {
    return this.#lastAccepted !== undefined && at - this.#lastAccepted < this.#settings().refractoryMs;
  }
}

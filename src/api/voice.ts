/**
 * The wire shapes of the voice plugin's control methods (voice.say, voice.listen and
 * voice.activations), as `homeagentctl voice` reads them.
 */

export interface VoiceSayResult {
  played: boolean;
  /** Barge-in or shutdown ended it (or dropped it from the queue before it played). */
  stopped: boolean;
}

export interface VoiceListenResult {
  armed: boolean;
  /** Why not, when the refractory period refused it or input is off. */
  reason?: string;
}

export type ActivationMethod = 'wake_phrase' | 'wake_word' | 'push_to_talk';

/** One activation or near miss, as the activation log keeps it. */
export interface ActivationEntry {
  /** ISO time. */
  at: string;
  method: ActivationMethod;
  accepted: boolean;
  /** Why it was not taken (refractory, below threshold, no command, ...) or a note on an accepted one. */
  reason?: string;
  score?: number;
  phrase?: string;
  /** The start of the transcript (the log clips it: enough to tell a false trigger, not a transcript store). */
  heard?: string;
  model?: string;
}

/** Newest first. */
export interface VoiceActivationsResult {
  activations: ActivationEntry[];
}

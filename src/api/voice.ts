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

/** A satellite's connection (voice.satellites). */
export type SatelliteState = 'connecting' | 'connected' | 'failed' | 'stopped';

/** How a satellite's last turn ended. */
export type SatelliteTurnOutcome = 'command' | 'nothing' | 'timeout' | 'refused' | 'error';

export interface SatelliteTurn {
  /** ISO time the turn ended. */
  at: string;
  outcome: SatelliteTurnOutcome;
  /** The command heard (outcome command). */
  heard?: string;
  /** Why it ended without a command. */
  problem?: string;
}

/** One configured satellite, as voice.satellites lists it. */
export interface SatelliteStatus {
  id: string;
  name: string;
  /** The area its turns act in. */
  area: string;
  host: string;
  port: number;
  state: SatelliteState;
  /** Why it is not connected (the last failure), while it is not. */
  problem?: string;
  /** ISO time since the state holds. */
  since: string;
  /** ISO time of the last event received from it. */
  last_seen?: string;
  /** Failed connection attempts in a row. */
  failures: number;
  /** ISO time of the next connection attempt, while waiting. */
  retry_at?: string;
  /** What the satellite says about itself (its info event). */
  reported?: { name?: string; area?: string; wake_words: string[] };
  turns: number;
  last_turn?: SatelliteTurn;
}

export interface VoiceSatellitesResult {
  satellites: SatelliteStatus[];
}

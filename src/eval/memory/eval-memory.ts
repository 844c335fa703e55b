/**
 * The contract between the retrieval evaluation and the memory it measures. The harness knows
 * nothing about how a memory stores or ranks: it feeds conversation turns in, lets the memory
 * finish its background work, and asks the recall used for prompts for its top k items.
 */

/** One conversation turn, fed to the memory as an input event. */
export interface EvalEvent {
  /**
   * The event's external id, qualified by its conversation (`<conversation>/<dia_id>`, e.g.
   * `conv-26/D8:6`) so several conversations can share one memory without their ids colliding.
   * Recalled items must report these ids back in {@link RecalledItem.sources}.
   */
  source_id: string;
  /** The turn id as the data file spells it (`D8:6`). */
  dia_id: string;
  conversation_id: string;
  /** Session number N of `session_N`. */
  session: number;
  /** Epoch milliseconds (UTC): the session's date_time plus a few seconds per turn, in order. */
  timestamp: number;
  /** Who said it: the peer of the input event. */
  speaker: string;
  /** The turn text; a shared image's caption is appended as `[image: …]`. */
  text: string;
}

/** One item of a recall answer, as it would be put into a prompt. */
export interface RecalledItem {
  /** The text the item contributes to the prompt (its length is the prompt-size figure). */
  text: string;
  /** Source ids ({@link EvalEvent.source_id}) of the events the item came from. */
  sources: string[];
  /** The ranking score, when the memory has one (reported, never used by the metric). */
  score?: number;
}

/** A memory under evaluation. */
export interface EvalMemory {
  /** Stores one turn; resolves when the memory has acknowledged it. */
  ingest(event: EvalEvent): Promise<void>;
  /** Runs whatever background work ingestion started (extraction, maintenance loops) to completion. */
  settle(): Promise<void>;
  /** The top `k` items, best first, for a query (the recall used to build prompts). */
  recall(query: string, k: number): Promise<RecalledItem[]>;
  /** Releases everything the memory holds (files, workers, timers). */
  close(): Promise<void>;
}

/** What a memory factory is told about the events it is about to receive. */
export interface EvalScope {
  /** `conv-26` when each conversation gets its own memory, `all` when they share one. */
  label: string;
  conversation_ids: string[];
  event_count: number;
  /** Timestamp of the earliest and latest event, so an injected clock can be placed after them. */
  first_timestamp: number;
  last_timestamp: number;
}

/** Builds a fresh, empty memory for one scope. */
export type EvalMemoryFactory = (scope: EvalScope) => EvalMemory | Promise<EvalMemory>;

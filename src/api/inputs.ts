/**
 * The wire shapes of inputs: their level, and the receipt every input gets, whatever happens, as
 * the chat methods, the web API and the CLI hand it back.
 */
import type { ErrorEnvelope } from './errors.js';

export type ReceiptStatus = 'done' | 'skipped' | 'failed' | 'cancelled';

/** The one terminal answer every input gets, whatever happens. */
export interface Receipt {
  input_id: string;
  status: ReceiptStatus;
  /** The answer text (synchronous channels show it; asynchronous ones got it through a send). */
  text?: string;
  error?: ErrorEnvelope;
  /** Why it was skipped or cancelled. */
  reason?: string;
  /** Tokens the language model used for it (done tasks that called one). */
  usage?: ReceiptUsage;
  finished_at: number;
}

export interface ReceiptUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

/**
 * Interrupt level: 0 = queued (pre-empted by any interrupt), 1 background, 2 message,
 * 3 interactive, 4 critical (kernel and built-in plugins only). Only a strictly higher level
 * pre-empts a running task.
 */
export type Level = 0 | 1 | 2 | 3 | 4;

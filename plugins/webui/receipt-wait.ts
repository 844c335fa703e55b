/**
 * Waiting for a chat input's receipt on behalf of an HTTP client (the page's POST /chat with wait,
 * /v1/chat/completions): bounded by plugin.webui.chat_timeout_ms, and given up when the client goes
 * away. Giving up never cancels the input.
 */
import { HomeAgentError, type Receipt } from '../../src/sdk/index.js';

/**
 * The receipt, or HA_ERR_AGENT_TIMEOUT after `timeoutMs`, or undefined once `signal` aborts (the
 * client went away). Either way the input itself goes on: its answer still lands in memory.
 */
export function awaitReceipt(receipt: Promise<Receipt>, timeoutMs: number, timeoutMessage: (ms: number) => string): Promise<Receipt>;
export function awaitReceipt(
  receipt: Promise<Receipt>,
  timeoutMs: number,
  timeoutMessage: (ms: number) => string,
  signal: AbortSignal,
): Promise<Receipt | undefined>;
export function awaitReceipt(
  receipt: Promise<Receipt>,
  timeoutMs: number,
  timeoutMessage: (ms: number) => string,
  signal?: AbortSignal,
): Promise<Receipt | undefined> {
  return new Promise((resolve, reject) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', gone);
    };
    const gone = () => {
      done();
      resolve(undefined);
    };
    const timer = setTimeout(() => {
      done();
      reject(new HomeAgentError('HA_ERR_AGENT_TIMEOUT', timeoutMessage(timeoutMs)));
    }, timeoutMs);
    if (signal?.aborted) return gone();
    signal?.addEventListener('abort', gone, { once: true });
    receipt.then(
      (value) => {
        done();
        resolve(value);
      },
      (error: unknown) => {
        done();
        reject(error);
      },
    );
  });
}

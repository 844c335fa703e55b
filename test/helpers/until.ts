/** Polling for tests against a running daemon, where a state arrives without an event the test can await. */
import { setTimeout as sleep } from 'node:timers/promises';

const POLL_MS = 50;

/** Polls `probe` until it gives a value; throws naming `what` after `timeoutMs`. */
export async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(POLL_MS);
  }
}

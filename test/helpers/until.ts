/**
 * Polling for tests against a running daemon, where a state arrives without an event the test can
 * await. The first polls come soon (5 ms, then doubling up to 50 ms): most states a test waits for
 * arrive within a few milliseconds, and a fixed 50 ms step cost every such wait 25 ms on average
 * (hundreds of waits in one file), while a long wait still costs one probe per 50 ms.
 */
import { setTimeout as sleep } from 'node:timers/promises';

const FIRST_POLL_MS = 5;
const POLL_MS = 50;

/** Polls `probe` until it gives a value; throws naming `what` after `timeoutMs`. */
export async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (let pause = FIRST_POLL_MS; ; pause = Math.min(POLL_MS, pause * 2)) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(pause);
  }
}

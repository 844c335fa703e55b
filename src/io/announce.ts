/**
 * Announcements the house makes on its own (a rolled-back plugin change, a supervisor notice):
 * they go to the first of the named channels that exists and takes them. A channel that only
 * answers its own requests (the CLI's) refuses a message nobody asked for, so the next one gets
 * it; when every channel refuses, the last refusal is the caller's error.
 */
import type { IoManager } from './io-manager.js';

export async function announceWithFallback(
  io: Pick<IoManager, 'channel' | 'send'>,
  text: string,
  channels: ReadonlyArray<string | undefined>,
  stamp: { newId: () => string; now: () => number },
): Promise<void> {
  const targets = [...new Set(channels)].filter((name): name is string => !!name && io.channel(name) !== undefined);
  let refusal: unknown;
  for (const target of targets) {
    try {
      await io.send({ id: stamp.newId(), channel: target, type: 'text', payload: text, meta: {}, created_at: stamp.now() });
      return;
    } catch (error) {
      refusal = error;
    }
  }
  if (refusal !== undefined) throw refusal;
}

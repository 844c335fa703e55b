/**
 * Where a later message goes: something the house says on its own, after the conversation it
 * belongs to has moved on (a timer ringing). The conversation's own channel when it can take a
 * message nobody is waiting for right now, otherwise the first announcement channel that can
 * (core.agent.announce_channels: the speaker, the web page, a chat app). A CLI command that set a
 * timer has long exited when it rings: its channel answers only the caller waiting for a receipt,
 * so the ring goes where someone hears it, and the caller is told where it went.
 */
import type { IoManager } from './io-manager.js';
import type { InputEvent, OutputChannel } from './types.js';
import { CAPABILITY } from './types.js';

/** The conversation a later message is raised on, and why. */
export interface LaterTarget {
  /** The conversation (input channel) to raise it on: the origin, or the announcement channel's name. */
  channel: string;
  /** The output channel that will carry the answer; undefined when none can (nobody will hear it). */
  output: string | undefined;
  via: 'origin' | 'announcement' | 'nowhere';
  /** One sentence for the log and the receipt: where it goes and why. */
  detail: string;
}

/**
 * Whether `channel` can take a message nobody asked for now. A channel that says (`listening`) is
 * believed; otherwise an asynchronous channel delivers what is sent (a speaker, a chat app) and a
 * synchronous one does not (its answers reach only whoever waits for the receipt: the CLI).
 */
export function takesLaterMessages(channel: OutputChannel): boolean {
  if ((channel.capabilities & CAPABILITY.TEXT) === 0) return false;
  if (channel.listening !== undefined) {
    try {
      return channel.listening();
    } catch {
      return false;
    }
  }
  return !channel.synchronous;
}

export function laterTarget(
  io: Pick<IoManager, 'route' | 'channel'>,
  origin: Pick<InputEvent, 'source' | 'channel'>,
  announceChannels: readonly string[],
): LaterTarget {
  const routed = io.route(origin);
  const own = routed === undefined ? undefined : io.channel(routed);
  if (own !== undefined && takesLaterMessages(own)) {
    return { channel: origin.channel, output: own.name, via: 'origin', detail: `on ${own.name}, where it was set` };
  }
  const why =
    own === undefined
      ? `${origin.channel} has no output channel now`
      : `${own.name} cannot take a message now (${own.listening ? 'nobody is following it' : 'it answers only a waiting request'})`;
  for (const name of new Set(announceChannels)) {
    const channel = io.channel(name);
    if (channel !== undefined && channel !== own && takesLaterMessages(channel)) {
      return { channel: channel.name, output: channel.name, via: 'announcement', detail: `on ${channel.name}: ${why}` };
    }
  }
  const tried = announceChannels.length > 0 ? announceChannels.join(', ') : 'none configured';
  return {
    channel: origin.channel,
    output: own?.name,
    via: 'nowhere',
    detail: `on ${origin.channel}, though nobody may hear it: ${why}, and no announcement channel can (core.agent.announce_channels: ${tried})`,
  };
}

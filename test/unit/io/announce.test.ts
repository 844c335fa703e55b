/** The supervisor's announcements: first channel that exists and takes the message, else the last refusal. */
import t from 'tap';
import { announceWithFallback } from '../../../src/io/announce.js';
import type { OutputEvent } from '../../../src/io/types.js';

function fakeIo(channels: Record<string, 'takes' | 'refuses'>) {
  const sent: OutputEvent[] = [];
  return {
    sent,
    channel: (name: string) => (name in channels ? ({ name } as never) : undefined),
    send: async (event: OutputEvent) => {
      if (channels[event.channel] === 'refuses') throw new Error(`${event.channel} refuses`);
      sent.push(event);
    },
  };
}
const stamp = { newId: () => 'id-1', now: () => 42 };

t.test('the conversation channel when it exists', async (t) => {
  const io = fakeIo({ cli: 'takes', webui: 'takes' });
  await announceWithFallback(io, 'undone', ['cli', 'webui'], stamp);
  t.same(io.sent, [{ id: 'id-1', channel: 'cli', type: 'text', payload: 'undone', meta: {}, created_at: 42 }]);
});

t.test('a refusing or missing channel passes to the next; duplicates are tried once', async (t) => {
  const io = fakeIo({ cli: 'refuses', webui: 'takes' });
  await announceWithFallback(io, 'undone', ['gone', 'cli', 'webui', 'webui'], stamp);
  t.same(
    io.sent.map((e) => e.channel),
    ['webui'],
  );
  const none = fakeIo({});
  await announceWithFallback(none, 'undone', [undefined, 'webui'], stamp);
  t.same(none.sent, [], 'no channel at all: nothing is sent and nothing thrown');
});

t.test('every channel refusing: the last refusal is the error', async (t) => {
  const io = fakeIo({ cli: 'refuses', webui: 'refuses' });
  await t.rejects(announceWithFallback(io, 'undone', ['cli', 'webui'], stamp), { message: 'webui refuses' });
});

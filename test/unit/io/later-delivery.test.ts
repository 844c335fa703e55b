/**
 * Where a later message (a timer ringing) goes, against a real IoManager: the origin when its
 * channel can take a message now, else the first announcement channel that can, else the origin
 * with a warning-worthy detail.
 */
import t from 'tap';
import { IoManager } from '../../../src/io/io-manager.js';
import { laterTarget, takesLaterMessages } from '../../../src/io/later-delivery.js';
import { CAPABILITY, type OutputChannel } from '../../../src/io/types.js';

function channel(name: string, extra: Partial<OutputChannel> = {}): OutputChannel {
  return { name, description: name, capabilities: CAPABILITY.TEXT, synchronous: false, owner: 'test', send: async () => {}, ...extra };
}

/** The CLI: synchronous, its answers reach only the request that waits. */
const CLI = channel('cli', { synchronous: true });

function io(...channels: OutputChannel[]): IoManager {
  const manager = new IoManager();
  for (const c of channels) manager.registerChannel(c);
  return manager;
}

t.test('which channels take a message nobody is waiting for', async (t) => {
  t.equal(takesLaterMessages(channel('speaker')), true, 'asynchronous: what is sent is delivered');
  t.equal(takesLaterMessages(CLI), false, 'synchronous without listening: only a waiting request hears it');
  t.equal(takesLaterMessages(channel('webui', { synchronous: true, listening: () => true })), true, 'a page following it');
  t.equal(takesLaterMessages(channel('webui', { synchronous: true, listening: () => false })), false, 'no page open');
  t.equal(takesLaterMessages(channel('chat', { listening: () => false })), false, 'a chat app that says it is disconnected');
  t.equal(takesLaterMessages(channel('pics', { capabilities: CAPABILITY.IMAGE })), false, 'no text');
  const broken = channel('odd', {
    listening: () => {
      throw new Error('boom');
    },
  });
  t.equal(takesLaterMessages(broken), false, 'a listening() that throws counts as nobody there');
});

t.test('a CLI timer goes to the first announcement channel that can take it', async (t) => {
  const page = { open: false };
  const house = io(CLI, channel('webui', { synchronous: true, listening: () => page.open }), channel('speaker'));
  const origin = { source: 'cli', channel: 'cli' };
  t.match(laterTarget(house, origin, ['speaker', 'webui']), {
    channel: 'speaker',
    output: 'speaker',
    via: 'announcement',
    detail: 'on speaker: cli cannot take a message now (it answers only a waiting request)',
  });
  house.unregisterChannel('speaker');
  t.match(laterTarget(house, origin, ['speaker', 'webui']), { channel: 'cli', via: 'nowhere' }, 'no speaker, no page open');
  t.match(laterTarget(house, origin, ['speaker', 'webui']).detail, /nobody may hear it: .*core\.agent\.announce_channels: speaker, webui/);
  page.open = true;
  t.match(laterTarget(house, origin, ['speaker', 'webui']), { channel: 'webui', via: 'announcement' }, 'the open page hears it');
  t.match(laterTarget(house, origin, []), { via: 'nowhere', detail: /none configured/ });
});

t.test('the origin keeps it while it can take it', async (t) => {
  const page = { open: true };
  const house = io(CLI, channel('webui', { synchronous: true, listening: () => page.open }), channel('speaker'), channel('qq'));
  t.same(laterTarget(house, { source: 'webui', channel: 'webui' }, ['speaker']), {
    channel: 'webui',
    output: 'webui',
    via: 'origin',
    detail: 'on webui, where it was set',
  });
  t.match(laterTarget(house, { source: 'onebot', channel: 'qq' }, ['speaker']), { channel: 'qq', via: 'origin' }, 'a chat channel');
  page.open = false;
  t.match(
    laterTarget(house, { source: 'webui', channel: 'webui' }, ['speaker']),
    { channel: 'speaker', via: 'announcement', detail: 'on speaker: webui cannot take a message now (nobody is following it)' },
    'the page was closed since',
  );
  t.match(
    laterTarget(house, { source: 'mqtt', channel: 'gone' }, ['webui', 'speaker']),
    { channel: 'speaker', detail: /gone has no output channel now/ },
    'an origin with no channel at all; the closed page is skipped',
  );
});

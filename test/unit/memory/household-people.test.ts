/** Speaker naming: configured people by sender, room and source; transports and sender ids are never names. */
import t from 'tap';
import { isPersonName, matchPerson, speakerName, UNKNOWN_SPEAKER } from '../../../src/memory/household-people.js';

const people = [
  { name: 'Anna', aliases: ['Mum', '妈妈'], senders: ['cli', 'webui:*'] },
  { name: 'Ben', aliases: [], senders: ['qq:42', 'voice@garage'] },
];

t.test('the most specific clue wins: sender id, then room, then source', async (t) => {
  t.equal(speakerName(people, { sender_id: 'webui:admin', source: 'webui', channel: 'webui' }), 'Anna', 'a wildcard sender');
  t.equal(speakerName(people, { sender_id: 'qq:42', source: 'qq', channel: 'qq:42' }), 'Ben');
  t.equal(speakerName(people, { sender_id: 'voice', source: 'voice', channel: 'voice', area: 'garage' }), 'Ben', 'a voice by room');
  t.equal(speakerName(people, { sender_id: 'voice', source: 'voice', channel: 'voice', area: 'kitchen' }), UNKNOWN_SPEAKER);
  t.equal(speakerName(people, { source: 'cli', channel: 'cli', peer: 'cli' }), 'Anna', 'the source when no sender id is passed');
  t.equal(matchPerson(people, { source: 'qq', channel: 'qq:7', peer: '妈妈' })?.name, 'Anna', 'a peer naming an alias');
});

t.test('no transport, channel or sender id ever becomes a person', async (t) => {
  for (const name of ['cli', 'webui', 'voice', 'mqtt', 'qq:12345', 'webui:admin', '', 'someone']) t.notOk(isPersonName(name), name);
  t.notOk(isPersonName('kitchen_panel', { source: 'kitchen_panel', channel: 'x' }), 'the source itself');
  t.ok(isPersonName('Alice'));
  t.equal(speakerName([], { source: 'mqtt', channel: 'mqtt', peer: 'mqtt' }), UNKNOWN_SPEAKER);
  t.equal(speakerName([], { source: 'qq', channel: 'qq:7', peer: 'Alice' }), 'Alice', 'a chat nickname is a name');
});

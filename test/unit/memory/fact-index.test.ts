import t from 'tap';
import { tempDir } from '../fixtures/support.js';
import { openStores } from './fixtures/memory-fixture.js';

const HOUR = 3600 * 1000;

t.test('a word in very many sentences is left out while a rarer word matches; alone, its newest matches rank', async (t) => {
  const { graph, facts } = openStores(t, tempDir(t));
  // The oldest "lamp" sentence would rank first by BM25 (the word three times in few words).
  await graph.commit([{ subject: 'lamp zero', relation: 'located_in', object: 'attic', sentence: 'lamp lamp lamp' }], {
    source_event_id: 'old',
  });
  const many = Array.from({ length: 1100 }, (_, i) => ({
    subject: `lamp ${i + 1}`,
    relation: 'near',
    object: `shelf ${i + 1}`,
    sentence: `the lamp number ${i + 1} stands near shelf ${i + 1} with other things around it`,
  }));
  for (let i = 0; i < many.length; i += 250) await graph.commit(many.slice(i, i + 250), { source_event_id: `batch-${i}` });
  await graph.commit(
    [
      { subject: 'spare key', relation: 'located_in', object: 'flower pot', sentence: 'the spare key is under the flower pot' },
      { subject: 'reading lamp', relation: 'located_in', object: 'pot shelf', sentence: 'the reading lamp is by the pot shelf' },
    ],
    { source_event_id: 'key' },
  );
  while (facts.sync() > 0);

  const rare = facts.search('where is the lamp by the pot', 30);
  t.same(
    rare.map((h) => h.text).sort(),
    ['the reading lamp is by the pot shelf', 'the spare key is under the flower pot'],
    'only sentences with the rarer word: "lamp" (1,102 sentences) decides nothing',
  );
  t.equal(rare[0]?.text, 'the reading lamp is by the pot shelf', 'among them BM25 still ranks');

  const common = facts.search('lamp', 30);
  t.equal(common.length, 30, 'a query of common words still finds');
  t.notOk(
    common.some((h) => h.text === 'lamp lamp lamp'),
    'from their newest 1,000 matches: the oldest, best-scoring one is beyond them',
  );
  t.same(facts.search('lamp zebra', 5).length, 5, 'a word no sentence holds does not make the common word rare');
  t.same(facts.search('zebra giraffe', 5), [], 'words no sentence holds find nothing');
  t.same(facts.search('?!', 5), [], 'no word at all');
});

t.test('superseded events: turns whose every fact has been superseded, not turns with one still current', async (t) => {
  const { graph, facts, clock } = openStores(t, tempDir(t));
  await graph.commit([{ subject: 'key', relation: 'located_in', object: 'flower pot', sentence: 'the key is under the flower pot' }], {
    source_event_id: 'told',
  });
  await graph.commit(
    [
      { subject: 'bike', relation: 'located_in', object: 'garage', sentence: 'the bike is in the garage' },
      { subject: 'Anna', relation: 'likes', object: 'tea', sentence: 'Anna likes tea' },
    ],
    { source_event_id: 'mixed' },
  );
  await graph.commit([{ subject: 'Ben', relation: 'likes', object: 'coffee', sentence: 'Ben likes coffee' }], { source_event_id: 'plain' });
  t.same([...facts.supersededEvents(['told', 'mixed', 'plain', 'nothing'])], [], 'nothing superseded yet');
  clock.advance(24 * HOUR);
  await graph.commit([{ subject: 'key', relation: 'located_in', object: 'drawer', sentence: 'the key is in the drawer now' }], {
    source_event_id: 'moved',
  });
  await graph.commit([{ subject: 'bike', relation: 'located_in', object: 'shed', sentence: 'the bike is in the shed' }], {
    source_event_id: 'bike moved',
  });
  t.same(
    [...facts.supersededEvents(['told', 'mixed', 'plain', 'moved', 'bike moved', 'nothing'])],
    ['told'],
    '"mixed" still holds a current fact (Anna likes tea)',
  );
  while (facts.sync() > 0);
  t.same(
    facts.search('key', 5).map((h) => h.text),
    ['the key is in the drawer now'],
  );
  t.same(
    facts.search('key', 5, { history: true }).map((h) => [h.text, h.current]),
    [
      ['the key is in the drawer now', true],
      ['the key is under the flower pot', false],
    ],
  );
});

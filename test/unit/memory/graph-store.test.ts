import t from 'tap';
import { GraphStore } from '../../../src/memory/graph-store.js';
import type { Triple } from '../../../src/nlp/types.js';
import { ToolError } from '../../../src/shared/tool.js';
import { tempDir } from '../fixtures/support.js';
import { HOUR, ManualClock, openStores, openTestMemoryDb, T0, TestEmbedder } from './fixtures/memory-fixture.js';

const names = (list: ReadonlyArray<{ name: string }>) => list.map((e) => e.name).sort();
const triple = (r: { source: { name: string }; type: string; target: { name: string } }) => `${r.source.name} ${r.type} ${r.target.name}`;

t.test('commit upserts entities and relations with their sentences and provenance', async (t) => {
  const { graph, clock } = openStores(t, tempDir(t));
  const first = await graph.commit(
    [
      { subject: 'Alice', relation: 'Works At', object: 'Acme', confidence: 0.7, subject_type: 'person', sentence: 'Alice works at Acme.' },
      { subject: '「alice」', relation: 'likes', object: 'green tea', sentence: 'She likes green tea.' },
      { subject: 'ALICE', relation: 'likes', object: 'alice' },
      { subject: ' ', relation: 'x', object: 'y' },
      { subject: 'a'.repeat(201), relation: 'x', object: 'y' },
    ],
    { source_event_id: 'ev-1', session: 's1', timestamp: T0 - HOUR },
  );
  t.equal(first.entities_created, 3, 'Alice, Acme, green tea');
  t.equal(first.relations_created, 2);
  t.same(first.skipped, [
    { index: 2, reason: 'self_reference' },
    { index: 3, reason: 'empty' },
    { index: 4, reason: 'too_long' },
  ]);
  t.equal(first.sentence_ids.length, 2);
  const alice = graph.entity('alice');
  t.match(alice, { name: 'Alice', type: 'person', mention_count: 2 }, 'one entity for 「alice」 and Alice; type kept');
  const works = graph.relationsOf('Alice').find((r) => r.type === 'works_at');
  t.match(works, {
    type: 'works_at',
    confidence: 0.7,
    session: 's1',
    valid_from: T0 - HOUR,
    valid_to: null,
    evidence_count: 1,
    sentence: { text: 'Alice works at Acme.', source_event_id: 'ev-1', document_id: null },
  });
  t.equal(graph.relationsOf('Alice').find((r) => r.type === 'likes')?.confidence, 0.8, 'default confidence');

  clock.advance(HOUR);
  const again = await graph.commit(
    [{ subject: 'alice', relation: 'works_at', object: 'ACME', confidence: 0.9, sentence: 'Alice is at Acme again.' }],
    {
      source_event_id: 'ev-2',
    },
  );
  t.equal(again.relations_reinforced, 1);
  t.equal(again.entities_created, 0);
  const reinforced = graph.relationsById([works?.id as number])[0];
  t.match(reinforced, { confidence: 0.9, evidence_count: 2, valid_to: null });
  t.equal(reinforced?.sentence?.text, 'Alice works at Acme.', 'the first sentence stays the main reference');
  t.same(
    graph
      .evidence([works?.id as number])
      .get(works?.id as number)
      ?.map((s) => s.source_event_id),
    ['ev-1', 'ev-2'],
    'every supporting sentence is provenance',
  );
});

t.test('single-valued relations supersede the old value and keep it as history', async (t) => {
  const { graph, clock } = openStores(t, tempDir(t));
  await graph.commit([{ subject: 'me', relation: 'lives_in', object: 'Beijing', sentence: '我住在北京' }], { source_event_id: 'e1' });
  await graph.commit([{ subject: 'me', relation: 'likes', object: 'tea' }]);
  clock.advance(24 * HOUR);
  const moved = await graph.commit([{ subject: 'me', relation: 'lives in', object: 'Shanghai', sentence: 'I moved to Shanghai' }], {
    source_event_id: 'e2',
  });
  t.equal(moved.relations_superseded, 1);
  const current = graph.relationsOf('me').filter((r) => r.type === 'lives_in');
  t.same(current.map(triple), ['me lives_in Shanghai'], 'only the new location is current');
  const history = graph.history('me', 'lives_in');
  t.same(
    history.map((r) => [r.target.name, r.valid_from, r.valid_to]),
    [
      ['Shanghai', T0 + 24 * HOUR, null],
      ['Beijing', T0, T0 + 24 * HOUR],
    ],
    'the old value ends when the new one begins',
  );
  t.equal(graph.relationsOf('me', { history: true }).length, 3);

  // A multi-valued relation accumulates instead.
  await graph.commit([{ subject: 'me', relation: 'likes', object: 'coffee' }]);
  t.equal(graph.relationsOf('me').filter((r) => r.type === 'likes').length, 2);

  // Said before the current value began (a late distillation of an old document): history only.
  const late = await graph.commit([{ subject: 'me', relation: 'lives_in', object: 'Tianjin' }], { timestamp: T0 + 12 * HOUR });
  t.equal(late.relations_as_history, 1);
  t.same(
    graph.history('me', 'lives_in').map((r) => [r.target.name, r.valid_from, r.valid_to]),
    [
      ['Shanghai', T0 + 24 * HOUR, null],
      ['Tianjin', T0 + 12 * HOUR, T0 + 24 * HOUR],
      ['Beijing', T0, T0 + 24 * HOUR],
    ],
  );
  const lateAgain = await graph.commit([{ subject: 'me', relation: 'lives_in', object: 'Tianjin' }], { timestamp: T0 + 13 * HOUR });
  t.equal(lateAgain.relations_reinforced, 1, 'a second old mention reinforces the history row');

  // Moving back makes a new current row; the earlier stay remains history.
  clock.advance(HOUR);
  await graph.commit([{ subject: 'me', relation: 'lives_in', object: 'Beijing' }]);
  t.same(
    graph.history('me', 'lives_in').map((r) => [r.target.name, r.valid_to === null]),
    [
      ['Beijing', true],
      ['Shanghai', false],
      ['Tianjin', false],
      ['Beijing', false],
    ],
  );
});

t.test('the single-valued set is configurable', async (t) => {
  const dir = tempDir(t);
  const clock = new ManualClock();
  const mem = openTestMemoryDb(t, dir, clock);
  const graph = new GraphStore({ database: mem.db, embedder: new TestEmbedder(), clock, log: mem.log, singleValuedRelations: ['住在'] });
  t.ok(graph.isSingleValued('住在'));
  t.notOk(graph.isSingleValued('lives_in'));
  await graph.commit([{ subject: '我', relation: '住在', object: '北京' }]);
  clock.advance(1);
  await graph.commit([{ subject: '我', relation: '住在', object: '上海' }]);
  await graph.commit([{ subject: '我', relation: 'lives_in', object: 'A' }]);
  await graph.commit([{ subject: '我', relation: 'lives_in', object: 'B' }]);
  t.same(
    graph
      .relationsOf('我')
      .map((r) => r.target.name)
      .sort(),
    ['A', 'B', '上海'],
  );
});

/** A chain a-b-c-d plus a star around `hub`. */
async function chainAndStar(graph: GraphStore, starSize: number) {
  await graph.commit([
    { subject: 'a', relation: 'knows', object: 'b', confidence: 0.9 },
    { subject: 'b', relation: 'knows', object: 'c', confidence: 0.9 },
    { subject: 'c', relation: 'knows', object: 'd', confidence: 0.9 },
  ]);
  await graph.commit(
    Array.from({ length: starSize }, (_, i) => ({ subject: 'hub', relation: 'has', object: `leaf${i}`, confidence: 0.5 + i / 1000 })),
  );
}

t.test('neighbours: depth limit, node budget, strongest first, history and type filters', async (t) => {
  const { graph, clock } = openStores(t, tempDir(t));
  await chainAndStar(graph, 100);
  t.same(names(graph.neighbours(['a'], { depth: 1 }).entities), ['a', 'b']);
  const two = graph.neighbours(['a']);
  t.same(names(two.entities), ['a', 'b', 'c'], 'depth 2 by default');
  t.same(
    two.entities.map((e) => [e.name, e.depth]),
    [
      ['a', 0],
      ['b', 1],
      ['c', 2],
    ],
  );
  t.same(two.relations.map(triple).sort(), ['a knows b', 'b knows c']);
  t.same(names(graph.neighbours(['a'], { depth: 3 }).entities), ['a', 'b', 'c', 'd']);
  t.same(names(graph.neighbours(['a'], { depth: 9 }).entities), ['a', 'b', 'c', 'd'], 'depth is capped at 3');
  t.same(names(graph.neighbours(['a'], { depth: 0 }).entities), ['a']);

  const star = graph.neighbours(['hub']);
  t.equal(star.entities.length, 60, 'default budget: 60 entities, seed included');
  t.equal(star.relations.length, 59);
  t.ok(
    star.entities.slice(1).every((e) => Number(e.name.slice(4)) >= 41),
    'the budget goes to the most confident relations',
  );
  t.equal(graph.neighbours(['hub'], { nodeBudget: 5 }).entities.length, 5);
  t.equal(graph.neighbours(['hub', 'a', 'missing'], { nodeBudget: 1 }).entities.length, 1, 'seeds count against the budget');

  await graph.commit([{ subject: 'a', relation: 'lives_in', object: 'Oslo' }]);
  clock.advance(1);
  await graph.commit([{ subject: 'a', relation: 'lives_in', object: 'Rome' }]);
  t.notOk(names(graph.neighbours(['a'], { depth: 1 }).entities).includes('Oslo'), 'history is not walked by default');
  t.ok(names(graph.neighbours(['a'], { depth: 1, includeHistory: true }).entities).includes('Oslo'));

  await graph.commit([{ subject: 'a', relation: 'friend_of', object: 'Zoe', object_type: 'person' }]);
  t.same(names(graph.neighbours(['a'], { entityType: 'person' }).entities), ['Zoe', 'a']);
});

t.test('exact-symbol lookup over sentences', async (t) => {
  const { graph } = openStores(t, tempDir(t));
  await graph.commit([{ subject: 'router', relation: 'port', object: '13010', sentence: '端口是 13010/13011 而非 12011' }], {
    source_event_id: 'e1',
  });
  await graph.commit([{ subject: 'order', relation: 'number', object: '130105', sentence: 'order 130105 shipped with node_red v1.2.3' }]);
  await graph.commit([{ subject: '我', relation: 'age', object: '42', sentence: '我今年42岁' }]);
  const port = graph.lookupSymbols(['13010'], 5);
  t.equal(port.length, 1);
  t.equal(port[0]?.sentence.source_event_id, 'e1');
  t.same(port[0]?.relations.map(triple), ['router port 13010'], 'with the relations it supports');
  t.same(
    graph.lookupSymbols(['NODE_RED', 'v1.2.3', '13010'], 5).map((m) => m.symbols.length),
    [2, 1],
    'most symbols first',
  );
  t.same(graph.lookupSymbols(['v1.2'], 5), []);
  t.equal(graph.lookupSymbols(['42'], 5)[0]?.sentence.text, '我今年42岁', 'two-character symbols scan the sentences');
  t.same(graph.lookupSymbols(['4', ' '], 5), []);
  t.equal(graph.lookupSymbols(['13010', '130105', '42'], 2).length, 2, 'limit');
});

t.test('aliases, search by name and by vector', async (t) => {
  const { graph, embedder } = openStores(t, tempDir(t));
  await graph.commit([
    { subject: 'Robert Smith', relation: 'owns', object: 'red bicycle' },
    { subject: 'Roberta', relation: 'owns', object: 'blue car' },
  ]);
  t.ok(graph.addAlias('Robert Smith', 'Bob'));
  t.notOk(graph.addAlias('Robert Smith', 'Roberta'), 'an alias may not name another entity');
  t.notOk(graph.addAlias('nobody', 'x'));
  t.equal(graph.entity('bob')?.name, 'Robert Smith');
  t.same(graph.entity('Robert Smith')?.aliases, ['Bob']);
  await graph.commit([{ subject: 'Bob', relation: 'owns', object: 'tent' }]);
  t.equal(graph.entity('Robert Smith')?.mention_count, 2, 'a mention by alias counts for the entity');
  t.same(names(graph.searchEntities('robert', 5)), ['Robert Smith', 'Roberta']);
  t.same(names(graph.searchEntities('bob', 5)), ['Robert Smith']);
  t.equal(graph.searchEntities('roberta', 5)[0]?.name, 'Roberta', 'the exact name first');
  t.same(names(graph.resolve(['BOB', 'roberta', 'Robert Smith', 'none'])), ['Robert Smith', 'Roberta']);
  const hit = graph.searchEntityVectors(embedder.embedOne('red bicycle'), 1)[0];
  t.equal(hit?.entity.name, 'red bicycle');
  t.ok((hit?.score ?? 0) > 0.99);
});

t.test('entity vectors follow the fingerprint; failed embedding leaves them stale', async (t) => {
  const dir = tempDir(t);
  const clock = new ManualClock();
  const mem = openTestMemoryDb(t, dir, clock);
  const a = new GraphStore({ database: mem.db, embedder: new TestEmbedder({ tag: 'a' }), clock, log: mem.log });
  await a.commit([{ subject: 'kitchen', relation: 'has', object: 'toaster' }]);
  const embedderB = new TestEmbedder({ tag: 'b', fail: true });
  const b = new GraphStore({ database: mem.db, embedder: embedderB, clock, log: mem.log });
  t.same(b.searchEntityVectors(embedderB.embedOne('kitchen'), 5), []);
  await b.commit([{ subject: 'garage', relation: 'has', object: 'car' }]);
  t.equal(b.staleVectorCount(), 4);
  embedderB.fail = false;
  t.equal(await b.refreshStaleVectors(3), 3);
  t.equal(await b.refreshStaleVectors(3), 1);
  t.equal(b.searchEntityVectors(embedderB.embedOne('kitchen'), 1)[0]?.entity.name, 'kitchen');
  t.equal(a.introspect().stale_entity_vectors, 4);
});

t.test('merge redirects relations, folds duplicates, drops links between the two, keeps aliases', async (t) => {
  const { graph, clock } = openStores(t, tempDir(t));
  await graph.commit([
    { subject: 'Bob', relation: 'likes', object: 'tea', confidence: 0.6, sentence: 'Bob likes tea' },
    { subject: 'Bobby', relation: 'likes', object: 'tea', confidence: 0.9, sentence: 'Bobby likes tea' },
    { subject: 'Bobby', relation: 'owns', object: 'kayak' },
    { subject: 'Alice', relation: 'knows', object: 'Bobby' },
    { subject: 'Bobby', relation: 'same_as', object: 'Bob' },
    { subject: 'Bob', relation: 'lives_in', object: 'Oslo' },
  ]);
  clock.advance(HOUR);
  await graph.commit([{ subject: 'Bobby', relation: 'lives_in', object: 'Bergen' }]);
  graph.addAlias('Bobby', 'Robert');
  t.same(graph.merge('Bobby', 'nobody'), { merged: false, reason: 'not_found' });
  t.same(graph.merge('Bobby', 'bobby'), { merged: false, reason: 'same_entity' });
  const result = graph.merge('Bobby', 'Bob');
  t.match(result, { merged: true, relations_moved: 3, relations_folded: 1, relations_dropped: 1 });
  t.equal(graph.entity('Bobby')?.name, 'Bob', 'the old name is an alias now');
  t.equal(graph.entity('Robert')?.name, 'Bob', 'aliases move');
  t.equal(graph.entity('Bob')?.mention_count, 8, '3 mentions as Bob, 5 as Bobby');
  const rels = graph.relationsOf('Bob');
  t.same(rels.map(triple).sort(), ['Alice knows Bob', 'Bob likes tea', 'Bob lives_in Bergen', 'Bob owns kayak']);
  const likes = rels.find((r) => r.type === 'likes');
  t.match(likes, { confidence: 0.9, evidence_count: 2 });
  t.equal(graph.evidence([likes?.id as number]).get(likes?.id as number)?.length, 2, 'evidence of both is kept');
  t.same(
    graph.history('Bob', 'lives_in').map((r) => [r.target.name, r.valid_to]),
    [
      ['Bergen', null],
      ['Oslo', T0 + HOUR],
    ],
    'one current value of a single-valued type after the merge: the newest',
  );
});

t.test('delete entity, purge soft and hard, edit a relation', async (t) => {
  const { graph, clock } = openStores(t, tempDir(t));
  await graph.commit([
    { subject: 'spam bot', relation: 'says', object: 'buy now' },
    { subject: 'spam bot', relation: 'says', object: 'click here' },
    { subject: 'Alice', relation: 'likes', object: 'jazz', sentence: 'Alice likes jazz' },
    { subject: 'Alice', relation: 'likes', object: 'spam musubi' },
    { subject: 'Carol', relation: 'knows', object: 'spam bot' },
  ]);
  t.same(graph.deleteEntity('nobody'), { deleted: false });
  const deleted = graph.deleteEntity('Carol');
  t.match(deleted, { deleted: true, relations_removed: 1 });
  t.equal(graph.entity('Carol'), undefined);

  t.throws(() => graph.purge({}, 'soft'), ToolError, 'criteria are required');
  t.throws(() => graph.purge({ subject_contains: ' ' }, 'hard'), ToolError);
  clock.advance(HOUR);
  t.same(graph.purge({ subject_contains: 'SPAM' }, 'soft'), { relations: 2 });
  t.equal(graph.relationsOf('spam bot').length, 0);
  t.same(
    graph.relationsOf('spam bot', { history: true }).map((r) => r.valid_to),
    [T0 + HOUR, T0 + HOUR],
    'soft purge keeps history',
  );
  t.same(graph.purge({ subject_contains: 'spam' }, 'soft'), { relations: 0 }, 'nothing current left');
  t.same(graph.purge({ subject_contains: 'spam', relation_type: 'SAYS', target_contains: 'click' }, 'hard'), { relations: 1 });
  t.equal(graph.relationsOf('spam bot', { history: true }).length, 1, 'hard purge deletes history too');
  t.same(graph.purge({ target_contains: '%' }, 'hard'), { relations: 0 }, 'LIKE wildcards are literal');

  t.equal(await graph.editRelation({ subject: 'Alice', relation: 'likes', object: 'opera' }, { object: 'x' }), undefined);
  const edited = await graph.editRelation({ subject: 'alice', relation: 'likes', object: 'jazz' }, { object: 'Blues', confidence: 0.95 });
  t.equal(edited && triple(edited), 'Alice likes Blues');
  t.equal(edited?.confidence, 0.95);
  t.equal(edited?.sentence?.text, 'Alice likes jazz', 'provenance carries over');
  t.same(graph.relationsOf('Alice').map(triple).sort(), ['Alice likes Blues', 'Alice likes spam musubi']);
  await t.rejects(graph.editRelation({ subject: 'Alice', relation: 'likes', object: 'Blues' }, { object: 'alice' }), ToolError);
});

t.test('introspect, review of low-confidence relations, orphan sentences', async (t) => {
  const { graph } = openStores(t, tempDir(t));
  await graph.commit([
    { subject: 'home', relation: 'has', object: 'kitchen', confidence: 0.4, sentence: 's1' },
    { subject: 'home', relation: 'has', object: 'garage', confidence: 0.5, sentence: 's2' },
    { subject: 'home', relation: 'has', object: 'garden', confidence: 0.9 },
    { subject: 'kitchen', relation: 'has', object: 'toaster', confidence: 0.55 },
  ]);
  const stats = graph.introspect({ hotspots: 2 });
  t.match(stats, { entities: 5, relations_current: 4, relations_history: 0, sentences: 2, no_merge_marks: 0, stale_entity_vectors: 0 });
  t.same(stats.relation_types, [{ type: 'has', count: 4 }]);
  t.same(
    stats.hotspots.map((h) => [h.name, h.mention_count, h.degree]),
    [
      ['home', 3, 3],
      ['kitchen', 2, 2],
    ],
  );
  const low = graph.lowConfidenceRelations({ below: 0.6, limit: 2 });
  t.same(low.map(triple), ['home has kitchen', 'home has garage'], 'least confident first, limited');
  graph.markReviewed(low.map((r) => r.id));
  t.same(graph.lowConfidenceRelations().map(triple), ['kitchen has toaster'], 'reviewed ones are not proposed again');

  graph.purge({ target_contains: 'kitchen' }, 'hard');
  t.equal(graph.cleanupOrphanSentences(), 1);
  t.equal(graph.introspect().sentences, 1);
  t.same(graph.lookupSymbols(['s1'], 5), [], 'the trigram row went with it');
});

t.test('no-merge marks expire; similar pairs: threshold, limit 5, marks and types respected', async (t) => {
  const { graph, clock } = openStores(t, tempDir(t));
  await graph.commit([
    { subject: 'living room lamp', relation: 'in', object: 'den' },
    { subject: 'living-room lamp', relation: 'in', object: 'den' },
    { subject: 'Paris', relation: 'is', object: 'city', subject_type: 'place' },
    { subject: 'Paris', relation: 'x', object: 'y' },
  ]);
  await graph.commit([{ subject: 'Pariss', relation: 'is', object: 'person', subject_type: 'person' }]);
  const pairs = await graph.similarEntityPairs();
  t.same(
    pairs.map((p) => [p.a.name, p.b.name].sort()),
    [['living room lamp', 'living-room lamp']],
  );
  t.ok((pairs[0]?.similarity ?? 0) > 0.75);
  t.notOk(
    pairs.some((p) => p.a.name.startsWith('Paris')),
    'a place and a person are not proposed',
  );

  t.ok(graph.markNoMerge('living room lamp', 'living-room lamp', clock.now() + 2 * HOUR, 'different lamps'));
  t.notOk(graph.markNoMerge('living room lamp', 'nothing', clock.now() + HOUR));
  t.ok(graph.isNoMerge('living-room lamp', 'living room lamp'));
  t.same(await graph.similarEntityPairs(), [], 'marked pairs are not proposed');
  t.equal(graph.noMergeMarks()[0]?.reason, 'different lamps');
  t.equal(graph.introspect().no_merge_marks, 1);
  clock.advance(2 * HOUR);
  t.notOk(graph.isNoMerge('living-room lamp', 'living room lamp'), 'expired at expires_at');
  t.same(graph.noMergeMarks(), []);
  t.equal((await graph.similarEntityPairs()).length, 1, 'proposed again after expiry');
  t.equal(graph.expireNoMergeMarks(), 1);

  await graph.commit(Array.from({ length: 8 }, (_, i) => ({ subject: `sensor_${i}a`, relation: 'near', object: `sensor_${i}b` })));
  const many = await graph.similarEntityPairs({ threshold: 0.6 });
  t.equal(many.length, 5, 'at most 5 per tick');
  t.ok(
    many.every((p, i) => i === 0 || p.similarity <= (many[i - 1]?.similarity ?? 1)),
    'most similar first',
  );
  t.ok(
    (await graph.similarEntityPairs({ threshold: 0.99 })).every((p) => p.similarity > 0.99),
    'strictly above the threshold',
  );
});

t.test('exact duplicates merge without judgement: stale keys and alias clashes', async (t) => {
  const { graph, db } = openStores(t, tempDir(t));
  await graph.commit([
    { subject: 'Robert', relation: 'owns', object: 'boat' },
    { subject: 'Robert', relation: 'owns', object: 'car' },
    { subject: 'Bob', relation: 'likes', object: 'fishing' },
    { subject: 'Old Key', relation: 'owns', object: 'tent' },
    { subject: 'Kept Apart', relation: 'owns', object: 'kite' },
  ]);
  t.equal(graph.mergeExactDuplicates(), 0, 'nothing to merge');
  const robert = graph.entity('Robert')?.id as number;
  // Rows written under older rules: a name whose key changed, an alias naming another entity.
  db.prepare("UPDATE graph_entities SET name = 'ＲＯＢＥＲＴ' WHERE norm_name = 'old key'").run();
  db.prepare("INSERT INTO graph_aliases (norm_alias, alias, entity_id) VALUES ('bob', 'Bob', ?)").run(robert);
  db.prepare("UPDATE graph_entities SET name = 'robert' WHERE norm_name = 'kept apart'").run();
  t.ok(graph.markNoMerge('Robert', 'kept apart', T0 + HOUR));
  t.equal(graph.mergeExactDuplicates(), 2);
  t.same(
    graph
      .relationsOf('Robert')
      .map((r) => r.target.name)
      .sort(),
    ['boat', 'car', 'fishing', 'tent'],
  );
  t.ok(graph.entity('kept apart'), 'a no-merge mark is honoured');
});

t.test('argument checks; nlp triples commit as they are', async (t) => {
  const { graph } = openStores(t, tempDir(t));
  const fromNlp: Triple = {
    subject: '我',
    relation: '喜欢',
    object: '猫',
    confidence: 0.7,
    sentence: '我喜欢猫',
    method: 'personal',
    object_type: 'animal',
  };
  t.equal((await graph.commit([fromNlp], { source_event_id: 'e9' })).relations_created, 1);
  t.equal(graph.entity('猫')?.type, 'animal');
  t.same(graph.relationsOf('nobody'), []);
  t.same(graph.history('nobody', 'x'), []);
  t.same(graph.searchEntities('', 5), []);
  t.same(graph.neighbours(['nobody']), { entities: [], relations: [] });
  t.same(graph.entitiesById([]), []);
  t.same(graph.relationsById([]), []);
});

import t from 'tap';
import { DocumentStore } from '../../../src/memory/document-store.js';
import { ToolError } from '../../../src/shared/tool.js';
import { tempDir } from '../fixtures/support.js';
import { HOUR, ManualClock, openStores, openTestMemoryDb, T0, TestEmbedder, testIndexText } from './fixtures/memory-fixture.js';

t.test('insert and read back with provenance', async (t) => {
  const { documents, clock } = openStores(t, tempDir(t));
  const doc = await documents.insert({
    content: 'The boiler service is booked for Friday.',
    summary: 'boiler service',
    tags: ['home', 'maintenance'],
    source: 'doc_commit',
    source_event_ids: ['ev-1'],
    media_refs: ['receipt.pdf'],
    created_at: T0 - HOUR,
  });
  t.match(doc, {
    content: 'The boiler service is booked for Friday.',
    summary: 'boiler service',
    tags: ['home', 'maintenance'],
    source: 'doc_commit',
    source_event_ids: ['ev-1'],
    media_refs: ['receipt.pdf'],
    origin: null,
    created_at: T0 - HOUR,
    stored_at: clock.now(),
    last_access_at: null,
    access_count: 0,
  });
  t.same(
    documents.get([999, doc.id]).map((d) => d.id),
    [doc.id],
    'missing ids are left out',
  );
  await t.rejects(documents.insert({ content: ' ', source: 'doc_commit' }), ToolError);
  await t.rejects(documents.insert({ content: 'x', source: '' }), ToolError);
  const mediaOnly = await documents.insert({ content: '', source: 'context_archived', media_refs: ['cat.jpg'] });
  t.equal(mediaOnly.content, '', 'media alone is enough');
});

t.test('lexical search: BM25 over indexText tokens, best first; summary, tags and speaker are indexed', async (t) => {
  const { documents } = openStores(t, tempDir(t));
  const a = await documents.insert({ content: 'roses in the garden need water', source: 'doc_commit' });
  const b = await documents.insert({ content: 'roses roses garden garden roses water', source: 'doc_commit' });
  await documents.insert({ content: 'car insurance renewal', source: 'doc_commit' });
  const c = await documents.insert({ content: '明天去上海出差', summary: 'trip', tags: ['travel'], source: 'doc_commit' });
  const hits = documents.searchLexical('garden roses', 10);
  t.same(
    hits.map((h) => h.id),
    [b.id, a.id],
  );
  t.ok((hits[0]?.score ?? 0) > (hits[1]?.score ?? 0), 'scores are -bm25, higher is better');
  t.same(
    documents.searchLexical('上海', 5).map((h) => h.id),
    [c.id],
  );
  t.same(
    documents.searchLexical('travel', 5).map((h) => h.id),
    [c.id],
  );
  t.same(documents.searchLexical('"NOT* (', 5), [], 'FTS syntax in the query is inert');
  t.same(documents.searchLexical('', 5), []);
  t.equal(documents.searchLexical('roses', 1).length, 1, 'limit');
});

t.test('vectors: searched within one fingerprint; stale vectors are listed and re-embedded', async (t) => {
  const dir = tempDir(t);
  const clock = new ManualClock();
  const mem = openTestMemoryDb(t, dir, clock);
  const embedderA = new TestEmbedder({ tag: 'a' });
  const storeA = new DocumentStore({ database: mem.db, embedder: embedderA, indexText: testIndexText, clock, log: mem.log });
  const garden = await storeA.insert({ content: 'watering the garden roses', source: 'doc_commit' });
  await storeA.insert({ content: 'quarterly tax return', source: 'doc_commit' });
  const hits = storeA.searchVector(embedderA.embedOne('garden roses watering'), 2);
  t.equal(hits[0]?.id, garden.id);
  t.ok((hits[0]?.score ?? 0) > (hits[1]?.score ?? 1));
  t.equal(storeA.searchVector(embedderA.embedOne('garden roses watering'), 5, 0.99).length, 0, 'minScore');

  // The configured embedder changes: the old vectors are never compared with the new space.
  const embedderB = new TestEmbedder({ tag: 'b' });
  const storeB = new DocumentStore({ database: mem.db, embedder: embedderB, indexText: testIndexText, clock, log: mem.log });
  t.same(storeB.searchVector(embedderB.embedOne('garden roses watering'), 5), []);
  t.equal(storeB.staleVectorCount(), 2);
  t.same(
    storeB.staleVectors(1).map((s) => s.id),
    [garden.id],
    'stale vectors in id order, limited',
  );
  t.equal(await storeB.refreshStaleVectors(10), 2);
  t.equal(storeB.staleVectorCount(), 0);
  t.equal(storeB.searchVector(embedderB.embedOne('garden roses watering'), 1)[0]?.id, garden.id);
  t.equal(storeA.staleVectorCount(), 2, 'from A’s side they are now stale');

  // An embedder failure still stores the document, without a vector.
  embedderB.fail = true;
  const unembedded = await storeB.insert({ content: 'stored anyway', source: 'doc_commit' });
  t.same(
    storeB.staleVectors(10).map((s) => s.id),
    [unembedded.id],
  );
  t.equal(storeB.searchLexical('stored anyway', 1)[0]?.id, unembedded.id);
});

t.test('exact symbols: whole numbers, versions and identifiers only', async (t) => {
  const { documents } = openStores(t, tempDir(t));
  const port = await documents.insert({ content: '端口是 13010/13011 而非 12011', source: 'doc_commit' });
  const other = await documents.insert({ content: 'order 130105 shipped, uses node_red v1.2.3', source: 'doc_commit' });
  const age = await documents.insert({ content: '我今年42岁', source: 'doc_commit' });
  t.same(
    documents.searchSymbols(['13010'], 5).map((h) => h.id),
    [port.id],
    '13010 is not found inside 130105',
  );
  t.same(
    documents.searchSymbols(['v1.2'], 5).map((h) => h.id),
    [],
    'v1.2 is not v1.2.3',
  );
  t.same(
    documents.searchSymbols(['V1.2.3', 'NODE_RED'], 5).map((h) => ({ id: h.id, score: h.score })),
    [{ id: other.id, score: 2 }],
    'case-insensitive; score counts symbols',
  );
  t.same(
    documents.searchSymbols(['42'], 5).map((h) => h.id),
    [age.id],
    'Chinese characters are not symbol neighbours',
  );
  t.same(documents.searchSymbols(['4'], 5), [], 'one-character symbols are ignored');
});

t.test('access counts and cold documents: 72 h untouched, at most 2 accesses', async (t) => {
  const { documents, clock } = openStores(t, tempDir(t));
  const quiet = await documents.insert({ content: 'never read', source: 'doc_commit' });
  const twice = await documents.insert({ content: 'read twice', source: 'doc_commit' });
  const thrice = await documents.insert({ content: 'read three times', source: 'doc_commit' });
  documents.recordAccess([twice.id, thrice.id]);
  documents.recordAccess([twice.id, thrice.id, thrice.id]);
  documents.recordAccess([thrice.id]);
  t.equal(documents.get([twice.id])[0]?.access_count, 2);
  t.equal(documents.get([thrice.id])[0]?.access_count, 3, 'an id twice in one call counts once');
  t.equal(documents.get([thrice.id])[0]?.last_access_at, T0);

  clock.advance(72 * HOUR - 1);
  t.same(documents.coldDocuments(), [], '1 ms before 72 h nothing is cold');
  clock.advance(1);
  t.same(
    documents.coldDocuments().map((d) => d.id),
    [quiet.id, twice.id],
    'at 72 h: untouched ones with ≤ 2 accesses, oldest first',
  );
  t.same(
    documents.coldDocuments({ maxAccesses: 3, limit: 1 }).map((d) => d.id),
    [quiet.id],
  );
  documents.recordAccess([quiet.id]);
  t.same(
    documents.coldDocuments().map((d) => d.id),
    [twice.id],
    'an access restarts the 72 h',
  );
  clock.advance(72 * HOUR);
  t.same(
    documents.coldDocuments().map((d) => d.id),
    [twice.id, quiet.id],
  );
  t.same(
    documents.coldDocuments({ untouchedForMs: 1 }).map((d) => d.id),
    [twice.id, quiet.id],
  );
});

t.test('take consumes; markDistilled keeps the document as evidence and takes it out of the cold candidates', async (t) => {
  const { documents, graph, clock } = openStores(t, tempDir(t));
  const doc = await documents.insert({ content: 'Alice lives in Paris.', source: 'context_archived', source_event_ids: ['e1'] });
  const other = await documents.insert({ content: 'Bob likes tea.', source: 'context_archived' });
  clock.advance(72 * HOUR);
  t.same(
    documents.coldDocuments().map((d) => d.id),
    [doc.id, other.id],
  );

  t.equal(documents.markDistilled(12345, { sentence_ids: [1] }), 'not_found');
  const bob = await graph.commit([{ subject: 'Bob', relation: 'likes', object: 'tea', sentence: 'Bob likes tea.' }], {
    document_id: other.id,
  });
  t.equal(documents.markDistilled(doc.id, bob), 'not_linked', 'sentences of another document');
  t.same(documents.get([doc.id])[0]?.distilled_at, null, 'not linked: left undistilled');

  // A sentence linked to the document, but its relation is gone: nothing in the graph holds the content.
  const purged = await graph.commit([{ subject: 'Alice', relation: 'visited', object: 'Rome', sentence: 'Alice visited Rome.' }], {
    document_id: doc.id,
  });
  graph.purge({ relation_type: 'visited' }, 'hard');
  t.equal(documents.markDistilled(doc.id, purged), 'nothing_written');

  const alice = await graph.commit([{ subject: 'Alice', relation: 'lives_in', object: 'Paris', sentence: 'Alice lives in Paris.' }], {
    document_id: doc.id,
    source_event_id: 'e1',
  });
  t.equal(documents.markDistilled(doc.id, alice), 'linked');
  t.equal(documents.get([doc.id])[0]?.distilled_at, clock.now(), 'marked with the time');
  t.equal(documents.count(), 2, 'both documents are still there');
  t.same(
    documents.searchLexical('Paris', 5).map((h) => h.id),
    [doc.id],
    'still found by recall',
  );
  t.same(
    documents.coldDocuments().map((d) => d.id),
    [other.id],
    'a distilled document is no longer a cold candidate',
  );
  t.same(documents.documentsOfEvents(['e1', 'e404']), new Map([['e1', [doc.id]]]), 'documents by event');
  t.equal(graph.relationsOf('Alice')[0]?.sentence?.document_id, doc.id, 'the graph names the document it came from');

  const taken = documents.take([other.id, 999]);
  t.same(
    taken.map((d) => d.content),
    ['Bob likes tea.'],
  );
  t.equal(documents.count(), 1);
  t.same(documents.take([other.id]), []);
  t.same(documents.take([doc.id]).length, 1);
  t.same(documents.documentsOfEvents(['e1']), new Map(), 'a taken document no longer holds its events');
});

t.test('rebuildIndex re-tokenises every document; list pages in id order', async (t) => {
  const { documents } = openStores(t, tempDir(t));
  for (let i = 0; i < 5; i++) await documents.insert({ content: `note number${i}`, source: 'doc_commit' });
  t.equal(documents.rebuildIndex(), 5);
  t.equal(documents.searchLexical('number3', 5).length, 1);
  t.same(
    documents.list({ afterId: 2, limit: 2 }).map((d) => d.id),
    [3, 4],
  );
});

import t from 'tap';
import { HashEmbedder } from '../../../src/embed/hash-embedder.js';
import { bm25Scores, fuseRrf, fuseWeighted, MemoryRecall } from '../../../src/memory/recall.js';
import { tempDir } from '../fixtures/support.js';
import { openStores, T0, testIndexText } from './fixtures/memory-fixture.js';

const MINUTE = 60_000;

const tokens = (text: string) => testIndexText(text).split(' ').filter(Boolean);

t.test('fusion arithmetic', async (t) => {
  const ranked = new Map([
    [
      'lexical',
      [
        { key: 'a', score: 10 },
        { key: 'b', score: 5 },
      ],
    ],
    ['symbol', [{ key: 'b', score: 1 }]],
  ] as const);
  const rrf = fuseRrf(ranked as never);
  t.equal(rrf[0]?.[0], 'b', 'found by two paths beats first place in one');
  t.ok(Math.abs((rrf[0]?.[1] ?? 0) - (1 / 62 + 1.2 / 61)) < 1e-12, 'weighted by path');
  const weighted = fuseWeighted(ranked as never);
  t.same(
    weighted.map(([key]) => key),
    ['b', 'a'],
    'found by two paths',
  );
  t.same(bm25Scores([], [['x']]), [0]);
  const scores = bm25Scores(['lamp'], [['lamp', 'kitchen'], ['door'], ['lamp', 'lamp']]);
  t.ok((scores[2] ?? 0) > (scores[0] ?? 0) && scores[1] === 0, 'term frequency counts, absent terms score nothing');
});

t.test('recall finds archived and recent memories with their provenance, widens with neighbours, and abstains', async (t) => {
  // The real hashed embedder: abstention depends on how unrelated texts score.
  const s = openStores(t, tempDir(t), { maxSize: 12, embedder: new HashEmbedder() as never });
  const said = [
    'Anna: we bought a red bicycle for Tom',
    'Ben: nice, where did you buy it',
    'Anna: at the market on Saturday',
    'Ben: the heating is broken again',
    'Anna: call the plumber on Monday',
  ];
  for (let i = 0; i < 20; i++) {
    const text = said[i] ?? `Anna: small talk number ${i} about the weather`;
    s.window.append({
      id: `ev-${i}`,
      // One sitting: turns a minute apart (widening stays within a conversation).
      timestamp: T0 + i * MINUTE,
      source: 'chat',
      channel: 'family',
      peer: text.split(':')[0] ?? '',
      input: text,
    });
  }
  await s.window.prune('weather');
  t.ok(s.documents.count() > 0, 'older events were archived to documents');
  const recall = new MemoryRecall({
    window: s.window,
    documents: s.documents,
    graph: s.graph,
    embedder: s.embedder,
    tokens,
    itemChars: 200,
  });

  const bicycle = await recall.recall('red bicycle', 3);
  t.equal(bicycle.abstain, false);
  const first = bicycle.items[0];
  t.ok(first?.sources.includes('ev-0'), 'the archived turn is found, with its event id');
  t.match(first?.text, /red bicycle/);
  t.ok(first?.sources.includes('ev-1'), 'widened with the turn after it');
  t.ok((first?.text.length ?? 0) <= 200, 'within the item budget');

  const recent = await recall.recall('weather number 19', 3);
  t.ok(
    recent.items.some((item) => item.sources.includes('ev-19')),
    'events still in the window are recalled too',
  );

  const never = await recall.recall('zebra quantum saxophone', 3);
  t.same(never, { items: [], abstain: true }, 'nothing relevant: abstain instead of offering noise');
});

t.test('a fact from the graph votes for the document it was said in; the list keeps one character budget', async (t) => {
  const s = openStores(t, tempDir(t), { maxSize: 11, embedder: new HashEmbedder() as never });
  const lines = Array.from({ length: 40 }, (_, i) => `turn ${i} ${'filler words '.repeat(8)}`);
  lines[5] = 'Dana moved to Lisbon last spring';
  for (const [i, text] of lines.entries()) {
    s.window.append({ id: `ev-${i}`, timestamp: T0 + i * MINUTE, source: 'chat', channel: 'family', peer: 'Dana', input: text });
  }
  await s.window.prune('filler');
  await s.graph.commit([{ subject: 'Dana', relation: 'lives_in', object: 'Lisbon', sentence: 'Dana moved to Lisbon last spring' }], {
    source_event_id: 'ev-5',
    timestamp: T0 + 5 * MINUTE,
  });
  const graphOnly = new MemoryRecall({
    window: s.window,
    documents: s.documents,
    graph: s.graph,
    embedder: s.embedder,
    tokens,
    paths: ['graph'],
  });
  const found = await graphOnly.recall('Lisbon', 3);
  t.equal(found.items[0]?.kind, 'document', 'the fact is answered with the document that holds its event');
  t.ok(found.items[0]?.sources.includes('ev-5'));
  t.match(found.items[0]?.text, /Dana: Dana moved to Lisbon|Dana moved to Lisbon/);

  const budgeted = new MemoryRecall({
    window: s.window,
    documents: s.documents,
    graph: s.graph,
    embedder: s.embedder,
    tokens,
    charsPerItem: 200,
    itemChars: 600,
  });
  const many = await budgeted.recall('turn filler words', 5);
  t.equal(many.items.length, 5);
  const total = many.items.reduce((sum, item) => sum + item.text.length, 0);
  t.ok(total <= 5 * 200 + 150, `the list stays within its budget (${total})`);
  t.ok((many.items[0]?.sources.length ?? 0) > 1, 'the best hit is widened');
  t.ok(
    many.items.every((item) => item.text.length <= 600),
    'no item beyond its own limit',
  );
});

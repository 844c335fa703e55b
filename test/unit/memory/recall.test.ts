import t from 'tap';
import { HashEmbedder } from '../../../src/embed/hash-embedder.js';
import { bm25Scores, fuseRrf, fuseWeighted, MemoryRecall } from '../../../src/memory/recall.js';
import { tempDir } from '../fixtures/support.js';
import { HOUR, openStores, T0, testIndexText } from './fixtures/memory-fixture.js';

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
    ['window', [{ key: 'b', score: 1 }]],
  ] as const);
  const rrf = fuseRrf(ranked as never);
  t.equal(rrf[0]?.[0], 'b', 'found by two paths beats first place in one');
  t.ok(Math.abs((rrf[0]?.[1] ?? 0) - (1 / 62 + 1 / 61)) < 1e-12);
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
      timestamp: T0 + i * HOUR,
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

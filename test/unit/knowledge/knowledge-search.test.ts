import t from 'tap';
import { fuse, HASH_EMBEDDER_WEIGHTS, MODEL_EMBEDDER_WEIGHTS, weightsFor } from '../../../src/knowledge/knowledge-search.js';
import { openKnowledge } from './fixtures/knowledge-fixture.js';

t.test('fusion: each path divided by its best, weighted, non-positive scores left out', async (t) => {
  const fused = fuse(
    [
      { id: 1, score: 10 },
      { id: 2, score: 5 },
    ],
    [
      { id: 2, score: 0.8 },
      { id: 3, score: 0.4 },
      { id: 4, score: -0.2 },
    ],
    { lexical: 0.5, vector: 0.5 },
  );
  t.same(
    fused.map((f) => [f.id, f.lexical, f.vector, f.score]),
    [
      [1, 1, 0, 0.5],
      [2, 0.5, 1, 0.75],
      [3, 0, 0.5, 0.25],
    ],
  );
  t.same(fuse([], [{ id: 1, score: -0.1 }], { lexical: 1, vector: 1 }), [], 'no positive score: nothing');
  t.same(weightsFor('hash-ngram-v1-384'), HASH_EMBEDDER_WEIGHTS);
  t.same(weightsFor('onnx:abc:384:mean:norm'), MODEL_EMBEDDER_WEIGHTS);
});

t.test('search: top_k, ties by name, category and below, paths, snippets', async (t) => {
  const { kb } = await openKnowledge(t, { settings: { top_k: 2 } });
  for (const name of ['d/same', 'b/same', 'c/same', 'a/same']) await kb.create(name, 'identical text about the kettle descaling routine');
  t.same(
    (await kb.search('kettle descaling', { top_k: 10, paths: ['lexical'] })).map((h) => h.name),
    ['a/same', 'b/same', 'c/same', 'd/same'],
    'equal scores (the same words; the names differ only in letters the analyser drops) are ordered by name',
  );
  t.equal((await kb.search('kettle')).length, 2, 'top_k defaults to core.knowledge.top_k');
  t.equal((await kb.search('kettle', { top_k: 1000 })).length, 4, 'top_k is capped, not refused');
  t.same(await kb.search('kettle', { top_k: 0 }), []);
  t.same(await kb.search('   '), [], 'an empty query finds nothing');
  t.same(await kb.search('zebra saxophone quantum'), [], 'a question about nothing in the library finds nothing');
  t.same(await kb.search('"NOT* (', { paths: ['lexical'] }), [], 'FTS syntax in a query is inert');

  await kb.create('tech/go/generics', 'Type parameters let a Go function work on many types.');
  await kb.create('tech/rust/generics', 'Rust generics are monomorphised at compile time.');
  await kb.create('tech_notes/generics', 'A category whose name starts like "tech" is not below it.');
  const inTech = (await kb.search('generics', { category: 'Tech', top_k: 10 })).map((h) => h.name);
  t.same([...inTech].sort(), ['tech/go/generics', 'tech/rust/generics'], 'the category and below, nothing beside it');
  t.same(
    (await kb.search('generics', { category: 'tech/go', top_k: 10 })).map((h) => h.name),
    ['tech/go/generics'],
  );
  const vectorInCategory = await kb.search('monomorphised compile', { category: 'tech/rust', paths: ['vector'], top_k: 10 });
  t.same(
    vectorInCategory.map((h) => h.name),
    ['tech/rust/generics'],
    'the vector path honours the category',
  );

  t.same(await kb.search('qwertyuiop', { paths: ['lexical'] }), [], 'no word matches: no lexical hit');
  const byMeaning = await kb.search('monomorphized', { paths: ['vector'], top_k: 1 });
  t.equal(byMeaning[0]?.name, 'tech/rust/generics', 'the vector path finds another spelling');
  t.same(await kb.search('monomorphized', { paths: ['lexical'] }), [], 'which the lexical path does not');
  const hybrid = await kb.search('monomorphized', { top_k: 1 });
  t.equal(hybrid[0]?.name, 'tech/rust/generics', 'hybrid has both');
  t.ok(hybrid[0] && hybrid[0].score > 0 && hybrid[0].score <= 1, 'fused scores are within 0..1');

  const long = `${'Intro words that are not relevant. '.repeat(20)}The water heater pilot light is relit with the red button. ${'More filler text here. '.repeat(20)}`;
  await kb.create('house/heater', long);
  const [heater] = await kb.search('pilot light', { paths: ['lexical'] });
  t.equal(heater?.name, 'house/heater');
  t.match(heater?.snippet, /^….*pilot light is relit.*…$/, 'the snippet shows where the word matched');
  t.ok(Array.from(heater?.snippet ?? '').length <= 162, 'about 160 characters');
});

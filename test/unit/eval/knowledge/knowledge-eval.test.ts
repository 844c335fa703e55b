/**
 * The knowledge search evaluation on the 1,000-entry household library of
 * test/fixtures/knowledge: lexical-only against hybrid (the issue requires hybrid ≥ lexical), each
 * path above a floor measured on this set minus a margin, so a broken index or a broken vector
 * path fails here. The evaluation arithmetic and the generator are checked first.
 */
import { join } from 'node:path';
import t from 'tap';
import {
  type EvalFigures,
  evaluateKnowledge,
  evaluatePaths,
  fuseHits,
  recallAt,
  reciprocalRank,
  sweepWeights,
} from '../../../../src/eval/knowledge/knowledge-eval.js';
import type { KnowledgeHit } from '../../../../src/knowledge/types.js';
import { buildLibrary, writeLibrary } from '../../../fixtures/knowledge/library.mjs';
import { tempDir } from '../../fixtures/support.js';
import { openKnowledge } from '../../knowledge/fixtures/knowledge-fixture.js';

// Measured on seed 1 with the hash embedder: lexical 0.923, vector only 0.801, hybrid 0.934 (weights
// 0.9/0.1). The margins leave room for tokenizer and scoring changes that move a few queries, not
// for a path that stopped working: without the lexical path hybrid falls to about 0.80, and without
// the vector path the vector floor fails.
const FLOOR = { lexical: 0.88, vector: 0.72, hybrid: 0.88, hybridRecall: 0.9 };

const hit = (name: string, score: number): KnowledgeHit => ({ name, category: '', score, snippet: '' });
const describe = (f: EvalFigures) =>
  `MRR@10 ${f.mrr.toFixed(3)}, recall@5 ${f.recall.toFixed(3)}, hit@1 ${f.hit_at_1.toFixed(3)}, p50 ${f.p50_ms.toFixed(1)} ms, p95 ${f.p95_ms.toFixed(1)} ms (${f.queries} queries)`;

t.test('reciprocal rank and recall count the first right entry within the cut', async (t) => {
  t.equal(reciprocalRank(['a', 'b', 'c'], ['c'], 10), 1 / 3);
  t.equal(reciprocalRank(['a', 'b', 'c'], ['c', 'b'], 10), 1 / 2, 'the first right entry counts, whichever of the expected it is');
  t.equal(reciprocalRank(['a', 'b', 'c'], ['c'], 2), 0, 'beyond k is a miss');
  t.equal(reciprocalRank([], ['a'], 10), 0);
  t.equal(recallAt(['a', 'b', 'c'], ['a', 'c', 'z'], 3), 2 / 3);
  t.equal(recallAt(['a', 'b', 'c'], ['c'], 2), 0);
});

t.test('fusion divides each path by its best, weights them and breaks ties by name', async (t) => {
  const lexical = [hit('x', 10), hit('b', 5), hit('a', 5)];
  const vector = [hit('a', 0.8), hit('c', 0.4)];
  // x 0.5, a 0.25+0.5, b 0.25, c 0.25: b and c tie and go by name.
  t.same(fuseHits(lexical, vector, { lexical: 0.5, vector: 0.5 }), ['a', 'x', 'b', 'c']);
  t.same(fuseHits(lexical, vector, { lexical: 1, vector: 0 }), ['x', 'a', 'b'], 'a zero weight adds nothing');
  t.same(fuseHits([], [], { lexical: 1, vector: 1 }), []);
});

t.test('the evaluation asks with the paths given and scores each query', async (t) => {
  const asked: Array<{ query: string; paths: unknown; top_k: unknown }> = [];
  const kb = {
    async search(query: string, options: { paths?: readonly string[]; top_k?: number } = {}) {
      asked.push({ query, paths: options.paths, top_k: options.top_k });
      return query === 'one' ? [hit('b', 2), hit('a', 1)] : [hit('z', 1)];
    },
  };
  let clock = 0;
  const queries = [
    { id: 'q1', query: 'one', expected: ['a'], lang: 'en', kind: 'exact' },
    { id: 'q2', query: 'two', expected: ['a'], lang: 'zh', kind: 'exact' },
  ];
  const run = await evaluatePaths(kb, queries, ['lexical'], { now: () => (clock += 2) });
  t.same(
    asked.map((a) => a.paths),
    [['lexical'], ['lexical']],
  );
  t.equal(asked[0]?.top_k, 10, 'asks for as many as MRR looks at');
  t.same(
    run.scores.map((s) => [s.id, s.rank, s.recall]),
    [
      ['q1', 2, 1],
      ['q2', null, 0],
    ],
  );
  t.equal(run.overall.mrr, 0.25);
  t.equal(run.overall.hit_at_1, 0);
  t.equal(run.overall.p95_ms, 2, 'latency comes from the injected clock');
  t.same(Object.keys(run.groups), ['kind:exact', 'lang:en', 'lang:zh']);
  t.equal(run.groups['lang:en']?.mrr, 0.5);
  const both = await evaluateKnowledge(kb, queries);
  t.equal(both.hybrid.paths, 'default');
  t.equal(asked.at(-1)?.paths, undefined, 'hybrid is the search as callers get it');
  await t.rejects(evaluatePaths(kb, [], undefined), { code: 'HA_ERR_EVAL_DATA' });
  await t.rejects(evaluatePaths(kb, [{ id: 'x', query: 'q', expected: [] }], undefined), { code: 'HA_ERR_EVAL_DATA' });
  await t.rejects(
    evaluatePaths(
      kb,
      [
        { id: 'x', query: 'q', expected: ['a'] },
        { id: 'x', query: 'r', expected: ['a'] },
      ],
      undefined,
    ),
    { code: 'HA_ERR_EVAL_DATA', message: /used twice/ },
  );
});

t.test('the generated library: same for a seed, distinct names, every expected entry present', async (t) => {
  const a = buildLibrary();
  const b = buildLibrary();
  t.equal(a.entries.length, 1000);
  t.same(a.entries, b.entries, 'deterministic');
  t.not(JSON.stringify(buildLibrary({ seed: 2 }).entries), JSON.stringify(a.entries), 'another seed, another library');
  const names = new Set(a.entries.map((e) => e.name));
  t.equal(names.size, a.entries.length, 'names are distinct');
  // An entry directory must never be a category of another entry.
  const categories = new Set(a.entries.flatMap((e) => e.name.split('/').map((_, i, parts) => parts.slice(0, i).join('/'))));
  t.same(
    [...names].filter((n) => categories.has(n)),
    [],
  );
  t.ok(a.queries.length >= 60, `${a.queries.length} queries`);
  const zh = a.queries.filter((q) => q.lang === 'zh').length;
  t.ok(zh >= a.queries.length * 0.4 && zh <= a.queries.length * 0.6, `about half Chinese (${zh} of ${a.queries.length})`);
  for (const kind of ['exact', 'paraphrase', 'variant'] as const)
    t.ok(a.queries.filter((q) => q.kind === kind).length >= 15, `${kind} queries`);
  t.same(
    a.queries.flatMap((q) => q.expected).filter((e) => !names.has(e)),
    [],
    'every expected entry is in the library',
  );
  t.equal(buildLibrary({ size: 5000 }).entries.length, 5000, 'room for the benchmark size');
});

t.test('on the 1,000-entry library hybrid search is at least as good as lexical search', async (t) => {
  const dataDir = tempDir(t, 'ha-kb-eval-');
  const library = buildLibrary();
  writeLibrary(join(dataDir, 'knowledge'), library.entries);
  const { kb } = await openKnowledge(t, { dataDir });
  const stats = kb.stats();
  t.equal(stats.entries, 1000, 'every file indexed');
  t.ok(stats.dense.ready, 'every entry has a vector');

  const result = await evaluateKnowledge(kb, library.queries);
  const vector = await evaluatePaths(kb, library.queries, ['vector']);
  t.comment(`lexical: ${describe(result.lexical.overall)}`);
  t.comment(`vector:  ${describe(vector.overall)}`);
  t.comment(`hybrid:  ${describe(result.hybrid.overall)}`);
  for (const [group, figures] of Object.entries(result.hybrid.groups)) {
    t.comment(`  ${group}: lexical ${result.lexical.groups[group]?.mrr.toFixed(3)}, hybrid ${figures.mrr.toFixed(3)}`);
  }
  const missed = result.hybrid.scores.filter((s) => s.rank === null).map((s) => s.id);
  t.comment(`hybrid misses (not in the top 10): ${missed.join(', ') || 'none'}`);

  t.ok(
    result.hybrid.overall.mrr >= result.lexical.overall.mrr,
    `hybrid MRR ${result.hybrid.overall.mrr.toFixed(4)} >= lexical MRR ${result.lexical.overall.mrr.toFixed(4)}`,
  );
  t.ok(result.lexical.overall.mrr >= FLOOR.lexical, `lexical MRR above ${FLOOR.lexical}`);
  t.ok(vector.overall.mrr >= FLOOR.vector, `vector MRR above ${FLOOR.vector}`);
  t.ok(result.hybrid.overall.mrr >= FLOOR.hybrid, `hybrid MRR above ${FLOOR.hybrid}`);
  t.ok(result.hybrid.overall.recall >= FLOOR.hybridRecall, `hybrid recall@5 above ${FLOOR.hybridRecall}`);

  // What the weights of the fusion are chosen from; printed for whoever tunes them.
  const sweep = await sweepWeights(
    kb,
    library.queries,
    [1, 0.9, 0.85, 0.8, 0.7, 0.6, 0.5, 0].map((l) => ({ lexical: l, vector: Math.round((1 - l) * 100) / 100 })),
  );
  t.comment(`weights (lexical/vector → MRR): ${sweep.map((s) => `${s.lexical}/${s.vector} → ${s.mrr.toFixed(3)}`).join(', ')}`);
  const lexicalOnly = sweep[0];
  t.equal(lexicalOnly?.mrr.toFixed(6), result.lexical.overall.mrr.toFixed(6), 'the sweep fuses as the search does');
});

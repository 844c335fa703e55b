import t from 'tap';
import { jaccard, nameBigrams, normalizeName, normalizeRelationType } from '../../../src/memory/graph-names.js';

t.test('names normalise to one key', async (t) => {
  for (const name of ['Alice', ' alice ', '「Alice」', 'ＡＬＩＣＥ', '"alice".', '《alice》']) t.equal(normalizeName(name), 'alice', name);
  t.equal(normalizeName('Living   Room\tLamp'), 'living room lamp');
  t.equal(normalizeName('北京。'), '北京');
  t.equal(normalizeName('C++'), 'c++', 'inner symbols stay');
  t.equal(normalizeName('...'), '');
});

t.test('relation types', async (t) => {
  t.equal(normalizeRelationType(' Lives in '), 'lives_in');
  t.equal(normalizeRelationType('works-at'), 'works_at');
  t.equal(normalizeRelationType('住在'), '住在');
});

t.test('bigram Jaccard', async (t) => {
  t.same([...nameBigrams('小明')], ['小明']);
  t.same([...nameBigrams('a')], ['a']);
  t.same([...nameBigrams('ab c')].sort(), ['ab', 'bc']);
  t.equal(jaccard(nameBigrams('abcd'), nameBigrams('abcd')), 1);
  t.equal(jaccard(nameBigrams('abcd'), nameBigrams('abce')), 0.5, '{ab,bc} shared of {ab,bc,cd,ce}');
  t.equal(jaccard(new Set(), new Set()), 0);
});

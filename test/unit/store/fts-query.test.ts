import t from 'tap';
import { ftsMatchQuery } from '../../../src/store/fts-query.js';

t.test('FTS queries quote every term and drop empty ones', async (t) => {
  t.equal(ftsMatchQuery('garden roses garden'), '"garden" OR "roses"');
  t.equal(ftsMatchQuery('say "hi" NOT *'), '"say" OR """hi""" OR "NOT"');
  t.equal(ftsMatchQuery('  '), undefined);
  t.equal(ftsMatchQuery('- * ()'), undefined);
  t.equal(ftsMatchQuery('a b c d', 2), '"a" OR "b"');
});

/**
 * The BM25 baseline on the real LoCoMo development conversations, read from ../shared/data (never
 * copied into the repository). Only sanity is asserted; the figures are printed for the record.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { Bm25Memory } from '../../../../src/eval/memory/bm25.js';
import { reportTable } from '../../../../src/eval/memory/report.js';
import { runMemoryEval } from '../../../../src/eval/memory/run-memory-eval.js';

const LOCOMO_DEV = fileURLToPath(new URL('../../../../../shared/data/locomo-dev', import.meta.url));
const absent = existsSync(LOCOMO_DEV) ? false : `no LoCoMo data at ${LOCOMO_DEV}`;

t.test('the BM25 baseline on locomo-dev', { skip: absent }, async (t) => {
  const result = await runMemoryEval({ dir: LOCOMO_DEV, ks: [5, 10], memoryFactory: () => new Bm25Memory(), memoryName: 'bm25-again' });
  t.comment(`\n${reportTable(result)}`);
  t.ok(result.conversations.length > 0, 'conversations loaded');
  t.ok(result.questions > 0, `${result.questions} questions`);
  for (const c of result.conversations) t.ok(c.questions > 0 && c.turns > 0, `${c.id}: ${c.turns} turns, ${c.questions} questions`);
  for (const k of ['5', '10']) {
    const recall = result.baseline.by_k[k]?.overall.recall ?? 0;
    t.ok(recall > 0 && recall <= 1, `baseline recall@${k} = ${recall.toFixed(3)}`);
    t.equal(result.memory.by_k[k]?.overall.recall, recall, 'the same baseline run as "memory" scores the same');
  }
  t.ok(
    (result.baseline.by_k['10']?.overall.recall ?? 0) >= (result.baseline.by_k['5']?.overall.recall ?? 0),
    'recall does not fall as k grows',
  );
});

import t from 'tap';
import type { RecalledItem } from '../../../../src/eval/memory/eval-memory.js';
import { reportJson, reportTable } from '../../../../src/eval/memory/report.js';
import { runMemoryEval } from '../../../../src/eval/memory/run-memory-eval.js';
import { tempDir } from '../../fixtures/support.js';
import { syntheticConversation, TableMemory, writeConversation } from './fixtures/synthetic-locomo.js';

async function perfectRun(t: Parameters<typeof tempDir>[0]) {
  const dir = writeConversation(tempDir(t), 'conv-a', syntheticConversation());
  const fact = (sources: string[]): RecalledItem => ({ text: 'ten chars.', sources });
  const memory = new TableMemory({
    'Which kitten did Alice adopt?': [fact(['conv-a/D1:1'])],
    'Clay bowl maker moved to which city?': [fact(['conv-a/D2:1', 'conv-a/D1:2'])],
    'When did Bob start baking bread?': [fact(['conv-a/D2:3'])],
    'Does anyone enjoy skiing?': [fact(['conv-a/D1:3'])],
  });
  return runMemoryEval({ dir, ks: [1, 2], memoryFactory: () => memory, memoryName: 'perfect' });
}

t.test('the JSON report carries figures per k, category and overall, ratios, and details on request', async (t) => {
  const result = await perfectRun(t);
  const json = JSON.parse(reportJson(result)) as Record<string, unknown> & typeof result;
  t.same(json.ks, [1, 2]);
  t.equal(json.questions, 4);
  t.equal(json.per_conversation, true);
  t.same(Object.keys(json.memory.by_k), ['1', '2']);
  t.same(Object.keys(json.memory.by_k['1']?.by_category ?? {}), ['1', '2', '3', '4']);
  t.match(json.memory.by_k['1']?.overall, { questions: 4, recall: 1, mean_chars: 10 });
  t.match(json.baseline.by_k['1']?.overall, { questions: 4, recall: 0.625 });
  t.equal(json.ratio['1']?.overall.recall, 1.6);
  t.equal(json.ratio['1']?.by_category['3']?.recall, null);
  t.equal(json.warnings.length, 2);
  t.notOk('details' in json, 'per-question details only on request');
  const detailed = JSON.parse(reportJson(result, { details: true })) as typeof result;
  t.equal(detailed.details.length, 4);
  t.same(detailed.details[1]?.evidence, ['conv-a/D1:2', 'conv-a/D2:1']);
  t.equal(json.ratio['2']?.overall.recall, 1.3333, 'fractions are rounded to 4 decimals');
  t.equal(result.ratio['2']?.overall.recall, 1 / 0.75, 'the result itself keeps full precision');
});

t.test('the table has a row per category and overall for each k, memory beside the baseline', async (t) => {
  const result = await perfectRun(t);
  const text = reportTable(result);
  const lines = text.split('\n');
  t.match(
    lines[0],
    /^LoCoMo retrieval: 1 conversation, 6 turns, 4 questions of categories 1–4 \(skipped: 1 adversarial, 2 without evidence\); each conversation in a fresh memory$/,
  );
  t.match(lines[1], /^perfect: ingested 6 turns in [\d.]+ ms, settled in [\d.]+ ms$/);
  t.match(lines[2], /^bm25: ingested 6 turns/);
  const header = lines[4] ?? '';
  t.match(
    header,
    /^\s*k\s+category\s+n\s+recall perfect\s+bm25\s+×\s+chars perfect\s+bm25\s+×\s+p50 ms perfect\s+bm25\s+p95 ms perfect\s+bm25$/,
  );
  const rows = lines.slice(5, 15).map((line) => line.trim().split(/\s{2,}/));
  t.same(
    rows.map((r) => r.slice(0, 9)),
    [
      ['1', '1 multi-hop', '1', '1.000', '0.500', '2.00', '10', '37', '0.27'],
      ['1', '2 temporal', '1', '1.000', '1.000', '1.00', '10', '31', '0.32'],
      ['1', '3 open-domain', '1', '1.000', '0.000', '—', '10', '0', '—'],
      ['1', '4 single-hop', '1', '1.000', '1.000', '1.00', '10', '48', '0.21'],
      ['1', 'all', '4', '1.000', '0.625', '1.60', '10', '29', '0.34'],
      ['2', '1 multi-hop', '1', '1.000', '1.000', '1.00', '10', '104', '0.10'],
      ['2', '2 temporal', '1', '1.000', '1.000', '1.00', '10', '68', '0.15'],
      ['2', '3 open-domain', '1', '1.000', '0.000', '—', '10', '0', '—'],
      ['2', '4 single-hop', '1', '1.000', '1.000', '1.00', '10', '73', '0.14'],
      ['2', 'all', '4', '1.000', '0.750', '1.33', '10', '61', '0.16'],
    ],
  );
  t.ok(
    rows.every((r) => r.length === 13),
    'every row has the latency columns',
  );
  t.match(text, /2 data warnings:\n {2}.*"D:2:03" read as D2:3\n {2}.*"D9:9" is not a turn/);
});

t.test('the table lists at most five warnings', async (t) => {
  const result = await perfectRun(t);
  result.warnings = Array.from({ length: 8 }, (_, i) => `warning ${i}`);
  const text = reportTable(result);
  t.match(text, /8 data warnings:\n {2}warning 0\n.*\n {2}warning 4\n {2}… 3 more in the JSON output\n$/s);
  t.notMatch(text, /warning 5/);
});

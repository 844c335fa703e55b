import t, { type Test } from 'tap';
import { Bm25Memory } from '../../../../src/eval/memory/bm25.js';
import { EVAL_ERROR_CODE } from '../../../../src/eval/memory/eval-error.js';
import type { EvalMemory, EvalScope, RecalledItem } from '../../../../src/eval/memory/eval-memory.js';
import { normaliseKs, parseKs, runMemoryEval } from '../../../../src/eval/memory/run-memory-eval.js';
import { expectError, expectErrorAsync, tempDir } from '../../fixtures/support.js';
import { syntheticConversation, TableMemory, TURN_TEXT, writeConversation } from './fixtures/synthetic-locomo.js';

const Q = {
  kitten: 'Which kitten did Alice adopt?',
  city: 'Clay bowl maker moved to which city?',
  bread: 'When did Bob start baking bread?',
  skiing: 'Does anyone enjoy skiing?',
};

const chars = (...ids: Array<keyof typeof TURN_TEXT>) => ids.reduce((sum, id) => sum + TURN_TEXT[id].length, 0);

function syntheticDir(t: Test): string {
  return writeConversation(tempDir(t), 'conv-a', syntheticConversation());
}

t.test('the BM25 baseline scores exactly as worked out by hand on the synthetic conversation', async (t) => {
  const result = await runMemoryEval({ dir: syntheticDir(t), ks: [2, 1], memoryFactory: () => new Bm25Memory() });
  t.same(result.ks, [1, 2], 'ks are sorted');
  t.equal(result.questions, 4);
  // k = 1: kitten → D1:1 (1); city → D2:1, the shorter of two two-term turns (½ of D1:2 + D2:1);
  // bread → D2:3 (1); skiing matches no turn (0).
  const k1 = result.baseline.by_k['1'];
  t.same(k1?.overall, {
    questions: 4,
    recall: 2.5 / 4,
    mean_chars: chars('D1:1', 'D2:1', 'D2:3') / 4,
    p50_ms: k1?.overall.p50_ms,
    p95_ms: k1?.overall.p95_ms,
  });
  t.same(Object.fromEntries(Object.entries(k1?.by_category ?? {}).map(([c, f]) => [c, [f.questions, f.recall]])), {
    1: [1, 0.5],
    2: [1, 1],
    3: [1, 0],
    4: [1, 1],
  });
  // k = 2: kitten adds D1:3 (the shorter "alice" turn), city adds D1:2, bread adds D2:1 ("bob").
  const k2 = result.baseline.by_k['2'];
  t.equal(k2?.overall.recall, 3 / 4);
  t.equal(k2?.overall.mean_chars, chars('D1:1', 'D1:3', 'D2:1', 'D1:2', 'D2:3', 'D2:1') / 4);
  const city = result.details.find((d) => d.question === Q.city);
  t.same(city?.baseline['1'], { recall: 0.5, chars: chars('D2:1'), ms: city?.baseline['1']?.ms, found: ['conv-a/D2:1'] });
  t.same(city?.baseline['2']?.found, ['conv-a/D1:2', 'conv-a/D2:1']);
  t.same(result.conversations, [
    { id: 'conv-a', file: result.conversations[0]?.file, sessions: 2, turns: 6, questions: 4, skipped: { adversarial: 1, no_evidence: 2 } },
  ]);
  t.equal(result.warnings.length, 2);
  t.equal(result.memory.name, 'memory');
  t.equal(result.baseline.name, 'bm25');
  t.same(result.ratio['1']?.overall.recall, 1, 'BM25 against itself');
});

t.test('a perfect memory scores 1 and an empty one 0, with the items cut to k', async (t) => {
  const dir = syntheticDir(t);
  const fact = (sources: string[]): RecalledItem => ({ text: 'ten chars.', sources });
  // One item may carry several sources (a fact distilled from two turns); extra items beyond k are cut.
  const perfect = new TableMemory({
    [Q.kitten]: [fact(['conv-a/D1:1']), fact(['conv-a/D9:9'])],
    [Q.city]: [fact(['conv-a/D2:1', 'conv-a/D1:2'])],
    [Q.bread]: [fact(['conv-a/D2:3'])],
    [Q.skiing]: [fact(['conv-a/D1:3'])],
  });
  const result = await runMemoryEval({ dir, ks: [1, 5], memoryFactory: () => perfect, memoryName: 'perfect' });
  t.equal(result.memory.name, 'perfect');
  t.equal(result.memory.by_k['1']?.overall.recall, 1);
  t.equal(result.memory.by_k['1']?.overall.mean_chars, 10, 'the second item is cut at k = 1');
  t.equal(result.memory.by_k['5']?.overall.mean_chars, 12.5, 'at k = 5 the kitten answer has both items');
  t.equal(result.ratio['1']?.overall.recall, 1 / (2.5 / 4));
  t.equal(result.ratio['1']?.by_category['3']?.recall, null, 'no ratio where the baseline found nothing');
  t.ok(perfect.settled && perfect.closed, 'settled before questions and closed after');
  t.same(
    perfect.events.map((e) => e.source_id),
    ['conv-a/D1:1', 'conv-a/D1:2', 'conv-a/D1:3', 'conv-a/D2:1', 'conv-a/D2:2', 'conv-a/D2:3'],
  );

  const empty = await runMemoryEval({ dir, ks: [1, 5], memoryFactory: () => new TableMemory({}) });
  for (const k of ['1', '5']) {
    t.same(
      { ...empty.memory.by_k[k]?.overall, p50_ms: 0, p95_ms: 0 },
      { questions: 4, recall: 0, mean_chars: 0, p50_ms: 0, p95_ms: 0 },
      `empty at k = ${k}`,
    );
    t.equal(empty.ratio[k]?.overall.recall, 0);
  }
});

/** A clock that only moves when told to. */
class ManualClock {
  now = 0;
  monotonic(): number {
    return this.now;
  }
}

t.test('latency percentiles, ingest and settle times come from the injected clock', async (t) => {
  const clock = new ManualClock();
  const cost: Record<string, number> = { [Q.kitten]: 1, [Q.city]: 2, [Q.bread]: 3, [Q.skiing]: 10 };
  const calls: Array<[string, number]> = [];
  const memory: EvalMemory = {
    ingest: async () => {
      clock.now += 1;
    },
    settle: async () => {
      clock.now += 100;
    },
    recall: async (query, k) => {
      calls.push([query, k]);
      clock.now += (cost[query] ?? 0) * k;
      return [];
    },
    close: async () => {},
  };
  const result = await runMemoryEval({ dir: syntheticDir(t), ks: [1, 2], memoryFactory: () => memory, clock });
  t.same(result.memory.ingest, { events: 6, ms: 6 });
  t.equal(result.memory.settle_ms, 100);
  // Nearest rank over [1, 2, 3, 10] × k: p50 is the 2nd value, p95 the 4th.
  t.same([result.memory.by_k['1']?.overall.p50_ms, result.memory.by_k['1']?.overall.p95_ms], [2, 10]);
  t.same([result.memory.by_k['2']?.overall.p50_ms, result.memory.by_k['2']?.overall.p95_ms], [4, 20]);
  t.same([result.memory.by_k['1']?.by_category['2']?.p50_ms, result.memory.by_k['1']?.by_category['2']?.p95_ms], [3, 3]);
  t.same(result.baseline.by_k['1']?.overall.p95_ms, 0, 'the baseline does not move this clock');
  t.same(
    calls,
    [Q.kitten, Q.city, Q.bread, Q.skiing].flatMap((q) => [
      [q, 1],
      [q, 2],
    ]),
    'one recall per question and k, in file order',
  );
});

t.test('conversations get a fresh memory each by default, or share one with ids kept apart', async (t) => {
  const dir = tempDir(t);
  writeConversation(dir, 'a', syntheticConversation());
  const later = syntheticConversation();
  later.session_1_date_time = '1:48 pm on 18 May, 2023';
  later.session_2_date_time = '9:00 am on 1 July, 2023';
  writeConversation(dir, 'b', later);
  // Answers every question with the same turn ids, but from conversation b.
  const fromB = (): TableMemory =>
    new TableMemory({
      [Q.kitten]: [{ text: 'x', sources: ['b/D1:1'] }],
      [Q.city]: [{ text: 'x', sources: ['b/D1:2', 'b/D2:1'] }],
      [Q.bread]: [{ text: 'x', sources: ['b/D2:3'] }],
      [Q.skiing]: [{ text: 'x', sources: ['b/D1:3'] }],
    });

  const scopes: EvalScope[] = [];
  const memories: TableMemory[] = [];
  const separate = await runMemoryEval({
    dir,
    ks: [1],
    memoryFactory: (scope) => {
      scopes.push(scope);
      const memory = fromB();
      memories.push(memory);
      return memory;
    },
  });
  t.equal(separate.per_conversation, true);
  t.same(
    scopes.map((s) => [s.label, s.conversation_ids, s.event_count]),
    [
      ['a', ['a'], 6],
      ['b', ['b'], 6],
    ],
  );
  t.equal(scopes[0]?.first_timestamp, Date.UTC(2023, 4, 18, 13, 47));
  t.equal(scopes[0]?.last_timestamp, Date.UTC(2023, 5, 3, 0, 5) + 10_000);
  t.same(
    memories.map((m) => new Set(m.events.map((e) => e.conversation_id)).size),
    [1, 1],
    'each memory sees one conversation',
  );
  t.equal(separate.questions, 8);
  t.equal(separate.memory.by_k['1']?.overall.recall, 0.5, "b's ids answer b's questions only");
  t.same(
    separate.details.map((d) => [d.id, d.memory['1']?.recall]),
    [
      ['a/q0', 0],
      ['a/q1', 0],
      ['a/q2', 0],
      ['a/q3', 0],
      ['b/q0', 1],
      ['b/q1', 1],
      ['b/q2', 1],
      ['b/q3', 1],
    ],
  );

  scopes.length = 0;
  memories.length = 0;
  const shared = await runMemoryEval({
    dir,
    ks: [1],
    perConversation: false,
    memoryFactory: (scope) => {
      scopes.push(scope);
      const memory = fromB();
      memories.push(memory);
      return memory;
    },
  });
  t.equal(shared.per_conversation, false);
  t.same(
    scopes.map((s) => [s.label, s.conversation_ids, s.event_count]),
    [['all', ['a', 'b'], 12]],
  );
  t.same(
    memories[0]?.events.slice(0, 4).map((e) => e.source_id),
    ['a/D1:1', 'a/D1:2', 'a/D1:3', 'b/D1:1'],
    'one timeline: b starts a minute after a',
  );
  const timestamps = memories[0]?.events.map((e) => e.timestamp) ?? [];
  t.same(
    timestamps,
    [...timestamps].sort((x, y) => x - y),
    'ingested in time order',
  );
  t.equal(shared.memory.by_k['1']?.overall.recall, 0.5);
  t.equal(separate.baseline.by_k['1']?.overall.recall, 2.5 / 4, 'separately, BM25 scores as on one conversation');
  // In one index a's and b's identical turns tie, and a's, ingested first, win: b's questions get a's ids.
  t.equal(shared.baseline.by_k['1']?.overall.recall, 2.5 / 8);
});

t.test('ks must be positive whole numbers', async (t) => {
  t.same(normaliseKs([10, 5, 10]), [5, 10]);
  t.same(parseKs(' 10, 5 '), [5, 10]);
  t.same(parseKs('1'), [1]);
  for (const text of ['', '5,', '5,x', '2.5', '-1', '0']) {
    t.match(expectError(t, () => parseKs(text), EVAL_ERROR_CODE).message, /is not a positive whole number/, JSON.stringify(text));
  }
  for (const ks of [[], [0], [2.5], [-1]]) expectError(t, () => normaliseKs(ks), EVAL_ERROR_CODE);
  const dir = syntheticDir(t);
  let built = 0;
  await expectErrorAsync(
    t,
    () =>
      runMemoryEval({
        dir,
        ks: [0],
        memoryFactory: () => {
          built++;
          return new TableMemory({});
        },
      }),
    EVAL_ERROR_CODE,
  );
  t.equal(built, 0, 'nothing runs with bad ks');
});

t.test('a failing memory is closed and its error surfaces', async (t) => {
  const memory = new TableMemory({});
  memory.settle = async () => {
    throw new Error('extraction crashed');
  };
  await t.rejects(runMemoryEval({ dir: syntheticDir(t), memoryFactory: () => memory }), /extraction crashed/);
  t.ok(memory.closed);
});

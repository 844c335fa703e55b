import t from 'tap';
import type { SimilarEntityPair } from '../../../src/memory/graph-store.js';
import type { GraphRelation } from '../../../src/memory/graph-types.js';
import {
  DEFAULT_MAINTENANCE_INTERVALS,
  DISTILL_SESSION,
  MemoryMaintenance,
  type MemoryMaintenanceOptions,
  type TimerScheduler,
} from '../../../src/memory/maintenance.js';
import type { TextAnalyzer, Triple } from '../../../src/nlp/types.js';
import { captureLogs, silentLogs, type Teardown, tempDir } from '../fixtures/support.js';
import { HOUR, openStores, type Stores, TestEmbedder } from './fixtures/memory-fixture.js';

/**
 * Stand-in analyser: "X likes Y" and "I like Y" (the speaker as subject); throws on "BOOM" so a
 * failing extraction can be tested.
 */
class RuleAnalyzer implements Pick<TextAnalyzer, 'extract'> {
  readonly seen: Array<{ text: string; speaker: string | undefined }> = [];
  async extract(text: string, options: { speaker?: string } = {}): Promise<Triple[]> {
    this.seen.push({ text, speaker: options.speaker });
    if (text.includes('BOOM')) throw new Error('analyser exploded');
    const out: Triple[] = [];
    // Like the real analyser, a speaker label before the words ("Erin: I like tea") is not part of them.
    for (const sentence of text.split(/[.\n]/).map((s) => s.trim().replace(/^\w+: /, ''))) {
      const mine = /^I like (\w+)$/.exec(sentence);
      if (mine && options.speaker) out.push(triple(options.speaker, 'likes', mine[1] as string, sentence));
      const theirs = /^(\w+) likes (\w+)$/.exec(sentence);
      if (theirs) out.push(triple(theirs[1] as string, 'likes', theirs[2] as string, sentence));
    }
    return out;
  }
}

function triple(subject: string, relation: string, object: string, sentence: string): Triple {
  return { subject, relation, object, sentence, confidence: 0.7, method: 'template' };
}

/** Timers fired by the test: each `set` is recorded until fired or cleared. */
class ManualTimers implements TimerScheduler {
  #next = 1;
  readonly pending = new Map<number, { callback: () => void; ms: number }>();
  set(callback: () => void, ms: number): unknown {
    const id = this.#next++;
    this.pending.set(id, { callback, ms });
    return id;
  }
  clear(handle: unknown): void {
    this.pending.delete(handle as number);
  }
  /** Fires every pending timer of this interval; returns how many. */
  fire(ms: number): number {
    const due = [...this.pending].filter(([, timer]) => timer.ms === ms);
    for (const [id, timer] of due) {
      this.pending.delete(id);
      timer.callback();
    }
    return due.length;
  }
  intervals(): number[] {
    return [...this.pending.values()].map((p) => p.ms).sort((a, b) => a - b);
  }
}

interface Setup {
  stores: Stores;
  analyzer: RuleAnalyzer;
  proposals: SimilarEntityPair[][];
  reviews: GraphRelation[][];
  maintenance: MemoryMaintenance;
  timers: ManualTimers;
}

function setup(
  t: Teardown,
  options: { maxSize?: number; embedder?: TestEmbedder; overrides?: Partial<MemoryMaintenanceOptions> } = {},
): Setup {
  const stores = openStores(t, tempDir(t), {
    ...(options.maxSize !== undefined && { maxSize: options.maxSize }),
    ...(options.embedder && { embedder: options.embedder }),
  });
  const analyzer = new RuleAnalyzer();
  const proposals: SimilarEntityPair[][] = [];
  const reviews: GraphRelation[][] = [];
  const timers = new ManualTimers();
  const maintenance = new MemoryMaintenance({
    window: stores.window,
    documents: stores.documents,
    graph: stores.graph,
    analyzer,
    proposeConsolidation: (pairs) => void proposals.push(pairs),
    reviewRelations: (relations) => void reviews.push(relations),
    clock: stores.clock,
    log: silentLogs().child('maintenance'),
    timers,
    ...options.overrides,
  });
  t.teardown(() => maintenance.stop());
  return { stores, analyzer, proposals, reviews, maintenance, timers };
}

t.test('distill: a document goes cold after 72 h untouched, not 71 h', async (t) => {
  const { stores, maintenance } = setup(t);
  const doc = await stores.documents.insert({ content: 'Alice likes tea', source: 'doc_commit', created_at: stores.clock.now() - HOUR });
  stores.clock.advance(71 * HOUR);
  const early = await maintenance.runLoop('distill');
  t.match(early, { ok: true, result: { documents: 0, linked: 0 } }, '71 h: not cold yet');
  t.equal(stores.documents.count(), 1);

  stores.clock.advance(HOUR);
  const cold = await maintenance.runLoop('distill');
  t.match(cold, { ok: true, result: { documents: 1, linked: 1, empty: 0, relations: 1 } }, '72 h: distilled');
  t.equal(stores.documents.count(), 1, 'the document stays as the evidence');
  t.equal(stores.documents.get([doc.id])[0]?.distilled_at, stores.clock.now());
  t.match(await maintenance.runLoop('distill'), { ok: true, result: { documents: 0 } }, 'not read again');
  const likes = stores.graph.relationsOf('Alice');
  t.equal(likes.length, 1);
  t.match(likes[0], {
    type: 'likes',
    target: { name: 'tea' },
    session: DISTILL_SESSION,
    valid_from: doc.created_at,
    sentence: { text: 'Alice likes tea', document_id: doc.id },
  });
});

t.test('distill: the last access restarts the 72 h; at most 2 accesses', async (t) => {
  const { stores, maintenance } = setup(t);
  const twice = await stores.documents.insert({ content: 'Bob likes coffee', source: 'doc_commit' });
  const thrice = await stores.documents.insert({ content: 'Carol likes cocoa', source: 'doc_commit' });
  stores.clock.advance(10 * HOUR);
  stores.documents.recordAccess([twice.id, thrice.id]);
  stores.documents.recordAccess([twice.id, thrice.id]);
  stores.documents.recordAccess([thrice.id]);
  stores.clock.advance(71 * HOUR);
  t.match(await maintenance.runLoop('distill'), { ok: true, result: { documents: 0 } }, '71 h after the last access');
  stores.clock.advance(HOUR);
  t.match(await maintenance.runLoop('distill'), { ok: true, result: { documents: 1, linked: 1 } });
  t.same(
    stores.documents
      .list()
      .filter((d) => d.distilled_at === null)
      .map((d) => d.id),
    [thrice.id],
    'the document read 3 times is not distilled',
  );
  t.equal(stores.graph.relationsOf('Bob').length, 1);
  t.equal(stores.graph.relationsOf('Carol').length, 0);
});

t.test('distill: nothing is lost; a failed document is retried, an empty one is marked and not re-read', async (t) => {
  const { stores, analyzer, maintenance } = setup(t, { overrides: { limits: { distillBatch: 2 } } });
  const nothing = await stores.documents.insert({ content: 'the weather was grey all day', source: 'doc_commit' });
  const failing = await stores.documents.insert({ content: 'BOOM goes the analyser', source: 'doc_commit' });
  const alsoNothing = await stores.documents.insert({ content: 'no facts here either', source: 'doc_commit' });
  const useful = await stores.documents.insert({ content: 'Dave likes chess', source: 'doc_commit' });
  stores.clock.advance(72 * HOUR);
  const first = await maintenance.runLoop('distill');
  t.match(first, { ok: true, result: { documents: 4, linked: 1, empty: 2, failed: 1 } }, 'a failure at the head does not starve the rest');
  t.same(
    stores.documents
      .list()
      .map((d) => d.id)
      .sort(),
    [nothing.id, failing.id, alsoNothing.id, useful.id].sort(),
    'nothing lost',
  );
  t.equal(analyzer.seen.length, 4, 'each document read once in the pass');
  t.ok(stores.documents.get([useful.id])[0]?.distilled_at, 'the useful one was distilled');
  t.ok(stores.documents.get([nothing.id])[0]?.distilled_at, 'an empty one is marked too');
  const again = await maintenance.runLoop('distill');
  t.match(again, { ok: true, result: { documents: 1, failed: 1 } }, 'only the failed one is tried again');
});

t.test('distill: the speaker of an archived event is its origin peer', async (t) => {
  const { stores, analyzer, maintenance } = setup(t, { maxSize: 10 });
  stores.window.append({ id: 'ev-tea', source: 'chat', peer: 'Erin', input: 'I like tea' });
  for (let i = 0; i < 10; i++) stores.window.append({ id: `ev-${i}`, source: 'chat', peer: 'Erin', input: `filler message ${i}` });
  const pruned = await stores.window.prune('filler message');
  t.same(
    pruned.archived.map((a) => a.event_id),
    ['ev-tea'],
  );
  stores.clock.advance(72 * HOUR);
  t.match(await maintenance.runLoop('distill'), { ok: true, result: { linked: 1 } });
  t.equal(analyzer.seen[0]?.speaker, 'Erin');
  t.match(stores.graph.relationsOf('Erin')[0], { type: 'likes', target: { name: 'tea' }, sentence: { source_event_id: 'ev-tea' } });
});

t.test('archive: force-prunes only above twice the window size', async (t) => {
  const { stores, maintenance } = setup(t, { maxSize: 12 });
  for (let i = 0; i < 24; i++) stores.window.append({ source: 'chat', input: `message number ${i}` });
  t.match(await maintenance.runLoop('archive'), { ok: true, result: { pruned: 0 } }, 'exactly twice the size: left alone');
  t.equal(stores.window.size(), 24);
  stores.window.append({ source: 'chat', input: 'message number 24' });
  t.match(await maintenance.runLoop('archive'), { ok: true, result: { pruned: 13 } }, 'above twice: pruned');
  t.equal(stores.window.size(), 12);
  t.equal(stores.documents.count(), 13, 'what left the window became documents');
});

t.test('archive: re-embeds stale document and entity vectors in batches', async (t) => {
  const embedder = new TestEmbedder({ fail: true });
  const { stores, maintenance } = setup(t, {
    embedder,
    overrides: { limits: { vectorBatch: 2, vectorBatchesPerTick: 2 } },
  });
  for (let i = 0; i < 5; i++) await stores.documents.insert({ content: `note ${i}`, source: 'doc_commit' });
  await stores.graph.commit([{ subject: 'Frank', relation: 'likes', object: 'jazz' }]);
  t.equal(stores.documents.staleVectorCount(), 5);
  t.equal(stores.graph.staleVectorCount(), 2);
  embedder.fail = false;
  t.match(await maintenance.runLoop('archive'), { ok: true, result: { document_vectors: 4, entity_vectors: 2 } }, 'capped per tick');
  t.equal(stores.documents.staleVectorCount(), 1);
  t.match(await maintenance.runLoop('archive'), { ok: true, result: { document_vectors: 1 } });
  t.equal(stores.documents.staleVectorCount(), 0);
  t.equal(stores.graph.staleVectorCount(), 0);
});

const PAIRS = [
  ['thermostat', 'thermostats'],
  ['dishwasher', 'dishwashers'],
  ['lawnmower', 'lawnmowers'],
  ['bookshelf', 'bookshelves'],
  ['microwave', 'microwaves'],
  ['wardrobe', 'wardrobes'],
  ['refrigerator', 'refrigerators'],
] as const;

async function commitPairs(stores: Stores): Promise<void> {
  await stores.graph.commit(PAIRS.flatMap(([a, b]) => [a, b].map((name) => ({ subject: name, relation: 'located_in', object: 'Q' }))));
}

t.test('merge: at most 5 similar pairs go to the callback; no-merge marks are respected and expire', async (t) => {
  const { stores, proposals, maintenance } = setup(t);
  await commitPairs(stores);
  t.ok((await stores.graph.similarEntityPairs({ limit: 20 })).length >= 7, 'more than 5 candidate pairs exist');
  stores.graph.markNoMerge('thermostat', 'thermostats', stores.clock.now() + HOUR, 'two devices');

  const first = await maintenance.runLoop('merge');
  t.ok(first.ok);
  t.equal(proposals.length, 1);
  t.equal(proposals[0]?.length, 5, 'capped at 5 per tick');
  t.ok(
    proposals[0]?.every((p) => p.similarity > 0.75),
    'all above 0.75',
  );
  const named = (pairs: SimilarEntityPair[] | undefined) => (pairs ?? []).map((p) => [p.a.name, p.b.name].sort().join('+'));
  t.notOk(named(proposals[0]).includes('thermostat+thermostats'), 'the marked pair is not proposed');
  t.match(first, { result: { expired_marks: 0 } });

  stores.clock.advance(2 * HOUR);
  const later = await maintenance.runLoop('merge', { drain: true });
  t.match(later, { ok: true, result: { expired_marks: 1 } }, 'the expired mark is deleted');
  t.equal(stores.graph.noMergeMarks().length, 0);
  t.equal(proposals[1]?.length, 5, 'still 5 even when drained');
  t.equal(stores.graph.entity('thermostats')?.name, 'thermostats', 'similar pairs are never merged offline');
});

t.test('merge: exact normalised duplicates merge offline', async (t) => {
  const { stores, proposals, maintenance } = setup(t);
  await stores.graph.commit([
    { subject: 'Acme', relation: 'makes', object: 'anvils' },
    { subject: 'Acme Corp', relation: 'makes', object: 'rockets' },
  ]);
  // A name stored under an older normalisation rule: its key differs from today's.
  stores.db.prepare("UPDATE graph_entities SET name = 'ACME', norm_name = 'acme (old rule)' WHERE norm_name = 'acme corp'").run();
  const result = await maintenance.runLoop('merge');
  t.match(result, { ok: true, result: { exact_merges: 1 } });
  t.same(
    stores.graph
      .relationsOf('acme')
      .map((r) => r.target.name)
      .sort(),
    ['anvils', 'rockets'],
  );
  t.equal(proposals.length, 0, 'nothing to propose');
});

t.test('review: low-confidence relations go to the callback, are marked reviewed; orphans are cleaned', async (t) => {
  let failNext = false;
  const reviews: GraphRelation[][] = [];
  const { stores, maintenance } = setup(t, {
    overrides: {
      reviewRelations: (relations) => {
        if (failNext) throw new Error('self-input channel is full');
        reviews.push(relations);
      },
    },
  });
  await stores.graph.commit(
    Array.from({ length: 7 }, (_, i) => ({ subject: `Gina${i}`, relation: 'owns', object: `car${i}`, confidence: (30 + i) / 100 })),
  );
  await stores.graph.commit([{ subject: 'Hank', relation: 'owns', object: 'boat', confidence: 0.95, sentence: 'Hank owns a boat.' }]);
  stores.graph.purge({ subject_contains: 'hank' }, 'hard');

  failNext = true;
  t.match(await maintenance.runLoop('review'), { ok: false, error: /self-input channel is full/ });
  t.equal(stores.graph.lowConfidenceRelations({ limit: 10 }).length, 7, 'a failed hand-over marks nothing reviewed');

  failNext = false;
  const first = await maintenance.runLoop('review');
  t.match(first, { ok: true, result: { reviewed: 5, orphan_sentences: 1 } }, 'the purged relation left one orphan sentence');
  t.same(
    reviews[0]?.map((r) => r.confidence),
    [0.3, 0.31, 0.32, 0.33, 0.34],
    'least confident first',
  );
  t.match(await maintenance.runLoop('review'), { ok: true, result: { reviewed: 2, orphan_sentences: 0 } }, 'the rest next tick');
  t.match(await maintenance.runLoop('review'), { ok: true, result: { reviewed: 0 } });
  t.equal(reviews.length, 2);
  t.equal(stores.graph.introspect().sentences, 0, 'orphan sentences cleaned');
});

t.test('one loop failing does not stop the others; the failure is logged with the loop name', async (t) => {
  const captured = captureLogs();
  const { stores, maintenance } = setup(t, {
    overrides: {
      log: captured.logs.child('maintenance'),
      proposeConsolidation: () => {
        throw new Error('no self-input channel');
      },
    },
  });
  await commitPairs(stores);
  await stores.documents.insert({ content: 'Ivy likes kites', source: 'doc_commit' });
  stores.clock.advance(72 * HOUR);
  const report = await maintenance.runAll();
  t.match(report, {
    archive: { ok: true },
    distill: { ok: true, result: { linked: 1 } },
    merge: { ok: false, error: /no self-input channel/ },
    review: { ok: true },
  });
  const failures = captured.records().filter((r) => r.msg === 'memory maintenance pass failed');
  t.same(
    failures.map((r) => r.loop),
    ['merge'],
  );
});

t.test('timers: each loop ticks at its interval, a failing loop keeps ticking, stop() stops it all', async (t) => {
  let mergeCalls = 0;
  const { stores, timers, maintenance } = setup(t, {
    overrides: {
      proposeConsolidation: () => {
        mergeCalls++;
        throw new Error('no self-input channel');
      },
    },
  });
  await commitPairs(stores);
  await stores.documents.insert({ content: 'Jack likes golf', source: 'doc_commit' });
  await maintenance.start(new AbortController().signal);
  const { distill, archive, merge, review } = DEFAULT_MAINTENANCE_INTERVALS;
  t.same(
    timers.intervals(),
    [distill, archive, merge, review].sort((a, b) => a - b),
    'one timer per loop, default intervals',
  );
  t.same(
    [distill, archive, merge, review],
    [30, 60, 120, 120].map((m) => m * 60_000),
  );

  t.equal(timers.fire(merge), 2, 'merge and review share the 120 min interval');
  await maintenance.whenIdle();
  t.equal(mergeCalls, 1);
  t.equal(timers.pending.size, 4, 'the failed merge loop was scheduled again');
  timers.fire(merge);
  await maintenance.whenIdle();
  t.equal(mergeCalls, 2, 'and ticked again');

  stores.clock.advance(72 * HOUR);
  timers.fire(distill);
  await maintenance.whenIdle();
  t.equal(stores.documents.coldDocuments().length, 0, 'distill ticked despite merge failing');

  // A tick in progress: stop() waits for it and nothing is scheduled after.
  await stores.graph.commit([{ subject: 'Kim', relation: 'owns', object: 'kayak', confidence: 0.2 }]);
  let release: () => void = () => undefined;
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  let entered: () => void = () => undefined;
  const inReview = new Promise<void>((resolve) => {
    entered = resolve;
  });
  const slow = new MemoryMaintenance({
    window: stores.window,
    documents: stores.documents,
    graph: stores.graph,
    analyzer: new RuleAnalyzer(),
    proposeConsolidation: () => undefined,
    reviewRelations: () => {
      entered();
      return held;
    },
    clock: stores.clock,
    log: silentLogs().child('maintenance'),
    timers,
    intervals: { review: 7 },
  });
  await maintenance.stop();
  t.equal(timers.pending.size, 0, 'stop() cleared every timer');
  await slow.start(new AbortController().signal);
  timers.fire(7);
  await inReview;
  let stopped = false;
  const stopping = slow.stop().then(() => {
    stopped = true;
  });
  await new Promise((resolve) => setImmediate(resolve));
  t.notOk(stopped, 'stop() waits for the running tick');
  release();
  await stopping;
  t.ok(stopped);
  t.equal(timers.pending.size, 0, 'nothing rescheduled after stop');
});

t.test('start refuses an invalid interval', async (t) => {
  const { maintenance } = setup(t, { overrides: { intervals: { review: 0 } } });
  await t.rejects(maintenance.start(new AbortController().signal), { code: 'HA_ERR_CONFIG_INVALID' });
});

import t from 'tap';
import type { ContextWindow, NewContextEvent } from '../../../src/memory/context-window.js';
import { expectError, expectErrorAsync, tempDir } from '../fixtures/support.js';
import { openStores, T0 } from './fixtures/memory-fixture.js';

const MINUTE = 60_000;

/** Appends events `e0..e{n-1}` one minute apart; `text(i)` gives each input. */
function fill(window: ContextWindow, n: number, text: (i: number) => string, extra: (i: number) => Partial<NewContextEvent> = () => ({})) {
  for (let i = 0; i < n; i++)
    window.append({ id: `e${i}`, timestamp: T0 + i * MINUTE, source: 'cli', channel: 'cli', input: text(i), ...extra(i) });
}

const ids = (window: ContextWindow) => window.events().map((e) => e.id);

t.test('append, complete and read back in time order', async (t) => {
  const { window, clock } = openStores(t, tempDir(t));
  const late = window.append({ id: 'late', timestamp: T0 + 5000, source: 'cli', input: 'second' });
  const early = window.append({ id: 'early', timestamp: T0, source: 'cli', channel: 'qq', peer: 'alice', input: 'first' });
  clock.advance(60_000);
  const auto = window.append({ source: 'web', input: 'no id, no time' });
  t.equal(auto.timestamp, clock.now(), 'timestamp defaults to the clock');
  t.match(auto.id, /^[0-9a-f-]{36}$/, 'id defaults to a UUID');
  t.same(ids(window).slice(0, 2), ['early', 'late']);
  t.equal(early.branch, 'user', 'branch defaults to user');
  t.equal(late.channel, '');
  const done = window.complete('early', {
    response: 'ok',
    tools_used: ['lights'],
    tool_results: [{ tool: 'lights', text: 'on' }],
    media_refs: ['m1'],
  });
  t.same(window.get('early'), done);
  t.same(done?.tool_results, [{ tool: 'lights', text: 'on' }]);
  t.equal(window.complete('missing', { response: 'x' }), undefined);
  expectError(t, () => window.append({ id: 'early', source: 'cli' }), 'HA_ERR_INPUT_INVALID');
  expectError(t, () => window.append({ id: '', source: 'cli' }), 'HA_ERR_INPUT_INVALID');
  expectError(t, () => window.append({ source: ' ' }), 'HA_ERR_INPUT_INVALID');
  expectError(t, () => window.append({ source: 'cli', timestamp: Number.NaN }), 'HA_ERR_INPUT_INVALID');
  t.equal(window.size(), 3);
});

t.test('no prune at or below the maximum size', async (t) => {
  const { window, documents } = openStores(t, tempDir(t));
  fill(window, 30, (i) => `event ${i}`);
  const result = await window.prune('anything');
  t.same(result, { before: 30, after: 30, kept: [], archived: [], dropped: [], skipped: [] });
  t.equal(documents.count(), 0);
});

t.test('prune: the 10 newest are protected, the best-scored fill the rest, the others become documents', async (t) => {
  const { window, documents } = openStores(t, tempDir(t));
  const offTopic = new Set([3, 7, 11, 15, 19]);
  // 35 events: 25 candidates (5 about cars), then 10 newest all about cars (irrelevant but protected).
  fill(
    window,
    35,
    (i) => (i >= 25 || offTopic.has(i) ? `[10:0${i % 10}] Bob: car repair ${i}` : `garden roses ${i}`),
    (i) => ({ media_refs: i === 7 ? ['photo-7.jpg'] : [], response: i === 3 ? 'the mechanic said tuesday' : '' }),
  );
  const result = await window.prune('tell me about the garden roses');
  t.equal(result.before, 35);
  t.equal(result.after, 30);
  t.same(result.archived.map((a) => a.event_id).sort(), ['e11', 'e15', 'e19', 'e3', 'e7']);
  t.equal(result.kept.length, 20, 'max size 30 - 10 protected = 20 kept by score');
  for (let i = 25; i < 35; i++) t.ok(window.get(`e${i}`), `protected e${i} stays although it is off topic`);
  t.equal(documents.count(), 5);

  const doc3 = documents.get([result.archived.find((a) => a.event_id === 'e3')?.document_id as number])[0];
  t.equal(doc3?.source, 'context_archived');
  t.equal(doc3?.created_at, T0 + 3 * MINUTE, 'the original timestamp');
  t.same(doc3?.source_event_ids, ['e3']);
  t.equal(doc3?.content, 'car repair 3\nthe mechanic said tuesday', 'cleaned input and response');
  t.equal(doc3?.origin?.input, '[10:03] Bob: car repair 3', 'the raw event is kept to restore it');
  const doc7 = documents.get([result.archived.find((a) => a.event_id === 'e7')?.document_id as number])[0];
  t.same(doc7?.media_refs, ['photo-7.jpg'], 'media refs move with the document');
  t.same(
    documents.searchLexical('mechanic tuesday', 5).map((h) => h.id),
    [doc3?.id],
    'archives are searchable at once',
  );
});

t.test('prune: equal scores keep the more recent events; maxSize option; below the protected count', async (t) => {
  const { window } = openStores(t, tempDir(t));
  fill(window, 20, () => 'same text');
  const r1 = await window.prune('unrelated', { maxSize: 12 });
  t.same(r1.kept, ['e8', 'e9'], 'ties: the two most recent candidates');
  t.same(ids(window), ['e8', 'e9', 'e10', 'e11', 'e12', 'e13', 'e14', 'e15', 'e16', 'e17', 'e18', 'e19']);
  const r2 = await window.prune('unrelated', { maxSize: 5 });
  t.equal(r2.after, 10, 'never fewer than the 10 protected');
  t.same(r2.kept, []);
});

t.test('prune drops no_memory channels and empty events, and skips events changed meanwhile', async (t) => {
  const dir = tempDir(t);
  let onScore: (() => void) | undefined;
  const stores = openStores(t, dir, {
    maxSize: 10,
    channelPolicy: (name) => (name === 'secret' ? { no_memory: true } : undefined),
    scorer: (_q, texts) => {
      onScore?.();
      return texts.map(() => 0);
    },
  });
  const { window, documents } = stores;
  window.append({ id: 'secret', timestamp: T0, source: 'qq', channel: 'secret', input: 'my pin is 1234' });
  window.append({ id: 'empty', timestamp: T0 + 1, source: 'qq', channel: 'qq', input: '[图片]' });
  window.append({ id: 'media', timestamp: T0 + 2, source: 'qq', channel: 'qq', input: '[图片]', media_refs: ['cat.jpg'] });
  window.append({ id: 'busy', timestamp: T0 + 3, source: 'qq', channel: 'qq', input: 'a turn still running' });
  for (let i = 0; i < 10; i++) window.append({ id: `n${i}`, timestamp: T0 + 100 + i, source: 'cli', input: `newer ${i}` });
  onScore = undefined;
  const result = await window.prune('x', { maxSize: 10 });
  t.same(result.dropped.sort(), ['empty', 'secret']);
  t.same(result.archived.map((a) => a.event_id).sort(), ['busy', 'media']);
  t.equal(documents.searchLexical('pin 1234', 5).length, 0, 'nothing of a no_memory channel reaches documents');

  // A turn completed while the prune was scoring keeps its event (the archive would miss the response).
  window.append({ id: 'slow', timestamp: T0 + 4, source: 'qq', channel: 'qq', input: 'slow turn' });
  window.append({ id: 'keeper', timestamp: T0 + 5, source: 'qq', channel: 'qq', input: 'kept on a tie' });
  onScore = () => window.complete('slow', { response: 'finally done' });
  const second = await window.prune('x', { maxSize: 11 });
  t.same(second.kept, ['keeper']);
  t.same(second.skipped, ['slow']);
  t.equal(window.get('slow')?.response, 'finally done');
  onScore = undefined;
  const third = await window.prune('x', { maxSize: 11 });
  t.same(
    third.archived.map((a) => a.event_id),
    ['slow'],
  );
  t.match(documents.get([third.archived[0]?.document_id as number])[0]?.content, /finally done/);
});

t.test('overflowing means more than twice the maximum size', async (t) => {
  const { window } = openStores(t, tempDir(t), { maxSize: 5 });
  fill(window, 10, (i) => `e ${i}`);
  t.notOk(window.overflowing(), '10 = 2 × 5 is not overflowing');
  window.append({ source: 'cli', input: 'one more' });
  t.ok(window.overflowing(), '11 > 2 × 5');
});

t.test('a scorer that returns the wrong number of scores is an internal error', async (t) => {
  const { window } = openStores(t, tempDir(t), { maxSize: 11, scorer: () => [1] });
  fill(window, 15, (i) => `e ${i}`);
  await expectErrorAsync(t, () => window.prune('q'), 'HA_ERR_INTERNAL');
  t.equal(window.size(), 15, 'nothing was removed');
});

t.test('restoreDocuments consumes documents back into the timeline at their original time', async (t) => {
  const { window, documents, clock } = openStores(t, tempDir(t), { maxSize: 10 });
  fill(
    window,
    12,
    (i) => `old note ${i}`,
    (i) => ({ channel: 'qq', peer: `peer${i}`, response: `reply ${i}` }),
  );
  const pruned = await window.prune('nothing relevant', { maxSize: 10 });
  t.equal(pruned.archived.length, 2);
  const committed = await documents.insert({ content: 'wifi password is on the fridge', source: 'doc_commit', created_at: T0 - 1000 });
  clock.advance(10 * 3600 * 1000);

  const docIds = [...pruned.archived.map((a) => a.document_id), committed.id];
  const restored = window.restoreDocuments(docIds);
  t.equal(restored.length, 3);
  t.equal(documents.count(), 0, 'consumed: the documents are gone from the store');
  const first = restored[0]?.event;
  t.equal(first?.id, 'e0', 'an archived event comes back with its own id');
  t.equal(first?.timestamp, T0, 'and its original time');
  t.equal(first?.source, 'cold_storage');
  t.equal(first?.branch, 'cold_storage');
  t.equal(first?.input, 'old note 0');
  t.equal(first?.response, 'reply 0');
  t.equal(first?.peer, 'peer0');
  const fromCommit = restored[2]?.event;
  t.equal(fromCommit?.id, `doc-${committed.id}`);
  t.equal(fromCommit?.input, 'wifi password is on the fridge');
  t.equal(fromCommit?.timestamp, T0 - 1000);
  t.same(ids(window).slice(0, 2), [`doc-${committed.id}`, 'e0'], 'placed by time in the timeline');
  t.same(window.restoreDocuments(docIds), [], 'a second read finds nothing');
});

import t, { type Test } from 'tap';
import { ToolRegistry } from '../../../src/agent/tool-registry.js';
import { memoryTools, NO_RECORD_SENTENCE } from '../../../src/memory/memory-tools.js';
import { MemoryRecall } from '../../../src/memory/recall.js';
import { createTextAnalyzer } from '../../../src/nlp/text-analyzer.js';
import { type ToolContext, type ToolDefinition, ToolError, type ToolErrorReason } from '../../../src/shared/tool.js';
import { silentLogs, type Teardown, tempDir } from '../fixtures/support.js';
import { HOUR, openStores, type Stores, T0, TestEmbedder, testIndexText } from './fixtures/memory-fixture.js';

const tokens = (text: string) => testIndexText(text).split(' ').filter(Boolean);
const analyzer = createTextAnalyzer();

interface Setup {
  s: Stores;
  tools: Map<string, ToolDefinition>;
  call(name: string, args: Record<string, unknown>, taskId?: string, inputId?: string): Promise<Record<string, unknown>>;
}

function setup(t: Teardown, options: { maxSize?: number; vectorSearch?: boolean } = {}): Setup {
  // 512 dimensions: few hash collisions, so unrelated texts really score low (abstention).
  const s = openStores(t, tempDir(t), { embedder: new TestEmbedder({ dim: 512 }), ...(options.maxSize && { maxSize: options.maxSize }) });
  const recall = new MemoryRecall({ window: s.window, documents: s.documents, graph: s.graph, embedder: s.embedder, tokens });
  const list = memoryTools({
    stores: s,
    recall,
    analyzer,
    clock: s.clock,
    ...(options.vectorSearch && { embedder: s.embedder }),
  });
  const tools = new Map(list.map((d) => [d.name, d]));
  return {
    s,
    tools,
    async call(name, args, taskId = 'task-x', inputId?: string) {
      const tool = tools.get(name);
      if (!tool) throw new Error(`no tool ${name}`);
      const context: ToolContext = {
        signal: new AbortController().signal,
        task_id: taskId,
        call_id: 'c1',
        source: 'chat',
        channel: 'family',
        trust: 'owner',
        ...(inputId === undefined ? {} : { input_id: inputId }),
      };
      return (await tool.execute(args, context)) as Record<string, unknown>;
    },
  };
}

/** The call fails with a ToolError of this reason and field, carrying a hint. */
async function fails(t: Test, run: Promise<unknown>, reason: ToolErrorReason, field: string): Promise<ToolError | undefined> {
  try {
    await run;
    t.fail(`expected ${reason} on ${field}`);
    return undefined;
  } catch (error) {
    t.ok(error instanceof ToolError, 'a ToolError');
    const info = (error as ToolError).info;
    t.same({ reason: info.reason, field: info.field }, { reason, field }, `${reason} on ${field}`);
    t.ok((info.hint ?? '').length > 0, 'with a hint');
    return error as ToolError;
  }
}

const EXPECTED = [
  ['memory_recall', 'read'],
  ['memory_commit', 'act'],
  ['memory_merge', 'act'],
  ['memory_purge', 'dangerous'],
  ['memory_edit', 'act'],
  ['memory_delete_entity', 'dangerous'],
  ['memory_introspect', 'read'],
  ['doc_query', 'act'],
  ['doc_commit', 'act'],
  ['person_query', 'read'],
  ['person_set_trait', 'act'],
  ['person_relate', 'act'],
  ['person_network', 'read'],
];

t.test('every definition passes a real ToolRegistry; tiers and no_memory as designed', async (t) => {
  const { tools } = setup(t);
  const registry = new ToolRegistry({ log: silentLogs().child('tools') });
  for (const def of tools.values()) registry.register(def);
  t.same(
    [...tools.values()].map((d) => [d.name, d.tier]),
    EXPECTED,
  );
  t.ok([...tools.values()].every((d) => d.owner === 'memory' && d.description.length > 20));
  t.same(
    [...tools.values()]
      .filter((d) => d.no_memory)
      .map((d) => d.name)
      .sort(),
    ['doc_query', 'memory_introspect', 'memory_recall', 'person_network', 'person_query'],
  );
  t.equal(registry.summaryByOwner().find((g) => g.owner === 'memory')?.count, 13);
  const purge = registry.get('memory_purge') as ToolDefinition;
  const bad = registry.validate(purge, '{"mode":"medium","relation_type":"likes"}');
  t.match(bad, { ok: false, error: { reason: 'enum', field: 'mode' } }, 'schema checks run in the registry');
  t.match(registry.validate(registry.get('memory_recall') as ToolDefinition, '{}'), { ok: false, error: { reason: 'required' } });
  t.match(registry.validate(registry.get('person_network') as ToolDefinition, '{"name":"Anna","depth":"2"}'), {
    ok: true,
    args: { depth: 2 },
  });
  t.match(registry.validate(registry.get('person_network') as ToolDefinition, '{"name":"Anna","depth":4}'), {
    ok: false,
    error: { reason: 'range', field: 'depth' },
  });
});

t.test('commit with provenance, supersession visible through person_query and recall', async (t) => {
  const { s, call } = setup(t);
  s.window.append({ id: 'ev-berlin', timestamp: T0, source: 'chat', channel: 'family', peer: 'Anna', input: 'I live in Berlin' });
  const first = await call(
    'memory_commit',
    { triples: [{ subject: 'Anna', relation: 'lives in', object: 'Berlin' }], sentence_text: 'I live in Berlin' },
    'ev-berlin',
  );
  t.match(first, { stored: 1, created: 1, superseded: 0 });
  s.clock.advance(48 * HOUR);
  s.window.append({ id: 'ev-move', source: 'chat', channel: 'family', peer: 'Anna', input: 'I moved to Shanghai' });
  const second = await call(
    'memory_commit',
    { triples: [{ subject: 'Anna', relation: 'lives_in', object: 'Shanghai' }], sentence_text: 'I moved to Shanghai' },
    'ev-move',
  );
  t.match(second, { stored: 1, superseded: 1 });

  const anna = await call('person_query', { name: 'anna' });
  t.match(anna, {
    name: 'Anna',
    traits: [{ trait: 'lives_in', value: 'Shanghai', since: '2024-05-08', earlier: [{ value: 'Berlin', until: '2024-05-08' }] }],
  });

  const recalled = await call('memory_recall', { query_intent: 'Anna, Shanghai' });
  const items = recalled.items as Array<{ text: string; sources: string[]; when: string }>;
  const fact = items.find((i) => i.text.includes('Shanghai'));
  t.ok(fact, 'the new location is recalled');
  t.ok(fact?.sources.includes('ev-move'), 'with the event it was said in');
  t.match(fact?.when, /^\d{4}-\d{2}-\d{2}$/);
  t.notOk(recalled.no_record);
  const berlinOnly = items.findIndex((i) => i.text.includes('Berlin') && !i.text.includes('Shanghai'));
  t.ok(berlinOnly === -1 || berlinOnly > items.indexOf(fact as never), 'the old location never outranks the new one');
});

t.test('recall abstains with a sentence to say; argument errors', async (t) => {
  const { call } = setup(t);
  await call('memory_commit', { triples: [{ subject: 'Tom', relation: 'owns', object: 'red bicycle' }] });
  const never = await call('memory_recall', { query_intent: 'zebra quantum saxophone' });
  t.same(never, { items: [], no_record: true, say: NO_RECORD_SENTENCE });
  const limited = await call('memory_recall', { query_intent: 'Tom bicycle', limit: 1 });
  t.equal((limited.items as unknown[]).length, 1);
  await fails(t, call('memory_recall', {}), 'required', 'query_intent');
  await fails(t, call('memory_recall', { query_intent: '   ' }), 'required', 'query_intent');
  await fails(t, call('memory_recall', { query_intent: 'x', limit: 0 }), 'range', 'limit');
  await fails(t, call('memory_recall', { query_intent: 'x', limit: 2.5 }), 'type', 'limit');
});

t.test('memory_commit reads facts from sentence_text alone, with the event peer as speaker; rejects bad triples', async (t) => {
  const { s, call } = setup(t);
  s.window.append({ id: 'ev-1', source: 'chat', channel: 'family', peer: 'Ben', input: 'I live in Oslo.' });
  const result = await call('memory_commit', { sentence_text: 'I live in Oslo.' }, 'ev-1');
  t.ok((result.stored as number) >= 1, 'facts were read and stored');
  t.ok(
    (result.facts as string[]).some((f) => /Oslo/.test(f)),
    'the facts read are reported',
  );
  t.ok(
    s.graph.relationsOf('Oslo').some((r) => r.sentence?.source_event_id === 'ev-1'),
    'linked to the event',
  );
  await fails(t, call('memory_commit', { sentence_text: 'Hmm.' }), 'rejected', 'sentence_text');
  await fails(t, call('memory_commit', {}), 'required', 'triples');
  await fails(t, call('memory_commit', { triples: 'Anna likes tea' }), 'type', 'triples');
  await fails(t, call('memory_commit', { triples: [{ subject: 'Anna', relation: 'likes' }] }), 'required', 'triples[0].object');
  await fails(
    t,
    call('memory_commit', { triples: [{ subject: 'Anna', relation: 'is', object: ' anna ' }] }),
    'format',
    'triples[0].object',
  );
  await fails(t, call('memory_commit', { triples: [{ subject: '「」', relation: 'is', object: 'x' }] }), 'format', 'triples[0].subject');
  await fails(
    t,
    call('memory_commit', { triples: [{ subject: 'a', relation: 'r'.repeat(70), object: 'b' }] }),
    'range',
    'triples[0].relation',
  );
  t.equal(s.graph.introspect().relations_current, 1, 'failed calls wrote nothing');
});

t.test('memory_merge, memory_edit, memory_delete_entity, memory_introspect', async (t) => {
  const { s, call } = setup(t);
  await call('memory_commit', {
    triples: [
      { subject: 'Bob', relation: 'likes', object: 'tea' },
      { subject: 'Bobby', relation: 'likes', object: 'coffee' },
      { subject: 'Bobby', relation: 'plays', object: 'chess' },
    ],
  });
  const merged = await call('memory_merge', { source: 'Bobby', target: 'Bob' });
  t.match(merged, { merged: true, target: 'Bob', aliases: ['Bobby'], relations_moved: 2 });
  t.same(
    s.graph
      .relationsOf('Bob')
      .map((r) => r.target.name)
      .sort(),
    ['chess', 'coffee', 'tea'],
  );
  await fails(t, call('memory_merge', { source: 'Nobody', target: 'Bob' }), 'not_found', 'source');
  await fails(t, call('memory_merge', { source: 'Bob', target: 'Nobody' }), 'not_found', 'target');
  await fails(t, call('memory_merge', { source: 'Bobby', target: 'Bob' }), 'rejected', 'target');
  await fails(t, call('memory_merge', { target: 'Bob' }), 'required', 'source');

  const edited = await call('memory_edit', { old_subject: 'bob', old_relation: 'likes', old_object: 'coffee', new_object: 'cocoa' });
  t.match(edited, { edited: { subject: 'Bob', relation: 'likes', object: 'cocoa' } });
  t.notOk(
    s.graph.relationsOf('Bob').some((r) => r.target.name === 'coffee'),
    'the old fact is gone',
  );
  await fails(
    t,
    call('memory_edit', { old_subject: 'Bob', old_relation: 'likes', old_object: 'chess', new_object: 'go' }),
    'not_found',
    'old_relation',
  );
  await fails(
    t,
    call('memory_edit', { old_subject: 'Zed', old_relation: 'likes', old_object: 'tea', new_object: 'go' }),
    'not_found',
    'old_subject',
  );
  await fails(t, call('memory_edit', { old_subject: 'Bob', old_relation: 'likes', old_object: 'tea' }), 'required', 'new_object');
  await fails(t, call('memory_edit', { old_subject: 'Bob', old_relation: 'likes' }), 'required', 'old_object');

  const stats = await call('memory_introspect', {});
  t.match(stats, { entities: 5, relations_current: 3, documents: 0, window_events: 0 });
  t.equal((stats.hotspots as Array<{ name: string }>)[0]?.name, 'Bob', 'the most mentioned entity first');

  t.same(await call('memory_delete_entity', { name: 'Bob' }), { deleted: 'Bob', relations_removed: 3 });
  t.equal(s.graph.entity('Bob'), undefined);
  await fails(t, call('memory_delete_entity', { name: 'Bob' }), 'not_found', 'name');
  await fails(t, call('memory_delete_entity', { name: 42 }), 'type', 'name');
});

t.test('memory_purge soft keeps history, hard deletes it; needs a criterion and a mode', async (t) => {
  const { s, call } = setup(t);
  await call('memory_commit', {
    triples: [
      { subject: 'Anna', relation: 'likes', object: 'tea' },
      { subject: 'Ben', relation: 'likes', object: 'tennis' },
      { subject: 'Anna', relation: 'owns', object: 'a cat' },
    ],
  });
  t.same(await call('memory_purge', { relation_type: 'likes', target_contains: 'te', mode: 'soft' }), { mode: 'soft', relations: 2 });
  t.same(
    s.graph.relationsOf('Anna').map((r) => r.type),
    ['owns'],
  );
  t.equal(s.graph.introspect().relations_history, 2, 'soft-purged facts stay as history');
  t.same(await call('memory_purge', { relation_type: 'likes', mode: 'hard' }), { mode: 'hard', relations: 2 });
  t.equal(s.graph.introspect().relations_history, 0);
  await fails(t, call('memory_purge', { mode: 'soft' }), 'required', 'subject_contains');
  await fails(t, call('memory_purge', { subject_contains: 'Anna' }), 'required', 'mode');
  await fails(t, call('memory_purge', { subject_contains: 'Anna', mode: 'all' }), 'enum', 'mode');
});

t.test('doc_query consumes documents and restores their events at the original times', async (t) => {
  const { s, call } = setup(t, { maxSize: 12 });
  const said = ['Anna: call the plumber on Monday about the boiler', 'Ben: the red bicycle is in the garage'];
  for (let i = 0; i < 20; i++) {
    s.window.append({
      id: `ev-${i}`,
      timestamp: T0 + i * HOUR,
      source: 'chat',
      channel: 'family',
      peer: 'Anna',
      input: said[i] ?? `small talk number ${i} about the weather`,
    });
  }
  await s.window.prune('weather');
  t.equal(s.window.get('ev-0'), undefined, 'the plumber turn was archived');
  const before = s.documents.count();

  const found = await call('doc_query', { query: 'plumber boiler', top_k: 1 });
  const docs = found.documents as Array<Record<string, unknown>>;
  t.equal(docs.length, 1);
  t.match(docs[0], { content: /plumber/, sources: ['ev-0'], restored_event: 'ev-0', when: '2024-05-06' });
  t.equal(s.documents.count(), before - 1, 'consumed on read');
  const restored = s.window.get('ev-0');
  t.match(restored, { timestamp: T0, source: 'cold_storage', branch: 'cold_storage', peer: 'Anna', channel: 'family' });
  t.same(
    await call('doc_query', { query: 'plumber boiler' }),
    { documents: [], no_record: true, say: NO_RECORD_SENTENCE },
    'gone once read',
  );
  t.same(await call('doc_query', { query: 'zebra saxophone' }), { documents: [], no_record: true, say: NO_RECORD_SENTENCE });
  t.equal(s.documents.count(), before - 1, 'nothing consumed by a miss');
  await fails(t, call('doc_query', { query: 'x', top_k: 11 }), 'range', 'top_k');
  await fails(t, call('doc_query', {}), 'required', 'query');
});

t.test('doc_commit stores a searchable document; doc_query with vectors', async (t) => {
  const { s, call } = setup(t, { vectorSearch: true });
  s.window.append({ id: 'ev-recipe', source: 'chat', peer: 'Anna', input: 'save my pancake recipe' });
  const stored = await call(
    'doc_commit',
    { content: 'Pancakes: 200 g flour, 3 eggs, 500 ml milk.', summary: 'pancake recipe', tags: ['recipe', 'breakfast'] },
    'ev-recipe',
  );
  t.match(stored, { stored: true, id: Number, when: '2024-05-06' });
  t.same(s.documents.get([stored.id as number])[0]?.source_event_ids, ['ev-recipe']);
  const found = await call('doc_query', { query: 'pancake recipe' });
  t.match(found.documents, [{ summary: 'pancake recipe', tags: ['recipe', 'breakfast'], sources: ['ev-recipe'] }]);
  t.equal(s.documents.count(), 0);
  t.match(s.window.get((found.documents as Array<{ restored_event: string }>)[0]?.restored_event ?? ''), { source: 'cold_storage' });
  await fails(t, call('doc_commit', { content: ' ' }), 'required', 'content');
  await fails(t, call('doc_commit', { content: 'x', tags: 'recipe' }), 'type', 'tags');
  await fails(t, call('doc_commit', { content: 'x', tags: ['ok', ''] }), 'required', 'tags[1]');
});

t.test('person_set_trait, person_relate, person_network, person_query', async (t) => {
  const { s, call } = setup(t);
  t.same(await call('person_set_trait', { name: 'Alice', trait: 'favourite food', value: 'pizza' }), {
    name: 'Alice',
    trait: 'favourite_food',
    value: 'pizza',
  });
  s.clock.advance(24 * HOUR);
  t.match(await call('person_set_trait', { name: 'alice', trait: 'favourite_food', value: 'sushi' }), { replaced: 'pizza' });
  t.same(await call('person_relate', { person_a: 'Alice', relation: 'friend of', person_b: 'Bob' }), {
    related: ['Alice friend_of Bob', 'Bob friend_of Alice'],
  });
  await call('person_relate', { person_a: 'Carol', relation: 'parent_of', person_b: 'Bob', inverse_relation: 'child_of' });
  await call('person_relate', { person_a: 'Carol', relation: 'sibling_of', person_b: 'Dave' });

  const alice = await call('person_query', { name: 'Alice' });
  t.match(alice, {
    name: 'Alice',
    type: 'person',
    traits: [{ trait: 'favourite_food', value: 'sushi', earlier: [{ value: 'pizza', until: '2024-05-07' }] }],
    relations: [{ relation: 'friend_of', person: 'Bob' }],
  });
  const bob = await call('person_query', { name: 'Bob' });
  t.same((bob.relations as Array<{ relation: string; person: string }>).map((r) => `${r.relation} ${r.person}`).sort(), [
    'child_of Carol',
    'friend_of Alice',
  ]);

  const near = await call('person_network', { name: 'Alice' });
  t.same(near.people, [
    { name: 'Bob', depth: 1 },
    { name: 'Carol', depth: 2 },
  ]);
  t.ok((near.relations as unknown[]).length > 0);
  const far = await call('person_network', { name: 'Alice', depth: 3 });
  t.same(
    (far.people as Array<{ name: string }>).map((p) => p.name),
    ['Bob', 'Carol', 'Dave'],
  );

  const missing = await fails(t, call('person_query', { name: 'Zoe' }), 'not_found', 'name');
  t.match(missing?.info.hint, /memory_introspect/);
  await fails(t, call('person_network', { name: 'Zoe' }), 'not_found', 'name');
  await fails(t, call('person_network', { name: 'Alice', depth: 4 }), 'range', 'depth');
  await fails(t, call('person_set_trait', { name: 'Alice', trait: 'x' }), 'required', 'value');
  await fails(t, call('person_set_trait', { name: 'Alice', trait: '', value: 'x' }), 'required', 'trait');
  await fails(t, call('person_relate', { person_a: 'Alice', relation: 'friend_of', person_b: 'ALICE' }), 'format', 'person_b');
  await fails(t, call('person_relate', { person_a: 'Alice', relation: 'friend_of' }), 'required', 'person_b');
});

t.test('a fact stored by a tool cites the input of its turn, whatever the task id', async (t) => {
  const { s, call } = setup(t);
  s.window.append({ id: 'ev-2', source: 'chat', channel: 'family', peer: 'Cleo', input: 'I live in Rome.' });
  await call('memory_commit', { sentence_text: 'I live in Rome.' }, 'task-7', 'ev-2');
  t.ok(s.graph.relationsOf('Rome').some((r) => r.sentence?.source_event_id === 'ev-2'));
});

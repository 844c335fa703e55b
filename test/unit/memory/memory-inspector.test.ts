// The memory inspector's control methods (memory.entities|relations|documents|event|introspect|edit
// and memory.forget {relation}, src/memory/memory-methods.ts + memory-inspector.ts) on a real
// MemoryService and memory.db, called through a real ControlRegistry as the web API calls them.
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { findEvent, type MemoryIntrospection, type RelationView } from '../../../src/memory/memory-inspector.js';
import type { EntityView } from '../../../src/memory/memory-methods.js';
import { expectErrorAsync } from '../fixtures/support.js';
import { type MemoryControlSetup, seedAnna, startMemoryControl } from './fixtures/memory-control.js';
import { HOUR, T0 } from './fixtures/memory-fixture.js';

const at = (ms: number) => new Date(ms).toISOString();

/** One page of a listing method: its items (under `key`) and the total. */
async function list<T>(m: MemoryControlSetup, method: string, key: string, params: unknown = {}): Promise<{ items: T[]; total: number }> {
  const result = (await m.call(method, params)) as Record<string, unknown>;
  return { items: result[key] as T[], total: result.total as number };
}

async function relationsOf(m: MemoryControlSetup, params: Record<string, unknown> = {}): Promise<RelationView[]> {
  return ((await m.call('memory.relations', params)) as { relations: RelationView[] }).relations;
}

function graphCounts(m: MemoryControlSetup): number[] {
  const stats = m.parts().stores.graph.introspect();
  return [stats.entities, stats.relations_current, stats.relations_history, stats.sentences];
}

t.test('memory.entities: every entity or those a name or alias matches, with counts, paged', async (t) => {
  const m = await startMemoryControl(t);
  await seedAnna(m);
  const all = await list<Record<string, unknown>>(m, 'memory.entities', 'entities');
  t.equal(all.total, 4);
  t.same(all.items[0], {
    name: 'Anna',
    type: '',
    aliases: ['Annie'],
    relation_count: 2,
    mention_count: 3,
    updated_at: at(T0),
  });
  t.same(
    all.items.map((e) => e.name),
    ['Anna', 'Oslo', 'Shanghai', 'Bert'],
    'most mentioned first, then oldest',
  );
  t.match(
    all.items.find((e) => e.name === 'Oslo'),
    { relation_count: 0 },
    'history is not counted',
  );

  t.same(
    (await list<{ name: string }>(m, 'memory.entities', 'entities', { q: 'ANNIE' })).items.map((e) => e.name),
    ['Anna'],
    'by alias, ignoring case',
  );
  const an = await list<{ name: string }>(m, 'memory.entities', 'entities', { q: 'an' });
  t.same(
    an.items.map((e) => e.name),
    ['Anna', 'Shanghai'],
  );
  t.equal(an.total, 2);
  t.same(
    (await list<{ name: string }>(m, 'memory.entities', 'entities', { q: 'shanghai' })).items.map((e) => e.name),
    ['Shanghai'],
  );
  t.same((await list(m, 'memory.entities', 'entities', { q: '%' })).total, 0, 'LIKE wildcards are plain text');
  const second = await list<{ name: string }>(m, 'memory.entities', 'entities', { limit: 2, offset: 1 });
  t.same(
    second.items.map((e) => e.name),
    ['Oslo', 'Shanghai'],
  );
  t.equal(second.total, 4, 'total counts every match, not the page');

  for (const params of [{ limit: 0 }, { limit: 501 }, { offset: -1 }, { q: '' }, { limit: 1.5 }]) {
    await expectErrorAsync(t, () => m.call('memory.entities', params), 'HA_ERR_RPC_INVALID_PARAMS');
  }
  const blank = await expectErrorAsync(t, () => m.call('memory.entities', { q: '「!」' }), 'HA_ERR_RPC_INVALID_PARAMS');
  t.match(blank.message, /no letters or digits/);
});

t.test('memory.relations: each fact with its sentence and source events; history and one entity on request', async (t) => {
  const m = await startMemoryControl(t);
  await seedAnna(m);
  const current = await relationsOf(m);
  t.same(
    current.map((r) => `${r.subject} ${r.relation} ${r.object}`),
    ['Bert knows Anna', 'Anna lives_in Shanghai'],
    'current only, newest first',
  );
  const shanghai = current[1] as RelationView;
  t.same(shanghai, {
    id: shanghai.id,
    subject: 'Anna',
    relation: 'lives_in',
    object: 'Shanghai',
    confidence: 0.8,
    valid_from: at(T0 + HOUR),
    valid_to: null,
    session: 'cli',
    sentence: 'I moved to Shanghai.',
    source_event_ids: ['ev-2'],
    document_ids: [],
    evidence_count: 1,
  });
  t.notOk('session' in (current[0] as RelationView), 'no session when none was recorded');

  const history = await relationsOf(m, { history: true });
  t.same(
    history.map((r) => [r.object, r.valid_to]),
    [
      ['Anna', null],
      ['Shanghai', null],
      ['Oslo', at(T0 + HOUR)],
    ],
    'history after the current facts, with when it ended',
  );
  t.same((await relationsOf(m, { entity: 'annie', history: true })).length, 3, 'an entity by alias, both directions');
  t.same(
    (await relationsOf(m, { entity: 'Bert' })).map((r) => r.object),
    ['Anna'],
  );
  t.same(
    (await relationsOf(m, { entity: 'Oslo' })).map((r) => r.object),
    [],
    'Oslo only has history',
  );

  // Said again elsewhere, and distilled from a document: every source is listed, the first sentence first.
  const { graph } = m.parts().stores;
  await graph.commit([{ subject: 'Anna', relation: 'lives_in', object: 'Shanghai', sentence: 'Anna is in Shanghai now.' }], {
    source_event_id: 'ev-9',
    timestamp: T0 + 3 * HOUR,
  });
  await graph.commit([{ subject: 'Anna', relation: 'lives_in', object: 'Shanghai', sentence: 'Anna, Shanghai.' }], {
    document_id: 42,
    timestamp: T0 + 4 * HOUR,
  });
  t.match(
    (await relationsOf(m, { entity: 'Anna' })).find((r) => r.object === 'Shanghai'),
    {
      id: shanghai.id,
      sentence: 'I moved to Shanghai.',
      source_event_ids: ['ev-2', 'ev-9'],
      document_ids: [42],
      evidence_count: 3,
    },
  );

  const paged = (await m.call('memory.relations', { history: true, limit: 1, offset: 2 })) as { relations: RelationView[]; total: number };
  t.same([paged.relations.map((r) => r.object), paged.total], [['Oslo'], 3]);
  const unknown = await expectErrorAsync(t, () => m.call('memory.relations', { entity: 'Zorro' }), 'HA_ERR_MEMORY_NOT_FOUND');
  t.match(unknown.message, /"Zorro"/);
  await expectErrorAsync(t, () => m.call('memory.relations', { history: 'yes' }), 'HA_ERR_RPC_INVALID_PARAMS');
  await expectErrorAsync(t, () => m.call('memory.relations', { limit: 501 }), 'HA_ERR_RPC_INVALID_PARAMS');
});

t.test('memory.documents: newest first, text cut, filtered by text, paged', async (t) => {
  const m = await startMemoryControl(t);
  const { documents } = m.parts().stores;
  const boiler = await documents.insert({
    content: 'The Boiler service is booked for Friday.',
    source: 'doc_commit',
    source_event_ids: ['ev-5'],
    created_at: T0,
  });
  const long = await documents.insert({ content: 'x'.repeat(2000), source: 'context_archived', created_at: T0 + HOUR });
  const percent = await documents.insert({ content: 'I am 100% sure about the boiler.', source: 'doc_commit', created_at: T0 + 2 * HOUR });
  const summaryOnly = await documents.insert({
    content: '',
    summary: 'a photo of the garden',
    source: 'doc_commit',
    created_at: T0 - HOUR,
    media_refs: ['m1'],
  });
  documents.recordAccess([boiler.id]);
  documents.recordAccess([boiler.id]);
  m.clock.set(T0 + 5 * HOUR);
  t.equal(documents.markDistilled(boiler.id, { sentence_ids: [] }), 'nothing_written');

  const all = await list<Record<string, unknown>>(m, 'memory.documents', 'documents');
  t.equal(all.total, 4);
  t.same(
    all.items.map((d) => d.id),
    [percent.id, long.id, boiler.id, summaryOnly.id],
    'newest first',
  );
  t.same(all.items[2], {
    id: boiler.id,
    text: 'The Boiler service is booked for Friday.',
    source: 'doc_commit',
    at: at(T0),
    access_count: 2,
    distilled_at: at(T0 + 5 * HOUR),
    source_event_ids: ['ev-5'],
  });
  const cut = all.items[1]?.text as string;
  t.equal(cut.length, 500, 'cut to 500 characters');
  t.ok(cut.endsWith('…'), 'and marked as cut');
  t.equal(all.items[3]?.text, 'a photo of the garden', 'the summary when there is no content');

  t.same(
    (await list<{ id: number }>(m, 'memory.documents', 'documents', { q: 'BOILER' })).items.map((d) => d.id),
    [percent.id, boiler.id],
    'text ignoring case',
  );
  t.same(
    (await list<{ id: number }>(m, 'memory.documents', 'documents', { q: '0%' })).items.map((d) => d.id),
    [percent.id],
    'a % is plain text',
  );
  t.same(
    (await list<{ id: number }>(m, 'memory.documents', 'documents', { q: 'garden' })).items.map((d) => d.id),
    [summaryOnly.id],
    'summaries are searched too',
  );
  const paged = await list<{ id: number }>(m, 'memory.documents', 'documents', { limit: 1, offset: 1 });
  t.same([paged.items.map((d) => d.id), paged.total], [[long.id], 4]);
  for (const params of [{ limit: 0 }, { q: '' }, { offset: 0.5 }]) {
    await expectErrorAsync(t, () => m.call('memory.documents', params), 'HA_ERR_RPC_INVALID_PARAMS');
  }
});

t.test('provenance: a fact said through MemoryService leads back to its words in the window, the archive, the raw log', async (t) => {
  const m = await startMemoryControl(t, { rawLog: true });
  const said = { id: 'in-alice', timestamp: T0, source: 'webui', channel: 'webui', peer: 'Bob', input: 'Alice lives in Paris' };
  await m.memory.recordInput(said);
  await m.memory.remember({ ...said, response: 'Noted: Alice lives in Paris.', tools: [] });

  const [fact] = await relationsOf(m, { entity: 'alice' });
  t.match(fact, {
    subject: 'Alice',
    relation: 'lives_in',
    object: 'Paris',
    sentence: 'Alice lives in Paris',
    source_event_ids: ['in-alice'],
    session: 'webui',
    valid_from: at(T0),
  });
  const expected = {
    id: 'in-alice',
    text: 'Alice lives in Paris',
    response: 'Noted: Alice lives in Paris.',
    channel: 'webui',
    source: 'webui',
    at: at(T0),
    speaker: 'Bob',
  };
  t.same(await m.call('memory.event', { id: fact?.source_event_ids[0] }), { ...expected, stored_in: 'window' });

  // Pushed out of the window: the document it was archived into still has it.
  for (let i = 0; i < 10; i++) {
    await m.memory.recordInput({ ...said, id: `later-${i}`, timestamp: T0 + i + 1, input: `later message ${i}` });
  }
  const pruned = await m.parts().stores.window.prune('something else entirely', { maxSize: 10 });
  t.same(
    pruned.archived.map((a) => a.event_id),
    ['in-alice'],
  );
  t.same(await m.call('memory.event', { id: 'in-alice' }), {
    ...expected,
    stored_in: 'document',
    document_id: pruned.archived[0]?.document_id,
  });

  // Forgotten: no layer shows it any more, the raw conversation log included.
  t.match(await m.call('memory.forget', { event: 'in-alice' }), { from_window: false, raw_log_records_removed: 2 });
  await expectErrorAsync(t, () => m.call('memory.event', { id: 'in-alice' }), 'HA_ERR_MEMORY_NOT_FOUND');
  t.match(await m.call('memory.event', { id: 'later-3' }), { text: 'later message 3', stored_in: 'window' });

  const missing = await expectErrorAsync(t, () => m.call('memory.event', { id: 'never-said' }), 'HA_ERR_MEMORY_NOT_FOUND');
  t.match(missing.message, /"never-said"/);
  await expectErrorAsync(t, () => m.call('memory.event', { id: '' }), 'HA_ERR_RPC_INVALID_PARAMS');
  await expectErrorAsync(t, () => m.call('memory.event', {}), 'HA_ERR_RPC_INVALID_PARAMS');
});

/** Every raw conversation log file and its exact bytes, by name. */
function rawFiles(m: MemoryControlSetup): Map<string, Buffer> {
  return new Map(
    readdirSync(m.rawLogDir)
      .sort()
      .map((name) => [name, readFileSync(join(m.rawLogDir, name))]),
  );
}

/** The lines of `text` (newlines kept) that are not records of the event. */
function withoutEvent(text: string, id: string): string {
  return text
    .split(/(?<=\n)/)
    .filter((line) => !line.includes(`"event_id":${JSON.stringify(id)}`))
    .join('');
}

t.test('memory.forget {event} cuts the event out of the raw conversation log, so memory.event cannot show it again', async (t) => {
  const m = await startMemoryControl(t, { rawLog: true });
  const turn = async (id: string, input: string, response: string) => {
    const said = { id, timestamp: m.clock.now(), source: 'webui', channel: 'webui', peer: 'Bob', input };
    await m.memory.recordInput(said);
    // 'note' has no cleaner, so its result is not logged: user and assistant records only.
    await m.memory.remember({ ...said, response, tools: [{ tool: 'note', text: `noted: ${input}` }] });
  };
  await turn('in-secret', 'The door code is 4711', 'Noted, 4711.');
  await turn('in-keep', 'Bert likes green tea', 'Noted.');
  t.match(await m.call('memory.event', { id: 'in-secret' }), { text: 'The door code is 4711', stored_in: 'window' });
  const before = rawFiles(m);
  t.equal(before.size, 1);
  t.match(String([...before.values()][0]), '4711', 'the raw log has the words before the forget');

  t.match(await m.call('memory.forget', { event: 'in-secret' }), {
    target: 'event',
    event: 'in-secret',
    from_window: true,
    documents_removed: [],
    raw_log_records_removed: 2,
  });
  t.match(m.audits().at(-1), { actor: 'tester', action: 'memory.forget', event: 'in-secret', raw_log_records_removed: 2 });
  const gone = await expectErrorAsync(t, () => m.call('memory.event', { id: 'in-secret' }), 'HA_ERR_MEMORY_NOT_FOUND');
  t.match(gone.message, /"in-secret"/);
  const after = rawFiles(m);
  t.same([...after.keys()], [...before.keys()], 'the same files, no temp file left');
  for (const [name, bytes] of after) {
    t.notOk(bytes.includes('4711'), `${name} no longer holds the words`);
    t.equal(String(bytes), withoutEvent(String(before.get(name)), 'in-secret'), 'the other lines keep their bytes');
  }
  t.match(await m.call('memory.event', { id: 'in-keep' }), { text: 'Bert likes green tea', stored_in: 'window' });

  // Turns after the forget are logged and readable; this one memory lost, only the raw log has it.
  m.clock.advance(HOUR);
  await turn('in-after', 'The garage opens at seven', 'OK.');
  m.parts().stores.db.prepare('DELETE FROM context_events WHERE id = ?').run('in-after');
  t.match(await m.call('memory.event', { id: 'in-after' }), {
    text: 'The garage opens at seven',
    response: 'OK.',
    source: null,
    stored_in: 'raw_log',
  });
  // A raw log file removed by retention while it is listed is passed over.
  const listed = [...rawFiles(m).keys()].map((name) => ({ name }));
  const vanished = [{ name: 'conversation-1.jsonl' }, { name: 'conversation-99999999999999.jsonl' }];
  const stores = m.parts().stores;
  t.match(await findEvent(stores, 'in-after', { directory: m.rawLogDir, files: () => [...listed, ...vanished] }), { stored_in: 'raw_log' });
  t.equal(await findEvent(stores, 'in-after', { directory: m.rawLogDir, files: () => vanished }), undefined);

  // Only the raw log holds it: that is still something to forget.
  t.match(await m.call('memory.forget', { event: 'in-after' }), {
    target: 'event',
    event: 'in-after',
    from_window: false,
    documents_removed: [],
    raw_log_records_removed: 2,
  });
  await expectErrorAsync(t, () => m.call('memory.event', { id: 'in-after' }), 'HA_ERR_MEMORY_NOT_FOUND');
  await expectErrorAsync(t, () => m.call('memory.forget', { event: 'in-after' }), 'HA_ERR_RPC_INVALID_PARAMS');
});

t.test('memory.forget {event}: a raw log file that cannot be rewritten fails the forget and leaves everything as it was', async (t) => {
  const m = await startMemoryControl(t, { rawLog: true });
  const said = { id: 'in-pin', timestamp: m.clock.now(), source: 'cli', channel: 'cli', peer: 'Bob', input: 'My pin is 1234' };
  await m.memory.recordInput(said);
  await m.memory.remember({ ...said, response: 'Noted.', tools: [] });
  const [name] = [...rawFiles(m).keys()] as [string];
  const before = rawFiles(m);
  // A directory where the rewritten copy would be written: the copy cannot be made.
  mkdirSync(join(m.rawLogDir, `${name}.forget-tmp`));

  const error = await expectErrorAsync(t, () => m.call('memory.forget', { event: 'in-pin' }), 'HA_ERR_MEMORY_RAW_LOG');
  t.match(error.message, name);
  t.same(readFileSync(join(m.rawLogDir, name)), before.get(name), 'the raw log file is intact');
  t.match(await m.call('memory.event', { id: 'in-pin' }), { text: 'My pin is 1234', stored_in: 'window' }, 'the window too');
  t.same(m.audits(), [], 'nothing forgotten, nothing audited');

  rmSync(join(m.rawLogDir, `${name}.forget-tmp`), { recursive: true });
  t.match(await m.call('memory.forget', { event: 'in-pin' }), { from_window: true, raw_log_records_removed: 2 }, 'again, once it can');
  t.notOk(readFileSync(join(m.rawLogDir, name)).includes('1234'));
  await expectErrorAsync(t, () => m.call('memory.event', { id: 'in-pin' }), 'HA_ERR_MEMORY_NOT_FOUND');
});

t.test('with the raw log turned off, files written before can still be read and forgotten from', async (t) => {
  const m = await startMemoryControl(t, { rawLog: true, settings: { conversation_log_days: 0 } });
  const record = (role: string, content: string) =>
    `${JSON.stringify({ role, content, event_id: 'old-1', channel: 'cli', peer: 'Bob', timestamp: new Date(T0).toISOString() })}\n`;
  const other = `${JSON.stringify({ role: 'user', content: 'unrelated', event_id: 'old-2', timestamp: new Date(T0).toISOString() })}\n`;
  mkdirSync(m.rawLogDir, { recursive: true });
  const file = join(m.rawLogDir, `conversation-${T0}.jsonl`);
  writeFileSync(file, record('user', 'the safe is behind the painting') + other + record('assistant', 'Noted.'));
  t.match(await m.call('memory.event', { id: 'old-1' }), {
    text: 'the safe is behind the painting',
    response: 'Noted.',
    stored_in: 'raw_log',
  });

  const said = { id: 'new-1', timestamp: T0 + HOUR, source: 'cli', channel: 'cli', peer: 'Bob', input: 'not logged' };
  await m.memory.remember({ ...said, response: 'ok', tools: [] });
  t.same(readdirSync(m.rawLogDir), [`conversation-${T0}.jsonl`], 'the log writes nothing');

  t.match(await m.call('memory.forget', { event: 'old-1' }), { from_window: false, raw_log_records_removed: 2 });
  t.equal(readFileSync(file, 'utf8'), other);
  await expectErrorAsync(t, () => m.call('memory.event', { id: 'old-1' }), 'HA_ERR_MEMORY_NOT_FOUND');
});

t.test('memory.event without a raw log only looks in the window and the documents', async (t) => {
  const m = await startMemoryControl(t);
  await expectErrorAsync(t, () => m.call('memory.event', { id: 'ev-1' }), 'HA_ERR_MEMORY_NOT_FOUND');
  m.parts().stores.window.append({ id: 'ev-1', timestamp: T0, source: 'cli', input: 'hello' });
  t.same(await m.call('memory.event', { id: 'ev-1' }), {
    id: 'ev-1',
    text: 'hello',
    channel: '',
    source: 'cli',
    at: at(T0),
    stored_in: 'window',
  });
});

t.test('memory.introspect: what the model is told, plus sizes, time spans and maintenance state', async (t) => {
  const m = await startMemoryControl(t);
  await seedAnna(m);
  const { stores, embedder, maintenance } = m.parts();
  stores.window.append({ id: 'w-1', timestamp: T0 + HOUR, source: 'cli', input: 'hello' });
  stores.window.append({ id: 'w-2', timestamp: T0 + 3 * HOUR, source: 'cli', input: 'hello again' });
  await stores.documents.insert({ content: 'a note', source: 'doc_commit', created_at: T0 - HOUR });

  const result = (await m.call('memory.introspect')) as MemoryIntrospection;
  const tool = m.memory.tools().find((d) => d.name === 'memory_introspect');
  const context = {
    signal: new AbortController().signal,
    task_id: 'task-1',
    call_id: 'call-1',
    source: 'cli',
    channel: 'cli',
    trust: 'owner' as const,
  };
  const told = (await tool?.execute({}, context)) as Record<string, unknown>;
  t.same(
    Object.fromEntries(Object.keys(told).map((k) => [k, result[k as keyof MemoryIntrospection]])),
    told,
    'everything memory_introspect tells the model',
  );
  t.match(result, {
    entities: 4,
    relations_current: 2,
    relations_history: 1,
    documents: 1,
    window_events: 2,
    aliases: 1,
    sentences: 3,
    window_max_size: 30,
    span: {
      window: { oldest: at(T0 + HOUR), newest: at(T0 + 3 * HOUR) },
      documents: { oldest: at(T0 - HOUR), newest: at(T0 - HOUR) },
      relations: { oldest: at(T0), newest: at(T0 + 2 * HOUR) },
    },
    maintenance: {
      intervals_ms: { ...maintenance.intervals },
      undistilled_documents: 1,
      stale_vectors: { documents: 0, entities: 0 },
      window_overflowing: false,
    },
    embedder: { fingerprint: embedder.fingerprint, dim: embedder.dim },
  });
  t.ok(result.database_bytes > 0);
  t.equal(result.hotspots[0]?.name, 'Anna');

  const empty = await startMemoryControl(t);
  t.match(await empty.call('memory.introspect'), {
    entities: 0,
    span: { window: { oldest: null, newest: null }, documents: { oldest: null, newest: null }, relations: { oldest: null, newest: null } },
  });
});

t.test('memory.edit corrects a current fact by id as memory_edit does: evidence and history kept, audited', async (t) => {
  const m = await startMemoryControl(t);
  await seedAnna(m);
  const before = await relationsOf(m, { entity: 'Anna', history: true });
  const shanghai = before.find((r) => r.object === 'Shanghai') as RelationView;
  const oslo = before.find((r) => r.object === 'Oslo') as RelationView;

  const edited = (await m.call('memory.edit', { relation_id: shanghai.id, object: 'Beijing' }, 'webui:admin')) as RelationView;
  t.match(edited, {
    subject: 'Anna',
    relation: 'lives_in',
    object: 'Beijing',
    valid_from: shanghai.valid_from,
    valid_to: null,
    session: 'cli',
    sentence: 'I moved to Shanghai.',
    source_event_ids: ['ev-2'],
  });
  t.not(edited.id, shanghai.id, 'a new row replaces the old one');
  t.same(m.parts().stores.graph.relationsById([shanghai.id]), [], 'the wrong fact is gone');
  const view = (await m.call('memory.entity', { name: 'Anna' })) as EntityView;
  t.same(view.current.map((r) => r.object).sort(), ['Anna', 'Beijing'].sort());
  t.same(
    view.history.map((r) => r.object),
    ['Oslo'],
    'the history stays',
  );
  t.match(m.audits(), [
    {
      actor: 'webui:admin',
      action: 'memory.edit',
      relation_id: shanghai.id,
      before: 'Anna lives_in Shanghai',
      after: 'Anna lives_in Beijing',
      new_relation_id: edited.id,
    },
  ]);

  const bert = (await relationsOf(m, { entity: 'Bert' }))[0] as RelationView;
  t.match(await m.call('memory.edit', { relation_id: bert.id, relation: 'Went to school with', subject: 'Bertram' }), {
    subject: 'Bertram',
    relation: 'went_to_school_with',
    object: 'Anna',
  });

  const counts = graphCounts(m);
  await expectErrorAsync(t, () => m.call('memory.edit', { relation_id: 99999, object: 'Bergen' }), 'HA_ERR_MEMORY_NOT_FOUND');
  const refused: Array<[Record<string, unknown>, RegExp]> = [
    [{ relation_id: oslo.id, object: 'Bergen' }, /history/],
    [{ relation_id: edited.id }, /nothing to change/],
    [{ relation_id: edited.id, object: 'beijing' }, /nothing to change/],
    [{ relation_id: edited.id, object: 'Anna' }, /itself/],
    [{ relation_id: edited.id, subject: '「」' }, /no letters or digits/],
    [{ relation_id: edited.id, relation: '   ' }, /relation is empty/],
    [{ relation_id: edited.id, relation: 'x'.repeat(65) }, /relation/],
    [{ relation_id: 0, object: 'x' }, /relation_id/],
    [{ object: 'x' }, /relation_id/],
  ];
  for (const [params, message] of refused) {
    const error = await expectErrorAsync(t, () => m.call('memory.edit', params), 'HA_ERR_RPC_INVALID_PARAMS');
    t.match(error.message, message, JSON.stringify(params));
  }
  t.same(graphCounts(m), counts, 'refused edits changed nothing');
  t.equal(m.audits().length, 2, 'only the two edits are audited');
});

t.test('memory.forget {relation}: one row, current or history, and the sentences only it cited; audited', async (t) => {
  const m = await startMemoryControl(t);
  await seedAnna(m);
  const all = await relationsOf(m, { history: true });
  const oslo = all.find((r) => r.object === 'Oslo') as RelationView;
  const shanghai = all.find((r) => r.object === 'Shanghai') as RelationView;

  t.same(await m.call('memory.forget', { relation: oslo.id }, 'webui:admin'), {
    target: 'relation',
    relation: oslo.id,
    fact: 'Anna lives_in Oslo',
    was_current: false,
    sentences_removed: 1,
  });
  t.same(await m.call('memory.forget', { relation: shanghai.id }), {
    target: 'relation',
    relation: shanghai.id,
    fact: 'Anna lives_in Shanghai',
    was_current: true,
    sentences_removed: 1,
  });
  t.same(
    (await relationsOf(m, { history: true })).map((r) => r.object),
    ['Anna'],
    'only Bert knows Anna is left',
  );
  t.ok(m.parts().stores.graph.entity('Oslo'), 'the entities stay');
  t.match(m.audits(), [
    { actor: 'webui:admin', action: 'memory.forget', target: 'relation', relation: oslo.id, fact: 'Anna lives_in Oslo' },
    { actor: 'tester', action: 'memory.forget', target: 'relation', relation: shanghai.id },
  ]);

  const counts = graphCounts(m);
  const gone = await expectErrorAsync(t, () => m.call('memory.forget', { relation: oslo.id }), 'HA_ERR_MEMORY_NOT_FOUND');
  t.match(gone.message, String(oslo.id));
  for (const params of [{ relation: 0 }, { relation: 1, hard: true }, { relation: 1, entity: 'Anna' }, { relation: 'x' }]) {
    await expectErrorAsync(t, () => m.call('memory.forget', params), 'HA_ERR_RPC_INVALID_PARAMS');
  }
  t.same(graphCounts(m), counts, 'refused calls removed nothing');
  t.equal(m.audits().length, 2);
});

t.test('a stopped memory answers HA_ERR_UNAVAILABLE to the inspector too', async (t) => {
  const m = await startMemoryControl(t);
  await m.memory.stop();
  for (const [method, params] of [
    ['memory.entities', {}],
    ['memory.relations', {}],
    ['memory.documents', {}],
    ['memory.event', { id: 'x' }],
    ['memory.introspect', {}],
    ['memory.edit', { relation_id: 1, object: 'x' }],
    ['memory.forget', { relation: 1 }],
  ] as const) {
    await expectErrorAsync(t, () => m.call(method, params), 'HA_ERR_UNAVAILABLE');
  }
});

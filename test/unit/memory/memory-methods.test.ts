// memory.search|stats|entity|forget|export (src/memory/memory-methods.ts) on a real MemoryService
// and memory.db, called through a real ControlRegistry as the CLI socket calls them.
import t, { type Test as Tap } from 'tap';
import type { DocumentInput } from '../../../src/memory/document-store.js';
import type { ExportPage } from '../../../src/memory/memory-export.js';
import { exportPage } from '../../../src/memory/memory-export.js';
import type { EntityView, MemoryStats } from '../../../src/memory/memory-methods.js';
import { expectErrorAsync } from '../fixtures/support.js';
import { type MemoryControlSetup, seedAnna, startMemoryControl } from './fixtures/memory-control.js';
import { HOUR, T0 } from './fixtures/memory-fixture.js';

function archive(eventId: string, content: string): DocumentInput {
  return {
    content,
    source: 'context_archived',
    source_event_ids: [eventId],
    created_at: T0,
    origin: {
      event_id: eventId,
      source: 'cli',
      channel: 'cli',
      peer: 'Anna',
      branch: 'user',
      input: content,
      response: '',
      tools_used: [],
      tool_results: [],
    },
  };
}

t.test('memory.search answers with the prompts recall: provenance, ISO dates, abstention', async (t) => {
  const m = await startMemoryControl(t);
  m.parts().stores.window.append({
    id: 'in-1',
    timestamp: Date.parse('2026-11-01T10:00:00Z'),
    source: 'cli',
    channel: 'cli',
    peer: 'Anna',
    input: 'The boiler service is booked for Friday at nine.',
  });
  const hit = (await m.call('memory.search', { query: 'When is the boiler service?' })) as {
    abstain: boolean;
    items: Array<{ kind: string; text: string; sources: string[]; at: string; score: number }>;
  };
  t.equal(hit.abstain, false);
  t.match(hit.items[0], { kind: 'event', text: /boiler service/, sources: ['in-1'], at: '2026-11-01T10:00:00.000Z' });
  const direct = await m.parts().recall.recall('When is the boiler service?', 10);
  t.same(
    hit.items.map((i) => i.text),
    direct.items.map((i) => i.text),
    'the same items the prompt recall gives',
  );

  const none = (await m.call('memory.search', { query: 'zebra saxophone quantum', limit: 3 })) as { abstain: boolean; items: unknown[] };
  t.equal(none.abstain, true, 'nothing relevant: abstains');

  await expectErrorAsync(t, () => m.call('memory.search', {}), 'HA_ERR_RPC_INVALID_PARAMS');
  await expectErrorAsync(t, () => m.call('memory.search', { query: '' }), 'HA_ERR_RPC_INVALID_PARAMS');
  await expectErrorAsync(t, () => m.call('memory.search', { query: 'x', limit: 0 }), 'HA_ERR_RPC_INVALID_PARAMS');
  await expectErrorAsync(t, () => m.call('memory.search', { query: 'x', limit: 51 }), 'HA_ERR_RPC_INVALID_PARAMS');
  await expectErrorAsync(t, () => m.call('memory.search', { query: 'x', limit: 2.5 }), 'HA_ERR_RPC_INVALID_PARAMS');
});

t.test('memory.stats counts every layer, vectors current and stale, and names the embedder', async (t) => {
  const m = await startMemoryControl(t);
  await seedAnna(m);
  const { stores, embedder, maintenance } = m.parts();
  stores.window.append({ id: 'w-1', source: 'cli', input: 'hello' });
  stores.window.append({ id: 'w-2', source: 'cli', input: 'hello again' });
  const docs = [];
  for (const text of ['the spare key is under the mat', 'the wifi password is on the fridge', 'bins go out on tuesday']) {
    docs.push(await stores.documents.insert({ content: text, source: 'doc_commit' }));
  }
  // Vectors of an embedder used before: counted as stale until re-embedded.
  stores.db.prepare("UPDATE documents SET fingerprint = 'old-embedder' WHERE id = ?").run(docs[0]?.id);
  stores.db.prepare("UPDATE graph_entities SET fingerprint = 'old-embedder' WHERE name = 'Bert'").run();

  const stats = (await m.call('memory.stats')) as MemoryStats;
  t.same(stats.window, { events: 2, max_size: 30 });
  t.same(stats.documents, { total: 3, vectors_current: 2, vectors_stale: 1 });
  t.same(stats.entities, { total: 4, aliases: 1, vectors_current: 3, vectors_stale: 1 });
  t.equal(stats.relations.current, 2, 'Anna lives_in Shanghai, Bert knows Anna');
  t.equal(stats.relations.history, 1, 'Anna lives_in Oslo, superseded');
  t.same(stats.relations.types.map((x) => x.type).sort(), ['knows', 'lives_in']);
  t.equal(stats.sentences, 3);
  t.same(stats.embedder, { fingerprint: embedder.fingerprint, dim: embedder.dim });
  t.same(stats.maintenance_intervals_ms, maintenance.intervals);
  t.ok(stats.database_bytes > 0, 'database size');
  t.equal(stats.hotspots[0]?.name, 'Anna', 'most mentioned first');
});

t.test('memory.entity: by name or alias, current facts and history, each with provenance', async (t) => {
  const m = await startMemoryControl(t);
  await seedAnna(m);
  const view = (await m.call('memory.entity', { name: 'annie' })) as EntityView;
  t.match(view.entity, { name: 'Anna', aliases: ['Annie'], mention_count: 3, created_at: new Date(T0).toISOString() });
  t.same(view.current.map((r) => `${r.direction} ${r.subject} ${r.relation} ${r.object}`).sort(), [
    'in Bert knows Anna',
    'out Anna lives_in Shanghai',
  ]);
  const shanghai = view.current.find((r) => r.object === 'Shanghai');
  t.match(shanghai, {
    valid_from: new Date(T0 + HOUR).toISOString(),
    valid_to: null,
    provenance: [{ text: 'I moved to Shanghai.', source_event_id: 'ev-2', document_id: null }],
  });
  t.equal(view.history.length, 1);
  t.match(view.history[0], {
    object: 'Oslo',
    valid_from: new Date(T0).toISOString(),
    valid_to: new Date(T0 + HOUR).toISOString(),
    provenance: [{ text: 'I live in Oslo.', source_event_id: 'ev-1' }],
  });
  t.equal(view.truncated, false);

  const unknown = await expectErrorAsync(t, () => m.call('memory.entity', { name: 'Zorro' }), 'HA_ERR_MEMORY_NOT_FOUND');
  t.match(unknown.message, /"Zorro"/, 'the error names what was asked for');
  await expectErrorAsync(t, () => m.call('memory.entity', {}), 'HA_ERR_RPC_INVALID_PARAMS');
});

t.test('memory.forget an entity: soft ends its facts and keeps history; hard deletes it', async (t) => {
  const m = await startMemoryControl(t);
  await seedAnna(m);
  const facts = async () => (await m.parts().recall.recall('where does Anna live', 10)).items.filter((i) => i.kind === 'fact').length;
  t.ok((await facts()) > 0, 'recall offers facts about Anna');
  m.clock.set(T0 + 5 * HOUR);
  const soft = await m.call('memory.forget', { entity: 'Anna' }, 'cli');
  t.same(soft, { target: 'entity', mode: 'soft', entity: 'Anna', relations_ended: 2 });
  const after = (await m.call('memory.entity', { name: 'Anna' })) as EntityView;
  t.equal(after.current.length, 0, 'no current facts');
  t.equal(after.history.length, 3, 'all kept as history');
  t.match(
    after.history.find((r) => r.object === 'Shanghai'),
    { valid_to: new Date(T0 + 5 * HOUR).toISOString() },
    'ended now',
  );
  t.equal(await facts(), 0, 'recall no longer offers them');
  t.match(m.audits(), [{ actor: 'cli', action: 'memory.forget', target: 'entity', mode: 'soft', entity: 'Anna', relations_ended: 2 }]);

  const hard = await m.call('memory.forget', { entity: 'Anna', hard: true });
  t.same(hard, { target: 'entity', mode: 'hard', entity: 'Anna', relations_removed: 3, sentences_removed: 3 });
  await expectErrorAsync(t, () => m.call('memory.entity', { name: 'Anna' }), 'HA_ERR_MEMORY_NOT_FOUND');
  t.ok(m.parts().stores.graph.entity('Bert'), 'the other end stays');
  const stats = (await m.call('memory.stats')) as MemoryStats;
  t.same([stats.relations.current, stats.relations.history, stats.sentences], [0, 0, 0]);
  t.match(m.audits()[1], { actor: 'tester', action: 'memory.forget', mode: 'hard', relations_removed: 3 });

  await expectErrorAsync(t, () => m.call('memory.forget', { entity: 'Anna' }), 'HA_ERR_MEMORY_NOT_FOUND');
  t.equal(m.audits().length, 2, 'nothing audited for a failed forget');
});

t.test('memory.forget an event (window and its archive) or a document; exactly one target', async (t) => {
  const m = await startMemoryControl(t);
  const { window, documents, graph } = m.parts().stores;
  window.append({ id: 'ev-live', source: 'cli', input: 'my pin is 4711' });
  window.append({ id: 'ev-keep', source: 'cli', input: 'keep me' });
  const archived = await documents.insert(archive('ev-old', 'I told you the alarm code is 1234'));
  const note = await documents.insert({ content: 'alarm code noted', source: 'doc_commit', source_event_ids: ['ev-old', 'ev-keep'] });
  await graph.commit([{ subject: 'alarm', relation: 'has_code', object: '1234', sentence: 'the alarm code is 1234' }], {
    source_event_id: 'ev-old',
  });

  t.same(await m.call('memory.forget', { event: 'ev-live' }), {
    target: 'event',
    event: 'ev-live',
    from_window: true,
    documents_removed: [],
    raw_log_records_removed: 0,
    facts_kept: 0,
  });
  t.notOk(window.get('ev-live'), 'gone from the window');
  t.ok(window.get('ev-keep'), 'other events stay');

  t.same(await m.call('memory.forget', { event: 'ev-old' }), {
    target: 'event',
    event: 'ev-old',
    from_window: false,
    documents_removed: [archived.id],
    raw_log_records_removed: 0,
    facts_kept: 1,
  });
  t.same(
    documents.get([archived.id, note.id]).map((d) => d.id),
    [note.id],
    'the archive is deleted; a note that only cites the event stays',
  );
  t.same(
    documents.searchLexical('alarm code 1234', 10).map((h) => h.id),
    [note.id],
    'and it left the search index',
  );
  await expectErrorAsync(t, () => m.call('memory.forget', { event: 'ev-old' }), 'HA_ERR_RPC_INVALID_PARAMS');

  t.same(await m.call('memory.forget', { document: note.id }), { target: 'document', document: note.id });
  t.equal(documents.count(), 0);
  const missing = await expectErrorAsync(t, () => m.call('memory.forget', { document: note.id }), 'HA_ERR_MEMORY_NOT_FOUND');
  t.match(missing.message, String(note.id));

  for (const params of [{}, { event: 'a', document: 1 }, { entity: 'x', event: 'y' }, { event: 'ev-keep', hard: true }, { document: 0 }]) {
    await expectErrorAsync(t, () => m.call('memory.forget', params), 'HA_ERR_RPC_INVALID_PARAMS');
  }
  t.ok(window.get('ev-keep'), 'refused calls removed nothing');
  t.same(
    m.audits().map((a) => a.target),
    ['event', 'event', 'document'],
    'every forget is audited',
  );
});

/** Fills every section: 45 events, 40 documents, 30 facts (31 entities, 30 relations, 30 sentences). */
async function seedMany(m: MemoryControlSetup): Promise<Record<string, number>> {
  const { window, documents, graph } = m.parts().stores;
  for (let i = 0; i < 45; i++) window.append({ id: `ev-${i}`, timestamp: T0 + i, source: 'cli', input: `event number ${i}` });
  for (let i = 0; i < 40; i++) await documents.insert({ content: `document number ${i}`, source: 'doc_commit' });
  for (let i = 0; i < 30; i++) {
    await graph.commit([{ subject: 'Hub', relation: 'links', object: `Node ${i}`, sentence: `Hub links node ${i}.` }], {
      source_event_id: `ev-${i}`,
    });
  }
  return { event: 45, document: 40, entity: 31, sentence: 30, relation: 30 };
}

async function exportAll(
  t: Tap,
  m: MemoryControlSetup,
  limit: number,
): Promise<{ records: Array<Record<string, unknown>>; pages: number }> {
  const records: Array<Record<string, unknown>> = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = (await m.call('memory.export', { limit, ...(cursor && { cursor }) })) as ExportPage;
    pages++;
    if (page.records.length > limit) t.fail(`page ${pages} has ${page.records.length} records, more than ${limit}`);
    records.push(...page.records);
    cursor = page.next;
  } while (cursor !== undefined && pages < 1000);
  return { records, pages };
}

t.test('memory.export pages through every record exactly once, in a stable order', async (t) => {
  const m = await startMemoryControl(t);
  const expected = await seedMany(m);
  const small = await exportAll(t, m, 7);
  const whole = await exportAll(t, m, 2000);
  t.equal(whole.pages, 1, 'everything fits one page at the largest limit');
  t.same(small.records, whole.records, 'small pages concatenate to the same stream');
  t.ok(small.pages >= Math.ceil(176 / 7), `${small.pages} pages`);

  const keys = small.records.map((r) => `${r.type}:${r.id}`);
  t.equal(new Set(keys).size, keys.length, 'no record twice');
  const counts: Record<string, number> = {};
  for (const r of small.records) counts[r.type as string] = (counts[r.type as string] ?? 0) + 1;
  t.same(counts, expected, 'every record of every section');
  t.same(
    [...new Set(small.records.map((r) => r.type))],
    ['event', 'document', 'entity', 'sentence', 'relation'],
    'sections in order: referenced rows before those referring to them',
  );
  t.match(
    small.records.find((r) => r.type === 'relation'),
    { source: 'Hub', relation: 'links', target: 'Node 0', evidence_sentence_ids: [Number], valid_to: null },
  );
  t.match(
    small.records.find((r) => r.type === 'entity' && r.name === 'Hub'),
    { entity_type: String, aliases: [] },
  );
  t.match(small.records[0], { type: 'event', id: 'ev-0', timestamp: T0, tools_used: [], input: 'event number 0' });
  t.notOk(
    small.records.some((r) => 'vector' in r),
    'no vectors',
  );
});

t.test('memory.export: rows added or removed between pages never repeat; bad cursors and limits are refused', async (t) => {
  const m = await startMemoryControl(t);
  await seedMany(m);
  const { documents, window } = m.parts().stores;
  const first = (await m.call('memory.export', { limit: 50 })) as ExportPage;
  t.equal(first.next, 'document:5', 'the cursor names the section and the last id');
  const added = await documents.insert({ content: 'written while exporting', source: 'doc_commit' });
  documents.take([3]);
  window.append({ id: 'ev-late', source: 'cli', input: 'too late for the event section' });
  const rest: Array<Record<string, unknown>> = [];
  let cursor = first.next;
  while (cursor !== undefined) {
    const page = (await m.call('memory.export', { limit: 50, cursor })) as ExportPage;
    rest.push(...page.records);
    cursor = page.next;
  }
  const all = [...first.records, ...rest];
  const keys = all.map((r) => `${r.type}:${r.id}`);
  t.equal(new Set(keys).size, keys.length, 'still no record twice');
  t.equal(keys.filter((k) => k === `document:${added.id}`).length, 1, 'a row added during the export comes once, in its section');
  t.notOk(keys.includes('event:ev-late'), 'an event added behind the cursor waits for the next export');

  for (const cursor of ['nonsense', 'event:-1', 'vector:3', 'event:1:2']) {
    await expectErrorAsync(t, () => m.call('memory.export', { cursor }), 'HA_ERR_RPC_INVALID_PARAMS');
  }
  await expectErrorAsync(t, () => m.call('memory.export', { limit: 2001 }), 'HA_ERR_RPC_INVALID_PARAMS');
  await expectErrorAsync(t, () => m.call('memory.export', { limit: 0 }), 'HA_ERR_RPC_INVALID_PARAMS');
});

t.test('memory.export caps each page by bytes, so no frame nears the socket limit', async (t) => {
  const m = await startMemoryControl(t);
  const { documents } = m.parts().stores;
  const big = 'lorem ipsum dolor sit amet '.repeat(2500); // about 66 KB
  for (let i = 0; i < 20; i++) await documents.insert({ content: `${i} ${big}`, source: 'doc_commit' });
  let cursor: string | undefined;
  let total = 0;
  let pages = 0;
  do {
    const page = (await m.call('memory.export', { limit: 2000, ...(cursor && { cursor }) })) as ExportPage;
    const bytes = Buffer.byteLength(JSON.stringify(page));
    t.ok(bytes <= 512 * 1024 + 1024, `page ${pages} is ${bytes} bytes`);
    total += page.records.length;
    pages++;
    cursor = page.next;
  } while (cursor !== undefined);
  t.equal(total, 20);
  t.ok(pages >= 3, `${pages} pages for about 1.3 MB`);

  // One record larger than the cap still moves the export on.
  const huge = exportPage(m.parts().stores, { maxBytes: 1000 });
  t.equal(huge.records.length, 1);
  t.equal(huge.next, 'document:1');
});

t.test('a stopped memory answers HA_ERR_UNAVAILABLE', async (t) => {
  const m = await startMemoryControl(t);
  await m.memory.stop();
  for (const [method, params] of [
    ['memory.search', { query: 'x' }],
    ['memory.stats', {}],
    ['memory.entity', { name: 'x' }],
    ['memory.forget', { document: 1 }],
    ['memory.export', {}],
  ] as const) {
    await expectErrorAsync(t, () => m.call(method, params), 'HA_ERR_UNAVAILABLE');
  }
});

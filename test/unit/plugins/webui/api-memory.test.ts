import t from 'tap';
import { HomeAgentError } from '../../../../src/shared/errors.js';
import { type ApiHarness, apiHarness, Type } from './api-harness.js';

const Name = Type.String({ minLength: 1, maxLength: 200 });
const Limit = Type.Optional(Type.Integer({ minimum: 1, maximum: 500 }));
const Offset = Type.Optional(Type.Integer({ minimum: 0 }));

interface Relation {
  id: number;
  subject: string;
  relation: string;
  object: string;
  valid_to: string | null;
}

/** memory.* doubles over a tiny graph, with the params schemas of src/memory/memory-methods.ts. */
function fakeMemory(h: ApiHarness) {
  const relations: Relation[] = [
    { id: 1, subject: 'Alice', relation: 'lives_in', object: 'Paris', valid_to: null },
    { id: 2, subject: 'Alice', relation: 'works_at', object: 'Acme', valid_to: null },
  ];
  const forgotten: Array<Record<string, unknown>> = [];
  h.method(
    'memory.search',
    Type.Object({ query: Type.String({ minLength: 1, maxLength: 1000 }), limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 50 })) }),
    ({ query }) => ({
      abstain: false,
      items: [{ kind: 'fact', text: `Alice lives in Paris (${query})`, score: 0.9, sources: ['ev-1'], at: null }],
    }),
  );
  h.method('memory.stats', Type.Object({}), () => ({ entities: { total: 1 } }));
  h.method('memory.introspect', Type.Object({}), () => ({ relations: relations.length }));
  h.method('memory.entities', Type.Object({ q: Type.Optional(Type.String()), limit: Limit, offset: Offset }), () => ({
    entities: [{ name: 'Alice', type: 'person', aliases: [], relation_count: 2 }],
    total: 1,
  }));
  h.method('memory.entity', Type.Object({ name: Name }), ({ name }) => {
    if (name !== 'Alice' && name !== '爱丽丝 Smith')
      throw new HomeAgentError('HA_ERR_MEMORY_NOT_FOUND', `memory has no entity named ${JSON.stringify(name)}`);
    return { entity: { name }, current: relations, history: [] };
  });
  h.method(
    'memory.relations',
    Type.Object({ entity: Type.Optional(Name), history: Type.Optional(Type.Boolean()), limit: Limit, offset: Offset }),
    () => ({
      relations,
    }),
  );
  h.method('memory.documents', Type.Object({ q: Type.Optional(Type.String()), limit: Limit, offset: Offset }), () => ({
    documents: [],
    total: 0,
  }));
  h.method('memory.event', Type.Object({ id: Type.String({ minLength: 1, maxLength: 256 }) }), ({ id }) => ({
    id,
    text: 'Alice lives in Paris',
    channel: 'cli',
  }));
  h.method(
    'memory.edit',
    Type.Object({
      relation_id: Type.Integer({ minimum: 1 }),
      subject: Type.Optional(Name),
      relation: Type.Optional(Name),
      object: Type.Optional(Name),
    }),
    ({ relation_id, ...change }, caller) => {
      const old = relations.find((r) => r.id === relation_id && r.valid_to === null);
      if (!old) throw new HomeAgentError('HA_ERR_RPC_INVALID_PARAMS', `no current relation ${relation_id}`);
      if (Object.keys(change).length === 0)
        throw new HomeAgentError('HA_ERR_RPC_INVALID_PARAMS', 'memory.edit: change at least one of subject, relation, object');
      old.valid_to = 'now';
      const next = { ...old, ...change, id: relations.length + 1, valid_to: null };
      relations.push(next);
      return { relation: next, superseded: old.id, actor: caller.actor };
    },
  );
  h.method(
    'memory.forget',
    Type.Object({
      entity: Type.Optional(Name),
      event: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
      document: Type.Optional(Type.Integer({ minimum: 1 })),
      relation: Type.Optional(Type.Integer({ minimum: 1 })),
      hard: Type.Optional(Type.Boolean()),
    }),
    (params) => {
      const targets = [params.entity, params.event, params.document, params.relation].filter((x) => x !== undefined);
      if (targets.length !== 1) throw new HomeAgentError('HA_ERR_RPC_INVALID_PARAMS', 'memory.forget: give exactly one target');
      forgotten.push(params);
      return { forgot: params };
    },
  );
  return { relations, forgotten };
}

t.test('search, stats, introspect, entities, documents: query strings become typed params', async (t) => {
  const h = await apiHarness(t);
  fakeMemory(h);
  const search = await h.request({ method: 'GET', url: '/api/v1/memory/search?q=where%20does%20Alice%20live&limit=5' });
  t.match(search.json, { ok: true, result: { abstain: false, items: [{ kind: 'fact', sources: ['ev-1'] }] } });
  t.same(h.calls.at(-1)?.params, { query: 'where does Alice live', limit: 5 }, "q is the method's query");

  const noQ = await h.request({ method: 'GET', url: '/api/v1/memory/search?q=' });
  t.equal(noQ.status, 400);
  t.match(noQ.json, { error: { code: 'HA_ERR_RPC_INVALID_PARAMS', message: 'query parameter q is required' } });

  t.match((await h.request({ method: 'GET', url: '/api/v1/memory/stats' })).json, { ok: true, result: { entities: { total: 1 } } });
  t.match((await h.request({ method: 'GET', url: '/api/v1/memory/introspect' })).json, { ok: true, result: { relations: 2 } });

  await h.request({ method: 'GET', url: '/api/v1/memory/entities?q=ali&limit=20&offset=40' });
  t.same(h.calls.at(-1)?.params, { q: 'ali', limit: 20, offset: 40 });
  await h.request({ method: 'GET', url: '/api/v1/memory/documents?offset=0' });
  t.same(h.calls.at(-1)?.params, { offset: 0 });
  const negative = await h.request({ method: 'GET', url: '/api/v1/memory/documents?offset=-1' });
  t.equal(negative.status, 400, "the method's bounds apply");
  t.match(negative.json, { error: { message: /memory.documents: params.offset/ } });
});

t.test('an entity by name (any script, URL-encoded), its relations with provenance, the input a fact came from', async (t) => {
  const h = await apiHarness(t);
  fakeMemory(h);
  const entity = await h.request({ method: 'GET', url: `/api/v1/memory/entities/${encodeURIComponent('爱丽丝 Smith')}` });
  t.equal(entity.status, 200);
  t.same(h.calls.at(-1)?.params, { name: '爱丽丝 Smith' });
  const unknown = await h.request({ method: 'GET', url: '/api/v1/memory/entities/Bob' });
  t.equal(unknown.status, 404);
  t.match(unknown.json, { error: { message: /no entity named "Bob"/ } });

  await h.request({ method: 'GET', url: '/api/v1/memory/relations?entity=Alice&history=true&limit=100&offset=100' });
  t.same(h.calls.at(-1)?.params, { entity: 'Alice', history: true, limit: 100, offset: 100 });

  const event = await h.request({ method: 'GET', url: '/api/v1/memory/events/ev-1' });
  t.match(event.json, { ok: true, result: { id: 'ev-1', text: 'Alice lives in Paris' } });
});

t.test('correcting a fact: PATCH a relation by id, as the caller', async (t) => {
  const h = await apiHarness(t);
  const { relations } = fakeMemory(h);
  const reply = await h.request({
    method: 'PATCH',
    url: '/api/v1/memory/relations/1',
    payload: { object: 'Lyon' },
    headers: { 'x-test-actor': 'webui:admin' },
  });
  t.equal(reply.status, 200);
  t.match(reply.json, { ok: true, result: { relation: { id: 3, subject: 'Alice', object: 'Lyon' }, superseded: 1, actor: 'webui:admin' } });
  t.same(h.calls.at(-1)?.params, { relation_id: 1, object: 'Lyon' });

  const before = JSON.stringify(relations);
  for (const [label, url, payload, message] of [
    [
      'an id that is no number',
      '/api/v1/memory/relations/abc',
      { object: 'Nice' },
      /relation id in the path must be a positive whole number, got "abc"/,
    ],
    ['id zero', '/api/v1/memory/relations/0', { object: 'Nice' }, /positive whole number/],
    ['an id with a sign', '/api/v1/memory/relations/+1', { object: 'Nice' }, /positive whole number/],
    ['an unknown field', '/api/v1/memory/relations/3', { object: 'Nice', confidence: 1 }, /unknown field "confidence"/],
    ['nothing to change', '/api/v1/memory/relations/3', {}, /change at least one/],
    ['a superseded relation', '/api/v1/memory/relations/1', { object: 'Nice' }, /no current relation 1/],
    ['an object of the wrong type', '/api/v1/memory/relations/3', { object: 42 }, /memory.edit: params.object/],
  ] as const) {
    const bad = await h.request({ method: 'PATCH', url, payload });
    t.equal(bad.status, 400, `${label}: 400`);
    t.match(bad.json, { ok: false, error: { code: 'HA_ERR_RPC_INVALID_PARAMS', message } }, `${label}: says why`);
  }
  t.equal(JSON.stringify(relations), before, 'the graph is untouched by the refused edits');
});

t.test('forgetting: a relation, an entity (soft or hard), a document, an event', async (t) => {
  const h = await apiHarness(t);
  const { forgotten } = fakeMemory(h);
  t.equal((await h.request({ method: 'DELETE', url: '/api/v1/memory/relations/2' })).status, 200);
  t.equal((await h.request({ method: 'DELETE', url: '/api/v1/memory/entities/Alice' })).status, 200);
  t.equal((await h.request({ method: 'DELETE', url: '/api/v1/memory/entities/Alice?hard=true' })).status, 200);
  t.equal((await h.request({ method: 'DELETE', url: '/api/v1/memory/documents/7' })).status, 200);
  t.equal((await h.request({ method: 'DELETE', url: '/api/v1/memory/events/ev-1' })).status, 200);
  t.same(forgotten, [{ relation: 2 }, { entity: 'Alice' }, { entity: 'Alice', hard: true }, { document: 7 }, { event: 'ev-1' }]);

  const hardDocument = await h.request({ method: 'DELETE', url: '/api/v1/memory/documents/7?hard=true' });
  t.equal(hardDocument.status, 400, 'hard belongs to entities only');
  t.match(hardDocument.json, { error: { message: /unknown query parameter "hard"/ } });
  const badDocument = await h.request({ method: 'DELETE', url: '/api/v1/memory/documents/seven' });
  t.equal(badDocument.status, 400);
  t.equal(forgotten.length, 5, 'nothing more was forgotten');
});

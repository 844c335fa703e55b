// The memory graph view's neighbourhood query (src/memory/graph-view.ts) on a real memory.db:
// the walk, its filters (entity type, relation type, when said, true at, history), the counts of
// relations not drawn, and its caps on a 10,000-entity graph with a hub related to every entity;
// then memory.graph and memory.graph_types through a real ControlRegistry (owner only, coded
// errors for a missing node and for parameters that do not read).
import t from 'tap';
import {
  DEFAULT_GRAPH_NODES,
  graphNeighbourhood,
  MAX_GRAPH_EDGES,
  MAX_GRAPH_NODES,
  RELATION_COUNT_CAP,
  registerGraphViewMethods,
} from '../../../src/memory/graph-view.js';
import { ControlRegistry } from '../../../src/plugin/control-registry.js';
import { expectError, expectErrorAsync, tempDir } from '../fixtures/support.js';
import { HOUR, openStores, T0 } from './fixtures/memory-fixture.js';

type Stores = ReturnType<typeof openStores>;
const at = (ms: number) => new Date(ms).toISOString();
const names = (result: { nodes: Array<{ name: string }> }) => result.nodes.map((n) => n.name).sort();

/**
 * Anna lived in Oslo (T0), then Shanghai (T0 + 1 h); Bert knows Anna; Anna has a cat, Mimi, who
 * sleeps in the kitchen (T0 + 3 h); the kitchen is part of the house.
 */
async function household(stores: Stores): Promise<void> {
  const { graph } = stores;
  await graph.commit(
    [{ subject: 'Anna', relation: 'lives_in', object: 'Oslo', subject_type: 'person', object_type: 'place', sentence: 'I live in Oslo.' }],
    { source_event_id: 'ev-1', timestamp: T0 },
  );
  await graph.commit(
    [{ subject: 'Anna', relation: 'lives_in', object: 'Shanghai', object_type: 'place', sentence: 'I moved to Shanghai.' }],
    { source_event_id: 'ev-2', timestamp: T0 + HOUR },
  );
  await graph.commit(
    [{ subject: 'Bert', relation: 'knows', object: 'Anna', subject_type: 'person', sentence: 'Bert knows Anna from school.' }],
    { source_event_id: 'ev-3', timestamp: T0 + 2 * HOUR },
  );
  await graph.commit(
    [
      { subject: 'Anna', relation: 'has_pet', object: 'Mimi', object_type: 'animal', sentence: 'Our cat Mimi sleeps in the kitchen.' },
      { subject: 'Mimi', relation: 'located_in', object: 'kitchen', object_type: 'place', sentence: 'Our cat Mimi sleeps in the kitchen.' },
      { subject: 'kitchen', relation: 'part_of', object: 'house', object_type: 'place' },
    ],
    { source_event_id: 'ev-4', timestamp: T0 + 3 * HOUR },
  );
}

t.test('a neighbourhood: current relations within the depth, with the sentences and the relations not drawn', async (t) => {
  const stores = openStores(t, tempDir(t));
  await household(stores);
  const one = graphNeighbourhood(stores, { entity: 'anna', depth: 1 });
  t.match(one.center, { name: 'Anna' }, 'the centre found by its name in any case');
  t.equal(one.nodes[0]?.name, 'Anna', 'the centre comes first');
  t.same(names(one), ['Anna', 'Bert', 'Mimi', 'Shanghai'], 'one hop, current only: Oslo is history');
  t.same(
    one.nodes.map((n) => n.depth),
    [0, 1, 1, 1],
  );
  const mimi = one.nodes.find((n) => n.name === 'Mimi');
  t.match(mimi, { type: 'animal', relation_count: 2, hidden_relations: 1, relation_count_capped: false }, 'Mimi has one relation beyond');
  t.match(one.nodes[0], { relation_count: 3, hidden_relations: 0 }, 'every relation of the centre is drawn');
  t.equal(one.edges.length, 3);
  const pet = one.edges.find((e) => e.type === 'has_pet');
  t.match(pet, {
    source: one.center.id,
    target: mimi?.id,
    sentence: 'Our cat Mimi sleeps in the kitchen.',
    valid_from: at(T0 + 3 * HOUR),
    valid_to: null,
  });
  t.same(one.truncated, { nodes: false, edges: false });

  const two = graphNeighbourhood(stores, { entity: 'Anna' });
  t.equal(two.depth, 2, 'two hops by default');
  t.same(names(two), ['Anna', 'Bert', 'Mimi', 'Shanghai', 'kitchen']);
  t.equal(two.nodes.find((n) => n.name === 'kitchen')?.depth, 2);
  t.same(names(graphNeighbourhood(stores, { entity: 'Anna', depth: 3 })), ['Anna', 'Bert', 'Mimi', 'Shanghai', 'house', 'kitchen']);

  const byId = graphNeighbourhood(stores, { entity: one.center.id, depth: 1 });
  t.same(names(byId), names(one), 'by id the same');
  t.same(names(graphNeighbourhood(stores, { entity: 'Mimi', depth: 1 })), ['Anna', 'Mimi', 'kitchen'], 'relations are followed both ways');
});

t.test('filters: entity type, relation type, when said, true at a time, history', async (t) => {
  const stores = openStores(t, tempDir(t));
  await household(stores);
  t.same(
    names(graphNeighbourhood(stores, { entity: 'Anna', depth: 2, entityTypes: ['place'] })),
    ['Anna', 'Shanghai'],
    'only places: Mimi (an animal) is not walked into, so neither is the kitchen behind her',
  );
  t.same(
    names(graphNeighbourhood(stores, { entity: 'Mimi', depth: 1, entityTypes: ['place'] })),
    ['Mimi', 'kitchen'],
    'the centre is shown whatever its type',
  );
  t.same(names(graphNeighbourhood(stores, { entity: 'Anna', depth: 1, entityTypes: [''] })), ['Anna'], "'' is the untyped: none here");
  t.same(names(graphNeighbourhood(stores, { entity: 'Anna', depth: 3, relationTypes: ['Has Pet', 'located_in'] })), [
    'Anna',
    'Mimi',
    'kitchen',
  ]);
  const history = graphNeighbourhood(stores, { entity: 'Anna', depth: 1, history: true });
  t.same(names(history), ['Anna', 'Bert', 'Mimi', 'Oslo', 'Shanghai'], 'history shows the old home');
  t.match(
    history.edges.find((e) => e.type === 'lives_in' && e.valid_to !== null),
    { valid_to: at(T0 + HOUR) },
  );
  t.equal(history.nodes.at(-1)?.name, 'Oslo', 'current relations are walked before history');

  t.same(
    names(graphNeighbourhood(stores, { entity: 'Anna', depth: 1, at: T0 + HOUR / 2 })),
    ['Anna', 'Oslo'],
    'true half an hour after T0: she lived in Oslo and nothing else was said yet',
  );
  t.same(names(graphNeighbourhood(stores, { entity: 'Anna', depth: 1, at: T0 + 10 * HOUR })), ['Anna', 'Bert', 'Mimi', 'Shanghai']);
  t.same(
    names(graphNeighbourhood(stores, { entity: 'Anna', depth: 2, since: T0 + 2 * HOUR })),
    ['Anna', 'Bert', 'Mimi', 'kitchen'],
    'said since T0 + 2 h',
  );
  t.same(names(graphNeighbourhood(stores, { entity: 'Anna', depth: 2, until: T0 + 2 * HOUR })), ['Anna', 'Bert', 'Shanghai']);
  const counted = graphNeighbourhood(stores, { entity: 'Anna', depth: 1, relationTypes: ['knows'] });
  t.match(counted.nodes[0], { relation_count: 1, hidden_relations: 0 }, 'counts follow the filters');
});

t.test('a missing centre is HA_ERR_MEMORY_NOT_FOUND, by name or id', async (t) => {
  const stores = openStores(t, tempDir(t));
  await household(stores);
  const byName = expectError(t, () => graphNeighbourhood(stores, { entity: 'Zed' }), 'HA_ERR_MEMORY_NOT_FOUND');
  t.match(byName.message, /no entity named "Zed"/);
  const byId = expectError(t, () => graphNeighbourhood(stores, { entity: 99_999 }), 'HA_ERR_MEMORY_NOT_FOUND');
  t.match(byId.message, /no entity with id 99999/);
});

t.test('10,000 entities around a hub: the answer stays within its caps', async (t) => {
  const stores = openStores(t, tempDir(t));
  const ENTITIES = 10_000;
  // home is related to every other entity; each entity also to its next two (a ring), so every
  // node has neighbours beyond whatever is drawn.
  for (let start = 1; start < ENTITIES; start += 1000) {
    const triples = [];
    for (let i = start; i < Math.min(ENTITIES, start + 1000); i++) {
      // The thing is the subject: the graph's write rules look at a subject's current values of a type.
      triples.push({ subject: `thing ${i}`, relation: 'belongs_to', object: 'home', subject_type: i % 2 === 0 ? 'device' : 'item' });
      triples.push({ subject: `thing ${i}`, relation: 'near', object: `thing ${((i + 1) % (ENTITIES - 1)) + 1}` });
      triples.push({ subject: `thing ${i}`, relation: 'near', object: `thing ${((i + 2) % (ENTITIES - 1)) + 1}` });
    }
    await stores.graph.commit(triples, { timestamp: T0 + start });
  }
  t.equal(stores.graph.introspect().entities, ENTITIES, 'the graph holds 10,000 entities');

  const hub = graphNeighbourhood(stores, { entity: 'home', depth: 4, maxNodes: 10_000 });
  t.equal(hub.max_nodes, MAX_GRAPH_NODES, 'a node cap above the ceiling is cut to it');
  t.equal(hub.nodes.length, MAX_GRAPH_NODES, 'exactly the cap of entities');
  t.ok(hub.edges.length <= MAX_GRAPH_EDGES, `${hub.edges.length} edges within ${MAX_GRAPH_EDGES}`);
  t.same(hub.truncated.nodes, true, 'the walk says it stopped at the cap');
  t.match(hub.nodes[0], { name: 'home', relation_count: RELATION_COUNT_CAP, relation_count_capped: true }, 'the hub is counted to the cap');
  t.ok((hub.nodes[0]?.hidden_relations ?? 0) > 0, 'and says relations are not drawn');
  const ids = new Set(hub.nodes.map((n) => n.id));
  t.ok(
    hub.edges.every((e) => ids.has(e.source) && ids.has(e.target)),
    'every edge joins two drawn entities',
  );
  t.equal(new Set(hub.nodes.map((n) => n.id)).size, hub.nodes.length, 'no entity twice');

  const plain = graphNeighbourhood(stores, { entity: 'thing 5000' });
  t.equal(plain.nodes.length, DEFAULT_GRAPH_NODES, 'the default cap from an ordinary entity (the hub is two hops from all)');
  t.ok(plain.nodes.some((n) => n.name === 'home'));
  const devices = graphNeighbourhood(stores, { entity: 'home', depth: 1, entityTypes: ['device'], maxNodes: 50 });
  t.equal(devices.nodes.length, 50);
  t.ok(
    devices.nodes.slice(1).every((n) => n.type === 'device'),
    'the filter holds at scale',
  );
});

t.test('memory.graph and memory.graph_types: owner only, typed params, coded errors', async (t) => {
  const stores = openStores(t, tempDir(t));
  await household(stores);
  const control = new ControlRegistry();
  registerGraphViewMethods(control, { parts: () => ({ stores }) });
  const owner = { actor: 'webui:session', owner: true };
  const call = (method: string, params: unknown, caller: { actor: string; owner?: boolean } = owner) =>
    control.call(method, params, caller);

  const result = (await call('memory.graph', { entity: 'Anna', depth: 1, history: true, relation_types: ['lives_in'] })) as {
    nodes: Array<{ name: string }>;
  };
  t.same(names(result), ['Anna', 'Oslo', 'Shanghai']);
  const when = (await call('memory.graph', { entity: 'Anna', depth: 1, at: at(T0 + HOUR / 2) })) as { nodes: Array<{ name: string }> };
  t.same(names(when), ['Anna', 'Oslo'], 'at as an ISO time');
  const dated = (await call('memory.graph', { entity: 'Anna', depth: 2, since: '2024-05-06T10:00:00Z' })) as {
    nodes: Array<{ name: string }>;
  };
  t.same(names(dated), ['Anna', 'Bert', 'Mimi', 'kitchen']);

  const refused = await expectErrorAsync(
    t,
    () => call('memory.graph', { entity: 'Anna' }, { actor: 'plugin:mqtt' }),
    'HA_ERR_RPC_FORBIDDEN',
  );
  t.match(refused.message, /owner only/);
  await expectErrorAsync(t, () => call('memory.graph_types', {}, { actor: 'plugin:mqtt' }), 'HA_ERR_RPC_FORBIDDEN');
  const missing = await expectErrorAsync(t, () => call('memory.graph', { entity: 'Zed' }), 'HA_ERR_MEMORY_NOT_FOUND');
  t.match(missing.message, /Zed/);
  await expectErrorAsync(t, () => call('memory.graph', { id: 424_242 }), 'HA_ERR_MEMORY_NOT_FOUND');
  await expectErrorAsync(t, () => call('memory.graph', {}), 'HA_ERR_RPC_INVALID_PARAMS');
  await expectErrorAsync(t, () => call('memory.graph', { entity: 'Anna', id: 1 }), 'HA_ERR_RPC_INVALID_PARAMS');
  await expectErrorAsync(t, () => call('memory.graph', { entity: 'Anna', depth: 9 }), 'HA_ERR_RPC_INVALID_PARAMS');
  await expectErrorAsync(t, () => call('memory.graph', { entity: 'Anna', max_nodes: MAX_GRAPH_NODES + 1 }), 'HA_ERR_RPC_INVALID_PARAMS');
  const badDate = await expectErrorAsync(
    t,
    () => call('memory.graph', { entity: 'Anna', since: 'last tuesday' }),
    'HA_ERR_RPC_INVALID_PARAMS',
  );
  t.match(badDate.message, /since must be an ISO date/);
  await expectErrorAsync(
    t,
    () => call('memory.graph', { entity: 'Anna', since: '2024-06-01', until: '2024-05-01' }),
    'HA_ERR_RPC_INVALID_PARAMS',
  );

  const types = (await call('memory.graph_types', {})) as { entity_types: Array<{ type: string; count: number }>; relation_types: unknown };
  t.same(
    types.entity_types.find((e) => e.type === 'place'),
    { type: 'place', count: 4 },
    'Oslo, Shanghai, kitchen, house',
  );
  t.match(types.relation_types, [{ type: 'lives_in', count: 2 }]);
});

import t from 'tap';
import { PersonDirectory } from '../../../src/memory/person-directory.js';
import { ToolError } from '../../../src/shared/tool.js';
import { tempDir } from '../fixtures/support.js';
import { HOUR, openStores, T0 } from './fixtures/memory-fixture.js';

t.test('traits overwrite and keep history; people are typed', async (t) => {
  const { graph, clock } = openStores(t, tempDir(t));
  const people = new PersonDirectory(graph);
  await people.setTrait('Alice', 'favourite colour', 'green', { source_event_id: 'e1', sentence: 'Alice loves green' });
  await people.setTrait('Alice', 'birthday', 'May 3');
  clock.advance(HOUR);
  await people.setTrait('alice', 'Favourite Colour', 'blue');
  const view = people.query('Alice');
  t.equal(view?.person.type, 'person');
  t.same(view?.traits.map((r) => `${r.type}=${r.target.name}`).sort(), ['birthday=May 3', 'favourite_colour=blue']);
  t.same(
    graph.history('Alice', 'favourite_colour').map((r) => [r.target.name, r.valid_to]),
    [
      ['blue', null],
      ['green', T0 + HOUR],
    ],
  );
  // An ordinary commit of the same trait type also overwrites: the type stays single-valued for Alice.
  clock.advance(HOUR);
  await graph.commit([{ subject: 'Alice', relation: 'favourite_colour', object: 'red' }]);
  t.same(
    people
      .query('Alice')
      ?.traits.filter((r) => r.type === 'favourite_colour')
      .map((r) => r.target.name),
    ['red'],
  );
  t.equal(people.query('nobody'), undefined);
  await t.rejects(people.setTrait('Alice', ' ', 'x'), ToolError);
});

t.test('relations between people are stored both ways; the network walks people only, depth 2', async (t) => {
  const { graph } = openStores(t, tempDir(t));
  const people = new PersonDirectory(graph);
  await people.relate('Alice', 'friend_of', 'Bob');
  await people.relate('Carol', 'parent_of', 'Bob', { inverse: 'child_of' });
  await people.relate('Carol', 'sibling_of', 'Dave');
  await people.relate('Dave', 'colleague_of', 'Erin');
  await people.setTrait('Bob', 'lives_in', 'Oslo');
  const bob = people.query('Bob');
  t.same(bob?.relations.map((r) => `${r.source.name} ${r.type} ${r.target.name}`).sort(), [
    'Alice friend_of Bob',
    'Bob child_of Carol',
    'Bob friend_of Alice',
    'Carol parent_of Bob',
  ]);
  t.same(
    bob?.traits.map((r) => r.target.name),
    ['Oslo'],
  );
  const network = people.network('Alice');
  t.same(
    network.entities.map((e) => [e.name, e.depth]),
    [
      ['Alice', 0],
      ['Bob', 1],
      ['Carol', 2],
    ],
    'depth 2 by default; Oslo is not a person',
  );
  t.same(
    people
      .network('Alice', { depth: 3 })
      .entities.map((e) => e.name)
      .sort(),
    ['Alice', 'Bob', 'Carol', 'Dave'],
  );
  t.equal(people.network('Alice', { depth: 3, nodeBudget: 2 }).entities.length, 2);
});

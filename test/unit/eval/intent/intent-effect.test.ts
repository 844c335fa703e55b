/**
 * Scoring by effect (src/eval/intent/intent-effect.ts): two writings of one act are one answer,
 * and two acts on different entities, durations or lists stay different — including for the
 * wrong-action count, which is the figure issue 26 judges hardest.
 */
import t from 'tap';
import { canonicalIntent, effectHome, sameTargets } from '../../../../src/eval/intent/intent-effect.js';
import { caseMatches, isWrongAction } from '../../../../src/eval/intent/intent-score.js';
import type { IntentHome } from '../../../../src/intent/recognizer.js';

const HOME: IntentHome = {
  floors: [{ name: 'Downstairs' }],
  areas: [{ name: 'Garage', floor: 'Downstairs' }, { name: 'Kitchen', floor: 'Downstairs' }, { name: 'Bathroom' }],
  entities: [
    { name: 'Double Garage Door', domain: 'cover', area: 'Garage', device_class: 'garage' },
    { name: 'Garage Light', domain: 'light', area: 'Garage' },
    { name: 'Kitchen Light', domain: 'light', area: 'Kitchen', aliases: ['Ceiling Light'] },
    { name: 'Kitchen Blind', domain: 'cover', area: 'Kitchen', device_class: 'blind' },
    { name: 'Kitchen Shutter', domain: 'cover', area: 'Kitchen', device_class: 'shutter' },
    { name: 'Bathroom Humidity', domain: 'sensor', area: 'Bathroom', device_class: 'humidity' },
    { name: 'Shopping List', domain: 'todo', aliases: ['Grocery List'] },
    { name: 'Chores', domain: 'todo' },
  ],
};
const home = effectHome(HOME);

t.test('a name and a class-and-area that mean the same one device are the same target', async (t) => {
  t.ok(sameTargets({ domain: 'cover', device_class: 'garage' }, { name: 'Double Garage Door', domain: 'cover' }, home));
  t.ok(sameTargets({ name: 'Bathroom Humidity' }, { domain: 'sensor', device_class: 'humidity', area: 'Bathroom' }, home));
  // An alias or another case of the registered name is the same device.
  t.ok(sameTargets({ name: 'Kitchen Light' }, { name: 'ceiling light' }, home));
  // The kitchen holds two covers: "the kitchen covers" is not "the kitchen blind".
  t.notOk(sameTargets({ name: 'Kitchen Blind' }, { domain: 'cover', area: 'Kitchen' }, home));
  t.notOk(sameTargets({ domain: 'light', area: 'Garage' }, { domain: 'cover', area: 'Garage' }, home));
  // Nothing resolves: only the literal comparison can match.
  t.notOk(sameTargets({ name: 'Attic Light' }, { name: 'Attic Light' }, home));
  t.notOk(sameTargets({}, { name: 'Kitchen Light' }, home));
  // An expected list is any one of its values.
  t.ok(sameTargets({ name: ['Porch Light', 'Garage Light'] }, { area: 'Garage', domain: 'light' }, home));
});

t.test('durations and the shopping list have one canonical writing', async (t) => {
  t.same(canonicalIntent('HassStartTimer', { hours: 1, minutes: 30 }), { name: 'HassStartTimer', slots: { duration_s: 5400 } });
  t.same(canonicalIntent('HassStartTimer', { minutes: '90', name: 'pasta' }), {
    name: 'HassStartTimer',
    slots: { name: 'pasta', duration_s: 5400 },
  });
  t.same(canonicalIntent('HassShoppingListAddItem', { item: 'eggs' }), {
    name: 'HassListAddItem',
    slots: { item: 'eggs', name: 'Shopping List' },
  });
  t.same(canonicalIntent('HassTurnOn', { name: 'Kitchen Light' }), { name: 'HassTurnOn', slots: { name: 'Kitchen Light' } });
});

t.test('cases match by effect only with the home, and different effects stay wrong actions', async (t) => {
  const garage = { name: 'HassTurnOff', slots: { domain: 'cover', device_class: 'garage' } };
  const read = { name: 'HassTurnOff', slots: { name: 'Double Garage Door', domain: 'cover' } };
  t.notOk(caseMatches(garage, read), 'literal comparison without the home');
  t.ok(caseMatches(garage, read, home));
  t.notOk(caseMatches({ name: 'HassTurnOn', slots: garage.slots }, read, home), 'the intent itself must agree');
  t.ok(caseMatches({ name: 'HassStartTimer', slots: { minutes: 90 } }, { name: 'HassStartTimer', slots: { hours: 1, minutes: 30 } }));
  t.notOk(caseMatches({ name: 'HassStartTimer', slots: { minutes: 90 } }, { name: 'HassStartTimer', slots: { hours: 1 } }));
  const eggs = { name: 'HassListAddItem', slots: { item: 'eggs', name: ['Shopping List', 'Grocery List'] } };
  t.ok(caseMatches(eggs, { name: 'HassShoppingListAddItem', slots: { item: 'eggs' } }));
  t.notOk(caseMatches(eggs, { name: 'HassShoppingListAddItem', slots: { item: 'eggs please' } }), 'other slots stay literal');
  t.notOk(
    caseMatches(
      { name: 'HassListAddItem', slots: { item: 'eggs', name: 'Chores' } },
      { name: 'HassShoppingListAddItem', slots: { item: 'eggs' } },
      home,
    ),
  );

  const expect = { kind: 'intents' as const, intents: [garage] };
  t.notOk(isWrongAction(expect, { kind: 'intents', intents: [read] }, home));
  t.ok(isWrongAction(expect, { kind: 'intents', intents: [{ name: 'HassTurnOff', slots: { name: 'Garage Light' } }] }, home));
});

t.test("the shopping-list intents act on the home's own shopping list, in its language", async (t) => {
  const zh = effectHome({
    floors: [],
    areas: [],
    entities: [
      { name: '购物清单', domain: 'todo' },
      { name: '待办事项', domain: 'todo' },
    ],
  });
  t.equal(zh.shoppingList, '购物清单');
  t.equal(home.shoppingList, 'Shopping List');
  const eggs = { name: 'HassListAddItem', slots: { item: '鸡蛋', name: '购物清单' } };
  t.ok(caseMatches(eggs, { name: 'HassShoppingListAddItem', slots: { item: '鸡蛋' } }, zh));
  t.notOk(
    caseMatches({ ...eggs, slots: { item: '鸡蛋', name: '待办事项' } }, { name: 'HassShoppingListAddItem', slots: { item: '鸡蛋' } }, zh),
  );
});

// The list store on a real state database: adding (English and Chinese, no duplicates), matching
// items the way people say them, ambiguity, the limits, refusals that leave the lists as they
// were, finding lists by spoken names, restarts and the clean-up of old done items.
import t, { type Test } from 'tap';
import { ListStore } from '../../../src/lists/list-store.js';
import { expectError } from '../fixtures/support.js';
import { DAY_MS, openLists, T0 } from './list-fixture.js';

const texts = (store: ListStore, list: string, includeDone = false) => store.items(list, { include_done: includeDone }).map((i) => i.text);

/** Everything stored, to compare before and after a refused call. */
function snapshot(store: ListStore) {
  return store.lists().map((l) => ({ ...l, items: l.open + l.done === 0 ? [] : store.items(l.name, { include_done: true }) }));
}

function untouched(t: Test, store: ListStore, run: () => unknown, code: Parameters<typeof expectError>[2]) {
  const before = snapshot(store);
  const error = expectError(t, run, code);
  t.same(snapshot(store), before, 'the stored lists are unchanged');
  return error;
}

t.test('add puts English and Chinese items on the shopping list, once each', async (t) => {
  const { lists, clock } = await openLists(t);
  t.same(lists.lists(), [{ name: ListStore.SHOPPING, open: 0, done: 0 }], 'the shopping list is there before anything is added');
  t.same(lists.items(ListStore.SHOPPING), []);

  const milk = lists.add(ListStore.SHOPPING, '  Milk. ');
  t.same(milk, { list: 'shopping list', added: true, item: { id: milk.item.id, text: 'Milk', done: false, added_at: T0, done_at: null } });
  clock.advance(1000);
  const rice = lists.add('shopping list', '大米');
  t.equal(rice.added, true);
  t.equal(rice.item.added_at, T0 + 1000);

  for (const again of ['milk', 'MILK!', 'ｍｉｌｋ', ' milk 。', 'Milk?']) {
    const result = lists.add('Shopping', again);
    t.equal(result.added, false, `${JSON.stringify(again)} is milk again`);
    t.equal(result.item.id, milk.item.id);
    t.equal(result.list, 'shopping list');
  }
  t.equal(lists.add('购物清单', '大米。').added, false, '购物清单 is the shopping list; 大米。 is 大米');
  t.equal(lists.add(ListStore.SHOPPING, ' 大 米 ').added, false, 'spaces between Chinese characters separate nothing');
  t.equal(lists.add(ListStore.SHOPPING, 'Milk tea').added, true, 'spaces between English words do');
  t.equal(lists.add(ListStore.SHOPPING, 'Milktea').added, true);
  t.same(texts(lists, ListStore.SHOPPING), ['Milk', '大米', 'Milk tea', 'Milktea']);
  t.same(lists.lists(), [{ name: 'shopping list', open: 4, done: 0 }]);
});

t.test('other lists are created on first use and found by the names people use', async (t) => {
  const { lists } = await openLists(t);
  t.equal(lists.findList('groceries'), undefined, 'not there yet');
  t.equal(lists.add('Groceries list', 'eggs').list, 'Groceries list');
  t.equal(lists.add('待办清单', '交电费').list, '待办清单');
  t.equal(lists.add('To-do list', 'call the plumber').list, 'To-do list');

  t.equal(lists.findList('groceries'), 'Groceries list');
  t.equal(lists.findList('the groceries list'), 'Groceries list');
  t.equal(lists.findList('GROCERIES'), 'Groceries list');
  t.equal(lists.findList('待办'), '待办清单');
  t.equal(lists.findList('待办列表'), '待办清单');
  t.equal(lists.findList('todo'), 'To-do list');
  t.equal(lists.findList('to do'), 'To-do list');
  t.equal(lists.findList('shopping'), ListStore.SHOPPING, 'the shopping list is found before it is stored');
  t.equal(lists.findList('购物'), ListStore.SHOPPING);
  t.equal(lists.findList('购物清单'), ListStore.SHOPPING);
  t.equal(lists.findList('hardware'), undefined);
  t.equal(lists.findList('  '), undefined);
  t.equal(lists.findList('!!'), undefined);

  t.equal(lists.add('groceries', 'bread').list, 'Groceries list', 'adding by a short name goes to the existing list');
  t.same(texts(lists, 'groceries'), ['eggs', 'bread']);
  t.same(
    lists.lists(),
    [
      { name: 'shopping list', open: 0, done: 0 },
      { name: 'Groceries list', open: 2, done: 0 },
      { name: '待办清单', open: 1, done: 0 },
      { name: 'To-do list', open: 1, done: 0 },
    ],
    'the shopping list first, then the lists in the order they were made',
  );
});

t.test('complete finds the exact item, else the one item containing the words', async (t) => {
  const { lists, clock } = await openLists(t);
  for (const item of ['Oat milk', 'Whole milk', 'Bread', '纯牛奶', '苹果', 'milk']) lists.add(ListStore.SHOPPING, item);
  clock.advance(5000);

  const milk = lists.complete(ListStore.SHOPPING, 'MILK!');
  t.equal(milk.item.text, 'milk', 'the exact item wins over the ones containing it');
  t.equal(milk.item.done, true);
  t.equal(milk.item.done_at, T0 + 5000);

  const ambiguous = expectError(t, () => lists.complete('shopping', 'milk'), 'HA_ERR_LIST_AMBIGUOUS');
  t.match(ambiguous.message, /"milk" matches 2 open items on the shopping list: Oat milk, Whole milk/);
  t.same(ambiguous.details?.candidates, ['Oat milk', 'Whole milk']);

  clock.advance(1000);
  t.equal(lists.complete(ListStore.SHOPPING, 'oat').item.text, 'Oat milk');
  clock.advance(1000);
  t.equal(lists.complete(ListStore.SHOPPING, 'milk').item.text, 'Whole milk', 'unambiguous once the others are done');
  clock.advance(1000);
  t.equal(lists.complete('购物清单', '牛奶').item.text, '纯牛奶', 'Chinese: 牛奶 finds 纯牛奶');
  clock.advance(1000);
  t.equal(lists.complete(ListStore.SHOPPING, 'ｂｒｅａｄ').item.text, 'Bread', 'full-width text matches');

  const missing = expectError(t, () => lists.complete(ListStore.SHOPPING, 'cheese'), 'HA_ERR_LIST_NOT_FOUND');
  t.equal(missing.message, 'no open item "cheese" on the shopping list');
  t.equal(missing.details?.field, 'item');
  const done = expectError(t, () => lists.complete(ListStore.SHOPPING, 'bread'), 'HA_ERR_LIST_NOT_FOUND');
  t.equal(done.message, 'no open item "bread" on the shopping list (it is already done)');

  t.same(texts(lists, ListStore.SHOPPING), ['苹果']);
  t.same(
    texts(lists, ListStore.SHOPPING, true),
    ['苹果', 'milk', 'Oat milk', 'Whole milk', '纯牛奶', 'Bread'],
    'done items in the order they were done',
  );
  t.same(lists.lists(), [{ name: 'shopping list', open: 1, done: 5 }]);

  t.equal(lists.add(ListStore.SHOPPING, 'milk').added, true, 'a done item can be put on the list again');
});

t.test('an unknown list is refused naming the lists there are', async (t) => {
  const { lists } = await openLists(t);
  lists.add('hardware', 'screws');
  const error = untouched(t, lists, () => lists.complete('garden', 'rake'), 'HA_ERR_LIST_NOT_FOUND');
  t.equal(error.message, 'no list is called "garden"; the lists are: shopping list, hardware');
  t.same(error.details, { field: 'list', lists: ['shopping list', 'hardware'] });
  expectError(t, () => lists.items('garden'), 'HA_ERR_LIST_NOT_FOUND');
  expectError(t, () => lists.remove('garden', 'rake'), 'HA_ERR_LIST_NOT_FOUND');
  const empty = expectError(t, () => lists.complete(ListStore.SHOPPING, 'milk'), 'HA_ERR_LIST_NOT_FOUND');
  t.equal(empty.message, 'no open item "milk" on the shopping list', 'the shopping list exists, empty, before its first item');
});

t.test('remove deletes an open item first, else a done one', async (t) => {
  const { lists } = await openLists(t);
  lists.add('to-do', 'water the plants');
  lists.complete('to-do', 'plants');
  lists.add('to-do', 'water the plants');
  t.same(lists.lists()[1], { name: 'to-do', open: 1, done: 1 });

  t.equal(lists.remove('todo list', 'plants').item.done, false, 'the open one goes first');
  t.same(lists.lists()[1], { name: 'to-do', open: 0, done: 1 });
  t.equal(lists.remove('to-do', 'Water the plants.').item.done, true, 'then the done one');
  const error = untouched(t, lists, () => lists.remove('to-do', 'plants'), 'HA_ERR_LIST_NOT_FOUND');
  t.equal(error.message, 'no item "plants" on the to-do list');
});

t.test('bad input is refused naming the problem, and the lists stay as they were', async (t) => {
  const { lists } = await openLists(t, { max_item_chars: 10 });
  lists.add(ListStore.SHOPPING, 'milk');
  lists.add('chores', 'dishes');

  const cases: Array<[string, () => unknown, string, string]> = [
    ['empty item', () => lists.add(ListStore.SHOPPING, ''), 'item', 'empty'],
    ['white space', () => lists.add(ListStore.SHOPPING, ' \t '), 'item', 'empty'],
    ['punctuation only', () => lists.add(ListStore.SHOPPING, '。！'), 'item', 'empty'],
    ['too long', () => lists.add(ListStore.SHOPPING, 'a'.repeat(11)), 'item', 'too_long'],
    ['control characters', () => lists.add(ListStore.SHOPPING, 'milk\u0000x'), 'item', 'control_characters'],
    ['not a string', () => lists.add(ListStore.SHOPPING, 42 as unknown as string), 'item', 'empty'],
    ['empty list name', () => lists.add('  ', 'bread'), 'list', 'empty'],
    ['list name without letters', () => lists.add('--', 'bread'), 'list', 'empty'],
    ['long list name', () => lists.add('x'.repeat(65), 'bread'), 'list', 'too_long'],
    ['complete: empty', () => lists.complete(ListStore.SHOPPING, ' '), 'item', 'empty'],
    ['remove: too long', () => lists.remove('chores', '碗'.repeat(11)), 'item', 'too_long'],
  ];
  for (const [name, run, field, problem] of cases) {
    const error = untouched(t, lists, run, 'HA_ERR_LIST_INVALID');
    t.same([error.details?.field, error.details?.problem], [field, problem], name);
  }
  const long = expectError(t, () => lists.add(ListStore.SHOPPING, 'a'.repeat(11)), 'HA_ERR_LIST_INVALID');
  t.equal(long.message, 'the item is longer than 10 characters (core.lists.max_item_chars)');
  t.equal(lists.add(ListStore.SHOPPING, '一二三四五六七八九十').added, true, 'ten Chinese characters are ten characters');
  t.equal(lists.add(ListStore.SHOPPING, 'tea 🍵🍵🍵🍵🍵').added, true, 'an emoji counts once');
});

t.test('a full list makes room by dropping its oldest done items, never open ones', async (t) => {
  const { lists, clock } = await openLists(t, { max_items_per_list: 3 });
  for (const item of ['a', 'b', 'c']) lists.add('l', item);
  const full = untouched(t, lists, () => lists.add('l', 'd'), 'HA_ERR_LIST_FULL');
  t.equal(full.message, 'the l list has 3 open items, the limit (core.lists.max_items_per_list); remove or complete some first');
  t.same(full.details, { field: 'item', limit: 3 });
  t.equal(lists.add('l', 'b').added, false, 'an item already on a full list is still found');

  lists.complete('l', 'b');
  clock.advance(1);
  lists.complete('l', 'a');
  t.equal(lists.add('l', 'd').added, true);
  t.same(texts(lists, 'l', true), ['c', 'd', 'a'], 'b, done first, made room');
  t.equal(lists.add('l', 'e').added, true);
  t.same(texts(lists, 'l', true), ['c', 'd', 'e']);
  expectError(t, () => lists.add('l', 'f'), 'HA_ERR_LIST_FULL');
});

t.test('the number of lists is limited; existing lists still take items', async (t) => {
  const { lists } = await openLists(t, { max_lists: 2 });
  lists.add('one', 'x');
  lists.add(ListStore.SHOPPING, 'milk');
  const error = untouched(t, lists, () => lists.add('three', 'y'), 'HA_ERR_LIST_FULL');
  t.equal(error.message, 'there are already 2 lists, the limit (core.lists.max_lists); add "three" to one of them instead');
  t.same(error.details, { field: 'list', limit: 2 });
  t.equal(lists.add('One list', 'z').added, true);
  t.same(
    lists.lists().map((l) => l.name),
    ['one', 'shopping list'],
  );
});

t.test('a restart keeps the lists, their items and what is done', async (t) => {
  const setup = await openLists(t);
  setup.lists.add(ListStore.SHOPPING, '鸡蛋');
  setup.lists.add(ListStore.SHOPPING, 'coffee');
  setup.lists.add('chores', 'vacuum');
  setup.clock.advance(60_000);
  setup.lists.complete(ListStore.SHOPPING, 'coffee');
  const before = snapshot(setup.lists);

  const again = await setup.restart();
  t.same(snapshot(again), before);
  t.same(texts(again, '购物清单'), ['鸡蛋']);
  t.equal(again.findList('chores'), 'chores');
  t.equal(again.add(ListStore.SHOPPING, '鸡蛋').added, false, 'an open item is still recognised after the restart');
  t.equal(again.complete('chores', 'VACUUM').item.done_at, T0 + 60_000);
});

t.test('maintain drops done items older than keep_done_days, and nothing else', async (t) => {
  const { lists, clock, settings } = await openLists(t, { keep_done_days: 30 });
  lists.add(ListStore.SHOPPING, 'old open');
  lists.add(ListStore.SHOPPING, 'old done');
  lists.add('chores', 'old chore');
  lists.complete(ListStore.SHOPPING, 'old done');
  lists.complete('chores', 'old chore');
  clock.advance(20 * DAY_MS);
  lists.add(ListStore.SHOPPING, 'recent done');
  lists.complete(ListStore.SHOPPING, 'recent');

  clock.advance(10 * DAY_MS);
  t.equal(lists.maintain(), 0, 'exactly 30 days old is kept');
  clock.advance(1);
  t.equal(lists.maintain(), 2);
  t.same(texts(lists, ListStore.SHOPPING, true), ['old open', 'recent done']);
  t.same(texts(lists, 'chores', true), [], 'the list itself stays');

  settings.keep_done_days = 5;
  t.equal(lists.maintain(), 1, 'the setting is read at each run');
  t.same(texts(lists, ListStore.SHOPPING, true), ['old open'], 'open items stay however old');
});

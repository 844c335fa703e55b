// The lists.* control methods (src/lists/list-methods.ts) on a real ControlRegistry over a real
// list store: results, parameter refusals that name the parameter and change nothing, store
// refusals passed through with their codes, and an audit record for every change, failed ones too.
import t, { type Test } from 'tap';
import { registerListMethods } from '../../../src/lists/list-methods.js';
import { ControlRegistry } from '../../../src/plugin/control-registry.js';
import { captureLogs, expectErrorAsync } from '../fixtures/support.js';
import { DAY_MS, openLists, T0 } from './list-fixture.js';

async function setup(t: Test, settings: Parameters<typeof openLists>[1] = {}) {
  const lists = await openLists(t, settings);
  const captured = captureLogs();
  const control = new ControlRegistry();
  registerListMethods(control, lists.lists, { logs: captured.logs });
  return {
    ...lists,
    control,
    call: (method: string, params: unknown = {}, actor = 'cli') => control.call(method, params, { actor }),
    audits: () =>
      captured
        .records()
        .filter((r) => r.audit === true)
        .map(({ actor, action, list, item, list_name, item_text, added, error }) => ({
          actor,
          action,
          list,
          item,
          ...(list_name !== undefined && { list_name, item_text }),
          ...(added !== undefined && { added }),
          ...(error !== undefined && { error }),
        })),
  };
}

t.test('the methods are registered with descriptions', async (t) => {
  const s = await setup(t);
  t.same(
    s.control.methods().map((m) => m.name),
    ['lists.add', 'lists.complete', 'lists.list', 'lists.remove', 'lists.show'],
  );
  t.ok(s.control.methods().every((m) => m.description.length > 20));
});

t.test('add, show, complete, remove and list: the shopping list by default, other lists by name', async (t) => {
  const s = await setup(t);
  t.same(await s.call('lists.list'), [{ name: 'shopping list', open: 0, done: 0 }], 'the shopping list is there before anything is on it');
  t.same(await s.call('lists.show'), { list: 'shopping list', items: [] });

  t.match(await s.call('lists.add', { item: 'milk' }), {
    list: 'shopping list',
    item: { text: 'milk', done: false, added_at: T0 },
    added: true,
  });
  t.match(await s.call('lists.add', { item: 'Milk.' }, 'webui:admin'), { item: { text: 'milk' }, added: false });
  await s.call('lists.add', { item: 'oat milk' });
  await s.call('lists.add', { list: 'Hardware store', item: 'screws' });
  s.clock.advance(DAY_MS);

  t.match(await s.call('lists.complete', { item: 'OAT MILK' }), {
    list: 'shopping list',
    item: { text: 'oat milk', done: true, done_at: T0 + DAY_MS },
  });
  t.same(
    (await s.call('lists.show', {})) as object,
    { list: 'shopping list', items: [{ id: 1, text: 'milk', done: false, added_at: T0, done_at: null }] },
    'done items are left out unless asked for',
  );
  t.match(await s.call('lists.show', { include_done: true }), {
    items: [
      { text: 'milk', done: false },
      { text: 'oat milk', done: true, done_at: T0 + DAY_MS },
    ],
  });
  t.match(await s.call('lists.show', { list: 'the hardware store list' }), { list: 'Hardware store', items: [{ text: 'screws' }] });
  t.same(await s.call('lists.list'), [
    { name: 'shopping list', open: 1, done: 1 },
    { name: 'Hardware store', open: 1, done: 0 },
  ]);

  t.match(await s.call('lists.remove', { list: 'hardware store', item: 'screws' }), { list: 'Hardware store', item: { text: 'screws' } });
  t.same(await s.call('lists.show', { list: 'Hardware store' }), { list: 'Hardware store', items: [] });

  t.same(s.audits(), [
    { actor: 'cli', action: 'lists.add', list: 'shopping list', item: 'milk', list_name: 'shopping list', item_text: 'milk', added: true },
    {
      actor: 'webui:admin',
      action: 'lists.add',
      list: 'shopping list',
      item: 'Milk.',
      list_name: 'shopping list',
      item_text: 'milk',
      added: false,
    },
    {
      actor: 'cli',
      action: 'lists.add',
      list: 'shopping list',
      item: 'oat milk',
      list_name: 'shopping list',
      item_text: 'oat milk',
      added: true,
    },
    {
      actor: 'cli',
      action: 'lists.add',
      list: 'Hardware store',
      item: 'screws',
      list_name: 'Hardware store',
      item_text: 'screws',
      added: true,
    },
    {
      actor: 'cli',
      action: 'lists.complete',
      list: 'shopping list',
      item: 'OAT MILK',
      list_name: 'shopping list',
      item_text: 'oat milk',
    },
    {
      actor: 'cli',
      action: 'lists.remove',
      list: 'hardware store',
      item: 'screws',
      list_name: 'Hardware store',
      item_text: 'screws',
    },
  ]);
});

t.test('parameters that do not fit are refused naming the parameter; nothing is stored or audited', async (t) => {
  const s = await setup(t);
  await s.call('lists.add', { item: 'milk' });
  const before = { lists: await s.call('lists.list'), items: await s.call('lists.show', { include_done: true }) };
  const auditsBefore = s.audits().length;

  const refused: Array<[string, unknown, RegExp]> = [
    ['lists.add', {}, /^lists\.add: params\.item: /],
    ['lists.add', { item: '' }, /^lists\.add: params\.item: .*length/],
    ['lists.add', { item: 42 }, /^lists\.add: params\.item: .*string/],
    ['lists.add', { item: 'x'.repeat(1001) }, /^lists\.add: params\.item: .*length/],
    ['lists.add', { list: '', item: 'eggs' }, /^lists\.add: params\.list: /],
    ['lists.add', { item: 'eggs', itme: 'eggs' }, /^lists\.add: params\.itme: .*[Uu]nexpected property/],
    ['lists.complete', { list: ['shopping'], item: 'milk' }, /^lists\.complete: params\.list: /],
    ['lists.remove', { items: ['milk'] }, /^lists\.remove: params/],
    ['lists.show', { include_done: 'yes' }, /^lists\.show: params\.include_done: .*boolean/],
    ['lists.show', { includeDone: true }, /^lists\.show: params\.includeDone: .*[Uu]nexpected property/],
    ['lists.list', { list: 'shopping' }, /^lists\.list: params\.list: .*[Uu]nexpected property/],
  ];
  for (const [method, params, message] of refused) {
    const error = await expectErrorAsync(t, () => s.call(method, params), 'HA_ERR_RPC_INVALID_PARAMS');
    t.match(error.message, message, `${method} ${JSON.stringify(params).slice(0, 60)}: ${error.message}`);
  }
  t.same(await s.call('lists.list'), before.lists, 'no list was made');
  t.same(await s.call('lists.show', { include_done: true }), before.items, 'the items are untouched');
  t.equal(s.audits().length, auditsBefore, 'a refused call did nothing to audit');
});

t.test("the store's refusals pass through with their codes and are audited; the data is untouched", async (t) => {
  const s = await setup(t, { max_items_per_list: 3, max_item_chars: 10 });
  await s.call('lists.add', { item: 'oat milk' });
  await s.call('lists.add', { item: 'soy milk' });
  await s.call('lists.add', { item: 'bread' });
  const before = await s.call('lists.show', { include_done: true });
  const audited = s.audits().length;

  const blank = await expectErrorAsync(t, () => s.call('lists.add', { item: '  ' }), 'HA_ERR_LIST_INVALID');
  t.match(blank.message, /the item is empty/);
  const long = await expectErrorAsync(t, () => s.call('lists.add', { item: 'x'.repeat(11) }), 'HA_ERR_LIST_INVALID');
  t.match(long.message, /longer than 10 characters \(core\.lists\.max_item_chars\)/);
  const full = await expectErrorAsync(t, () => s.call('lists.add', { item: 'eggs' }), 'HA_ERR_LIST_FULL');
  t.match(full.message, /3 open items/);
  const ambiguous = await expectErrorAsync(t, () => s.call('lists.complete', { item: 'milk' }), 'HA_ERR_LIST_AMBIGUOUS');
  t.match(ambiguous.message, /matches 2 open items.*oat milk, soy milk/);
  const missing = await expectErrorAsync(t, () => s.call('lists.remove', { item: 'cheese' }), 'HA_ERR_LIST_NOT_FOUND');
  t.match(missing.message, /no item "cheese" on the shopping list/);
  const noList = await expectErrorAsync(t, () => s.call('lists.complete', { list: 'garden', item: 'rake' }), 'HA_ERR_LIST_NOT_FOUND');
  t.match(noList.message, /no list is called "garden"; the lists are: shopping list/);
  const noShow = await expectErrorAsync(t, () => s.call('lists.show', { list: 'garden' }), 'HA_ERR_LIST_NOT_FOUND');
  t.match(noShow.message, /no list is called "garden"/);

  t.same(await s.call('lists.show', { include_done: true }), before, 'the items are untouched');
  t.same(await s.call('lists.list'), [{ name: 'shopping list', open: 3, done: 0 }], 'no list was made');
  t.match(
    s.audits().slice(audited),
    [
      { actor: 'cli', action: 'lists.add', list: 'shopping list', item: '  ', error: /HA_ERR_LIST_INVALID/ },
      { action: 'lists.add', item: 'x'.repeat(11), error: /HA_ERR_LIST_INVALID/ },
      { action: 'lists.add', item: 'eggs', error: /HA_ERR_LIST_FULL/ },
      { action: 'lists.complete', item: 'milk', error: /HA_ERR_LIST_AMBIGUOUS/ },
      { action: 'lists.remove', item: 'cheese', error: /HA_ERR_LIST_NOT_FOUND/ },
      { action: 'lists.complete', list: 'garden', item: 'rake', error: /HA_ERR_LIST_NOT_FOUND/ },
    ],
    'every failed change is audited with what was asked and why it failed; show is not a change',
  );
  t.equal(s.audits().length, audited + 6);
});

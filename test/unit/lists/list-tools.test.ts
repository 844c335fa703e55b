// The list tools as the model uses them: the shopping list by default, other lists by name,
// results the model can read, and every store refusal as a ToolError with the field and a hint.
import t, { type Test } from 'tap';
import { ToolRegistry } from '../../../src/agent/tool-registry.js';
import { listTools } from '../../../src/lists/list-tools.js';
import { type ToolContext, ToolError, type ToolErrorReason } from '../../../src/shared/tool.js';
import { silentLogs } from '../fixtures/support.js';
import { openLists, T0 } from './list-fixture.js';

const context: ToolContext = {
  signal: new AbortController().signal,
  task_id: 't1',
  call_id: 'c1',
  source: 'chat',
  channel: 'family',
  trust: 'owner',
};

async function setup(t: Test, settings: Parameters<typeof openLists>[1] = {}) {
  const lists = await openLists(t, settings);
  const tools = new Map(listTools(lists.lists).map((d) => [d.name, d]));
  const run = async (name: string, args: Record<string, unknown>) => {
    const tool = tools.get(name);
    if (tool === undefined) throw new Error(`no tool ${name}`);
    return (await tool.execute(args, context)) as Record<string, unknown>;
  };
  return { ...lists, tools, run };
}

async function fails(t: Test, run: Promise<unknown>, reason: ToolErrorReason, field: string): Promise<ToolError | undefined> {
  try {
    await run;
    t.fail(`expected ${reason}`);
    return undefined;
  } catch (error) {
    if (!(error instanceof ToolError)) throw error;
    t.equal(error.info.reason, reason, `reason ${reason}: ${error.info.detail}`);
    t.equal(error.info.field, field);
    t.ok(error.info.hint !== undefined && error.info.hint !== '', 'with a hint');
    return error;
  }
}

t.test('the tools register cleanly with their tiers and owner', async (t) => {
  const { tools } = await setup(t);
  const registry = new ToolRegistry({ log: silentLogs().child('tools') });
  for (const tool of tools.values()) registry.register(tool);
  t.same(
    [...tools.values()].map((d) => [d.name, d.tier, d.owner]),
    [
      ['list_add', 'act', 'core'],
      ['list_complete', 'act', 'core'],
      ['list_show', 'read', 'core'],
      ['list_remove', 'act', 'core'],
    ],
  );
});

t.test('without a list the tools work on the shopping list; with one, on that list', async (t) => {
  const { run, lists, clock } = await setup(t);
  t.same(await run('list_add', { item: '牛奶' }), { list: 'shopping list', item: { text: '牛奶', done: false }, added: true });
  t.same(await run('list_add', { item: '牛奶。' }), { list: 'shopping list', item: { text: '牛奶', done: false }, added: false });
  await run('list_add', { item: 'Bread' });
  await run('list_add', { list: 'Hardware store', item: 'screws' });
  clock.advance(60_000);

  t.same(await run('list_complete', { item: 'bread' }), {
    list: 'shopping list',
    item: { text: 'Bread', done: true, done_at: new Date(T0 + 60_000).toISOString() },
  });
  t.same(await run('list_show', {}), {
    list: 'shopping list',
    items: [{ text: '牛奶', done: false }],
    lists: [
      { name: 'shopping list', open: 1, done: 1 },
      { name: 'Hardware store', open: 1, done: 0 },
    ],
  });
  const all = await run('list_show', { list: 'hardware store list', include_done: true });
  t.equal(all.list, 'Hardware store', 'the stored name is reported');
  t.same(all.items, [{ text: 'screws', done: false }]);
  t.same((await run('list_show', { include_done: true })).items, [
    { text: '牛奶', done: false },
    { text: 'Bread', done: true, done_at: new Date(T0 + 60_000).toISOString() },
  ]);

  t.same(await run('list_remove', { list: 'hardware store', item: 'SCREWS' }), { list: 'Hardware store', removed: 'screws' });
  t.same(lists.items('Hardware store'), []);
});

t.test('store refusals reach the model as ToolErrors naming the field, with a hint', async (t) => {
  const { run, lists } = await setup(t, { max_lists: 2, max_items_per_list: 2 });
  await run('list_add', { item: 'oat milk' });
  await run('list_add', { item: 'whole milk' });
  await run('list_add', { list: 'chores', item: 'dishes' });
  const before = lists.lists().map((l) => ({ ...l, items: lists.items(l.name, { include_done: true }) }));

  await fails(t, run('list_add', {}), 'required', 'item');
  await fails(t, run('list_add', { item: '   ' }), 'required', 'item');
  await fails(t, run('list_add', { item: 7 }), 'type', 'item');
  await fails(t, run('list_add', { item: 'x'.repeat(201) }), 'range', 'item');
  await fails(t, run('list_add', { item: 'a\u0007b' }), 'format', 'item');
  await fails(t, run('list_add', { list: '', item: 'x' }), 'required', 'list');
  await fails(t, run('list_add', { list: 'y'.repeat(65), item: 'x' }), 'range', 'list');
  const full = await fails(t, run('list_add', { item: 'eggs' }), 'rejected', 'item');
  t.match(full?.info.detail, /2 open items, the limit/);
  const lists3 = await fails(t, run('list_add', { list: 'garden', item: 'rake' }), 'rejected', 'list');
  t.match(lists3?.info.hint, /list_show/);
  const ambiguous = await fails(t, run('list_complete', { item: 'milk' }), 'rejected', 'item');
  t.match(ambiguous?.info.hint, /oat milk, whole milk/);
  const missing = await fails(t, run('list_complete', { item: 'cheese' }), 'not_found', 'item');
  t.equal(missing?.info.detail, 'no open item "cheese" on the shopping list');
  const noList = await fails(t, run('list_show', { list: 'garden' }), 'not_found', 'list');
  t.match(noList?.info.detail, /the lists are: shopping list, chores/);
  await fails(t, run('list_remove', { list: 'garden', item: 'rake' }), 'not_found', 'list');
  await fails(t, run('list_show', { include_done: 'yes' }), 'type', 'include_done');

  t.same(
    lists.lists().map((l) => ({ ...l, items: lists.items(l.name, { include_done: true }) })),
    before,
    'nothing was changed by the refused calls',
  );
});

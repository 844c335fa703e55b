// `homeagentctl lists …` (src/cli/lists.ts): argument parsing, readable output, and the commands
// end to end over the real CLI socket against the real lists.* methods on a real list store.
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { CliPlugin } from '../../../plugins/cli/index.js';
import type { CommandClient } from '../../../src/cli/command-client.js';
import {
  formatAdded,
  formatListItems,
  formatListSummaries,
  itemLine,
  type ListsCommand,
  ListsUsageError,
  listsFlagsUsed,
  parseListsCommand,
  runLists,
} from '../../../src/cli/lists.js';
import { RpcClient } from '../../../src/cli/rpc-client.js';
import { registerListMethods } from '../../../src/lists/list-methods.js';
import { ControlRegistry } from '../../../src/plugin/control-registry.js';
import { asContext, createTestPluginContext } from '../../helpers/plugin-context.js';
import { captureLogs, tempDir } from '../fixtures/support.js';
import { type ListSetup, openLists, T0 } from '../lists/list-fixture.js';

const HOUR_MS = 3_600_000;

t.test('parseListsCommand reads each command and refuses what does not fit', async (t) => {
  const parse = parseListsCommand;
  t.same(parse([], {}), { command: 'list' }, 'lists alone lists the lists');
  t.same(parse(['list'], {}), { command: 'list' });
  t.same(parse(['show'], {}), { command: 'show', include_done: false });
  t.same(parse(['show'], { all: true }), { command: 'show', include_done: true });
  t.same(parse(['show', 'hardware', 'store'], {}), { command: 'show', list: 'hardware store', include_done: false });
  t.same(parse(['show', '购物清单'], { all: true }), { command: 'show', list: '购物清单', include_done: true });
  t.same(parse(['show'], { list: 'to-do' }), { command: 'show', list: 'to-do', include_done: false }, 'or the list with --list');
  t.same(parse(['add', 'oat', 'milk'], {}), { command: 'add', item: 'oat milk' }, 'the rest of the words are the item');
  t.same(parse(['add', 'screws'], { list: ' Hardware store ' }), { command: 'add', list: 'Hardware store', item: 'screws' });
  t.same(parse(['add', '牛奶'], {}), { command: 'add', item: '牛奶' });
  t.same(parse(['done', 'milk'], {}), { command: 'done', item: 'milk' });
  t.same(parse(['done', 'call', 'the', 'plumber'], { list: 'to-do' }), { command: 'done', list: 'to-do', item: 'call the plumber' });
  t.same(parse(['remove', 'eggs'], { list: 'shopping' }), { command: 'remove', list: 'shopping', item: 'eggs' });
  t.same(listsFlagsUsed({ list: 'x', all: true }), ['list', 'all']);
  t.same(listsFlagsUsed({}), []);

  const refused: Array<[string[], Parameters<typeof parse>[1], RegExp]> = [
    [['tick', 'milk'], {}, /^unknown lists command tick; use list, show, add, done or remove$/],
    [['list', 'shopping'], {}, /lists list takes no arguments/],
    [['list'], { all: true }, /--all does not belong to lists list/],
    [['show', 'to-do'], { list: 'to-do' }, /lists show takes the LIST once: as words or with --list/],
    [['show'], { list: '' }, /--list needs a LIST name/],
    [['add'], {}, /lists add needs an ITEM, e.g\. lists add milk/],
    [['add', ' '], {}, /lists add needs an ITEM/],
    [['done'], { list: 'to-do' }, /lists done needs an ITEM/],
    [['remove'], {}, /lists remove needs an ITEM/],
    [['add', 'milk'], { all: true }, /--all does not belong to lists add/],
    [['add', 'milk'], { list: '  ' }, /--list needs a LIST name/],
  ];
  for (const [args, flags, message] of refused) {
    t.throws(() => parse(args, flags), { constructor: ListsUsageError, message }, `${args.join(' ')}: ${String(message)}`);
  }
});

t.test('readable output: a table of lists, items as ☐ and ☑ with when they were done', async (t) => {
  t.equal(
    formatListSummaries([
      { name: 'shopping list', open: 2, done: 11 },
      { name: 'Hardware store', open: 1, done: 0 },
    ]),
    ['LIST            OPEN  DONE', 'shopping list   2     11', 'Hardware store  1     0'].join('\n'),
  );
  const now = T0 + 2 * HOUR_MS;
  t.equal(itemLine({ id: 1, text: 'milk', done: false, added_at: T0, done_at: null }, now), '☐ milk');
  t.equal(itemLine({ id: 2, text: 'eggs', done: true, added_at: T0, done_at: T0 }, now), '☑ eggs (done 2h ago)');
  t.equal(itemLine({ id: 3, text: 'bread', done: true, added_at: T0, done_at: now }, now), '☑ bread (done just now)');
  t.equal(formatListItems({ list: 'shopping list', items: [] }, now, false), 'the shopping list has no open items');
  t.equal(formatListItems({ list: 'Hardware store', items: [] }, now, true), 'the Hardware store list has no items');
  t.equal(
    formatAdded({ list: 'shopping list', item: { id: 1, text: 'milk', done: false, added_at: T0, done_at: null }, added: true }),
    'added milk to the shopping list',
  );
  t.equal(
    formatAdded({ list: '待办清单', item: { id: 1, text: '交电费', done: false, added_at: T0, done_at: null }, added: false }),
    '交电费 is already on the 待办清单',
  );
});

interface Served {
  lists: ListSetup;
  connect: () => Promise<CommandClient>;
  audits(): Array<Record<string, unknown>>;
}

/** The lists.* methods on a real store, served by the real cli plugin on a Unix socket. */
async function serve(t: Test): Promise<Served> {
  const lists = await openLists(t);
  const captured = captureLogs();
  const control = new ControlRegistry();
  registerListMethods(control, lists.lists, { logs: captured.logs });
  const dataDir = tempDir(t);
  const test = createTestPluginContext({
    name: 'cli',
    dataDir,
    settings: { socket_path: '', socket_mode: '660', max_frame_bytes: 1048576, max_connections: 4, idle_timeout_ms: 60_000 },
  });
  const plugin = new CliPlugin(asContext({ ...test.context, control }));
  await plugin.start();
  t.teardown(() => plugin.stop());
  const socket = join(dataDir, 'run', 'homeagent.sock');
  return {
    lists,
    connect: () => RpcClient.connect(socket, 5000),
    audits: () => captured.records().filter((r) => r.audit === true),
  };
}

async function run(s: Served, command: ListsCommand, json = false) {
  let out = '';
  const code = await runLists(command, {
    connect: s.connect,
    json,
    timeoutMs: 10_000,
    stdout: { write: (text: string) => (out += text) },
    now: s.lists.clock.now,
  });
  return { code, out };
}

t.test('lists, show, add, done and remove over the socket: readable text and --json', async (t) => {
  const s = await serve(t);
  t.equal((await run(s, { command: 'show', include_done: false })).out, 'the shopping list has no open items\n');

  const added = await run(s, { command: 'add', item: 'oat milk' });
  t.same(added, { code: 0, out: 'added oat milk to the shopping list\n' });
  t.equal((await run(s, { command: 'add', item: 'Oat milk.' })).out, 'oat milk is already on the shopping list\n');
  await run(s, { command: 'add', item: 'eggs' });
  await run(s, { command: 'add', list: 'Hardware store', item: 'screws' });
  s.lists.clock.advance(30 * 60_000);
  t.equal((await run(s, { command: 'done', item: 'EGGS' })).out, 'ticked off eggs on the shopping list\n');
  s.lists.clock.advance(2 * HOUR_MS);

  t.equal((await run(s, { command: 'show', include_done: false })).out, 'shopping list:\n  ☐ oat milk\n');
  t.equal((await run(s, { command: 'show', include_done: true })).out, 'shopping list:\n  ☐ oat milk\n  ☑ eggs (done 2h ago)\n');
  t.equal((await run(s, { command: 'show', list: 'hardware store', include_done: false })).out, 'Hardware store:\n  ☐ screws\n');
  t.equal(
    (await run(s, { command: 'list' })).out,
    ['LIST            OPEN  DONE', 'shopping list   1     1', 'Hardware store  1     0', ''].join('\n'),
  );

  const json = await run(s, { command: 'show', include_done: true }, true);
  t.same(JSON.parse(json.out), {
    list: 'shopping list',
    items: [
      { id: 1, text: 'oat milk', done: false, added_at: T0, done_at: null },
      { id: 2, text: 'eggs', done: true, added_at: T0, done_at: T0 + 30 * 60_000 },
    ],
  });
  t.same(JSON.parse((await run(s, { command: 'list' }, true)).out), [
    { name: 'shopping list', open: 1, done: 1 },
    { name: 'Hardware store', open: 1, done: 0 },
  ]);
  const removed = await run(s, { command: 'remove', list: 'Hardware store', item: 'screws' }, true);
  t.match(JSON.parse(removed.out), { list: 'Hardware store', item: { text: 'screws', done: false } });
  t.equal((await run(s, { command: 'remove', item: 'eggs' })).out, 'removed eggs from the shopping list\n', 'a done item can be removed');

  await t.rejects(run(s, { command: 'done', item: 'bread' }), { code: 'HA_ERR_LIST_NOT_FOUND', message: /no open item "bread"/ });
  await t.rejects(run(s, { command: 'show', list: 'garden', include_done: false }), {
    code: 'HA_ERR_LIST_NOT_FOUND',
    message: /no list is called "garden"; the lists are: shopping list, Hardware store/,
  });
  t.same(
    s.lists.lists.items('shopping list'),
    [{ id: 1, text: 'oat milk', done: false, added_at: T0, done_at: null }],
    'the refusals changed nothing',
  );
  t.match(
    s.audits().map((a) => [a.actor, a.action, a.item, a.error ?? a.item_text]),
    [
      ['cli', 'lists.add', 'oat milk', 'oat milk'],
      ['cli', 'lists.add', 'Oat milk.', 'oat milk'],
      ['cli', 'lists.add', 'eggs', 'eggs'],
      ['cli', 'lists.add', 'screws', 'screws'],
      ['cli', 'lists.complete', 'EGGS', 'eggs'],
      ['cli', 'lists.remove', 'screws', 'screws'],
      ['cli', 'lists.remove', 'eggs', 'eggs'],
      ['cli', 'lists.complete', 'bread', /HA_ERR_LIST_NOT_FOUND/],
    ],
    'every change is audited with the socket actor, the refused one too',
  );
});

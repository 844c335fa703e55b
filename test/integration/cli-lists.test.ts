/**
 * `homeagentctl lists` against the built daemon, as whoever looks after the box runs it over SSH
 * with no language model configured: put milk on the shopping list, see it there, tick it off;
 * a store refusal and a usage mistake exit with their codes and change nothing.
 */
import t from 'tap';
import { startDaemon } from '../helpers/in-process-daemon.js';

t.test('homeagentctl lists add, show, done and lists against the daemon', async (t) => {
  const daemon = await startDaemon(t);
  await daemon.waitForReady();

  const added = await daemon.ctl(['lists', 'add', 'milk']);
  t.equal(added.code, 0, added.stderr);
  t.equal(added.stdout, 'added milk to the shopping list\n');
  t.equal((await daemon.ctl(['lists', 'add', '--list', 'hardware store', 'wood', 'screws'])).code, 0);

  const shown = await daemon.ctl(['lists', 'show']);
  t.equal(shown.code, 0, shown.stderr);
  t.equal(shown.stdout, 'shopping list:\n  ☐ milk\n');

  const done = await daemon.ctl(['lists', 'done', 'milk']);
  t.equal(done.code, 0, done.stderr);
  t.equal(done.stdout, 'ticked off milk on the shopping list\n');
  t.equal((await daemon.ctl(['lists', 'show'])).stdout, 'the shopping list has no open items\n');
  t.match((await daemon.ctl(['lists', 'show', '--all'])).stdout, /^shopping list:\n {2}☑ milk \(done (just now|[^)]+ ago)\)\n$/);

  const all = await daemon.ctl(['lists', '--json']);
  t.same(all.json(), [
    { name: 'shopping list', open: 0, done: 1 },
    { name: 'hardware store', open: 1, done: 0 },
  ]);
  t.match((await daemon.ctl(['lists', 'show', 'Hardware', 'store', '--json'])).json(), {
    list: 'hardware store',
    items: [{ text: 'wood screws' }],
  });

  const missing = await daemon.ctl(['lists', 'done', 'bread', '--json']);
  t.equal(missing.code, 1, 'a store refusal exits 1');
  t.match(missing.json(), { ok: false, error: { code: 'HA_ERR_LIST_NOT_FOUND', message: /no open item "bread" on the shopping list/ } });

  const stray = await daemon.ctl(['status', '--list', 'shopping']);
  t.equal(stray.code, 64, 'a lists flag on another command is a usage error');
  t.match(stray.stderr, /--list belongs to lists/);
  const noItem = await daemon.ctl(['lists', 'add']);
  t.equal(noItem.code, 64);
  t.match(noItem.stderr, /lists add needs an ITEM/);
  t.same((await daemon.ctl(['lists', '--json'])).json(), all.json(), 'the refusals changed nothing');

  const help = await daemon.ctl(['--help']);
  t.match(help.stdout, /lists show \[LIST \| --list LIST\] \[--all\]/);
  t.match(help.stdout, /lists add \[--list LIST\] ITEM\.\.\./);
});

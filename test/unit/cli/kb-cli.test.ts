// `homeagentctl kb …` (src/cli/kb.ts): argument parsing, readable output, and the commands end to
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Type } from '@sinclair/typebox';
import t, { type Test } from 'tap';
import { CliPlugin } from '../../../plugins/cli/index.js';
import { formatTree, type KbClient, type KbCommand, KbUsageError, parseKbCommand, runKb } from '../../../src/cli/kb.js';
import { RpcClient } from '../../../src/cli/rpc-client.js';
import { registerKnowledgeMethods } from '../../../src/knowledge/knowledge-methods.js';
import type { TreeNode } from '../../../src/knowledge/types.js';
import { ControlRegistry } from '../../../src/plugin/control-registry.js';
import { runCtl } from '../../helpers/daemon.js';
import { asContext, createTestPluginContext } from '../../helpers/plugin-context.js';
import { captureLogs, tempDir } from '../fixtures/support.js';
import { type KnowledgeSetup, openKnowledge } from '../knowledge/fixtures/knowledge-fixture.js';

t.test('parseKbCommand reads each command and refuses what does not fit', async (t) => {
  const cwd = '/srv/home';
  const parse = (positionals: string[], flags: Record<string, string | boolean> = {}, stdinIsTty = false) =>
    parseKbCommand(positionals, flags, { cwd, stdinIsTty });
  t.same(parse(['tree']), { command: 'tree', items: false });
  t.same(parse(['tree', 'recipes/soup'], { depth: '2', items: true }), {
    command: 'tree',
    category: 'recipes/soup',
    depth: 2,
    items: true,
  });
  t.same(parse(['tree'], { depth: '0' }), { command: 'tree', depth: 0, items: false });
  t.same(parse(['search', 'tomato', 'soup']), { command: 'search', query: 'tomato soup' });
  t.same(parse(['search', '番茄汤'], { category: 'recipes', limit: '100' }), {
    command: 'search',
    query: '番茄汤',
    category: 'recipes',
    limit: 100,
  });
  t.same(parse(['add', 'recipes/soup/tomato'], { file: 'notes/tomato.md' }), {
    command: 'add',
    name: 'recipes/soup/tomato',
    source: { file: '/srv/home/notes/tomato.md' },
    overwrite: false,
  });
  t.same(parse(['add', 'house/wifi'], { content: 'SSID home', overwrite: true }), {
    command: 'add',
    name: 'house/wifi',
    source: { content: 'SSID home' },
    overwrite: true,
  });
  t.same(parse(['add', 'house/wifi']), { command: 'add', name: 'house/wifi', source: { stdin: true }, overwrite: false });
  t.same(parse(['rm', 'house/wifi']), { command: 'rm', name: 'house/wifi' });
  t.same(parse(['import', 'manuals'], { category: 'appliances' }), { command: 'import', dir: '/srv/home/manuals', category: 'appliances' });
  t.same(parse(['import', '/abs/dir']), { command: 'import', dir: '/abs/dir' });
  t.same(parse(['reindex']), { command: 'reindex' });
  t.same(parse(['stats']), { command: 'stats' });
  t.same(parse(['token']), { command: 'token' });

  const refused: Array<[string[], Record<string, string | boolean>, RegExp, boolean?]> = [
    [[], {}, /kb needs a command/],
    [['list'], {}, /unknown kb command list/],
    [['tree', 'a', 'b'], {}, /at most one CATEGORY/],
    [['tree'], { depth: '-1' }, /--depth must be a whole number from 0 to 64/],
    [['tree'], { depth: 'two' }, /--depth/],
    [['tree'], { limit: '3' }, /--limit does not belong to kb tree/],
    [['search'], {}, /needs the TEXT/],
    [['search', 'x'], { limit: '0' }, /--limit must be a whole number from 1 to 100/],
    [['search', 'x'], { limit: '101' }, /--limit/],
    [['search', 'x'], { items: true }, /--items does not belong to kb search/],
    [['search', 'x'], { category: ' ' }, /--category needs a CATEGORY/],
    [['add'], { content: 'x' }, /exactly one NAME/],
    [['add', 'a', 'b'], { content: 'x' }, /exactly one NAME/],
    [['add', 'a'], { content: 'x', file: 'f' }, /--file or --content, not both/],
    [['add', 'a'], {}, /--file FILE, --content TEXT, or piped on stdin/, true],
    [['add', 'a'], { content: '  ' }, /--content needs the TEXT/],
    [['add', 'a'], { category: 'x', content: 'y' }, /--category does not belong to kb add/],
    [['rm'], {}, /kb rm needs exactly one NAME/],
    [['rm', 'a'], { overwrite: true }, /--overwrite does not belong to kb rm/],
    [['import'], {}, /kb import needs exactly one DIR/],
    [['import', 'a', 'b'], {}, /exactly one DIR/],
    [['reindex', 'now'], {}, /takes no arguments/],
    [['stats'], { depth: '1' }, /--depth does not belong to kb stats/],
    [['token', 'x'], {}, /takes no arguments/],
  ];
  for (const [positionals, flags, message, tty] of refused) {
    t.throws(
      () => parse(positionals, flags, tty === true),
      { constructor: KbUsageError, message },
      `${positionals.join(' ')} ${JSON.stringify(flags)}`,
    );
  }
});

t.test('formatTree indents categories with counts and lists items with previews and attachments', async (t) => {
  const leaf = (name: string, path: string, items: number, children: TreeNode[] = [], total = items): TreeNode => ({
    name,
    path,
    item_count: items,
    total_count: total,
    children,
  });
  const soup: TreeNode = {
    ...leaf('soup', 'recipes/soup', 2),
    items: [
      { name: 'tomato', path: 'recipes/soup/tomato', preview: 'Tomato soup\nwith basil', media: 1 },
      { name: 'miso', path: 'recipes/soup/miso', preview: '', media: 0 },
    ],
  };
  const root: TreeNode = {
    ...leaf('', '', 0, [leaf('recipes', 'recipes', 1, [soup], 3), leaf('tech', 'tech', 0, [leaf('go', 'tech/go', 4)], 4)], 7),
    items: [],
  };
  t.equal(
    formatTree(root),
    [
      'knowledge library: 7 entries',
      '  recipes/  3 (1 here)',
      '    soup/  2',
      '      - tomato  Tomato soup / with basil  [1 attachment]',
      '      - miso',
      '  tech/  4',
      '    go/  4',
    ].join('\n'),
  );
  t.equal(formatTree(leaf('', '', 0)), 'knowledge library: 0 entries\n  (empty: add entries with homeagentctl kb add or kb import)');
  t.equal(formatTree(leaf('go', 'tech/go', 1)), 'tech/go: 1 entry');
});

interface Served extends KnowledgeSetup {
  control: ControlRegistry;
  connects: number;
  connect: () => Promise<KbClient>;
  audits(): Array<Record<string, unknown>>;
}

/** The kb.* methods on a real KnowledgeService, served by the real cli plugin on a Unix socket. */
async function serve(t: Test): Promise<Served> {
  const k = await openKnowledge(t);
  const captured = captureLogs();
  const control = new ControlRegistry();
  registerKnowledgeMethods(control, k.kb, { logs: captured.logs });
  const test = createTestPluginContext({
    name: 'cli',
    dataDir: k.dataDir,
    settings: { socket_path: '', socket_mode: '660', max_frame_bytes: 1048576, max_connections: 4, idle_timeout_ms: 60_000 },
  });
  const plugin = new CliPlugin(asContext({ ...test.context, control }));
  await plugin.start();
  t.teardown(() => plugin.stop());
  const socket = join(k.dataDir, 'run', 'homeagent.sock');
  const served: Served = {
    ...k,
    control,
    connects: 0,
    connect: () => {
      served.connects++;
      return RpcClient.connect(socket, 5000);
    },
    audits: () => captured.records().filter((r) => r.audit === true),
  };
  return served;
}

function captureIo(stdin = '') {
  let out = '';
  let err = '';
  return {
    stdout: { write: (text: string) => (out += text) },
    stderr: { write: (text: string) => (err += text) },
    readStdin: async () => new TextEncoder().encode(stdin),
    out: () => out,
    err: () => err,
  };
}

async function run(s: Served, command: KbCommand, options: { json?: boolean; stdin?: string } = {}) {
  const io = captureIo(options.stdin);
  const code = await runKb(command, { connect: s.connect, json: options.json === true, timeoutMs: 10_000, io });
  return { code, out: io.out(), err: io.err() };
}

t.test('kb add from --content, a file and stdin; problems with the text stop before connecting', async (t) => {
  const s = await serve(t);
  const dir = tempDir(t);
  writeFileSync(join(dir, 'oven.md'), '# Oven\nPyrolytic cleaning takes two hours.\n');
  writeFileSync(join(dir, 'latin1.md'), Buffer.from([0x63, 0x61, 0x66, 0xe9]));
  writeFileSync(join(dir, 'empty.md'), ' \n');

  const content = await run(s, { command: 'add', name: 'house/wifi', source: { content: 'SSID home' }, overwrite: false });
  t.same(content, { code: 0, out: 'added house/wifi (9 B)\n', err: '' });
  const file = await run(s, { command: 'add', name: 'Appliances/Oven', source: { file: join(dir, 'oven.md') }, overwrite: false });
  t.equal(file.out, 'added appliances/oven (43 B)\n');
  t.equal(s.kb.get('appliances/oven')?.content, '# Oven\nPyrolytic cleaning takes two hours.\n', 'the file as it is');
  const stdin = await run(
    s,
    { command: 'add', name: '菜谱/番茄汤', source: { stdin: true }, overwrite: false },
    { stdin: '番茄汤：煮二十分钟。' },
  );
  t.equal(stdin.out, 'added 菜谱/番茄汤 (30 B)\n');
  const replaced = await run(
    s,
    { command: 'add', name: 'house/wifi', source: { content: 'SSID garden' }, overwrite: true },
    { json: true },
  );
  t.match(JSON.parse(replaced.out), { name: 'house/wifi', replaced: true, bytes: 11 });
  await t.rejects(run(s, { command: 'add', name: 'house/wifi', source: { content: 'again' }, overwrite: false }), {
    code: 'HA_ERR_KNOWLEDGE_EXISTS',
  });

  const before = s.connects;
  for (const [source, problem] of [
    [{ file: join(dir, 'missing.md') }, /cannot read .*missing\.md: no such file/],
    [{ file: join(dir, 'latin1.md') }, /latin1\.md is not UTF-8 text/],
    [{ file: join(dir, 'empty.md') }, /empty\.md is empty/],
    [{ stdin: true }, /stdin is empty/],
  ] as const) {
    const r = await run(s, { command: 'add', name: 'notes/x', source, overwrite: false });
    t.equal(r.code, 64);
    t.match(r.err, problem);
  }
  t.equal(s.connects, before, 'the daemon was not contacted for text that could not be read');
  t.match(
    s.audits().map((a) => [a.actor, a.action, a.name]),
    [
      ['cli', 'kb.add', 'house/wifi'],
      ['cli', 'kb.add', 'appliances/oven'],
      ['cli', 'kb.add', '菜谱/番茄汤'],
      ['cli', 'kb.add', 'house/wifi'],
    ],
    'the socket forwards the cli actor to the audit log',
  );
});

t.test('kb tree, search, stats, rm and reindex over the socket: readable text and --json', async (t) => {
  const s = await serve(t);
  await s.kb.create('recipes/soup/tomato', 'Tomato soup: simmer tomatoes with basil for twenty minutes.');
  await s.kb.create('recipes/bread', 'Bread: flour, water, salt, yeast; knead ten minutes.');
  await s.kb.create('tech/go/channels', 'Channels connect goroutines.');

  const tree = await run(s, { command: 'tree', items: false });
  t.equal(tree.out, ['knowledge library: 3 entries', '  recipes/  2 (1 here)', '    soup/  1', '  tech/  1', '    go/  1', ''].join('\n'));
  const items = await run(s, { command: 'tree', category: 'recipes', depth: 0, items: true });
  t.equal(
    items.out,
    'recipes: 2 entries\n  - bread  Bread: flour, water, salt, yeast; knead ten minutes.\n',
    'depth 0: the category itself',
  );
  t.match(JSON.parse((await run(s, { command: 'tree', depth: 1, items: false }, { json: true })).out), {
    total_count: 3,
    children: [
      { path: 'recipes', children: [] },
      { path: 'tech', children: [] },
    ],
  });
  await t.rejects(run(s, { command: 'tree', category: 'cars', items: false }), {
    code: 'HA_ERR_KNOWLEDGE_NOT_FOUND',
    message: /recipes, tech/,
  });

  const search = await run(s, { command: 'search', query: 'knead bread', limit: 1 });
  t.match(search.out, /^1\. recipes\/bread {2}\d\.\d{3}\n {3}.*[Kk]nead.*\n$/);
  const scoped = await run(s, { command: 'search', query: 'tomato basil', category: 'recipes/soup' }, { json: true });
  t.match(JSON.parse(scoped.out), { query: 'tomato basil', category: 'recipes/soup', hits: [{ name: 'recipes/soup/tomato' }] });

  const stats = await run(s, { command: 'stats' });
  t.match(stats.out, /entries +3\n/);
  t.match(stats.out, /categories +4\n/);
  t.match(stats.out, /index +ready, 3 indexed/);
  t.match(stats.out, /vectors +ready, 3 of 3/);

  t.equal((await run(s, { command: 'rm', name: 'tech/go/channels' })).out, 'removed tech/go/channels\n');
  await t.rejects(run(s, { command: 'rm', name: 'tech/go/channels' }), { code: 'HA_ERR_KNOWLEDGE_NOT_FOUND' });
  const empty = await run(s, { command: 'search', query: 'goroutines', category: 'recipes' });
  t.notMatch(empty.out, /channels/);

  mkdirSync(join(s.root, 'house', 'alarm'), { recursive: true });
  writeFileSync(join(s.root, 'house', 'alarm', 'content.md'), 'The alarm code is on the fridge.');
  writeFileSync(join(s.root, 'house', 'alarm', 'media.json'), 'not json');
  const reindex = await run(s, { command: 'reindex' });
  t.match(reindex.out, /^reindexed: 1 entry indexed, 0 removed, in \d+ ms; skipped 1:\n {2}house\/alarm\/media\.json: ignored: /);
  t.equal(s.kb.get('house/alarm')?.content, 'The alarm code is on the fridge.');
});

t.test('kb import over the socket: the daemon reads the folder the CLI resolved', async (t) => {
  const s = await serve(t);
  const home = tempDir(t);
  mkdirSync(join(home, 'manuals'));
  writeFileSync(join(home, 'manuals', 'dryer.txt'), 'Clean the lint filter after every load.');
  writeFileSync(join(home, 'manuals', 'scan.pdf'), '%PDF');
  const command = parseKbCommand(['import', 'manuals'], { category: 'appliances' }, { cwd: home });
  const result = await run(s, command);
  t.match(
    result.out,
    /^imported 1 file into appliances from .*manuals in \d+\.\d s, skipped 1:\n {2}scan\.pdf: not a markdown or text file/,
  );
  t.equal(s.kb.get('appliances/dryer')?.content, 'Clean the lint filter after every load.');
  const json = JSON.parse(
    (await run(s, parseKbCommand(['import', 'manuals'], { category: 'appliances' }, { cwd: home }), { json: true })).out,
  );
  t.match(json, { imported: [], skipped: [{ file: 'scan.pdf' }, { file: 'dryer.txt', reason: /already exists/ }] });
  t.match(s.audits(), [
    { actor: 'cli', action: 'kb.import', imported: 1, skipped: 1 },
    { actor: 'cli', action: 'kb.import', imported: 0 },
  ]);
});

t.test('kb token asks the kbtree plugin, and says what to do when it is not running', async (t) => {
  const s = await serve(t);
  await t.rejects(run(s, { command: 'token' }), {
    code: 'HA_ERR_RPC_UNKNOWN_METHOD',
    message: /the kbtree service is not running: enable it with plugin\.kbtree\.enabled: true/,
  });
  // A stand-in for the plugin's method: this test is about the CLI's side of the call.
  s.control.register({
    name: 'kbtree.token',
    description: 'the kbtree token',
    params: Type.Object({}),
    handler: () => ({ token: 'tok-123', url: 'http://127.0.0.1:9892/', source: 'random' }),
  });
  const token = await run(s, { command: 'token' });
  t.equal(
    token.out,
    'token  tok-123 (random for this run)\nurl    http://127.0.0.1:9892/\nsend it as X-API-Key: TOKEN, Authorization: Bearer TOKEN, or ?token=TOKEN\n',
  );
  t.same(JSON.parse((await run(s, { command: 'token' }, { json: true })).out), {
    token: 'tok-123',
    url: 'http://127.0.0.1:9892/',
    source: 'random',
  });
});

t.test('homeagentctl kb: usage errors exit 64 before any socket is tried; help lists kb', async (t) => {
  const dataDir = tempDir(t);
  for (const [args, message] of [
    [['kb'], /kb needs a command/],
    [['kb', 'search'], /needs the TEXT/],
    [['kb', 'tree', '--limit', '3'], /--limit does not belong to kb tree/],
    [['memory', 'stats', '--depth', '1'], /--depth belongs to kb/],
    [['status', '--items'], /--items belongs to kb/],
    [['kb', 'stats', '--hard'], /--hard belongs to memory/],
    [['kb', 'add', 'notes/x'], /stdin is empty/],
  ] as const) {
    const r = await runCtl(dataDir, [...args]);
    t.equal(r.code, 64, `${args.join(' ')}: ${r.stderr.split('\n')[0]}`);
    t.match(r.stderr, message);
  }
  t.notOk(existsSync(join(dataDir, 'run')), 'no socket path was needed');
  const help = await runCtl(dataDir, ['--help']);
  t.match(help.stdout, /kb search TEXT \[--category C\] \[--limit N\]/);
  t.match(help.stdout, /kb token/);
  if (!existsSync('/run/homeagent/homeagent.sock')) {
    const down = await runCtl(dataDir, ['kb', 'stats', '--json']);
    t.equal(down.code, 69, 'a valid command goes on to the daemon (not running here)');
    t.match(JSON.parse(down.stdout), { ok: false, error: { code: 'HA_ERR_DAEMON_NOT_RUNNING' } });
  }
});

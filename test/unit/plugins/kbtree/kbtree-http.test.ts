import { connect } from 'node:net';
import t, { type Test } from 'tap';
import { ENDPOINTS } from '../../../../plugins/kbtree/index.js';
import { expectErrorAsync, tempDir } from '../../fixtures/support.js';
import { get, type Kernel, type Running, request, startKbtree, startKernel } from './kbtree-setup.js';

const LIBRARY: Record<string, string> = {
  'recipes/soup/tomato_soup': 'Tomato soup: roast ripe tomatoes with garlic and onion, then blend with stock and basil.',
  'recipes/dessert/apple_pie': 'Apple pie: a butter crust filled with sliced apples, cinnamon and brown sugar, baked for 45 minutes.',
  'manuals/heating/boiler': 'Boiler manual: the pressure gauge should read between 1 and 1.5 bar; top up with the filling loop.',
  'manuals/washing_machine': 'Washing machine: clean the lint filter every month; wool programme at 30 degrees.',
  '菜谱/红烧肉': '红烧肉的做法：五花肉切块，冰糖炒糖色，加酱油和八角，小火炖一个小时。',
  'house/stopcock': 'The water stopcock is under the kitchen sink, behind the bin.',
};

async function withLibrary(t: Test): Promise<{ kernel: Kernel; kb: Running }> {
  const kernel = await startKernel(t);
  const knowledge = kernel.services.knowledge;
  if (!knowledge) throw new Error('the kernel has no knowledge library');
  for (const [name, content] of Object.entries(LIBRARY)) await knowledge.create(name, content);
  return { kernel, kb: await startKbtree(t, kernel) };
}

t.test('every request needs the token; each of the three ways to send it works', async (t) => {
  const { kb } = await withLibrary(t);
  t.match(kb.token, /^[A-Za-z0-9_-]{32}$/, 'a random 192-bit base64url token');

  for (const [label, path, headers] of [
    ['no token', '/tree', {}],
    ['no token on an unknown path', '/nope', {}],
    ['wrong X-API-Key', '/tree', { 'x-api-key': 'x'.repeat(32) }],
    ['token with a wrong last character', '/tree', { 'x-api-key': `${kb.token.slice(0, -1)}${kb.token.endsWith('A') ? 'B' : 'A'}` }],
    ['token prefix', '/tree', { 'x-api-key': kb.token.slice(0, 10) }],
    ['wrong bearer', '/tree', { authorization: 'Bearer nope' }],
    ['bearer without a token', '/tree', { authorization: 'Bearer' }],
    ['token in Basic auth', '/tree', { authorization: `Basic ${kb.token}` }],
  ] as const) {
    const reply = await request(kb.port, path, { headers });
    t.equal(reply.status, 401, label);
    t.equal(reply.body.ok, false, `${label}: error envelope`);
    t.match(reply.body.error, { code: String, message: /X-API-Key.*Bearer.*token=/ }, `${label}: says how to send it`);
    t.equal(reply.headers['www-authenticate'], 'Bearer realm="kbtree"');
  }
  t.equal((await request(kb.port, '/tree?token=wrong')).status, 401, 'wrong ?token=');

  t.equal((await request(kb.port, '/tree', { headers: { 'x-api-key': kb.token } })).status, 200, 'X-API-Key');
  t.equal((await request(kb.port, '/tree', { headers: { authorization: `Bearer ${kb.token}` } })).status, 200, 'Authorization: Bearer');
  t.equal((await request(kb.port, '/tree', { headers: { authorization: `bearer  ${kb.token}` } })).status, 200, 'bearer, any case');
  t.equal((await request(kb.port, `/tree?token=${encodeURIComponent(kb.token)}`)).status, 200, '?token=');
  t.equal(
    (await request(kb.port, '/tree', { headers: { 'x-api-key': 'stale', authorization: `Bearer ${kb.token}` } })).status,
    200,
    'one right token among several is enough',
  );
});

t.test('only GET: everything else is 405 with Allow: GET, token or not', async (t) => {
  const { kb } = await withLibrary(t);
  for (const method of ['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD']) {
    for (const headers of [{}, { 'x-api-key': kb.token }]) {
      const reply = await request(kb.port, '/tree', { method, headers });
      t.equal(reply.status, 405, `${method} ${Object.keys(headers).length > 0 ? 'with' : 'without'} token`);
      t.equal(reply.headers.allow, 'GET');
      if (method !== 'HEAD') t.match(reply.body, { ok: false, error: { code: String, message: /GET only/ } });
    }
  }
});

t.test('/ describes the service from the route table', async (t) => {
  const { kb } = await withLibrary(t);
  const reply = await get(kb, '/');
  t.equal(reply.status, 200);
  t.equal(reply.headers['content-type'], 'application/json; charset=utf-8');
  t.equal(reply.headers['cache-control'], 'no-store');
  t.match(reply.body, { ok: true, name: 'kbtree', version: '0.1.0', methods: ['GET'], usage: /tree first/ });
  t.same(
    (reply.body.endpoints as Array<{ path: string }>).map((e) => e.path),
    ENDPOINTS.map((e) => e.path),
  );
  t.same(reply.body.endpoints, JSON.parse(JSON.stringify(ENDPOINTS)), 'parameters as in the table');
  const unknown = await get(kb, '/tree/recipes');
  t.equal(unknown.status, 404);
  t.match(unknown.body, { ok: false, error: { code: 'HA_ERR_RPC_UNKNOWN_METHOD', message: /\/tree\/recipes.*\/search/ } });
});

t.test('/tree, /categories and /counts', async (t) => {
  const { kb } = await withLibrary(t);
  const whole = await get(kb, '/tree');
  t.equal(whole.status, 200);
  const tree = whole.body.tree as {
    path: string;
    total_count: number;
    children: Array<{ name: string; path: string; total_count: number; items?: unknown }>;
  };
  t.equal(tree.path, '');
  t.equal(tree.total_count, 6);
  t.same(tree.children.map((c) => c.name).sort(), ['house', 'manuals', 'recipes', '菜谱'].sort());
  t.notOk('items' in (tree.children[0] ?? {}), 'no items unless asked');

  const shallow = await get(kb, '/tree?depth=0');
  t.same((shallow.body.tree as { children: unknown[] }).children, [], 'depth=0 expands nothing');

  const recipes = await get(kb, '/tree?category=recipes&items=1&preview=10');
  t.equal(recipes.status, 200);
  const node = recipes.body.tree as {
    path: string;
    total_count: number;
    children: Array<{ path: string; items: Array<{ path: string; preview: string }> }>;
  };
  t.equal(node.path, 'recipes');
  t.equal(node.total_count, 2);
  const soup = node.children.find((c) => c.path === 'recipes/soup');
  t.equal(soup?.items[0]?.path, 'recipes/soup/tomato_soup');
  t.ok((soup?.items[0]?.preview.length ?? 99) <= 10, 'preview cut to the asked length');

  const spelled = await get(kb, '/tree?category=%20Recipes/Soup/');
  t.equal((spelled.body.tree as { path: string }).path, 'recipes/soup', 'the category is read the way names are sanitised');
  const chinese = await get(kb, `/tree?category=${encodeURIComponent('菜谱')}&items=true`);
  t.equal((chinese.body.tree as { total_count: number }).total_count, 1);

  const missing = await get(kb, '/tree?category=garden');
  t.equal(missing.status, 404);
  t.match(missing.body, { ok: false, error: { code: 'HA_ERR_KNOWLEDGE_NOT_FOUND', message: /garden.*house, manuals, recipes, 菜谱/ } });
  t.same(missing.body.categories, ['house', 'manuals', 'recipes', '菜谱'], 'lists the top-level categories');
  t.equal((await get(kb, '/tree?category=recipes/soup/tomato_soup')).status, 404, 'an entry is not a category');

  for (const bad of ['depth=-1', 'depth=17', 'depth=abc', 'depth=1.5', 'items=maybe', 'preview=1001', 'colour=red', 'depth=1&depth=2']) {
    const reply = await get(kb, `/tree?${bad}`);
    t.equal(reply.status, 400, bad);
    t.match(reply.body, { ok: false, error: { code: 'HA_ERR_RPC_INVALID_PARAMS', message: String } });
  }
  t.match((await get(kb, '/tree?colour=red')).body, { error: { message: /colour.*category, depth, items, preview/ } });

  const categories = await get(kb, '/categories');
  t.same(categories.body, {
    ok: true,
    categories: ['house', 'manuals', 'manuals/heating', 'recipes', 'recipes/dessert', 'recipes/soup', '菜谱'].sort(),
  });
  t.equal((await get(kb, '/categories?q=x')).status, 400, '/categories takes no parameters');

  const counts = await get(kb, '/counts');
  t.equal(counts.status, 200);
  t.equal(counts.body.total, 6);
  const list = counts.body.counts as Array<{ category: string; count: number }>;
  t.same(list.slice(0, 2), [
    { category: 'manuals', count: 2 },
    { category: 'recipes', count: 2 },
  ]);
  t.ok(
    list.every((c, i) => i === 0 || (list[i - 1]?.count ?? 0) >= c.count),
    'most first',
  );
});

t.test('/search: q required, limit 1-100 (default 10), category filter', async (t) => {
  const { kb } = await withLibrary(t);
  const found = await get(kb, '/search?q=boiler%20pressure');
  t.equal(found.status, 200);
  t.match(found.body, { ok: true, query: 'boiler pressure', category: '', limit: 10 });
  const hits = found.body.hits as Array<{ name: string; category: string; score: number; snippet: string }>;
  t.equal(hits[0]?.name, 'manuals/heating/boiler');
  t.match(hits[0], { category: 'manuals/heating', score: Number, snippet: String });

  const chinese = await get(kb, `/search?q=${encodeURIComponent('红烧肉做法')}`);
  t.equal((chinese.body.hits as Array<{ name: string }>)[0]?.name, '菜谱/红烧肉');

  const within = await get(kb, '/search?q=apple%20tomato&category=recipes/soup');
  const inSoup = within.body.hits as Array<{ name: string; category: string }>;
  t.ok(inSoup.length > 0);
  t.ok(
    inSoup.every((h) => h.category === 'recipes/soup' || h.category.startsWith('recipes/soup/')),
    'only that category and below',
  );
  const one = await get(kb, '/search?q=the&limit=1');
  t.equal(one.status, 200);
  t.ok((one.body.hits as unknown[]).length <= 1);
  t.equal((await get(kb, '/search?q=soup&limit=100')).status, 200, 'limit 100 is allowed');

  for (const bad of [
    '',
    'q=',
    'q=%20%20',
    'q=soup&limit=0',
    'q=soup&limit=101',
    'q=soup&limit=ten',
    'q=soup&top_k=3',
    `q=${'a'.repeat(1001)}`,
  ]) {
    const reply = await get(kb, `/search?${bad}`);
    t.equal(reply.status, 400, bad.slice(0, 40));
    t.equal((reply.body.error as { code: string }).code, 'HA_ERR_RPC_INVALID_PARAMS');
  }
  const unknown = await get(kb, '/search?q=soup&category=garden');
  t.equal(unknown.status, 404);
  t.same(unknown.body.categories, ['house', 'manuals', 'recipes', '菜谱']);
});

t.test('an empty library answers with empty shapes', async (t) => {
  const kernel = await startKernel(t);
  const kb = await startKbtree(t, kernel);
  t.match((await get(kb, '/tree')).body, { ok: true, tree: { path: '', total_count: 0, children: [] } });
  t.same((await get(kb, '/categories')).body, { ok: true, categories: [] });
  t.same((await get(kb, '/counts')).body, { ok: true, counts: [], total: 0 });
  t.match((await get(kb, '/search?q=anything')).body, { ok: true, hits: [] });
  t.match((await get(kb, '/tree?category=x')).body, { error: { message: /\(none yet\)/ }, categories: [] });
});

t.test('refuses to start without a knowledge library, or with one that is not open, saying why', async (t) => {
  const { generation } = await import('./kbtree-setup.js');
  const { startKnowledge } = await import('./knowledge-setup.js');
  const { KbtreePlugin } = await import('../../../../plugins/kbtree/index.js');
  const without = await startKernel(t, { knowledge: null });
  const stopped = await startKernel(t, { knowledge: await startKnowledge(t, tempDir(t), { start: false }) });
  for (const kernel of [without, stopped]) {
    const gen = generation(kernel);
    t.notOk(gen.context.knowledge.available());
    const plugin = new KbtreePlugin(gen.context, { port: 0 });
    const error = await expectErrorAsync(t, () => plugin.start(), 'HA_ERR_UNAVAILABLE');
    t.match(error.message, /knowledge library/);
    t.equal(plugin.address(), undefined, 'nothing listens');
    t.same(gen.controlMethodNames(), [], 'nothing registered');
    await plugin.stop();
  }
});

t.test('listen address: loopback by default, another one only when configured, never an empty one', async (t) => {
  const { generation } = await import('./kbtree-setup.js');
  const { KbtreePlugin } = await import('../../../../plugins/kbtree/index.js');

  const empty = await startKernel(t, { env: { HOMEAGENT_PLUGIN_KBTREE_HOST: ' ' } });
  const refused = new KbtreePlugin(generation(empty).context, { port: 0 });
  const error = await expectErrorAsync(t, () => refused.start(), 'HA_ERR_PLUGIN_START');
  t.match(error.message, /every network interface.*127\.0\.0\.1/);
  t.equal(refused.address(), undefined);

  const loopback = await startKernel(t);
  const local = await startKbtree(t, loopback);
  t.equal(local.plugin.address()?.address, '127.0.0.1', 'the default binds loopback only');
  t.notOk(loopback.captured.text().includes('other machines can reach'));

  const second = new KbtreePlugin(generation(loopback, { name: 'kbtree' }).context, { port: local.port });
  const taken = await expectErrorAsync(t, () => second.start(), 'HA_ERR_PLUGIN_START');
  t.match(taken.message, /EADDRINUSE.*disable and enable/, 'a taken port is named, with what to do on a reload');
  t.equal((await get(local, '/categories')).status, 200, 'the running instance keeps serving');
  await second.stop();

  const lan = await startKernel(t, { env: { HOMEAGENT_PLUGIN_KBTREE_HOST: '0.0.0.0' } });
  const wide = await startKbtree(t, lan);
  t.equal(wide.plugin.address()?.address, '0.0.0.0', 'a configured address is used');
  t.equal((await get(wide, '/categories')).status, 200);
  const warning = lan.captured.records().find((r) => /other machines can reach/.test(String(r.msg)));
  t.equal(warning?.level, 'warn', 'a warning says the library is reachable from the network');
});

t.test('the random token is logged once; a configured one never', async (t) => {
  const kernel = await startKernel(t);
  const kb = await startKbtree(t, kernel);
  const lines = kernel.captured.lines.filter((line) => line.includes(kb.token));
  t.equal(lines.length, 1, 'printed once');
  t.match(JSON.parse(lines[0] ?? '{}'), { level: 'info', msg: /^kbtree token: / });
  await get(kb, '/tree');
  await kernel.control.call('kbtree.token', {}, { actor: 'cli' });
  t.equal(kernel.captured.lines.filter((line) => line.includes(kb.token)).length, 1, 'requests and token reads do not repeat it');

  const secret = 'a-configured-token-of-some-length';
  const configured = await startKernel(t, { env: { HOMEAGENT_PLUGIN_KBTREE_TOKEN: secret } });
  const fixed = await startKbtree(t, configured);
  t.equal(fixed.token, secret);
  t.notOk(configured.captured.text().includes(secret), 'the configured token stays out of the log');
  t.equal((await request(fixed.port, '/tree', { headers: { authorization: `Bearer ${secret}` } })).status, 200);
  t.match(await configured.control.call('kbtree.token', {}, { actor: 'cli' }), { token: secret, source: 'configured' });

  const weak = await startKernel(t, { env: { HOMEAGENT_PLUGIN_KBTREE_TOKEN: 'short' } });
  await startKbtree(t, weak);
  t.ok(
    weak.captured.records().some((r) => r.level === 'warn' && /shorter than 16/.test(String(r.msg))),
    'a short token is warned about',
  );
});

t.test('kbtree.token through the control registry: homeagentctl only, gone when stopped', async (t) => {
  const kernel = await startKernel(t);
  const kb = await startKbtree(t, kernel);
  t.ok(
    kernel.control.methods().some((m) => m.name === 'kbtree.token'),
    'listed with the kernel methods',
  );
  const info = (await kernel.control.call('kbtree.token', {}, { actor: 'cli' })) as { token: string; url: string; source: string };
  t.same(info, { token: kb.token, url: `http://127.0.0.1:${kb.port}/`, source: 'random' });
  const audit = kernel.captured.records().find((r) => r.action === 'kbtree.token.read');
  t.match(audit, { actor: 'plugin:kbtree', by: 'cli' });

  const refused = await expectErrorAsync(
    t,
    () => kernel.control.call('kbtree.token', {}, { actor: 'webui:admin' }),
    'HA_ERR_PLUGIN_PERMISSION',
  );
  t.match(refused.message, /homeagentctl/);
  await expectErrorAsync(t, () => kernel.control.call('kbtree.token', { extra: 1 }, { actor: 'cli' }), 'HA_ERR_RPC_INVALID_PARAMS');

  await kb.stop();
  await expectErrorAsync(t, () => kernel.control.call('kbtree.token', {}, { actor: 'cli' }), 'HA_ERR_RPC_UNKNOWN_METHOD');
  const after = await request(kb.port, '/tree', { headers: { 'x-api-key': kb.token } }).catch((error: NodeJS.ErrnoException) => error.code);
  t.equal(after, 'ECONNREFUSED', 'the port is closed');
  // A second start gets a new token.
  const again = await startKbtree(t, kernel);
  t.not(again.token, kb.token);
});

t.test('headers not finished within header_timeout_ms get a 408 and the connection is closed', async (t) => {
  const kernel = await startKernel(t, { env: { HOMEAGENT_PLUGIN_KBTREE_HEADER_TIMEOUT_MS: '200' } });
  const kb = await startKbtree(t, kernel);
  const stalled = connect(kb.port, '127.0.0.1');
  const answer = new Promise<string>((resolve) => {
    let data = '';
    stalled.on('data', (chunk: Buffer) => {
      data += chunk.toString();
    });
    stalled.on('close', () => resolve(data));
  });
  stalled.write('GET /tree HTTP/1.1\r\nHost: x\r\n');
  t.match(await answer, /^HTTP\/1\.1 408/);
  t.equal((await get(kb, '/categories')).status, 200, 'others are still served');
});

t.test('over max_connections a connection is dropped; stop closes the open ones', async (t) => {
  const kernel = await startKernel(t, { env: { HOMEAGENT_PLUGIN_KBTREE_MAX_CONNECTIONS: '2' } });
  const kb = await startKbtree(t, kernel);
  const open = [connect(kb.port, '127.0.0.1'), connect(kb.port, '127.0.0.1')];
  const closed = open.map((s) => new Promise((resolve) => s.once('close', resolve)));
  while (kb.plugin.connections() < 2) await new Promise((resolve) => setImmediate(resolve));
  const third = connect(kb.port, '127.0.0.1');
  const outcome = await new Promise<string>((resolve) => {
    third.on('data', () => resolve('data'));
    third.on('close', () => resolve('closed'));
  });
  t.equal(outcome, 'closed', 'the third connection is closed without an answer');
  t.equal(kb.plugin.connections(), 2);

  await kb.stop();
  await Promise.all(closed);
  t.equal(kb.plugin.connections(), 0, 'stop closed the open connections');
  t.notOk(kb.plugin.health().ok);
});

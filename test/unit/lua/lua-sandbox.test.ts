import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import t, { type Test } from 'tap';
import { LuaAdapter } from '../../../src/llm/lua/lua-adapter.js';
import { LuaSandbox, LuaScriptError } from '../../../src/lua/lua-sandbox.js';

/** A logger whose lines the test can read. */
function capturingLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { logger: pino({ level: 'debug' }, stream), lines };
}

const TIME_LIMIT_MS = 200;

async function sandbox(t: Test, options: Partial<Parameters<typeof LuaSandbox.create>[0]> = {}) {
  const { logger, lines } = capturingLogger();
  const sb = await LuaSandbox.create({
    name: 'test sandbox',
    logger,
    time_limit_ms: TIME_LIMIT_MS,
    http_timeout_ms: 1000,
    http_max_bytes: 64 * 1024,
    memory_limit_bytes: 32 * 1024 * 1024,
    ...options,
  });
  t.teardown(() => sb.close());
  return { sb, lines };
}

async function failure(promise: Promise<unknown>): Promise<LuaScriptError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof LuaScriptError) return error;
    throw error;
  }
  throw new Error('expected the call to fail');
}

// One module with a harmless function and every escape attempt as a function of its own.
const ESCAPES = String.raw`
local M = { name = 'escapes' }
function M.good(x) return { ok = true, got = x } end
function M.globals()
  local seen = {}
  for _, name in ipairs({ 'io', 'require', 'dofile', 'loadfile', 'package', 'debug' }) do seen[name] = type(_G[name]) end
  for _, name in ipairs({ 'execute', 'exit', 'remove', 'rename', 'tmpname', 'getenv', 'setlocale', 'time', 'clock', 'date' }) do
    seen['os.' .. name] = type(os[name])
  end
  seen['string.dump'] = type(string.dump)
  return seen
end
function M.os_execute() return os.execute('touch /tmp/lua-escaped') end
function M.io_open() return io.open('/etc/passwd'):read('a') end
function M.require_() return require('os') end
function M.dofile_() return dofile('/etc/passwd') end
function M.loadfile_() return loadfile('/etc/passwd') end
function M.debug_sethook() debug.sethook() while true do end end
function M.load_binary()
  -- A precompiled chunk header (ESC "Lua" 0x54): refused before it is read.
  local f, err = load('\27Lua\84\0\25\147\13\10\26\10\4\8\8\120\86\0\0\0\0\0\0\0\0\0\0\0\40\119\64\1', 'bin', 'b')
  local g, err2 = load('\27Lua\84\0')
  return { f = f == nil, err = err, g = g == nil, err2 = err2 }
end
function M.load_text() return load('return x * 2', 'chunk', 't', { x = 21 })() end
function M.string_metatable()
  local mt = getmetatable('')
  return { mt = mt, index = type(mt) == 'table' and type(mt.__index) or 'hidden' }
end
function M.real_rep() return getmetatable('').__index.rep('x', 1e9) end
function M.rep_bomb() return #string.rep('x', 1e9) end
function M.rep_method_bomb() return #(('abc'):rep(1e8, ',')) end
function M.concat_bomb() local s = 'xxxxxxxxxxxxxxxx' while true do s = s .. s end end
function M.table_bomb() local t = {} for i = 1, 1e9 do t[i] = { i } end end
function M.loop() while true do end end
function M.recursion() local function f(n) return f(n + 1) + 1 end return f(1) end
function M.pcall_loop() while true do pcall(function() while true do end end) end end
function M.coroutine_loop()
  local co = coroutine.create(function() while true do end end)
  while true do coroutine.resume(co) end
end
function M.gc_finalizer() return setmetatable({}, { __gc = function() while true do end end }) end
function M.gc_placeholder() return setmetatable({}, { __gc = true }) end
function M.gc_stop() collectgarbage('stop') end
function M.gc_collect() return collectgarbage('count') > 0 end
function M.yield_out() coroutine.yield(1) end
function M.print_(x) print('hello from', x) log('warn', 'careful') return true end
function M.stuck_in_c()
  -- Backtracking in the C pattern matcher: no instruction hook can interrupt it.
  return string.find(string.rep('a', 5000), string.rep('a*', 6) .. 'b')
end
return M
`;

t.test('escapes fail safely and the sandbox keeps working', async (t) => {
  const { sb, lines } = await sandbox(t);
  const module = await sb.load(ESCAPES, '=escapes');
  t.same(module.values, { name: 'escapes' });
  t.ok(module.functions.includes('os_execute'));

  t.same(
    (await sb.call('globals', []))[0],
    {
      io: 'nil',
      require: 'nil',
      dofile: 'nil',
      loadfile: 'nil',
      package: 'nil',
      debug: 'nil',
      'os.execute': 'nil',
      'os.exit': 'nil',
      'os.remove': 'nil',
      'os.rename': 'nil',
      'os.tmpname': 'nil',
      'os.getenv': 'nil',
      'os.setlocale': 'nil',
      'os.time': 'function',
      'os.clock': 'function',
      'os.date': 'function',
      'string.dump': 'nil',
    },
    'only the harmless parts of the standard library exist',
  );

  const good = async (label: string) => {
    t.same(await sb.call('good', [label]), [{ ok: true, got: label }], `a good call still works after ${label}`);
  };

  for (const fn of ['os_execute', 'io_open', 'require_', 'dofile_', 'loadfile_', 'debug_sethook']) {
    const error = await failure(sb.call(fn, []));
    t.equal(error.code, 'HA_ERR_LUA_RUNTIME', `${fn} fails as a script error`);
    t.match(error.message, /attempt to (call|index) a nil value/);
    await good(fn);
  }

  const [binary] = (await sb.call('load_binary', [])) as [Record<string, unknown>];
  t.equal(binary.f, true, 'load refuses mode "b"');
  t.match(binary.err, /only text chunks/);
  t.equal(binary.g, true, 'load refuses a binary chunk in text mode');
  t.match(binary.err2, /attempt to load a binary chunk/);
  t.same(await sb.call('load_text', []), [42], 'text chunks still load, with their own environment');

  t.same(await sb.call('string_metatable', []), [{ mt: 'string', index: 'hidden' }], 'the string metatable is hidden');
  const real = await failure(sb.call('real_rep', []));
  t.equal(real.code, 'HA_ERR_LUA_RUNTIME', 'no way to the unguarded string.rep through getmetatable');
  await good('real_rep');

  for (const fn of ['rep_bomb', 'rep_method_bomb']) {
    const error = await failure(sb.call(fn, []));
    t.equal(error.code, 'HA_ERR_LUA_LIMIT', `${fn} is refused as a limit`);
    t.match(error.message, /string\.rep: .* more than the sandbox allows/);
    await good(fn);
  }
  for (const fn of ['concat_bomb', 'table_bomb']) {
    const error = await failure(sb.call(fn, []));
    t.equal(error.code, 'HA_ERR_LUA_LIMIT', `${fn} hits the memory limit`);
    t.match(error.message, /out of memory|time limit/);
    await good(fn);
  }
  for (const fn of ['loop', 'pcall_loop', 'coroutine_loop']) {
    const started = performance.now();
    const error = await failure(sb.call(fn, []));
    t.equal(error.code, 'HA_ERR_LUA_LIMIT', `${fn} is stopped by the time limit`);
    t.match(error.message, new RegExp(`time limit of ${TIME_LIMIT_MS} ms`));
    t.ok(performance.now() - started < 10 * TIME_LIMIT_MS, `${fn} stops near the limit, without the watchdog`);
    t.equal(sb.alive, true, 'the hook stopped it; the sandbox lives on');
    await good(fn);
  }
  const recursion = await failure(sb.call('recursion', []));
  t.equal(recursion.code, 'HA_ERR_LUA_LIMIT', 'infinite recursion is a limit');
  await good('recursion');

  for (const fn of ['gc_finalizer', 'gc_placeholder']) {
    const error = await failure(sb.call(fn, []));
    t.match(error.message, /__gc metamethods are not allowed/, `${fn}: finalizers (which run without hooks) are refused`);
  }
  t.match((await failure(sb.call('gc_stop', []))).message, /option 'stop' is not allowed/);
  t.same(await sb.call('gc_collect', []), [true], 'harmless collectgarbage options work');
  t.match((await failure(sb.call('yield_out', []))).message, /coroutine\.yield outside a coroutine/);
  await good('yield_out');

  t.same(await sb.call('print_', ['lua']), [true]);
  t.ok(
    lines.some((l) => l.msg === 'hello from\tlua' && l.level === 20 && l.lua === 'test sandbox'),
    'print goes to the logger at debug level, not to stdout',
  );
  t.ok(
    lines.some((l) => l.msg === 'careful' && l.level === 40),
    'log(level, msg) reaches the logger',
  );
});

t.test('a script stuck inside a C function is stopped by the watchdog without blocking the daemon', async (t) => {
  const { sb } = await sandbox(t, { watchdog_grace_ms: 300 });
  await sb.load(ESCAPES, '=escapes');
  let ticks = 0;
  const timer = setInterval(() => ticks++, 10);
  t.teardown(() => clearInterval(timer));
  const started = performance.now();
  const error = await failure(sb.call('stuck_in_c', []));
  const took = performance.now() - started;
  t.equal(error.code, 'HA_ERR_LUA_LIMIT');
  t.match(error.message, /did not finish within 500 ms/);
  t.ok(ticks >= 5, `the event loop kept running while the script was stuck (${ticks} ticks in ${Math.round(took)} ms)`);
  t.equal(sb.alive, false, 'the stuck sandbox is gone');
  t.equal((await failure(sb.call('good', [1]))).code, 'HA_ERR_LUA_LIMIT', 'later calls on it fail with the reason');

  // The same process loads and runs a good adapter in a fresh sandbox.
  const adapter = await LuaAdapter.load('deepseek', {
    logger: pino({ level: 'silent' }),
    time_limit_ms: 1000,
    http_timeout_ms: 1000,
    http_max_bytes: 1024,
  });
  t.teardown(() => adapter.close());
  const body = JSON.parse(await adapter.transformRequest({ model: 'm', stream: false, messages: [{ role: 'user', content: 'hi' }] })) as {
    messages: unknown[];
  };
  t.same(body.messages, [{ role: 'user', content: 'hi' }]);
});

t.test('json built-ins', async (t) => {
  const { sb } = await sandbox(t);
  await sb.load(
    `
    local M = {}
    function M.decode_nulls()
      local v = json.decode('{"a":null,"b":[1,null,3],"c":"x"}')
      return { a_is_nil = v.a == nil, b_len = #v.b, b2_is_null = v.b[2] == json.null, c = v.c }
    end
    function M.keep_nulls()
      local v = json.decode('{"a":null}', true)
      return { a_is_null = v.a == json.null, encoded = json.encode(v) }
    end
    function M.encode()
      return {
        null = json.encode(json.null),
        empty_object = json.encode({}),
        empty_array = json.encode(json.array()),
        list = json.encode({ 1, 'two', true }),
        nested = json.encode({ a = { b = { 1.5, -2 } } }),
        unicode = json.encode({ s = '温度 °C' }),
        holes = json.encode({ [1] = 'a', [3] = 'c' }),
      }
    end
    function M.bad() return json.decode('{nope') end
    function M.encode_function() return json.encode({ f = print }) end
    function M.cyclic() local t = {} t.self = t return json.encode(t) end
    function M.roundtrip(v) return v end
    function M.null_readonly() json.null.x = 1 end
    return M`,
    '=json',
  );
  t.same(
    await sb.call('decode_nulls', []),
    [{ a_is_nil: true, b_len: 3, b2_is_null: true, c: 'x' }],
    'null: dropped in objects, json.null in arrays',
  );
  t.same(await sb.call('keep_nulls', []), [{ a_is_null: true, encoded: '{"a":null}' }], 'json.decode(text, true) keeps nulls');
  const [encoded] = (await sb.call('encode', [])) as [Record<string, string>];
  t.equal(encoded.null, 'null');
  t.equal(encoded.empty_object, '{}');
  t.equal(encoded.empty_array, '[]');
  t.equal(encoded.list, '[1,"two",true]');
  t.same(JSON.parse(encoded.nested ?? ''), { a: { b: [1.5, -2] } });
  t.equal(encoded.unicode, '{"s":"温度 °C"}');
  t.same(JSON.parse(encoded.holes ?? ''), { 1: 'a', 3: 'c' }, 'a table with holes is an object');
  const [badValue, badMessage] = await sb.call('bad', []);
  t.equal(badValue, null, 'invalid JSON gives nil...');
  t.match(badMessage, /^invalid JSON/, '...and a message');
  t.match((await failure(sb.call('encode_function', []))).message, /cannot encode a function value/);
  t.match((await failure(sb.call('cyclic', []))).message, /nested too deeply \(or cyclic\)/);
  t.match((await failure(sb.call('null_readonly', []))).message, /json\.null is read-only/);
  const value = { empty: [], obj: {}, list: [1, null, 'x'], deep: { k: [{ a: true }] }, __proto__x: 1 };
  t.same(await sb.call('roundtrip', [value]), [value], 'values cross both ways unchanged (empty arrays stay arrays)');
});

t.test('http_get and http_post do real HTTP with a timeout and a size limit', async (t) => {
  const received: Array<{ method: string; url: string; headers: Record<string, unknown>; body: string }> = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      if (req.url === '/stall') return;
      if (req.url === '/big') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('x'.repeat(100 * 1024));
        return;
      }
      res.writeHead(req.url === '/missing' ? 404 : 201, { 'content-type': 'application/json', 'x-answer': '42' });
      res.end(JSON.stringify({ method: req.method, path: req.url }));
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  );
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const { sb } = await sandbox(t, { http_timeout_ms: 300, http_max_bytes: 64 * 1024 });
  await sb.load(
    `
    local M = {}
    function M.get(url)
      local res, err = http_get(url, { ['x-token'] = 'abc' })
      if not res then return nil, err end
      return { status = res.status, body = json.decode(res.body), answer = res.headers['x-answer'], type = res.headers['content-type'] }
    end
    function M.post(url)
      local res, err = http_post(url, { hello = 'world', list = json.array() })
      if not res then return nil, err end
      return { status = res.status, body = json.decode(res.body) }
    end
    function M.post_text(url) local res = http_post(url, 'plain text', { ['content-type'] = 'text/plain' }) return res.status end
    function M.fail(url) local res, err = http_get(url) return { res = res == nil, err = err } end
    function M.in_coroutine(url)
      local co = coroutine.create(function() return http_get(url) end)
      local ok, err = coroutine.resume(co)
      return { ok = ok, err = err }
    end
    function M.two(url)
      local a = http_get(url .. '/one')
      local b = http_get(url .. '/two')
      return { a.status, b.status }
    end
    return M`,
    '=http',
  );

  t.same(
    await sb.call('get', [`${base}/thing?q=1`]),
    [{ status: 201, body: { method: 'GET', path: '/thing?q=1' }, answer: '42', type: 'application/json' }],
    'status, body and headers come back',
  );
  t.equal(received.at(-1)?.headers['x-token'], 'abc', 'request headers are sent');
  t.same(await sb.call('post', [`${base}/post`]), [{ status: 201, body: { method: 'POST', path: '/post' } }]);
  t.same(JSON.parse(received.at(-1)?.body ?? ''), { hello: 'world', list: [] }, 'a table body is sent as JSON');
  t.match(received.at(-1)?.headers['content-type'], /application\/json/);
  t.same(await sb.call('post_text', [`${base}/text`]), [201]);
  t.equal(received.at(-1)?.body, 'plain text');
  t.same(
    (await sb.call('get', [`${base}/missing`]))[0],
    { status: 404, body: { method: 'GET', path: '/missing' }, answer: '42', type: 'application/json' },
    'HTTP errors are statuses, not failures',
  );
  t.same(await sb.call('two', [base]), [[201, 201]], 'several requests in one call');

  const stalled = (await sb.call('fail', [`${base}/stall`]))[0] as { res: boolean; err: string };
  t.equal(stalled.res, true);
  t.match(stalled.err, /no answer within 300 ms/, 'a stalled server times out');
  const big = (await sb.call('fail', [`${base}/big`]))[0] as { res: boolean; err: string };
  t.match(big.err, /larger than 65536 bytes/, 'a response over the size limit is refused');
  t.match(((await sb.call('fail', ['file:///etc/passwd']))[0] as { err: string }).err, /only http and https/);
  t.match(((await sb.call('fail', ['not a url']))[0] as { err: string }).err, /invalid URL/);
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const closedPort = (closed.address() as AddressInfo).port;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
  t.match(
    ((await sb.call('fail', [`http://127.0.0.1:${closedPort}/`]))[0] as { err: string }).err,
    /ECONNREFUSED/,
    'a refused connection is an error value',
  );
  const co = (await sb.call('in_coroutine', [`${base}/x`]))[0] as { ok: boolean; err: string };
  t.equal(co.ok, false);
  t.match(co.err, /cannot be used inside a coroutine/);
  t.equal(sb.alive, true);
});

t.test('waiting for HTTP does not count against the time limit', async (t) => {
  const server = createServer((_req, res) => {
    // Answers after three times the script's CPU budget.
    setTimeout(() => res.end('late'), 3 * TIME_LIMIT_MS);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const { sb } = await sandbox(t, { http_timeout_ms: 5000 });
  await sb.load(`return { get = function(url) return http_get(url).body end }`, '=slow');
  t.same(await sb.call('get', [`http://127.0.0.1:${(server.address() as AddressInfo).port}/`]), ['late']);
});

t.test('concurrent calls keep their own arguments, results and stream state', async (t) => {
  const { sb } = await sandbox(t);
  await sb.load(
    `return {
      echo = function(x) return x end,
      count = function(chunk, ctx) ctx.n = (ctx.n or 0) + chunk return { n = ctx.n, event = ctx.event } end,
    }`,
    '=c',
  );
  const results = await Promise.all(Array.from({ length: 20 }, (_, i) => sb.call('echo', [{ i }])));
  t.same(
    results.map((r) => (r[0] as { i: number }).i),
    Array.from({ length: 20 }, (_, i) => i),
  );
  const a = sb.newState();
  const b = sb.newState();
  await sb.call('count', [1], { state: a, event: 'x' });
  await sb.call('count', [10], { state: b });
  t.same(await sb.call('count', [1], { state: a, event: 'y' }), [{ n: 2, event: 'y' }]);
  t.same(await sb.call('count', [10], { state: b }), [{ n: 20 }]);
  sb.dropState(a);
  t.same(await sb.call('count', [5], { state: a }), [{ n: 5 }], 'a dropped state starts over');
});

t.test('load errors are HA_ERR_LUA_LOAD', async (t) => {
  const { sb } = await sandbox(t);
  const syntax = await failure(sb.load('return {', '@adapters/broken.lua'));
  t.equal(syntax.code, 'HA_ERR_LUA_LOAD');
  t.match(syntax.message, /syntax error: adapters\/broken\.lua:1:/);
  t.equal((await failure(sb.load('return 42', '=n'))).code, 'HA_ERR_LUA_LOAD');
  t.match((await failure(sb.load('error("boom")', '=e'))).message, /boom/);
  const limit = await failure(sb.load('while true do end', '=l'));
  t.equal(limit.code, 'HA_ERR_LUA_LIMIT', 'a runaway top level is a limit, not a load error');
  await sb.load('return { ok = function() return 1 end }', '=ok');
  t.same(await sb.call('ok', []), [1], 'the sandbox still loads a good script');
});

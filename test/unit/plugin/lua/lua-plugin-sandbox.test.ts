import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import t, { type Test } from 'tap';
import { HomeAgentError } from '../../../../src/shared/errors.js';
import { luaPlugin, rejection } from './fixtures/lua-plugin-setup.js';

const PROBES = String.raw`
local function probe(f)
  local ok, err = pcall(f)
  if ok then return 'ALLOWED' end
  return tostring(err)
end

return { start = function(ha)
  ha.register_tool{ name = 'demo_probe', description = 'tries to leave the sandbox', tier = 'read', handler = function()
    return {
      os_execute = probe(function() return os.execute('touch /tmp/ha-lua-plugin-escaped') end),
      os_getenv = probe(function() return os.getenv('HOME') end),
      os_remove = probe(function() return os.remove('/tmp/x') end),
      io_open = probe(function() return io.open('/etc/passwd'):read('a') end),
      io_popen = probe(function() return io.popen('id') end),
      require = probe(function() return require('os') end),
      dofile = probe(function() return dofile('/etc/passwd') end),
      loadfile = probe(function() return loadfile('/etc/passwd') end),
      package = probe(function() return package.loadlib('libc.so.6', 'system') end),
      debug = probe(function() return debug.getinfo(1) end),
      debug_registry = probe(function() return debug.getregistry() end),
      string_dump = probe(function() return string.dump(probe) end),
      bytecode = probe(function()
        local f, err = load('\27Lua\84\0\25\147\13\10\26\10\4\8\8\120\86\0\0\0\0\0\0\0\0\0\0\0\40\119\64\1', 'bin', 'b')
        assert(f, err)
      end),
      bytecode_text_mode = probe(function() assert(load('\27Lua\84\0')) end),
      string_metatable = probe(function() return getmetatable('').__index.rep('x', 1e9) end),
      string_metatable_replace = probe(function() setmetatable('', {}) end),
      string_metatable_rawset = probe(function() rawset(getmetatable(''), '__index', {}) end),
      string_rep_bomb = probe(function() return string.rep('x', 1e9) end),
      gc_finalizer = probe(function() return setmetatable({}, { __gc = function() while true do end end }) end),
      gc_stop = probe(function() collectgarbage('stop') end),
      string_metatable_value = getmetatable(''),
      text_load_works = load('return 6 * 7')(),
    }
  end }
end }
`;

t.test('sandbox escapes from a Lua plugin are refused and the plugin keeps working', async (t) => {
  const { plugin, test } = luaPlugin(t, { source: PROBES });
  await plugin.start(new AbortController().signal);
  const result = (await test.call('demo_probe', {})) as Record<string, unknown>;
  const escapes = Object.keys(result).filter((k) => k !== 'string_metatable_value' && k !== 'text_load_works');
  t.equal(escapes.length, 20, 'every probe ran');
  for (const name of escapes) {
    t.not(result[name], 'ALLOWED', `${name} is refused: ${String(result[name])}`);
  }
  t.match(result.os_execute, /attempt to call a nil value/);
  t.match(result.io_open, /attempt to index a nil value/);
  t.match(result.bytecode, /only text chunks/);
  t.match(result.bytecode_text_mode, /attempt to load a binary chunk/);
  t.match(result.string_rep_bomb, /more than the sandbox allows/);
  t.match(result.gc_finalizer, /__gc metamethods are not allowed/);
  t.equal(result.string_metatable_value, 'string', 'the string metatable is hidden');
  t.equal(result.text_load_works, 42, 'text chunks still load');
});

t.test('a script stuck inside a C function: the watchdog stops the sandbox and the plugin is marked failed', async (t) => {
  const { plugin, test, reported, health } = luaPlugin(t, {
    source: `return { start = function(ha)
      ha.register_tool{ name = 'demo_stuck', description = 'backtracks forever', tier = 'read',
        handler = function() return string.find(string.rep('a', 5000), string.rep('a*', 6) .. 'b') end }
      ha.register_tool{ name = 'demo_ok', description = 'fine', tier = 'read', handler = function() return 'ok' end }
    end }`,
  });
  await plugin.start(new AbortController().signal);
  let ticks = 0;
  const timer = setInterval(() => ticks++, 10);
  t.teardown(() => clearInterval(timer));

  const stuck = await rejection(test.call('demo_stuck', {}));
  t.ok(stuck instanceof HomeAgentError && stuck.code === 'HA_ERR_LUA_LIMIT', `that call fails with a limit error (${stuck.message})`);
  t.match(stuck.message, /did not finish within \d+ ms .* its sandbox was stopped/);
  t.ok(ticks >= 5, `the daemon's event loop kept running (${ticks} ticks)`);
  t.equal(reported.length, 1, 'the plugin reported one state change');
  t.equal(reported[0]?.state, 'failed', 'it reported itself failed');
  t.match(reported[0]?.detail, /the Lua sandbox stopped: the script did not finish/);
  t.equal((await health()).ok, false, 'health says so');

  const started = performance.now();
  const dead = await rejection(test.call('demo_ok', {}));
  t.ok(dead instanceof HomeAgentError && dead.code === 'HA_ERR_PLUGIN_DEAD', 'later calls fail with HA_ERR_PLUGIN_DEAD');
  t.ok(performance.now() - started < 100, 'at once, without touching a sandbox');
  await plugin.stop();
  t.equal(reported.length, 1, 'stop reports nothing more');
});

interface Seen {
  host: string | undefined;
  url: string | undefined;
}

/** A local HTTP server: /hello answers, /to-same redirects to /hello on the same host, /to-other to another host name. */
async function httpServer(t: Test) {
  const seen: Seen[] = [];
  const server = createServer((req: IncomingMessage, res) => {
    seen.push({ host: req.headers.host, url: req.url });
    const port = (server.address() as AddressInfo).port;
    if (req.url === '/to-same') {
      res.writeHead(302, { location: '/hello' });
      res.end();
    } else if (req.url === '/to-other') {
      res.writeHead(302, { location: `http://localhost:${port}/hello` });
      res.end();
    } else {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ hello: 'world', path: req.url }));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  return { seen, port: (server.address() as AddressInfo).port };
}

const FETCHER = `return { start = function(ha)
  ha.register_tool{ name = 'demo_get', description = 'fetches a URL', tier = 'read',
    parameters = { type = 'object', properties = { url = { type = 'string' } }, required = { 'url' } },
    handler = function(args)
      local response, err = http_get(args.url)
      if not response then return { error = err } end
      return { status = response.status, body = json.decode(response.body) }
    end }
  ha.register_tool{ name = 'demo_post', description = 'posts to a URL', tier = 'act',
    parameters = { type = 'object', properties = { url = { type = 'string' } }, required = { 'url' } },
    handler = function(args)
      local response, err = http_post(args.url, { a = 1 })
      if not response then return { error = err } end
      return { status = response.status }
    end }
end }`;

t.test('without permissions.network a Lua plugin reaches no host at all', async (t) => {
  const { seen, port } = await httpServer(t);
  const { plugin, test } = luaPlugin(t, { source: FETCHER });
  await plugin.start(new AbortController().signal);
  for (const url of [`http://127.0.0.1:${port}/hello`, `http://localhost:${port}/hello`, 'https://example.com/']) {
    t.match(await test.call('demo_get', { url }), { error: /network access is not allowed/ }, `GET ${url} is refused`);
  }
  t.match(await test.call('demo_post', { url: `http://127.0.0.1:${port}/hello` }), { error: /network access is not allowed/ });
  t.same(seen, [], 'the server never saw a request');
});

t.test('with a host list only those hosts are reached, redirects included', async (t) => {
  const { seen, port } = await httpServer(t);
  const { plugin, test } = luaPlugin(t, { source: FETCHER, permissions: { network: ['127.0.0.1', 'example.invalid:8443'] } });
  await plugin.start(new AbortController().signal);

  t.same(
    await test.call('demo_get', { url: `http://127.0.0.1:${port}/hello` }),
    { status: 200, body: { hello: 'world', path: '/hello' } },
    'an allowed host answers',
  );
  t.same(await test.call('demo_post', { url: `http://127.0.0.1:${port}/hello` }), { status: 200 }, 'POST too');
  t.same(
    await test.call('demo_get', { url: `http://127.0.0.1:${port}/to-same` }),
    { status: 200, body: { hello: 'world', path: '/hello' } },
    'a redirect to the same host is followed',
  );
  const before = seen.length;
  t.match(
    await test.call('demo_get', { url: `http://localhost:${port}/hello` }),
    { error: /host localhost:\d+ is not in the allowed network hosts/ },
    'another name for the same server is another host: refused',
  );
  t.equal(seen.length, before, 'nothing was sent for it');
  t.match(
    await test.call('demo_get', { url: `http://127.0.0.1:${port}/to-other` }),
    { error: /redirect to localhost:\d+ refused/ },
    'a redirect to a host not on the list is not followed',
  );
  t.same(seen.at(-1), { host: `127.0.0.1:${port}`, url: '/to-other' }, 'the server saw only the redirecting request');
  t.match(
    await test.call('demo_get', { url: 'http://example.invalid/' }),
    { error: /not in the allowed network hosts/ },
    'a host listed with a port is allowed on that port only',
  );
  t.match(await test.call('demo_get', { url: 'file:///etc/passwd' }), { error: /only http and https/ });
});

t.test('with network true any host is reached and redirects are followed as before', async (t) => {
  const { port } = await httpServer(t);
  const { plugin, test } = luaPlugin(t, { source: FETCHER, permissions: { network: true } });
  await plugin.start(new AbortController().signal);
  t.same(await test.call('demo_get', { url: `http://localhost:${port}/to-other` }), {
    status: 200,
    body: { hello: 'world', path: '/hello' },
  });
  t.match(await test.call('demo_get', { url: 'not a url' }), { error: /invalid URL/ }, 'a bad URL is an answer, not a crash');
});

import { createServer } from 'node:http';
import t from 'tap';
import { HomeAgentError } from '../../../../src/shared/errors.js';
import { ToolError } from '../../../../src/shared/tool.js';
import { luaPlugin, rejection } from './fixtures/lua-plugin-setup.js';

const DEMO = `
local plugin = {}
local calls = 0

function plugin.start(ha)
  ha.log('info', 'starting ' .. ha.name .. ', network ' .. tostring(ha.network))
  ha.register_tool{
    name = 'demo_echo',
    description = 'Echoes its arguments and call',
    tier = 'read',
    parallel_safe = true,
    parameters = { type = 'object', properties = { value = {} }, required = {} },
    handler = function(args, call)
      calls = calls + 1
      return { args = args, call = call, n = calls }
    end,
  }
  ha.register_tool{
    name = 'demo_settings',
    description = 'Returns the settings snapshot',
    tier = 'read',
    handler = function() return ha.settings end,
  }
  ha.register_tool{
    name = 'demo_fail',
    description = 'Raises a Lua error',
    tier = 'act',
    parameters = { type = 'object', properties = { why = { type = 'string' } }, required = { 'why' } },
    handler = function(args) error('boom: ' .. args.why) end,
  }
  ha.register_tool{
    name = 'demo_refuse',
    description = 'Reports a structured failure',
    tier = 'read',
    handler = function() ha.fail{ reason = 'not_found', field = 'room', detail = 'no room called attic', hint = 'ask which room' } end,
  }
  ha.register_tool{
    name = 'demo_offline',
    description = 'Returns nil and a message',
    tier = 'read',
    handler = function() return nil, 'sensor offline' end,
  }
  ha.register_tool{
    name = 'demo_nothing',
    description = 'Returns nothing',
    tier = 'dangerous',
    handler = function() end,
  }
  ha.register_tool{
    name = 'demo_loop',
    description = 'Never ends',
    tier = 'read',
    handler = function() while true do end end,
  }
  ha.register_tool{
    name = 'demo_pcall_loop',
    description = 'Never ends and swallows errors',
    tier = 'read',
    handler = function() while true do pcall(function() while true do end end) end end,
  }
  ha.register_tool{
    name = 'demo_table_bomb',
    description = 'Allocates without end',
    tier = 'read',
    handler = function() local t = {} for i = 1, 1e9 do t[i] = { i } end end,
  }
  ha.register_tool{
    name = 'demo_string_bomb',
    description = 'Doubles a string without end',
    tier = 'read',
    handler = function() local s = 'xxxxxxxxxxxxxxxx' while true do s = s .. s end end,
  }
  ha.register_tool{
    name = 'demo_register_late',
    description = 'Tries to register a tool after start',
    tier = 'read',
    handler = function()
      ha.register_tool{ name = 'demo_late', description = 'late', tier = 'read', handler = function() end }
    end,
  }
end

function plugin.stop(ha)
  ha.log('warn', 'stopping after ' .. calls .. ' calls')
end

return plugin
`;

const CONFIG = {
  greeting: { type: 'string', default: 'hello', description: 'What to say' },
  count: { type: 'integer', default: 3, description: 'How often' },
  rooms: { type: 'array', default: ['kitchen'], description: 'Rooms' },
};

// One started plugin for the tests below (each sandbox costs a worker start); the last one stops it.
const { plugin, test, logs, reported, health } = luaPlugin(t, { source: DEMO, config: CONFIG, settings: { greeting: 'grüezi' } });
await plugin.start(new AbortController().signal);

t.test('tools registered in start() are called with arguments and results round-tripping', async (t) => {
  t.same(await health(), { ok: true, detail: 'running, 11 tool(s)', detail_zh: '运行中，11 个工具' }, 'healthy while the sandbox runs');

  const echo = test.tools.get('demo_echo');
  t.equal(echo?.tier, 'read', 'the tier declared in Lua');
  t.equal(echo?.parallel_safe, true);
  t.equal(echo?.owner, 'plugin:demo');
  t.same(echo?.parameters, { type: 'object', properties: { value: {} }, required: [] }, 'required = {} becomes an empty array');
  t.equal(test.tools.get('demo_nothing')?.tier, 'dangerous');
  t.ok(
    logs.records().some((r) => r.msg === 'starting demo, network false' && r.level === 'info'),
    'ha.log reaches the plugin logger',
  );

  const value = {
    text: 'Grüße, 温度 °C, 🌡️ "quoted" \\ back',
    number: 1.5,
    negative: -42,
    big: 2 ** 40,
    flag: false,
    list: [1, 'two', { three: [3, [4]] }],
    empty_list: [],
    empty_object: {},
    nested: { a: { b: { c: ['deep'] } } },
  };
  const result = await test.call(
    'demo_echo',
    { value },
    { task_id: 'task-9', call_id: 'call-7', source: 'cli', channel: 'cli:1', trust: 'owner' as const },
  );
  t.same(
    result,
    { args: { value }, call: { task_id: 'task-9', call_id: 'call-7', source: 'cli', channel: 'cli:1', trust: 'owner' as const }, n: 1 },
    'nested tables, arrays, empty arrays and unicode cross both ways unchanged',
  );
  t.same(await test.call('demo_echo', {}), {
    args: {},
    call: { task_id: 'task-1', call_id: 'call-1', source: 'test', channel: 'test', trust: 'owner' as const },
    n: 2,
  });
  t.equal(await test.call('demo_nothing', {}), null, 'a handler returning nothing answers null');

  t.same(
    await test.call('demo_settings', {}),
    { greeting: 'grüezi', count: 3, rooms: ['kitchen'] },
    'ha.settings holds plugin.<name>.* values, defaults where none is set',
  );
});

t.test('handler failures become tool errors the model reads', async (t) => {
  const lua = await rejection(test.call('demo_fail', { why: 'the fuse blew' }));
  t.ok(lua instanceof ToolError, 'a Lua error is a ToolError');
  t.equal((lua as ToolError).info.reason, 'failed');
  t.match((lua as ToolError).info.detail, /^demo\/main\.lua:\d+: boom: the fuse blew$/, 'with the Lua message and its place');

  const refused = await rejection(test.call('demo_refuse', {}));
  t.same(
    (refused as ToolError).info,
    { reason: 'not_found', field: 'room', detail: 'no room called attic', hint: 'ask which room' },
    'ha.fail{...} is a structured ToolError',
  );
  const offline = await rejection(test.call('demo_offline', {}));
  t.same((offline as ToolError).info, { reason: 'failed', detail: 'sensor offline' }, 'return nil, message is a failure');

  const late = await rejection(test.call('demo_register_late', {}));
  t.match((late as ToolError).info.detail, /ha\.register_tool can only be called while start\(\) runs/);
  t.notOk(test.tools.get('demo_late'), 'no tool appears after start');

  t.match(await test.call('demo_echo', {}), { args: {}, n: 3 }, 'the plugin keeps working');
});

t.test('runaway loops and memory bombs fail that call with a limit error; the plugin and the daemon carry on', async (t) => {
  let ticks = 0;
  const timer = setInterval(() => ticks++, 5);
  t.teardown(() => clearInterval(timer));

  for (const tool of ['demo_loop', 'demo_pcall_loop']) {
    const before = ticks;
    const error = await rejection(test.call(tool, {}));
    t.ok(error instanceof HomeAgentError && error.code === 'HA_ERR_LUA_LIMIT', `${tool} fails with HA_ERR_LUA_LIMIT`);
    t.match(error.message, /time limit of 200 ms/, 'stopped by the instruction hook, not the watchdog');
    t.ok(ticks > before, `the daemon's event loop kept running (${ticks - before} ticks)`);
    t.match(await test.call('demo_echo', {}), { args: {} }, `the plugin still answers after ${tool}`);
  }
  for (const tool of ['demo_table_bomb', 'demo_string_bomb']) {
    const error = await rejection(test.call(tool, {}));
    t.ok(error instanceof HomeAgentError && error.code === 'HA_ERR_LUA_LIMIT', `${tool} fails with HA_ERR_LUA_LIMIT`);
    t.match(error.message, /out of memory|time limit/);
    t.match(await test.call('demo_echo', {}), { args: {} }, `the plugin still answers after ${tool}`);
  }
  t.same(reported, [], 'nothing was reported to the host: the sandbox survived');
  t.same(await health(), { ok: true, detail: 'running, 11 tool(s)', detail_zh: '运行中，11 个工具' });
});

t.test('the plugin may be written as a global plugin table or global functions', async (t) => {
  const globalTable = luaPlugin(t, {
    name: 'globaltable',
    source: `plugin = { start = function(ha) ha.register_tool{ name = 'globaltable_x', description = 'x', tier = 'read', handler = function() return 'table' end } end }`,
  });
  await globalTable.plugin.start(new AbortController().signal);
  t.equal(await globalTable.test.call('globaltable_x', {}), 'table');

  const globals = luaPlugin(t, {
    name: 'globalfns',
    source: `
      local stopped = false
      function start(ha) ha.register_tool{ name = 'globalfns_x', description = 'x', tier = 'read', handler = function() return ha.name end } end
      function stop() ha.log('stopped by a global stop') end`,
  });
  await globals.plugin.start(new AbortController().signal);
  t.equal(await globals.test.call('globalfns_x', {}), 'globalfns', 'the global ha is there too');
  await globals.plugin.stop();
  t.ok(globals.logs.records().some((r) => r.msg === 'stopped by a global stop'));
});

t.test('a call that waits longer than call_timeout_ms fails with HA_ERR_PLUGIN_TIMEOUT', async (t) => {
  const server = createServer(() => {
    // never answers
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  const port = (server.address() as { port: number }).port;
  const waiting = luaPlugin(t, {
    source: `return { start = function(ha)
      ha.register_tool{ name = 'demo_wait', description = 'waits', tier = 'read',
        handler = function() local r, e = http_get('http://127.0.0.1:${port}/stall') return e end }
    end }`,
    permissions: { network: ['127.0.0.1'] },
    limits: { call_timeout_ms: 300 },
  });
  await waiting.plugin.start(new AbortController().signal);
  const error = await rejection(waiting.test.call('demo_wait', {}));
  t.ok(error instanceof HomeAgentError && error.code === 'HA_ERR_PLUGIN_TIMEOUT', 'the call gives up');
  t.match(error.message, /did not finish within 300 ms/);
  t.equal((await waiting.health()).ok, true, 'waiting is not a fault of the sandbox');
});

t.test('stop() calls the Lua stop(), removes the tools and closes the sandbox', async (t) => {
  const calls = (await test.call('demo_echo', {})) as { n: number };
  const echo = test.tools.get('demo_echo');
  await plugin.stop();
  t.ok(
    logs.records().some((r) => r.msg === `stopping after ${calls.n} calls` && r.level === 'warn'),
    'the script saw stop() with its state intact',
  );
  t.same(
    test.tools.list().filter((tool) => tool.owner === 'plugin:demo'),
    [],
    'its tools are gone',
  );
  t.equal((await health()).ok, false, 'not healthy once stopped');
  const late = await rejection(
    Promise.resolve(
      echo?.execute(
        {},
        { signal: new AbortController().signal, task_id: 't', call_id: 'c', source: 's', channel: 'c', trust: 'owner' as const },
      ),
    ),
  );
  t.ok(
    late instanceof HomeAgentError && late.code === 'HA_ERR_PLUGIN_DEAD',
    'a call that still arrives fails at once with HA_ERR_PLUGIN_DEAD',
  );
  await plugin.stop();
  t.pass('a second stop() is harmless');
});

import { existsSync, readFileSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { McpPlugin, type McpPluginOptions } from '../../../../plugins/mcp/index.js';
import type { McpServerConfig } from '../../../../plugins/mcp/server-config.js';
import { baseToolName } from '../../../../plugins/mcp/tool-names.js';
import type { ToolDefinition } from '../../../../src/shared/tool.js';
import { createTestPluginContext, type TestPluginContext } from '../../../helpers/plugin-context.js';
import { type Teardown, tempDir } from '../../fixtures/support.js';
import { LONG_TOOL_NAME, startHttpMcpServer } from './fixtures/http-server.js';

const STDIO_FIXTURE = fileURLToPath(new URL('./fixtures/stdio-server.mjs', import.meta.url));

function stdioServer(env: Record<string, string> = {}, extra: Partial<McpServerConfig> = {}): McpServerConfig {
  return { transport: 'stdio', command: process.execPath, args: [STDIO_FIXTURE], env, ...extra };
}

interface Running {
  tc: TestPluginContext;
  plugin: McpPlugin;
  /** Resolves at the next registration of `name` (ask before doing what registers it). */
  registered(name: string): Promise<void>;
  mcpTools(): string[];
  stop(): Promise<void>;
}

async function startMcp(
  t: Teardown,
  dataDir: string,
  servers: Record<string, McpServerConfig>,
  options: McpPluginOptions = {},
): Promise<Running> {
  const tc = createTestPluginContext({ name: 'mcp', dataDir, settings: { servers } });
  const waiting = new Map<string, Array<() => void>>();
  const register = tc.context.tools.register.bind(tc.context.tools);
  tc.context.tools.register = <A>(definition: Omit<ToolDefinition<A>, 'owner'>) => {
    const unregister = register(definition);
    for (const resolve of waiting.get(definition.name) ?? []) resolve();
    waiting.delete(definition.name);
    return unregister;
  };
  const plugin = new McpPlugin(tc.context, options);
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await plugin.stop();
  };
  t.teardown(stop);
  await plugin.start(new AbortController().signal);
  return {
    tc,
    plugin,
    registered: (name) =>
      new Promise<void>((resolve) => {
        const list = waiting.get(name) ?? [];
        list.push(resolve);
        waiting.set(name, list);
      }),
    mcpTools: () =>
      tc.tools
        .list()
        .filter((tool) => tool.owner === 'plugin:mcp')
        .map((tool) => tool.name),
    stop,
  };
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

/** A port nothing listens on: one the system just handed out and that was closed again. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function readPid(file: string): number {
  return Number(readFileSync(file, 'utf8'));
}

t.test('a stdio server: every page of tools registered, calls, errors, and stop ends the child', async (t) => {
  const dir = tempDir(t);
  const pidFile = join(dir, 'server.pid');
  const { tc, plugin, mcpTools, stop } = await startMcp(t, dir, { local: stdioServer({ MCP_FIXTURE_PID_FILE: pidFile }) });

  t.same(
    mcpTools(),
    [
      'mcp_local_add',
      'mcp_local_crash',
      'mcp_local_echo',
      'mcp_local_fail',
      'mcp_local_grow',
      'mcp_local_media',
      'mcp_local_odd_name_with_chars',
      'mcp_local_slow',
      'mcp_local_stats',
    ],
    'tools of all four pages, the one without an object schema left out',
  );
  const echo = tc.tools.get('mcp_local_echo');
  t.equal(echo?.description, '[MCP local] Echoes the text back.');
  t.equal(echo?.tier, 'act', 'the default tier');
  t.equal(echo?.timeout_ms, 61_000, 'the registry waits a little longer than the MCP timeout');
  t.same(echo?.parameters, {
    type: 'object',
    properties: { text: { type: 'string' } },
    required: ['text'],
    additionalProperties: false,
  });
  const odd = tc.tools.get('mcp_local_odd_name_with_chars');
  t.equal(odd?.description, '[MCP local] Odd', 'the title stands in for a missing description');
  t.same(odd?.parameters, { type: 'object', properties: { x: { type: 'string' } } }, 'a schema without a type becomes an object schema');
  t.same(tc.tools.get('mcp_local_grow')?.parameters, { type: 'object' });

  t.ok(existsSync(pidFile), 'the configured env reached the server');
  const pid = readPid(pidFile);
  t.ok(isAlive(pid));
  t.same(plugin.health(), { ok: true, detail: 'server local: connected, 9 tools', detail_zh: '服务器 local：已连接，9 个工具' });

  t.equal(await tc.call('mcp_local_echo', { text: 'hello' }), 'hello');
  t.equal(await tc.call('mcp_local_add', { a: 2, b: 3.5 }), '5.5');
  t.equal(await tc.call('mcp_local_add', { a: '2', b: '3' }), '5', "the server's schema drives argument coercion");
  await t.rejects(tc.call('mcp_local_add', { a: 'two', b: 3 }), /invalid arguments/, "the server's schema is checked before the call");
  await t.rejects(tc.call('mcp_local_fail', {}), {
    name: 'ToolError',
    info: { reason: 'failed', detail: 'the fixture tool failed on purpose' },
  });
  t.equal(
    await tc.call('mcp_local_media', {}),
    'a picture:\n[image image/png, 300 bytes]\n[resource file:///notes.txt]\nnote text\n[resource link big.bin file:///big.bin]',
  );
  t.equal(await tc.call('mcp_local_odd_name_with_chars', { x: 'y' }), 'odd y', 'the original name is called');
  t.match(tc.audits[0], { action: 'mcp.call', details: { server: 'local', tool: 'echo', task_id: 'task-1' } }, 'act calls are audited');
  t.notOk(JSON.stringify(tc.audits).includes('hello'), 'without their arguments');

  await stop();
  t.notOk(isAlive(pid), 'the server process is gone after stop');
  t.same(mcpTools(), [], 'its tools are gone');
});

t.test('timeouts and aborts cancel the call on the server', async (t) => {
  const { tc } = await startMcp(t, tempDir(t), { local: stdioServer({}, { timeout_ms: 300 }) });
  t.equal(tc.tools.get('mcp_local_slow')?.timeout_ms, 1300);
  await t.rejects(tc.call('mcp_local_slow', { ms: 30_000 }), {
    name: 'ToolError',
    info: { reason: 'timeout', detail: /did not answer within 300 ms/ },
  });

  const controller = new AbortController();
  const call = tc.call('mcp_local_slow', { ms: 30_000 }, { signal: controller.signal });
  setTimeout(() => controller.abort(), 50);
  await t.rejects(call, { name: 'ToolError', info: { reason: 'failed', detail: /cancelled/ } });

  t.equal(await tc.call('mcp_local_stats', {}), '{"cancelled":2}', 'the server saw both cancellations');
  t.equal(await tc.call('mcp_local_echo', { text: 'still fine' }), 'still fine');
});

t.test('a streamable HTTP server with headers: names sanitised, suffixed on collision, cut to 64', async (t) => {
  const http = await startHttpMcpServer('s3cret');
  t.teardown(() => http.close());
  const { tc, plugin, mcpTools } = await startMcp(t, tempDir(t), {
    web: { transport: 'http', url: http.url, headers: { authorization: 'Bearer s3cret' }, tier: 'read', timeout_ms: 5000 },
  });
  const long = baseToolName('web', LONG_TOOL_NAME);
  t.equal(long.length, 64);
  t.same(mcpTools().sort(), ['mcp_web_get_weather', 'mcp_web_get_weather_2', 'mcp_web_weather', long].sort());
  t.ok(
    mcpTools().every((name) => tc.tools.get(name)?.tier === 'read'),
    'the configured tier',
  );
  t.equal(await tc.call('mcp_web_get_weather', { city: 'Oslo' }), 'sunny in Oslo', 'get.weather got the base name (listed first)');
  t.equal(await tc.call('mcp_web_get_weather_2', {}), '{"sky":"cloudy"}', 'structured content stands in for missing text');
  t.equal(await tc.call(long, {}), 'long name works');
  t.equal(http.unauthorized(), 0, 'every request carried the configured header');
  t.same(tc.audits, [], 'read tools are not audited');
  t.ok(plugin.health().ok);
});

t.test('servers that cannot be used are reported in health; the others work', async (t) => {
  const http = await startHttpMcpServer('s3cret');
  t.teardown(() => http.close());
  const { tc, plugin, mcpTools } = await startMcp(
    t,
    tempDir(t),
    {
      good: stdioServer(),
      down: { transport: 'http', url: `http://127.0.0.1:${await closedPort()}/mcp` },
      missing: { transport: 'stdio', command: '/nonexistent/mcp-server' },
      noauth: { transport: 'http', url: http.url },
      broken: { transport: 'stdio' },
      off: { ...stdioServer(), enabled: false },
    },
    { retryBaseMs: 600_000 },
  );
  t.ok(mcpTools().includes('mcp_good_echo'));
  t.notOk(
    mcpTools().some((name) => name.startsWith('mcp_off_')),
    'a disabled server is not started',
  );
  t.equal(await tc.call('mcp_good_echo', { text: 'works' }), 'works');
  const health = plugin.health();
  t.equal(health.ok, false);
  t.match(health.detail, /server down: .*ECONNREFUSED.*; retrying in \d+ s/);
  t.match(health.detail, /server missing: .*ENOENT/);
  t.match(health.detail, /server noauth: HTTP 401: /);
  t.match(health.detail, /server broken: a stdio server needs a command/);
  t.notMatch(health.detail, /server good|server off/);
  t.ok(http.unauthorized() > 0);
});

t.test('a server that fails at first is retried with backoff and its tools appear', async (t) => {
  const dir = tempDir(t);
  const marker = join(dir, 'failed-once');
  const running = await startMcp(t, dir, { flaky: stdioServer({ MCP_FIXTURE_FAIL_ONCE: marker }) }, { retryBaseMs: 200 });
  const appeared = running.registered('mcp_flaky_echo');
  t.ok(existsSync(marker), 'the first attempt ran');
  const health = running.plugin.health();
  t.equal(health.ok, false);
  t.match(health.detail, /server flaky: .*refusing to start the first time/, "the server's stderr explains the failure");
  t.same(running.mcpTools(), []);
  await appeared;
  t.equal(await running.tc.call('mcp_flaky_echo', { text: 'second time' }), 'second time');
  t.same(running.plugin.health(), { ok: true, detail: 'server flaky: connected, 9 tools', detail_zh: '服务器 flaky：已连接，9 个工具' });
});

t.test('tools/list_changed re-registers the tools of that server', async (t) => {
  const { tc, registered, mcpTools } = await startMcp(t, tempDir(t), { local: stdioServer() });
  t.notOk(tc.tools.get('mcp_local_extra'));
  const extra = registered('mcp_local_extra');
  t.equal(await tc.call('mcp_local_grow', {}), 'grown');
  await extra;
  t.equal(await tc.call('mcp_local_extra', {}), 'extra works');
  t.equal(mcpTools().length, 10);
  t.equal(await tc.call('mcp_local_echo', { text: 'kept' }), 'kept');
});

t.test('a server process that dies is restarted and its tools come back', async (t) => {
  const dir = tempDir(t);
  const pidFile = join(dir, 'server.pid');
  const { tc, plugin, registered, stop } = await startMcp(
    t,
    dir,
    { local: stdioServer({ MCP_FIXTURE_PID_FILE: pidFile }) },
    { retryBaseMs: 100 },
  );
  const firstPid = readPid(pidFile);
  const back = registered('mcp_local_echo');
  await t.rejects(tc.call('mcp_local_crash', {}), { name: 'ToolError', info: { reason: 'unavailable', detail: /closed the connection/ } });
  await back;
  const secondPid = readPid(pidFile);
  t.not(secondPid, firstPid, 'a new server process');
  t.notOk(isAlive(firstPid));
  t.equal(await tc.call('mcp_local_echo', { text: 'again' }), 'again');
  t.ok(plugin.health().ok);
  await stop();
  t.notOk(isAlive(secondPid), 'stop ends the restarted process too');
});

t.test('no servers configured', async (t) => {
  const { plugin, mcpTools } = await startMcp(t, tempDir(t), {});
  t.same(mcpTools(), []);
  t.same(plugin.health(), { ok: true, detail: 'no MCP servers configured', detail_zh: '没有配置 MCP 服务器' });
});

t.test('two servers whose tools reduce to one name', async (t) => {
  // Server "w" tool "get_weather" and server "w_get" tool "weather" are both mcp_w_get_weather.
  const http = await startHttpMcpServer('t');
  t.teardown(() => http.close());
  const headers = { authorization: 'Bearer t' };
  const { mcpTools } = await startMcp(t, tempDir(t), {
    w: { transport: 'http', url: http.url, headers },
    w_get: { transport: 'http', url: http.url, headers },
  });
  // Which server gets which suffix depends on which answers first; the set of names does not.
  t.same(
    mcpTools().sort(),
    [
      'mcp_w_get_weather',
      'mcp_w_get_weather_2',
      'mcp_w_get_weather_3',
      'mcp_w_weather',
      'mcp_w_get_get_weather',
      'mcp_w_get_get_weather_2',
      baseToolName('w', LONG_TOOL_NAME),
      baseToolName('w_get', LONG_TOOL_NAME),
    ].sort(),
  );
});

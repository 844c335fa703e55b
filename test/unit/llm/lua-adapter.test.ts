import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import t from 'tap';
import { ADAPTERS_DIR, adapterScriptPath, LuaAdapter, LuaAdapterLibrary, listAdapters } from '../../../src/llm/lua/lua-adapter.js';
import { LlmError } from '../../../src/llm/spec/index.js';
import { LuaScriptError } from '../../../src/lua/lua-sandbox.js';

const dir = mkdtempSync(join(tmpdir(), 'lua-adapters-'));
const outside = mkdtempSync(join(tmpdir(), 'lua-outside-'));
t.teardown(() => {
  rmSync(dir, { recursive: true, force: true });
  rmSync(outside, { recursive: true, force: true });
});

const HEADER = `name = 'x', version = '0.1', endpoint = '/e', default_base_url = 'http://127.0.0.1:9', stream_format = 'sse',`;
const script = (name: string, body: string) => writeFileSync(join(dir, `${name}.lua`), body);

script(
  'bad',
  `local mode = 'ok'
  return { ${HEADER}
    headers = function(key) return { authorization = { nested = true } } end,
    transform_request = function(req)
      if req.model == 'refuse' then return nil, 'images are not supported' end
      if req.model == 'string' then return '{"raw":true}' end
      if req.model == 'notjson' then return 'nope' end
      if req.model == 'list' then return { 1, 2 } end
      return 42
    end,
    transform_response = function(body)
      if body.case == 'noname' then return { tool_calls = { { name = '' } } } end
      if body.case == 'badusage' then return { usage = { prompt_tokens = -1 } } end
      if body.case == 'reported' then return nil, 'the vendor said no' end
      if body.case == 'vendor_error' then return { error = { message = 'quota', kind = 'rate_limit' } } end
      if body.case == 'crash' then local x = nil; return x.field end
      if body.case == 'loop' then while true do end end
      if body.case == 'count' then counter = (counter or 0) + 1 return { text = tostring(counter) } end
      if body.case == 'object_args' then return { tool_calls = { { name = 'f', arguments = { a = 1 } } }, finish_reason = 'stop' } end
      return { text = 'fine', finish_reason = 'weird' }
    end,
    transform_stream_chunk = function(chunk, ctx)
      if chunk.case == 'unknown' then return { { type = 'nonsense' } } end
      if chunk.case == 'noindex' then return { { type = 'tool-call-delta', arguments_delta = 'x' } } end
      if chunk.case == 'error' then return { type = 'error', message = 'slow down', kind = 'rate_limit' } end
      return { { type = 'text-delta', delta = 'hi' }, { type = 'finish', reason = 'length' } }
    end,
  }`,
);
script(
  'static',
  `return { ${HEADER} headers = { ['x-static'] = 'yes', n = 3 }, transform_request = function() return {} end, transform_response = function() return {} end }`,
);
script('missing_fn', `return { ${HEADER} transform_request = function() return {} end }`);
script(
  'bad_format',
  `return { name = 'x', version = '1', endpoint = '/e', stream_format = 'xml', transform_request = function() end, transform_response = function() end }`,
);
script('no_endpoint', `return { name = 'x', version = '1', transform_request = function() end, transform_response = function() end }`);
script('not_table', `return 'hello'`);
script('syntax', `return { name = `);
writeFileSync(
  join(outside, 'evil.lua'),
  `return { ${HEADER} transform_request = function() return {} end, transform_response = function() return {} end }`,
);
symlinkSync(join(outside, 'evil.lua'), join(dir, 'evil.lua'));

const options = { logger: pino({ level: 'silent' }), time_limit_ms: 200, http_timeout_ms: 1000, http_max_bytes: 1024, dir };

async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a rejection');
}

t.test('what a script returns is validated, naming the adapter and the function', async (t) => {
  const adapter = await LuaAdapter.load('bad', options);
  t.teardown(() => adapter.close());
  const req = (model: string) => ({ model, stream: false, messages: [] });

  let e = await rejection(adapter.transformRequest(req('number')));
  t.ok(e instanceof LlmError && e.kind === 'bad_response');
  t.match(e.message, /lua adapter bad: transform_request returned a bad value/);
  t.match((await rejection(adapter.transformRequest(req('list')))).message, /transform_request returned a bad value/);
  t.match((await rejection(adapter.transformRequest(req('notjson')))).message, /not JSON/);
  t.equal(await adapter.transformRequest(req('string')), '{"raw":true}', 'a JSON string is sent as it is');
  e = await rejection(adapter.transformRequest(req('refuse')));
  t.equal((e as LlmError).kind, 'bad_request', 'nil, "why" refuses the request');
  t.match(e.message, /refused the request: images are not supported/);

  e = await rejection(adapter.headers('k'));
  t.match(e.message, /lua adapter bad: headers returned a bad value/);

  e = await rejection(adapter.transformResponse({ case: 'noname' }, 'm'));
  t.equal((e as LlmError).kind, 'bad_response');
  t.match(e.message, /lua adapter bad: transform_response returned a bad value: tool_calls\[1\]\.name must be a non-empty string/);
  t.match(
    (await rejection(adapter.transformResponse({ case: 'badusage' }, 'm'))).message,
    /usage\.prompt_tokens must be a non-negative number/,
  );
  t.match(
    (await rejection(adapter.transformResponse({ case: 'reported' }, 'm'))).message,
    /transform_response reported: the vendor said no/,
  );
  e = await rejection(adapter.transformResponse({ case: 'vendor_error' }, 'm'));
  t.equal((e as LlmError).kind, 'rate_limit', 'an error the script reports keeps its kind');
  t.match((await rejection(adapter.transformResponse('{not json', 'm'))).message, /the answer is not JSON: \{not json/);

  const ok = await adapter.transformResponse({ case: 'fine' }, 'configured');
  t.same(ok, {
    text: 'fine',
    reasoning: '',
    tool_calls: [],
    usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, cache_read_tokens: 0, reasoning_tokens: 0 },
    finish_reason: 'other',
    model: 'configured',
  });
  const calls = await adapter.transformResponse({ case: 'object_args' }, 'm');
  t.same(
    calls.tool_calls,
    [{ id: 'call_0', name: 'f', arguments: '{"a":1}' }],
    'table arguments become JSON text; a missing id is made up',
  );
  t.equal(calls.finish_reason, 'tool_calls', '"stop" with tool calls means tool_calls');

  const stream = await adapter.openStream();
  t.teardown(() => stream.close());
  t.same(await stream.transform('{"case":"fine"}', null, true), [
    { type: 'text-delta', delta: 'hi' },
    { type: 'finish', reason: 'length' },
  ]);
  t.match(
    (await rejection(stream.transform('{"case":"unknown"}', null, true))).message,
    /transform_stream_chunk returned a bad value: part 1 has an unknown type "nonsense"/,
  );
  t.match((await rejection(stream.transform('{"case":"noindex"}', null, true))).message, /part 1\.index must be a non-negative integer/);
  const [errorPart] = await stream.transform('{"case":"error"}', null, true);
  t.equal(errorPart?.type === 'error' ? errorPart.error.kind : undefined, 'rate_limit', 'a script may end a stream with an error part');
  t.match((await rejection(stream.transform('not json', null, false))).message, /a stream line is not JSON/, 'NDJSON lines must be JSON');
});

t.test('a failing or runaway script is a bad_response; after a limit the script starts afresh', async (t) => {
  const adapter = await LuaAdapter.load('bad', options);
  t.teardown(() => adapter.close());
  let e = await rejection(adapter.transformResponse({ case: 'crash' }, 'm'));
  t.equal((e as LlmError).kind, 'bad_response');
  t.match(e.message, /lua adapter bad: transform_response failed: .*attempt to index a nil value/);
  t.same((e as LlmError).details, { lua_code: 'HA_ERR_LUA_RUNTIME' });

  t.equal((await adapter.transformResponse({ case: 'count' }, 'm')).text, '1');
  t.equal((await adapter.transformResponse({ case: 'count' }, 'm')).text, '2', 'globals persist between calls of one engine');
  e = await rejection(adapter.transformResponse({ case: 'loop' }, 'm'));
  t.equal((e as LlmError).kind, 'bad_response');
  t.same((e as LlmError).details, { lua_code: 'HA_ERR_LUA_LIMIT' });
  t.match(e.message, /time limit of 200 ms/);
  t.equal((await adapter.transformResponse({ case: 'count' }, 'm')).text, '1', 'the next call runs in a fresh engine');
});

t.test('headers may be a static table', async (t) => {
  const adapter = await LuaAdapter.load('static', options);
  t.teardown(() => adapter.close());
  t.same(await adapter.headers('ignored'), { 'x-static': 'yes', n: '3' });
  t.same(adapter.info, {
    name: 'static',
    version: '0.1',
    endpoint: '/e',
    stream_endpoint: '/e',
    default_base_url: 'http://127.0.0.1:9',
    stream_format: 'sse',
    streams: false,
  });
});

t.test('scripts load only from files inside the adapters folder', async (t) => {
  for (const name of ['../etc/passwd', 'Bad', '', 'a/b', 'x'.repeat(40)]) {
    const e = await rejection(LuaAdapter.load(name, options));
    t.ok(e instanceof LuaScriptError && e.code === 'HA_ERR_LUA_LOAD', `name ${JSON.stringify(name)} is refused`);
  }
  t.match((await rejection(LuaAdapter.load('nothere', options))).message, /no Lua adapter named nothere/);
  t.match((await rejection(LuaAdapter.load('evil', options))).message, /points outside/, 'a symlink out of the folder is refused');
  t.match((await rejection(LuaAdapter.load('missing_fn', options))).message, /has no function transform_response/);
  t.match((await rejection(LuaAdapter.load('bad_format', options))).message, /stream_format must be 'sse' or 'ndjson'/);
  t.match((await rejection(LuaAdapter.load('no_endpoint', options))).message, /needs a string field endpoint/);
  t.match((await rejection(LuaAdapter.load('not_table', options))).message, /must return a table/);
  const syntax = await rejection(LuaAdapter.load('syntax', options));
  t.equal((syntax as LuaScriptError).code, 'HA_ERR_LUA_LOAD');
  t.match(syntax.message, /syntax error: adapters\/syntax\.lua:1:/);
  t.equal(adapterScriptPath(dir, 'bad'), join(dir, 'bad.lua'));
});

t.test('every shipped adapter loads and names itself', async (t) => {
  const names = listAdapters();
  t.same(names, ['anthropic', 'deepseek', 'gemini', 'moonshot', 'qwen', 'zhipu']);
  const library = new LuaAdapterLibrary({ ...options, dir: ADAPTERS_DIR });
  t.teardown(() => library.close());
  const adapters = await Promise.all(names.map((name) => library.get(name)));
  for (const [i, name] of names.entries()) {
    const adapter = adapters[i] as LuaAdapter;
    t.equal(adapter.info.name, name);
    t.equal(adapter.info.streams, true, `${name} streams`);
    t.match(adapter.info.default_base_url, /^https?:\/\//, `${name} has a default base URL`);
  }
  t.equal(await library.get('deepseek'), await library.get('deepseek'), 'loaded once');
  t.equal(library.has('gemini'), true);
  t.equal(library.has('nope'), false);
  const lazy = library.lazy('nope');
  t.equal(lazy.name, 'nope');
  t.equal(((await rejection(lazy.load())) as LuaScriptError).code, 'HA_ERR_LUA_LOAD', 'a failed load is reported (and not cached)');
});

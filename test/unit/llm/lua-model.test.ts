import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import t from 'tap';
import { LuaAdapter, LuaAdapterLibrary } from '../../../src/llm/lua/lua-adapter.js';
import { LuaAdapterModel, luaModelFactory } from '../../../src/llm/lua/lua-model.js';
import { collectStream, type GenerateRequest, type LlmError, type StreamPart } from '../../../src/llm/spec/index.js';
import { FixtureServer, readFixture } from '../../helpers/fixture-server.js';

const logger = pino({ level: 'silent' });
const limits = { logger, time_limit_ms: 1000, http_timeout_ms: 1000, http_max_bytes: 1024 * 1024 };
const REQUEST: GenerateRequest = { messages: [{ role: 'user', content: 'hello' }] };
const SSE = { 'content-type': 'text/event-stream' };
// An adapter that streams NDJSON (Ollama's wire shape); no shipped Lua adapter does.
const NDJSON_ADAPTER_DIR = join(import.meta.dirname, '../../fixtures/lua-adapters');

async function parts(stream: AsyncIterable<StreamPart>): Promise<StreamPart[]> {
  const out: StreamPart[] = [];
  for await (const p of stream) out.push(p);
  return out;
}

async function rejection(promise: Promise<unknown>): Promise<LlmError> {
  try {
    await promise;
  } catch (error) {
    return error as LlmError;
  }
  throw new Error('expected a rejection');
}

t.test('transport failures map to LlmError kinds; stream() never throws', async (t) => {
  const server = await FixtureServer.start();
  t.teardown(() => server.close());
  const adapter = await LuaAdapter.load('deepseek', limits);
  t.teardown(() => adapter.close());
  const model = new LuaAdapterModel({ source: 'src', adapter, base_url: server.url, api_key: 'k', model: 'm', timeout_ms: 300 });

  server.reply({ stall: true });
  let e = await rejection(model.generate(REQUEST));
  t.equal(e.kind, 'timeout', 'no answer within timeout_ms');
  t.match(e.message, /^src: /, 'errors name the source');

  server.reply({ reset: true });
  t.equal((await rejection(model.generate(REQUEST))).kind, 'network', 'a reset connection');

  const controller = new AbortController();
  server.reply(() => {
    controller.abort();
    return { stall: true };
  });
  t.equal((await rejection(model.generate({ ...REQUEST, signal: controller.signal }))).kind, 'aborted', 'the caller cancelled');
  t.equal((await rejection(model.generate({ ...REQUEST, signal: controller.signal }))).kind, 'aborted', 'already cancelled');

  server.reply({ status: 200, body: 'this is not json' });
  e = await rejection(model.generate(REQUEST));
  t.equal(e.kind, 'bad_response');
  t.match(e.message, /not JSON: this is not json/);

  // Streams: every failure is one error part at the end, never an exception.
  server.reply({ reset: true });
  let list = await parts(model.stream(REQUEST));
  t.same(
    list.map((p) => (p.type === 'error' ? p.error.kind : p.type)),
    ['network'],
  );

  const body = readFixture('openai', 'deepseek-chat-stream.sse');
  server.reply({ status: 200, headers: SSE, body, chunk_size: 200, stall_after: 900 });
  list = await parts(model.stream(REQUEST));
  const last = list.at(-1);
  t.equal(last?.type === 'error' ? last.error.kind : last?.type, 'timeout', 'a stream that falls silent times out');
  t.ok(
    list.some((p) => p.type === 'text-delta'),
    'parts before the silence were delivered',
  );

  const streamAbort = new AbortController();
  server.reply({ status: 200, headers: SSE, body, chunk_size: 200, stall_after: 900 });
  const received: StreamPart[] = [];
  for await (const part of model.stream({ ...REQUEST, signal: streamAbort.signal })) {
    received.push(part);
    if (part.type === 'text-delta') streamAbort.abort();
  }
  const end = received.at(-1);
  t.equal(end?.type === 'error' ? end.error.kind : end?.type, 'aborted', 'cancelling a stream ends it with aborted');

  server.reply({ status: 429, headers: { 'retry-after': '7' }, body: '{"error":{"message":"slow down"}}' });
  list = await parts(model.stream(REQUEST));
  const limited = list[0];
  t.equal(limited?.type === 'error' ? limited.error.retryAfterMs : undefined, 7000, 'Retry-After on a stream');
});

t.test('a server that ignores the stream flag still streams', async (t) => {
  const server = await FixtureServer.start();
  t.teardown(() => server.close());
  const adapter = await LuaAdapter.load('deepseek', limits);
  t.teardown(() => adapter.close());
  const model = new LuaAdapterModel({ source: 'src', adapter, base_url: server.url, api_key: 'k', model: 'm', timeout_ms: 2000 });
  server.reply({ status: 200, body: readFixture('openai', 'openai-tool-calls.json') });
  const list = await parts(model.stream(REQUEST));
  t.same(
    list.map((p) => p.type),
    ['tool-call', 'tool-call', 'usage', 'finish'],
  );
  const result = await collectStream(
    (async function* () {
      yield* list;
    })(),
    'm',
  );
  t.same(
    result.tool_calls.map((c) => c.name),
    ['get_temperature', 'get_humidity'],
  );
});

t.test('model options, endpoints and defaults', async (t) => {
  const server = await FixtureServer.start();
  t.teardown(() => server.close());
  const dir = mkdtempSync(join(tmpdir(), 'lua-model-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  // An adapter whose default base URL is the test server, without a stream function.
  writeFileSync(
    join(dir, 'local.lua'),
    `return {
      name = 'local', version = '1', endpoint = '/v1/{model}/chat', default_base_url = '${server.url}/base/',
      headers = function(key) return { ['X-Key'] = key } end,
      transform_request = function(req) return { model = req.model, t = req.temperature, n = req.max_tokens, s = req.stream, tools = req.tools, choice = req.tool_choice } end,
      transform_response = function(body) return { text = body.answer, usage = { prompt_tokens = 2, completion_tokens = 3 } } end,
    }`,
  );
  writeFileSync(
    join(dir, 'nobase.lua'),
    `return { name = 'nobase', version = '1', endpoint = '/x', transform_request = function() return {} end, transform_response = function() return {} end }`,
  );
  const options = { ...limits, dir };
  const loaded: LuaAdapter[] = [];
  t.teardown(() => Promise.all(loaded.map((a) => a.close())));
  const load = async (name: string) => {
    const adapter = await LuaAdapter.load(name, options);
    loaded.push(adapter);
    return adapter;
  };
  const model = new LuaAdapterModel({
    source: 'src',
    adapter: { name: 'local', load: () => load('local') },
    base_url: '',
    api_key: 'secret',
    model: 'my model/1',
    timeout_ms: 2000,
    temperature: 0.3,
    max_tokens: 99,
  });
  t.equal(model.provider, 'lua:local');
  t.equal(model.model, 'my model/1');
  server.reply({ status: 200, body: '{"answer":"yes"}' });
  const result = await model.generate({ ...REQUEST, tools: [], temperature: 0.9 });
  t.equal(result.text, 'yes');
  t.same(result.usage, { prompt_tokens: 2, completion_tokens: 3, total_tokens: 5, cache_read_tokens: 0, reasoning_tokens: 0 });
  const sent = server.last;
  t.equal(sent?.path, '/base/v1/my%20model%2F1/chat', 'default base URL; {model} is filled in URL-encoded');
  t.equal(sent?.headers['x-key'], 'secret');
  t.same(
    JSON.parse(sent?.body ?? ''),
    { model: 'my model/1', t: 0.9, n: 99, s: false },
    'request settings win over source settings; empty tools are left out',
  );

  // Without transform_stream_chunk, stream() makes a plain request and replays it as parts.
  server.reply({ status: 200, body: '{"answer":"streamed"}' });
  const list = await parts(model.stream(REQUEST));
  t.same(
    list.map((p) => p.type),
    ['text-delta', 'usage', 'finish'],
  );
  t.equal(JSON.parse(server.last?.body ?? '').s, false);

  const nobase = new LuaAdapterModel({
    source: 'src',
    adapter: await load('nobase'),
    base_url: '',
    api_key: '',
    model: 'm',
    timeout_ms: 1000,
  });
  const e = await rejection(nobase.generate(REQUEST));
  t.equal(e.kind, 'unavailable');
  t.match(e.message, /no base_url is configured/);

  const broken = new LuaAdapterModel({
    source: 'src',
    adapter: { name: 'ghost', load: () => load('ghost') },
    base_url: server.url,
    api_key: '',
    model: 'm',
    timeout_ms: 1000,
  });
  const unavailable = await rejection(broken.generate(REQUEST));
  t.equal(unavailable.kind, 'unavailable', 'an adapter that cannot load makes the source unavailable');
  t.match(unavailable.message, /the Lua adapter ghost could not be loaded/);
  const streamed = await parts(broken.stream(REQUEST));
  t.equal(streamed[0]?.type === 'error' ? streamed[0].error.kind : undefined, 'unavailable');
});

t.test('NDJSON streams: a malformed line ends the stream with bad_response', async (t) => {
  const server = await FixtureServer.start();
  t.teardown(() => server.close());
  const adapter = await LuaAdapter.load('ndjson-chat', { ...limits, dir: NDJSON_ADAPTER_DIR });
  t.teardown(() => adapter.close());
  const model = new LuaAdapterModel({ source: 'src', adapter, base_url: server.url, api_key: '', model: 'm', timeout_ms: 2000 });
  const good = readFixture('ollama', 'chat-stream.ndjson').split('\n').slice(0, 2).join('\n');
  server.reply({ status: 200, headers: { 'content-type': 'application/x-ndjson' }, body: `${good}\n{"model":"x","message":{"content\n` });
  const list = await parts(model.stream(REQUEST));
  t.same(
    list.map((p) => (p.type === 'error' ? `error:${p.error.kind}` : p.type)),
    ['text-delta', 'text-delta', 'error:bad_response'],
  );
  // The last line may come without its newline.
  server.reply({
    status: 200,
    headers: { 'content-type': 'application/x-ndjson' },
    body: readFixture('ollama', 'chat-stream.ndjson').trimEnd(),
  });
  const whole = await parts(model.stream(REQUEST));
  t.equal(whole.at(-1)?.type, 'finish');
});

t.test('luaModelFactory builds models from source settings, sharing one adapter', async (t) => {
  const server = await FixtureServer.start();
  t.teardown(() => server.close());
  const library = new LuaAdapterLibrary(limits);
  t.teardown(() => library.close());
  const create = luaModelFactory(library);
  const settings = {
    name: 'claude',
    adapter: 'anthropic',
    base_url: server.url,
    api_key: 'k',
    model: 'claude-x',
    timeout_ms: 2000,
    max_tokens: 64,
  };
  const a = create(settings);
  const b = create({ ...settings, name: 'claude2' });
  t.equal(a.provider, 'lua:anthropic');
  t.equal(a.model, 'claude-x');
  server.reply({ status: 200, body: readFixture('anthropic', 'plain.json') });
  server.reply({ status: 200, body: readFixture('anthropic', 'plain.json') });
  t.equal((await a.generate(REQUEST)).finish_reason, 'stop');
  t.equal((await b.generate(REQUEST)).finish_reason, 'stop');
  t.equal(JSON.parse(server.last?.body ?? '').max_tokens, 64, 'source settings reach the request');
  t.equal(await library.get('anthropic'), await library.get('anthropic'));
});

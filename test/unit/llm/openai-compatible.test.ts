import t from 'tap';
import { OpenAiCompatibleModel, type OpenAiCompatibleOptions } from '../../../src/llm/providers/openai-compatible.js';
import { collectStream, type GenerateRequest, LlmError } from '../../../src/llm/spec/index.js';
import { type ScriptedServer, startScriptedServer } from '../../helpers/scripted-llm-server.js';
import { collectParts, fixtureJson, partsOfType, reasoningOf, sseEvents, streamError, textOf } from './fixtures/support.js';

const KEY = 'sk-test-0123456789abcdef';
const HELLO: GenerateRequest = { messages: [{ role: 'user', content: 'hello' }] };

function model(server: ScriptedServer, options: Partial<OpenAiCompatibleOptions> = {}): OpenAiCompatibleModel {
  return new OpenAiCompatibleModel({
    source: 'deepseek',
    base_url: server.url,
    api_key: KEY,
    model: 'deepseek-chat',
    timeout_ms: 5000,
    ...options,
  });
}

async function rejection(promise: Promise<unknown>): Promise<LlmError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof LlmError) return error;
    throw error;
  }
  throw new Error('expected a rejection');
}

t.test('generate: a plain DeepSeek answer, with usage and cached tokens', async (t) => {
  const server = await startScriptedServer(t);
  server.enqueue({ json: fixtureJson('openai/deepseek-chat.json') });
  const result = await model(server, { temperature: 0.3, max_tokens: 512 }).generate(HELLO);
  t.equal(result.text, '客厅的灯已经打开了。');
  t.equal(result.reasoning, '');
  t.same(result.tool_calls, []);
  t.equal(result.finish_reason, 'stop');
  t.equal(result.model, 'deepseek-chat');
  t.same(result.usage, { prompt_tokens: 1024, completion_tokens: 9, total_tokens: 1033, cache_read_tokens: 768, reasoning_tokens: 0 });

  const request = server.requests[0];
  t.equal(request?.method, 'POST');
  t.equal(request?.path, '/chat/completions', 'no /v1 added');
  t.equal(request?.headers.authorization, `Bearer ${KEY}`);
  t.match(request?.headers['content-type'], /application\/json/);
  t.same(request?.body, {
    model: 'deepseek-chat',
    messages: [{ role: 'user', content: 'hello' }],
    stream: false,
    temperature: 0.3,
    max_tokens: 512,
  });
});

t.test('the base URL keeps its path and loses a trailing slash; no key means no Authorization header', async (t) => {
  const server = await startScriptedServer(t);
  server.enqueue({ json: fixtureJson('openai/deepseek-chat.json') });
  await model(server, { base_url: `${server.url}/v1/`, api_key: '', headers: { 'x-gateway': 'home' } }).generate(HELLO);
  t.equal(server.requests[0]?.path, '/v1/chat/completions');
  t.equal(server.requests[0]?.headers.authorization, undefined);
  t.equal(server.requests[0]?.headers['x-gateway'], 'home');
});

t.test('request body: messages with tool calls and results, tools, tool_choice none, per-request settings', async (t) => {
  const server = await startScriptedServer(t);
  server.enqueue({ json: fixtureJson('openai/deepseek-chat.json') });
  const parameters = { type: 'object', properties: { room: { type: 'string' } }, required: ['room'] };
  await model(server, { temperature: 0.7, max_tokens: 4096 }).generate({
    messages: [
      { role: 'system', content: 'You are HomeAgent.' },
      { role: 'user', content: 'Kitchen light on' },
      {
        role: 'assistant',
        content: '',
        reasoning: 'thinking...',
        tool_calls: [{ id: 'call_1', name: 'set_light', arguments: '{"room":"kitchen"}' }],
      },
      { role: 'tool', tool_call_id: 'call_1', name: 'set_light', content: '{"ok":true}' },
    ],
    tools: [{ name: 'set_light', description: 'Switch a light', parameters }],
    tool_choice: 'none',
    temperature: 0,
    max_tokens: 100,
  });
  t.same(server.requests[0]?.body, {
    model: 'deepseek-chat',
    messages: [
      { role: 'system', content: 'You are HomeAgent.' },
      { role: 'user', content: 'Kitchen light on' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'set_light', arguments: '{"room":"kitchen"}' } }],
      },
      { role: 'tool', tool_call_id: 'call_1', content: '{"ok":true}' },
    ],
    stream: false,
    temperature: 0,
    max_tokens: 100,
    tools: [{ type: 'function', function: { name: 'set_light', description: 'Switch a light', parameters } }],
    tool_choice: 'none',
  });
});

t.test('tool_choice is left out when no tools are offered', async (t) => {
  const server = await startScriptedServer(t);
  server.enqueue({ json: fixtureJson('openai/deepseek-chat.json') });
  await model(server).generate({ ...HELLO, tools: [], tool_choice: 'none' });
  t.notOk('tool_choice' in (server.requests[0]?.body ?? {}));
  t.notOk('tools' in (server.requests[0]?.body ?? {}));
});

t.test('generate: two tool calls in a non-streamed answer', async (t) => {
  const server = await startScriptedServer(t);
  server.enqueue({ json: fixtureJson('openai/openai-tool-calls.json') });
  const result = await model(server, { model: 'gpt-4o-mini' }).generate(HELLO);
  t.equal(result.finish_reason, 'tool_calls');
  t.equal(result.model, 'gpt-4o-mini-2024-07-18', 'the model the vendor reported');
  t.same(result.tool_calls, [
    { id: 'call_Qh4Zs8Tn1mB6vK2xR9pW3cLy', name: 'get_temperature', arguments: '{"room":"bedroom"}' },
    { id: 'call_Vd7Ng3Jr5kP0wX8aT2mE6bHs', name: 'get_humidity', arguments: '{"room":"bathroom"}' },
  ]);
  t.equal(result.usage.total_tokens, 166);
});

t.test('stream: DeepSeek text deltas, then usage (DeepSeek cache spelling), then finish', async (t) => {
  const server = await startScriptedServer(t);
  server.enqueue({ sse: sseEvents('openai/deepseek-chat-stream.sse') });
  const parts = await collectParts(model(server).stream(HELLO));
  t.equal(textOf(parts), "Good morning! It's 18°C in the kitchen.");
  t.equal(partsOfType(parts, 'text-delta').length, 11, 'one part per non-empty delta');
  t.same(
    parts.slice(-2).map((p) => p.type),
    ['usage', 'finish'],
  );
  t.same(partsOfType(parts, 'usage')[0]?.usage, {
    prompt_tokens: 412,
    completion_tokens: 11,
    total_tokens: 423,
    cache_read_tokens: 384,
    reasoning_tokens: 0,
  });
  t.same(parts.at(-1), { type: 'finish', reason: 'stop', model: 'deepseek-chat' });
  const body = server.requests[0]?.body;
  t.equal(body.stream, true);
  t.same(body.stream_options, { include_usage: true });
  t.equal(server.requests[0]?.headers.accept, 'text/event-stream');
});

t.test('stream: deepseek-reasoner reasoning_content, keep-alive comments ignored, reasoning tokens', async (t) => {
  const server = await startScriptedServer(t);
  server.enqueue({ sse: sseEvents('openai/deepseek-reasoner-stream.sse') });
  const parts = await collectParts(model(server, { model: 'deepseek-reasoner' }).stream(HELLO));
  t.equal(streamError(parts), undefined);
  t.equal(reasoningOf(parts), 'The user asks which is larger: 9.11 or 9.8. Compare the decimals: 0.11 < 0.80, so 9.8 is larger.');
  t.equal(textOf(parts), '9.8 is larger than 9.11.');
  const firstText = parts.findIndex((p) => p.type === 'text-delta');
  const lastReasoning = parts.findLastIndex((p) => p.type === 'reasoning-delta');
  t.ok(lastReasoning < firstText, 'reasoning comes before the answer');
  t.equal(partsOfType(parts, 'usage')[0]?.usage.reasoning_tokens, 156);
});

t.test('stream: a tool call whose arguments are split across chunks', async (t) => {
  const server = await startScriptedServer(t);
  server.enqueue({ sse: sseEvents('openai/openai-tool-call-stream.sse') });
  const parts = await collectParts(model(server, { model: 'gpt-4o-mini' }).stream(HELLO));
  const deltas = partsOfType(parts, 'tool-call-delta');
  t.equal(deltas.length, 10);
  t.same(deltas[0], { type: 'tool-call-delta', index: 0, id: 'call_8fKx2QmV7tN3pR1sY6wZ0bLd', name: 'set_light', arguments_delta: '' });
  t.ok(
    deltas.slice(1).every((d) => d.index === 0 && d.id === undefined),
    'continuations carry only the index',
  );
  const calls = partsOfType(parts, 'tool-call');
  t.same(calls, [
    {
      type: 'tool-call',
      index: 0,
      call: { id: 'call_8fKx2QmV7tN3pR1sY6wZ0bLd', name: 'set_light', arguments: '{"room":"kitchen","on":true}' },
    },
  ]);
  const callAt = parts.findIndex((p) => p.type === 'tool-call');
  t.ok(callAt > parts.findLastIndex((p) => p.type === 'tool-call-delta'), 'the whole call follows its deltas');
  t.same(parts.at(-1), { type: 'finish', reason: 'tool_calls', model: 'gpt-4o-mini-2024-07-18' });
  t.equal(partsOfType(parts, 'usage')[0]?.usage.cache_read_tokens, 64, 'usage from the include_usage chunk with empty choices');
});

t.test('stream: two parallel tool calls with interleaved chunks are reassembled per index', async (t) => {
  const server = await startScriptedServer(t);
  server.enqueue({ sse: sseEvents('openai/parallel-tool-calls-stream.sse') });
  const parts = await collectParts(model(server, { model: 'qwen-plus' }).stream(HELLO));
  t.same(
    partsOfType(parts, 'tool-call-delta').map((d) => d.index),
    [0, 1, 0, 1, 0, 1],
    'deltas keep the vendor index',
  );
  t.same(
    partsOfType(parts, 'tool-call').map((p) => [p.index, p.call]),
    [
      [0, { id: 'call_0c1b7f5e2a9d4e38b6a1c3d5', name: 'get_temperature', arguments: '{"room": "bedroom"}' }],
      [1, { id: 'call_9e4a2d7c1f3b4a6e8d0c2b5f', name: 'get_humidity', arguments: '{"room": "bathroom"}' }],
    ],
  );
  t.equal(partsOfType(parts, 'usage')[0]?.usage.cache_read_tokens, 128);
});

t.test('stream: calls are delivered in index order even when index 1 starts first', async (t) => {
  const server = await startScriptedServer(t);
  const chunk = (delta: unknown, finish: string | null = null) => ({
    id: 'chatcmpl-x',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'm',
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  server.enqueue({
    sse: [
      chunk({ tool_calls: [{ index: 1, id: 'b', type: 'function', function: { name: 'second', arguments: '{}' } }] }),
      chunk({ tool_calls: [{ index: 0, id: 'a', type: 'function', function: { name: 'first', arguments: '{"x":' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '1}' } }] }),
      chunk({}, 'tool_calls'),
    ],
    done: true,
  });
  const m = model(server);
  const parts = await collectParts(m.stream(HELLO));
  t.same(
    partsOfType(parts, 'tool-call').map((p) => p.call),
    [
      { id: 'a', name: 'first', arguments: '{"x":1}' },
      { id: 'b', name: 'second', arguments: '{}' },
    ],
  );
  // collectStream (what generate() uses) orders the same way.
  server.enqueue({ sse: sseEvents('openai/parallel-tool-calls-stream.sse') });
  const result = await collectStream(m.stream(HELLO), 'm');
  t.same(
    result.tool_calls.map((c) => c.name),
    ['get_temperature', 'get_humidity'],
  );
});

t.test('stream: malformed tool-call JSON is delivered as text, never thrown', async (t) => {
  const server = await startScriptedServer(t);
  server.enqueue({ sse: sseEvents('openai/deepseek-malformed-tool-args-stream.sse') });
  const parts = await collectParts(model(server).stream(HELLO));
  t.equal(streamError(parts), undefined);
  const call = partsOfType(parts, 'tool-call')[0]?.call;
  t.equal(call?.name, 'set_light');
  t.equal(call?.arguments, '{"room": "living room", "brightness": 80,');
  t.throws(() => JSON.parse(call?.arguments ?? ''), 'the arguments really are not JSON');
  t.equal(partsOfType(parts, 'usage')[0]?.usage.cache_read_tokens, 640, 'prompt_tokens_details wins over the DeepSeek spelling');
});

t.test('stream: SSE events split at arbitrary points are parsed whole', async (t) => {
  const server = await startScriptedServer(t);
  const whole = sseEvents('openai/deepseek-chat-stream.sse').join('');
  const pieces: string[] = [];
  for (let i = 0; i < whole.length; i += 37) pieces.push(whole.slice(i, i + 37));
  server.enqueue({ sse: pieces });
  const parts = await collectParts(model(server).stream(HELLO));
  t.equal(textOf(parts), "Good morning! It's 18°C in the kitchen.");
  t.equal(parts.at(-1)?.type, 'finish');
});

t.test('stream: a server that ignores stream:true and answers JSON still works', async (t) => {
  const server = await startScriptedServer(t);
  server.enqueue({ json: fixtureJson('openai/deepseek-chat.json') });
  const parts = await collectParts(model(server).stream(HELLO));
  t.equal(textOf(parts), '客厅的灯已经打开了。');
  t.same(parts.at(-1), { type: 'finish', reason: 'stop', model: 'deepseek-chat' });
});

t.test('HTTP errors map to kinds, in generate and stream alike', async (t) => {
  const server = await startScriptedServer(t);
  const m = model(server);
  const cases = [
    { step: { status: 401, body: fixtureJson('openai/deepseek-error-401.json') }, kind: 'auth', status: 401 },
    { step: { status: 403, body: 'forbidden' }, kind: 'auth', status: 403 },
    {
      step: { status: 429, body: fixtureJson('openai/openai-error-429.json'), headers: { 'retry-after': '2' } },
      kind: 'rate_limit',
      status: 429,
    },
    { step: { status: 500, body: 'internal error' }, kind: 'server', status: 500 },
    { step: { status: 503, body: fixtureJson('openai/deepseek-error-503.json') }, kind: 'server', status: 503 },
    { step: { status: 400, body: { error: { message: 'Invalid max_tokens value' } } }, kind: 'bad_request', status: 400 },
  ] as const;
  for (const c of cases) {
    server.enqueue(c.step);
    const e = await rejection(m.generate(HELLO));
    t.equal(e.kind, c.kind, `generate: HTTP ${c.status} → ${c.kind}`);
    t.equal(e.status, c.status);
    t.match(e.message, /^deepseek: /, 'the message names the source');
    server.enqueue(c.step);
    const parts = await collectParts(m.stream(HELLO));
    t.equal(parts.length, 1, `stream: HTTP ${c.status} is exactly one error part`);
    t.equal(streamError(parts)?.error.kind, c.kind);
  }
  server.enqueue({ status: 429, body: 'slow down', headers: { 'retry-after': '2' } });
  const limited = await rejection(m.generate(HELLO));
  t.equal(limited.retryAfterMs, 2000);
  t.equal(limited.code, 'HA_ERR_LLM_RATE_LIMITED');
  server.enqueue({ status: 401, body: fixtureJson('openai/deepseek-error-401.json') });
  t.match((await rejection(m.generate(HELLO))).message, /Authentication Fails/, 'the vendor explanation is kept');
});

t.test('a stall before the headers is a timeout (generate and stream)', async (t) => {
  const server = await startScriptedServer(t);
  const m = model(server, { timeout_ms: 300 });
  server.enqueue({ stall: true });
  const started = performance.now();
  const e = await rejection(m.generate(HELLO));
  t.equal(e.kind, 'timeout');
  t.ok(performance.now() - started < 4000, 'gives up near the timeout, not never');
  server.enqueue({ stall: true });
  const parts = await collectParts(m.stream(HELLO));
  t.equal(streamError(parts)?.error.kind, 'timeout');
  await server.waitForFinished(1);
  t.equal(server.requests[1]?.aborted, true, 'the stalled connection was closed by the client');
});

t.test('a stream that goes silent after some parts ends with a timeout part', async (t) => {
  const server = await startScriptedServer(t);
  const events = sseEvents('openai/deepseek-chat-stream.sse');
  server.enqueue({ sse: events.slice(0, 3), hang: true });
  const parts = await collectParts(model(server, { timeout_ms: 300 }).stream(HELLO));
  t.equal(textOf(parts), 'Good morning');
  t.equal(streamError(parts)?.error.kind, 'timeout');
  t.equal(parts.filter((p) => p.type === 'error').length, 1);
});

t.test('the overall stream deadline holds even while bytes keep coming', async (t) => {
  const server = await startScriptedServer(t);
  const events = sseEvents('openai/deepseek-chat-stream.sse');
  server.enqueue({ sse: events, delayMs: 100 });
  const parts = await collectParts(model(server, { timeout_ms: 1000, stream_total_timeout_ms: 350 }).stream(HELLO));
  t.ok(partsOfType(parts, 'text-delta').length > 0, 'some text arrived');
  t.equal(streamError(parts)?.error.kind, 'timeout');
});

t.test('a connection reset is a network error', async (t) => {
  const server = await startScriptedServer(t);
  const m = model(server);
  server.enqueue({ reset: true, before_headers: true });
  t.equal((await rejection(m.generate(HELLO))).kind, 'network', 'before the headers');
  server.enqueue({ reset: true, sse: [] });
  t.equal((await rejection(m.generate(HELLO))).kind, 'network', 'after the headers');
  server.enqueue({ reset: true, sse: sseEvents('openai/deepseek-chat-stream.sse').slice(0, 2) });
  const parts = await collectParts(m.stream(HELLO));
  t.equal(textOf(parts), 'Good', 'the parts before the reset arrive');
  t.equal(streamError(parts)?.error.kind, 'network');
});

t.test('nothing listening is a network error', async (t) => {
  const server = await startScriptedServer();
  const url = server.url;
  await server.close();
  const m = new OpenAiCompatibleModel({ source: 'gone', base_url: url, api_key: '', model: 'm', timeout_ms: 2000 });
  const e = await rejection(m.generate(HELLO));
  t.equal(e.kind, 'network');
  t.match(e.message, /^gone: /);
});

t.test("the caller's signal aborts: aborted, in generate and stream", async (t) => {
  const server = await startScriptedServer(t);
  const m = model(server);
  server.enqueue({ stall: true });
  const controller = new AbortController();
  const pending = m.generate({ ...HELLO, signal: controller.signal });
  await server.waitForRequests(1);
  controller.abort();
  t.equal((await rejection(pending)).kind, 'aborted');

  server.enqueue({ sse: sseEvents('openai/deepseek-chat-stream.sse').slice(0, 2), hang: true });
  const streamController = new AbortController();
  const parts: string[] = [];
  for await (const part of m.stream({ ...HELLO, signal: streamController.signal })) {
    parts.push(part.type);
    if (part.type === 'text-delta') streamController.abort();
    if (part.type === 'error') t.equal(part.error.kind, 'aborted');
  }
  t.same(parts, ['text-delta', 'error']);

  const already = AbortSignal.abort();
  t.equal((await rejection(m.generate({ ...HELLO, signal: already }))).kind, 'aborted', 'an aborted signal sends nothing');
  t.equal(server.requests.length, 2);
});

t.test('leaving a stream early closes the request', async (t) => {
  const server = await startScriptedServer(t);
  server.enqueue({ sse: sseEvents('openai/deepseek-chat-stream.sse').slice(0, 3), hang: true });
  for await (const part of model(server).stream(HELLO)) if (part.type === 'text-delta') break;
  await server.waitForFinished(0);
  t.equal(server.requests[0]?.aborted, true);
});

t.test('unreadable answers are bad_response', async (t) => {
  const server = await startScriptedServer(t);
  const m = model(server);
  server.enqueue({ raw: '<html>Bad gateway page</html>', headers: { 'content-type': 'text/html' } });
  const e = await rejection(m.generate(HELLO));
  t.equal(e.kind, 'bad_response');
  t.match(e.message, /not JSON: <html>Bad gateway page/);

  server.enqueue({ json: { object: 'chat.completion', choices: [] } });
  t.equal((await rejection(m.generate(HELLO))).kind, 'bad_response', 'no choices');

  const events = sseEvents('openai/deepseek-chat-stream.sse');
  server.enqueue({
    sse: [...events.slice(0, 2), 'data: {"id":"x","choices":[{"delta":{"content":"oops"}\n\n', ...events.slice(2)],
    done: true,
  });
  const parts = await collectParts(m.stream(HELLO));
  t.equal(textOf(parts), 'Good');
  t.equal(streamError(parts)?.error.kind, 'bad_response');
  t.match(streamError(parts)?.error.message ?? '', /not JSON/);
});

t.test('a stream that stops without finish_reason or [DONE] is an error, not a silent cut', async (t) => {
  const server = await startScriptedServer(t);
  server.enqueue({ sse: sseEvents('openai/deepseek-chat-stream.sse').slice(0, 4) });
  const parts = await collectParts(model(server).stream(HELLO));
  t.equal(textOf(parts), 'Good morning!');
  t.equal(streamError(parts)?.error.kind, 'network');
});

t.test('an error object inside the stream ends it with a server error', async (t) => {
  const server = await startScriptedServer(t);
  server.enqueue({ sse: [{ error: { message: 'upstream overloaded', type: 'server_error' } }], done: true });
  const parts = await collectParts(model(server).stream(HELLO));
  t.equal(streamError(parts)?.error.kind, 'server');
  t.match(streamError(parts)?.error.message ?? '', /upstream overloaded/);
});

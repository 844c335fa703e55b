import t from 'tap';
import { OllamaModel, type OllamaOptions } from '../../../src/llm/providers/ollama.js';
import { type GenerateRequest, LlmError } from '../../../src/llm/spec/index.js';
import { type ScriptedServer, startScriptedServer } from '../../helpers/scripted-llm-server.js';
import { collectParts, fixtureJson, ndjsonLines, partsOfType, reasoningOf, streamError, textOf } from './fixtures/support.js';

const HELLO: GenerateRequest = { messages: [{ role: 'user', content: 'hello' }] };

function model(server: ScriptedServer, options: Partial<OllamaOptions> = {}): OllamaModel {
  return new OllamaModel({ source: 'local', base_url: server.url, model: 'qwen2.5:3b', timeout_ms: 5000, ...options });
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

t.test('generate: a plain answer, usage from the eval counts, request shape', async (t) => {
  const server = await startScriptedServer(t);
  server.enqueue({ json: fixtureJson('ollama/chat-plain.json') });
  const result = await model(server, { temperature: 0.2, max_tokens: 256 }).generate(HELLO);
  t.equal(result.text, 'Hello! How can I help at home today?');
  t.equal(result.finish_reason, 'stop');
  t.equal(result.model, 'qwen2.5:3b');
  t.same(result.usage, { prompt_tokens: 26, completion_tokens: 11, total_tokens: 37, cache_read_tokens: 0, reasoning_tokens: 0 });
  t.equal(server.requests[0]?.path, '/api/chat');
  t.equal(server.requests[0]?.headers.authorization, undefined);
  t.same(server.requests[0]?.body, {
    model: 'qwen2.5:3b',
    messages: [{ role: 'user', content: 'hello' }],
    stream: false,
    options: { temperature: 0.2, num_predict: 256 },
  });
});

t.test('stream: NDJSON text deltas, then usage and finish', async (t) => {
  const server = await startScriptedServer(t);
  server.enqueue({ ndjson: ndjsonLines('ollama/chat-stream.ndjson') });
  const parts = await collectParts(model(server).stream(HELLO));
  t.equal(textOf(parts), 'The living room is 21°C.');
  t.same(
    parts.slice(-2).map((p) => p.type),
    ['usage', 'finish'],
  );
  t.same(partsOfType(parts, 'usage')[0]?.usage, {
    prompt_tokens: 31,
    completion_tokens: 8,
    total_tokens: 39,
    cache_read_tokens: 0,
    reasoning_tokens: 0,
  });
  t.same(parts.at(-1), { type: 'finish', reason: 'stop', model: 'qwen2.5:3b' });
  t.equal(server.requests[0]?.body.stream, true);
});

t.test('stream: lines split across chunks and a last line without newline', async (t) => {
  const server = await startScriptedServer(t);
  const whole = ndjsonLines('ollama/chat-stream.ndjson').join('').trimEnd();
  const pieces: string[] = [];
  for (let i = 0; i < whole.length; i += 29) pieces.push(whole.slice(i, i + 29));
  server.enqueue({ ndjson: pieces });
  const parts = await collectParts(model(server).stream(HELLO));
  t.equal(streamError(parts), undefined);
  t.equal(textOf(parts), 'The living room is 21°C.');
});

t.test('tool calls: arguments objects become JSON text; ids are made up when Ollama sends none', async (t) => {
  const server = await startScriptedServer(t);
  server.enqueue({ json: fixtureJson('ollama/chat-tool-call.json') });
  const result = await model(server).generate(HELLO);
  t.equal(result.finish_reason, 'tool_calls');
  t.same(result.tool_calls, [
    { id: 'call_0', name: 'set_light', arguments: '{"room":"kitchen","on":true}' },
    { id: 'call_1', name: 'get_temperature', arguments: '{"room":"bedroom"}' },
  ]);
  t.equal(result.usage.prompt_tokens, 187);
});

t.test('stream: a tool call with a vendor id', async (t) => {
  const server = await startScriptedServer(t);
  server.enqueue({ ndjson: ndjsonLines('ollama/chat-tool-call-stream.ndjson') });
  const parts = await collectParts(model(server, { model: 'qwen3:4b' }).stream(HELLO));
  t.same(partsOfType(parts, 'tool-call-delta'), [
    { type: 'tool-call-delta', index: 0, id: 'call_k3n9v2pa', name: 'set_light', arguments_delta: '{"room":"kitchen","on":true}' },
  ]);
  t.same(partsOfType(parts, 'tool-call'), [
    { type: 'tool-call', index: 0, call: { id: 'call_k3n9v2pa', name: 'set_light', arguments: '{"room":"kitchen","on":true}' } },
  ]);
  t.same(parts.at(-1), { type: 'finish', reason: 'tool_calls', model: 'qwen3:4b' });
});

t.test('stream: thinking models stream reasoning', async (t) => {
  const server = await startScriptedServer(t);
  server.enqueue({ ndjson: ndjsonLines('ollama/chat-thinking-stream.ndjson') });
  const parts = await collectParts(model(server, { model: 'qwen3:4b' }).stream(HELLO));
  t.equal(reasoningOf(parts), 'Okay, the user says hello.');
  t.equal(textOf(parts), 'Hello!');
});

t.test('request body: tools in function format, tool history with argument objects, tool_choice none drops the tools', async (t) => {
  const server = await startScriptedServer(t);
  const parameters = { type: 'object', properties: { room: { type: 'string' } } };
  const request: GenerateRequest = {
    messages: [
      { role: 'system', content: 'You are HomeAgent.' },
      { role: 'user', content: 'Kitchen light on' },
      {
        role: 'assistant',
        content: '',
        tool_calls: [
          { id: 'call_0', name: 'set_light', arguments: '{"room":"kitchen"}' },
          { id: 'call_1', name: 'set_light', arguments: '{"room": broken' },
        ],
      },
      { role: 'tool', tool_call_id: 'call_0', name: 'set_light', content: '{"ok":true}' },
    ],
    tools: [{ name: 'set_light', description: 'Switch a light', parameters }],
  };
  server.enqueue({ json: fixtureJson('ollama/chat-plain.json') }, { json: fixtureJson('ollama/chat-plain.json') });
  const m = model(server, {});
  await m.generate(request);
  t.same(server.requests[0]?.body, {
    model: 'qwen2.5:3b',
    messages: [
      { role: 'system', content: 'You are HomeAgent.' },
      { role: 'user', content: 'Kitchen light on' },
      {
        role: 'assistant',
        content: '',
        tool_calls: [
          { function: { name: 'set_light', arguments: { room: 'kitchen' } } },
          { function: { name: 'set_light', arguments: {} } },
        ],
      },
      { role: 'tool', content: '{"ok":true}', tool_name: 'set_light' },
    ],
    stream: false,
    tools: [{ type: 'function', function: { name: 'set_light', description: 'Switch a light', parameters } }],
  });
  await m.generate({ ...request, tool_choice: 'none' });
  t.notOk('tools' in (server.requests[1]?.body ?? {}), 'Ollama has no tool_choice: none means no tools');
});

t.test('errors: HTTP statuses, error lines, unreadable lines', async (t) => {
  const server = await startScriptedServer(t);
  const m = model(server);
  server.enqueue({ status: 404, body: fixtureJson('ollama/error-model-not-found.json') });
  const missing = await rejection(m.generate(HELLO));
  t.equal(missing.kind, 'bad_request');
  t.match(missing.message, /not found, try pulling it first/);
  server.enqueue({ status: 500, body: { error: 'llama runner process has terminated' } });
  t.equal((await rejection(m.generate(HELLO))).kind, 'server');
  server.enqueue({ status: 401, body: 'unauthorized' });
  t.equal((await rejection(m.generate(HELLO))).kind, 'auth');
  server.enqueue({ status: 429, body: 'busy', headers: { 'retry-after': '3' } });
  t.equal((await rejection(m.generate(HELLO))).retryAfterMs, 3000);

  const lines = ndjsonLines('ollama/chat-stream.ndjson');
  server.enqueue({ ndjson: [...lines.slice(0, 2), { error: 'an error was encountered while running the model: out of memory' }] });
  let parts = await collectParts(m.stream(HELLO));
  t.equal(textOf(parts), 'The living');
  t.equal(streamError(parts)?.error.kind, 'server');
  t.match(streamError(parts)?.error.message ?? '', /out of memory/);

  server.enqueue({ ndjson: [lines[0] ?? '', '{"model":"qwen2.5:3b","message":{\n'] });
  parts = await collectParts(m.stream(HELLO));
  t.equal(streamError(parts)?.error.kind, 'bad_response');

  server.enqueue({ raw: 'not json at all' });
  t.equal((await rejection(m.generate(HELLO))).kind, 'bad_response');

  server.enqueue({ ndjson: lines.slice(0, 3) });
  parts = await collectParts(m.stream(HELLO));
  t.equal(streamError(parts)?.error.kind, 'network', 'a stream cut before done:true');
});

t.test('timeouts, resets and aborts', async (t) => {
  const server = await startScriptedServer(t);
  const m = model(server, { timeout_ms: 300 });
  server.enqueue({ stall: true });
  t.equal((await rejection(m.generate(HELLO))).kind, 'timeout');

  const lines = ndjsonLines('ollama/chat-stream.ndjson');
  server.enqueue({ ndjson: lines.slice(0, 2), hang: true });
  let parts = await collectParts(m.stream(HELLO));
  t.equal(textOf(parts), 'The living');
  t.equal(streamError(parts)?.error.kind, 'timeout');

  server.enqueue({ reset: true, ndjson: lines.slice(0, 1) });
  parts = await collectParts(m.stream(HELLO));
  t.equal(textOf(parts), 'The');
  t.equal(streamError(parts)?.error.kind, 'network');

  server.enqueue({ reset: true, before_headers: true });
  t.equal((await rejection(m.generate(HELLO))).kind, 'network');

  server.enqueue({ stall: true });
  const before = server.requests.length;
  const controller = new AbortController();
  const pending = model(server).generate({ ...HELLO, signal: controller.signal });
  await server.waitForRequests(before + 1);
  controller.abort();
  t.equal((await rejection(pending)).kind, 'aborted');
});

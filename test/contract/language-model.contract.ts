/**
 * The shared contract every language model passes, whichever implements its vendor: the model is
 * made the way the daemon makes it (createModelFactory over a running LuaRuntime, from a source's
 * settings), so `adapter: openai` and `ollama` get the TypeScript providers and every other name
 * the Lua adapter adapters/<name>.lua. Recorded vendor payloads from test/fixtures/llm/<vendor>/
 * are played back by a loopback server, and the results are checked against hand-written
 * expectations: a plain answer, a streamed answer reassembled with collectStream, tool calls
 * (arguments parsed, in stream-index order), error statuses mapped to the right LlmError kind, and
 * the essentials of the request the vendor would receive.
 */
import { pino } from 'pino';
import t, { type Test } from 'tap';
import { LuaRuntime } from '../../src/llm/lua/lua-runtime.js';
import { createModelFactory } from '../../src/llm/model-factory.js';
import {
  collectStream,
  type FinishReason,
  type GenerateRequest,
  type LlmError,
  type LlmErrorKind,
  type StreamPart,
  type Usage,
} from '../../src/llm/spec/index.js';
import { FixtureServer, type RecordedRequest, readFixture } from '../helpers/fixture-server.js';

export interface ExpectedCall {
  name: string;
  /** The parsed arguments. */
  args: unknown;
  /** When the vendor sent an id, it must come through unchanged. */
  id?: string;
}

export interface LanguageModelContract {
  /** The source's `adapter` setting. */
  adapter: string;
  /** The model's `provider` the factory must have chosen: `openai`, `ollama` or `lua:<adapter>`. */
  provider: string;
  /** How the vendor streams; default sse. */
  stream_format?: 'sse' | 'ndjson';
  /** Folder under test/fixtures/llm. */
  fixtures: string;
  /** The model the source is configured with. */
  model: string;
  plain: { file: string; text: string; usage: Usage; model: string; finish?: FinishReason };
  stream: { file: string; text: string; reasoning?: string; usage: Usage };
  tools: { file: string; calls: ExpectedCall[]; text?: string; usage?: Usage };
  tools_stream: { file: string; calls: ExpectedCall[] };
  /** Each status is served with the vendor's error body (a fixture file or an inline body). */
  errors: Array<{ status: number; file?: string; body?: string; kind: LlmErrorKind; retry_after?: string }>;
  /** A stream that fails midway with the vendor's in-band error event. */
  stream_error?: { file: string; kind: LlmErrorKind; text_before: string };
  /** Vendor-specific essentials of the non-streamed request for CONTRACT_REQUEST. */
  request(t: Test, sent: RecordedRequest, body: Record<string, unknown>): void;
  /** Vendor-specific essentials of the streamed request (URL, stream flags). */
  stream_request(t: Test, sent: RecordedRequest, body: Record<string, unknown>): void;
}

export const API_KEY = 'sk-contract-0123456789';

/** A normalised Usage; total defaults to prompt + completion. */
export function usage(prompt: number, completion: number, total = prompt + completion, cache = 0, reasoning = 0): Usage {
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: total,
    cache_read_tokens: cache,
    reasoning_tokens: reasoning,
  };
}

/** The message list of an OpenAI-style body, for the request checks. */
export type OpenAiMessage = {
  role: string;
  content?: unknown;
  tool_calls?: Array<Record<string, unknown>>;
  tool_call_id?: string;
  name?: string;
};

/** A conversation with every message kind: system, user, an earlier tool round, and two tools. */
export const CONTRACT_REQUEST: GenerateRequest = {
  messages: [
    { role: 'system', content: 'You are HomeAgent, the assistant of this house.' },
    { role: 'user', content: 'Is the kitchen light on?' },
    { role: 'assistant', content: '', tool_calls: [{ id: 'call_k1', name: 'get_light', arguments: '{"room":"kitchen"}' }] },
    { role: 'tool', tool_call_id: 'call_k1', name: 'get_light', content: '{"on":false}' },
    { role: 'assistant', content: 'It is off.' },
    { role: 'user', content: 'Switch it on and tell me the living room temperature.' },
  ],
  tools: [
    {
      name: 'set_light',
      description: 'Switch a light on or off',
      parameters: {
        type: 'object',
        properties: { room: { type: 'string' }, on: { type: 'boolean' } },
        required: ['room', 'on'],
      },
    },
    {
      name: 'get_temperature',
      description: 'Read the temperature of a room',
      parameters: { type: 'object', properties: { room: { type: 'string', enum: ['kitchen', 'living_room'] } }, required: ['room'] },
    },
    // Empty properties and required: an object and an array must stay what they are.
    { name: 'list_rooms', description: 'List the rooms', parameters: { type: 'object', properties: {}, required: [] } },
  ],
  temperature: 0.4,
  max_tokens: 512,
};

const SSE_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' };
const NDJSON_HEADERS = { 'content-type': 'application/x-ndjson' };
const JSON_HEADERS = { 'content-type': 'application/json' };

async function parts(stream: AsyncIterable<StreamPart>): Promise<StreamPart[]> {
  const out: StreamPart[] = [];
  for await (const p of stream) out.push(p);
  return out;
}

async function* replay(list: StreamPart[]): AsyncGenerator<StreamPart> {
  yield* list;
}

/** Every JSON object in `value` (depth first). */
function objects(value: unknown, out: Array<Record<string, unknown>> = []): Array<Record<string, unknown>> {
  if (Array.isArray(value)) for (const v of value) objects(v, out);
  else if (typeof value === 'object' && value !== null) {
    out.push(value as Record<string, unknown>);
    for (const v of Object.values(value)) objects(v, out);
  }
  return out;
}

export function languageModelContract(c: LanguageModelContract): void {
  t.test(`language model of adapter ${c.adapter} (fixtures ${c.fixtures})`, async (t) => {
    const server = await FixtureServer.start();
    t.teardown(() => server.close());
    const lua = new LuaRuntime({
      settings: () => ({ lua_time_limit_ms: 1000, lua_memory_mb: 32, lua_http_timeout_ms: 2000, lua_http_max_bytes: 1024 * 1024 }),
      logger: pino({ level: 'silent' }),
    });
    await lua.start();
    t.teardown(() => lua.stop());
    const model = createModelFactory({ lua: lua.modelFactory })({
      name: 'contract',
      adapter: c.adapter,
      base_url: server.url,
      api_key: API_KEY,
      model: c.model,
      priority: 1,
      max_concurrent: 1,
      timeout_ms: 5000,
      // Not CONTRACT_REQUEST's 0.4 and 512: the request's own values must win over the source's.
      temperature: 0.9,
      max_tokens: 2048,
      vision: false,
    });
    const streamHeaders = c.stream_format === 'ndjson' ? NDJSON_HEADERS : SSE_HEADERS;
    const serve = (file: string, headers: Record<string, string>) =>
      server.reply({ status: 200, headers, body: readFixture(c.fixtures, file), chunk_size: 97 });

    t.equal(model.provider, c.provider, 'the factory chose the implementation of the adapter');

    t.test('plain answer', async (t) => {
      serve(c.plain.file, JSON_HEADERS);
      const result = await model.generate(CONTRACT_REQUEST);
      t.equal(result.text, c.plain.text);
      t.same(result.usage, c.plain.usage, 'usage normalised');
      t.equal(result.finish_reason, c.plain.finish ?? 'stop');
      t.equal(result.model, c.plain.model, 'the model the vendor reported');
      t.same(result.tool_calls, []);
    });

    t.test('streamed answer reassembles to the whole text', async (t) => {
      serve(c.stream.file, streamHeaders);
      const list = await parts(model.stream(CONTRACT_REQUEST));
      const last = list.at(-1);
      t.equal(last?.type, 'finish', 'the stream ends with finish');
      t.notOk(
        list.some((p) => p.type === 'error'),
        'no error part',
      );
      t.ok(list.filter((p) => p.type === 'text-delta').length >= 2, 'the text arrives in several deltas');
      const result = await collectStream(replay(list), c.model);
      t.equal(result.text, c.stream.text);
      t.equal(result.reasoning, c.stream.reasoning ?? '');
      t.same(result.usage, c.stream.usage, 'usage normalised');
      t.equal(result.finish_reason, 'stop');
    });

    const checkCalls = (t: Test, calls: Array<{ id: string; name: string; arguments: string }>, expected: ExpectedCall[]) => {
      t.same(
        calls.map((call) => call.name),
        expected.map((e) => e.name),
        'tool names in order',
      );
      calls.forEach((call, i) => {
        const want = expected[i];
        t.same(JSON.parse(call.arguments), want?.args, `arguments of ${call.name} parse to the expected object`);
        t.ok(call.id.length > 0, `${call.name} has an id`);
        if (want?.id) t.equal(call.id, want.id, `${call.name} keeps the vendor's id`);
      });
      t.equal(new Set(calls.map((call) => call.id)).size, calls.length, 'ids are distinct');
    };

    t.test('tool calls', async (t) => {
      serve(c.tools.file, JSON_HEADERS);
      const result = await model.generate(CONTRACT_REQUEST);
      checkCalls(t, result.tool_calls, c.tools.calls);
      t.equal(result.finish_reason, 'tool_calls');
      if (c.tools.text !== undefined) t.equal(result.text, c.tools.text);
      if (c.tools.usage) t.same(result.usage, c.tools.usage);
    });

    t.test('streamed tool calls', async (t) => {
      serve(c.tools_stream.file, streamHeaders);
      const list = await parts(model.stream(CONTRACT_REQUEST));
      t.equal(list.at(-1)?.type, 'finish');
      const whole = list.filter((p): p is Extract<StreamPart, { type: 'tool-call' }> => p.type === 'tool-call');
      t.equal(whole.length, c.tools_stream.calls.length, 'one complete tool-call part per call');
      const indexes = whole.map((p) => p.index);
      t.same(
        indexes,
        [...indexes].sort((a, b) => a - b),
        'complete calls come in stream-index order',
      );
      const result = await collectStream(replay(list), c.model);
      checkCalls(t, result.tool_calls, c.tools_stream.calls);
      t.equal(result.finish_reason, 'tool_calls');
    });

    t.test('error statuses map to LlmError kinds', async (t) => {
      for (const e of c.errors) {
        const body = e.file ? readFixture(c.fixtures, e.file) : (e.body ?? '');
        const headers: Record<string, string> = { ...JSON_HEADERS, ...(e.retry_after ? { 'retry-after': e.retry_after } : {}) };
        server.reply({ status: e.status, headers, body });
        const error = (await model.generate(CONTRACT_REQUEST).then(
          () => undefined,
          (err: unknown) => err,
        )) as LlmError | undefined;
        t.equal(error?.kind, e.kind, `HTTP ${e.status} → ${e.kind}`);
        t.equal(error?.status, e.status);
        if (e.retry_after) t.equal(error?.retryAfterMs, Number(e.retry_after) * 1000, 'Retry-After is kept');
        // The same status on a stream: one error part, nothing thrown.
        server.reply({ status: e.status, headers, body });
        const list = await parts(model.stream(CONTRACT_REQUEST));
        t.equal(list.length, 1, `HTTP ${e.status} on a stream yields one part`);
        const first = list[0];
        t.equal(first?.type === 'error' ? first.error.kind : first?.type, e.kind);
      }
    });

    if (c.stream_error) {
      const se = c.stream_error;
      t.test('an error event in the middle of a stream ends it with an error part', async (t) => {
        serve(se.file, streamHeaders);
        const list = await parts(model.stream(CONTRACT_REQUEST));
        const last = list.at(-1);
        t.equal(last?.type, 'error');
        t.equal(last?.type === 'error' ? last.error.kind : undefined, se.kind);
        const text = list.flatMap((p) => (p.type === 'text-delta' ? [p.delta] : [])).join('');
        t.equal(text, se.text_before, 'what came before the error was delivered');
      });
    }

    t.test('request shape', async (t) => {
      serve(c.plain.file, JSON_HEADERS);
      await model.generate(CONTRACT_REQUEST);
      const sent = server.last;
      if (!sent) throw new Error('nothing was sent');
      t.equal(sent.method, 'POST');
      t.match(sent.headers['content-type'], /application\/json/);
      const body = JSON.parse(sent.body) as Record<string, unknown>;
      t.notOk(sent.body.includes(API_KEY), 'the API key is not in the body');
      // The empty schema of list_rooms: properties stays an object and required an array.
      const schemas = objects(body).filter((o) => 'properties' in o && 'required' in o);
      const empty = schemas.filter((o) => Array.isArray(o.required) && (o.required as unknown[]).length === 0);
      t.ok(empty.length >= 1, 'an empty required list is sent as []');
      for (const s of empty) t.same(s.properties, {}, 'empty properties are sent as {}');
      c.request(t, sent, body);

      serve(c.stream.file, streamHeaders);
      await parts(model.stream(CONTRACT_REQUEST));
      const streamed = server.last;
      if (!streamed) throw new Error('nothing was sent');
      c.stream_request(t, streamed, JSON.parse(streamed.body) as Record<string, unknown>);
    });
  });
}

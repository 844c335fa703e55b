/**
 * The /v1 routes through fastify inject (and one real socket for a client that goes away), with the
 * test playing the agent: it answers the injected input with a receipt and emits the text deltas
 * the agent would emit on the bus.
 */
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import t, { type Test } from 'tap';
import { installErrorHandlers } from '../../../../plugins/webui/http-errors.js';
import { openaiRoutes } from '../../../../plugins/webui/openai-routes.js';
import { ownerCaller, type WebuiSettings } from '../../../../plugins/webui/types.js';
import type { Receipt } from '../../../../src/io/types.js';
import type { PluginContext, PluginInput } from '../../../../src/sdk/plugin.js';
import { HomeAgentError } from '../../../../src/shared/errors.js';
import { createTestPluginContext, type TestPluginContext } from '../../../helpers/plugin-context.js';
import { webuiSettings } from './webui-setup.js';

const KEY = 'Bearer test-key';

const SETTINGS: WebuiSettings = webuiSettings({
  port: 0,
  body_limit_bytes: 4096,
  upload_limit_bytes: 1_048_576,
  model_name: 'homeagent-test',
});

interface Setup {
  app: FastifyInstance;
  tc: TestPluginContext;
  inputs: PluginInput[];
  /** Resolves when the route has unsubscribed from agent.text_delta. */
  unsubscribed: Promise<void>;
  delta(input: PluginInput, turn: number, text: string, restart?: boolean): void;
}

type Answer = (input: PluginInput, setup: Setup) => Receipt | Promise<Receipt>;

const done = (input: PluginInput, text: string, usage?: Receipt['usage']): Receipt => ({
  input_id: input.id ?? '',
  status: 'done',
  text,
  ...(usage ? { usage } : {}),
  finished_at: Date.now(),
});

function newApp(serverTimeoutMs: number | undefined): FastifyInstance {
  if (serverTimeoutMs === undefined) return Fastify({ bodyLimit: SETTINGS.body_limit_bytes });
  return Fastify({
    bodyLimit: SETTINGS.body_limit_bytes,
    serverFactory: (handler: (request: IncomingMessage, response: ServerResponse) => void) => {
      const server = createServer(
        { headersTimeout: serverTimeoutMs, requestTimeout: serverTimeoutMs, connectionsCheckingInterval: 20 },
        handler,
      );
      server.timeout = serverTimeoutMs;
      return server;
    },
  });
}

/** `serverTimeoutMs`: a real node:http server with the web server's inactivity and request deadlines set this short. */
async function setup(t: Test, answer: Answer, settings: Partial<WebuiSettings> = {}, serverTimeoutMs?: number): Promise<Setup> {
  const tc = createTestPluginContext({ name: 'webui', dataDir: t.testdir() });
  t.teardown(() => tc.close());
  const inputs: PluginInput[] = [];
  let markUnsubscribed = () => {};
  const unsubscribed = new Promise<void>((resolve) => {
    markUnsubscribed = resolve;
  });
  const s: Setup = {
    app: newApp(serverTimeoutMs),
    tc,
    inputs,
    unsubscribed,
    delta: (input, turn, text, restart = false) =>
      tc.events.emit('agent.text_delta', { task_id: 't1', input_id: input.id ?? '', channel: 'openai', turn, delta: text, restart }),
  };
  const ctx: PluginContext = {
    ...tc.context,
    events: {
      ...tc.context.events,
      subscribe: (event, listener) => {
        const off = tc.context.events.subscribe(event, listener);
        return () => {
          off();
          markUnsubscribed();
        };
      },
    },
    io: {
      ...tc.context.io,
      injectInput: async (input) => {
        inputs.push(input);
        return answer(input, s);
      },
    },
  };
  // Stand-ins for the server's security hook and its envelope handlers: /v1 must answer in its own shape.
  s.app.addHook('onRequest', async (request) => {
    if (request.headers.authorization !== KEY) throw new HomeAgentError('HA_ERR_HTTP_AUTH', 'the API key is wrong');
    request.caller = ownerCaller('api_key');
  });
  installErrorHandlers(s.app, tc.context.log);
  await openaiRoutes(s.app, { ctx, settings: () => ({ ...SETTINGS, ...settings }) });
  await s.app.ready();
  t.teardown(() => s.app.close());
  return s;
}

const user = (content: string) => ({ role: 'user', content });

/** A raw string body is sent as JSON text as it is (bad JSON tests). */
function post(s: Setup, body: unknown) {
  return s.app.inject({
    method: 'POST',
    url: '/v1/chat/completions',
    headers: { authorization: KEY, 'content-type': 'application/json' },
    payload: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** The `data:` payloads of an SSE body, parsed except [DONE]. */
function frames(body: string): unknown[] {
  return body
    .split('\n\n')
    .filter((frame) => frame.startsWith('data: '))
    .map((frame) => frame.slice('data: '.length))
    .map((data) => (data === '[DONE]' ? data : JSON.parse(data)));
}

interface Chunk {
  id: string;
  object: string;
  model: string;
  choices: Array<{ index: number; delta: { role?: string; content?: string }; finish_reason: string | null }>;
  usage?: unknown;
}

const text = (chunks: unknown[]) =>
  (chunks.filter((c) => c !== '[DONE]') as Chunk[]).map((c) => c.choices?.[0]?.delta.content ?? '').join('');

t.test('GET /v1/models lists the configured model', async (t) => {
  const s = await setup(t, (input) => done(input, ''));
  const list = await s.app.inject({ method: 'GET', url: '/v1/models', headers: { authorization: KEY } });
  t.equal(list.statusCode, 200);
  const body = list.json();
  t.equal(body.object, 'list');
  t.match(body.data, [{ id: 'homeagent-test', object: 'model', owned_by: 'homeagent', created: Number }]);
  t.equal(body.data.length, 1);

  const one = await s.app.inject({ method: 'GET', url: '/v1/models/homeagent-test', headers: { authorization: KEY } });
  t.equal(one.json().id, 'homeagent-test');
  const other = await s.app.inject({ method: 'GET', url: '/v1/models/gpt-4o', headers: { authorization: KEY } });
  t.equal(other.statusCode, 404);
  t.match(other.json(), {
    error: { type: 'not_found_error', code: 'HA_ERR_HTTP_NOT_FOUND', param: 'model', message: /gpt-4o.*homeagent-test/ },
  });
});

t.test('a completion: the input carries the text and the history, the answer the receipt', async (t) => {
  const s = await setup(t, (input) =>
    done(input, 'The kitchen light is off now.', { prompt_tokens: 120, completion_tokens: 9, total_tokens: 129 }),
  );
  const reply = await post(s, {
    model: 'gpt-4o',
    temperature: 0.3,
    max_tokens: 50,
    messages: [
      { role: 'system', content: 'Be brief.' },
      user('Is the kitchen light on?'),
      { role: 'assistant', content: 'Yes.' },
      user('Turn it off.'),
    ],
  });
  t.equal(reply.statusCode, 200, reply.body);
  const [input] = s.inputs;
  t.match(input?.id, /^oai_[A-Za-z0-9_-]{24}$/);
  t.same(
    { source: input?.source, channel: input?.channel, payload: input?.payload, meta: input?.meta },
    {
      source: 'openai',
      channel: 'openai',
      payload: 'Turn it off.',
      meta: {
        history: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Is the kitchen light on?' },
          { role: 'assistant', content: 'Yes.' },
        ],
      },
    },
  );
  const body = reply.json();
  t.equal(body.id, `chatcmpl-${input?.id}`);
  t.equal(body.object, 'chat.completion');
  t.equal(body.model, 'homeagent-test', 'answers as model_name, not as the model asked for');
  t.type(body.created, 'number');
  t.same(body.choices, [
    {
      index: 0,
      message: { role: 'assistant', content: 'The kitchen light is off now.', refusal: null },
      logprobs: null,
      finish_reason: 'stop',
    },
  ]);
  t.same(body.usage, { prompt_tokens: 120, completion_tokens: 9, total_tokens: 129 });
});

t.test('usage is zero when no model was called', async (t) => {
  const s = await setup(t, (input) => done(input, 'I am offline.'));
  const body = (await post(s, { messages: [user('hi')] })).json();
  t.same(body.usage, { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });
});

t.test('refusals come in OpenAI error shape with the HA code, and nothing reaches the agent', async (t) => {
  const s = await setup(t, (input) => done(input, 'x'));
  const tools = await post(s, { messages: [user('hi')], tools: [{ type: 'function', function: { name: 'f' } }] });
  t.equal(tools.statusCode, 400);
  t.same(tools.json(), {
    error: {
      message: 'client-side tools are not supported: HomeAgent runs its own tools on the server',
      type: 'invalid_request_error',
      param: 'tools',
      code: 'HA_ERR_RPC_INVALID_PARAMS',
    },
  });
  const image = await post(s, { messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'http://x/y.png' } }] }] });
  t.equal(image.statusCode, 400);
  t.match(image.json().error, { message: /image content is not supported/, param: 'messages[0].content[0]' });
  const last = await post(s, { messages: [user('hi'), { role: 'assistant', content: 'hello' }] });
  t.match(last.json().error, { message: /last message must be from the user/, code: 'HA_ERR_RPC_INVALID_PARAMS' });
  const badJson = await post(s, '{"messages": [');
  t.equal(badJson.statusCode, 400);
  t.match(badJson.json(), { error: { type: 'invalid_request_error', code: 'HA_ERR_HTTP_BAD_REQUEST' } });
  t.notOk('ok' in badJson.json(), 'not the /api envelope');
  const big = await post(s, { messages: [user('x'.repeat(SETTINGS.body_limit_bytes))] });
  t.equal(big.statusCode, 413);
  t.match(big.json(), { error: { code: 'HA_ERR_HTTP_BODY_TOO_LARGE' } });
  t.equal(s.inputs.length, 0);
});

t.test('the security hooks, unknown /v1 paths: OpenAI shape too', async (t) => {
  const s = await setup(t, (input) => done(input, 'x'));
  const denied = await s.app.inject({ method: 'POST', url: '/v1/chat/completions', payload: { messages: [user('hi')] } });
  t.equal(denied.statusCode, 401);
  t.match(denied.headers['www-authenticate'], /Bearer/);
  t.same(denied.json(), {
    error: { message: 'the API key is wrong', type: 'authentication_error', param: null, code: 'HA_ERR_HTTP_AUTH' },
  });
  const missing = await s.app.inject({ method: 'POST', url: '/v1/embeddings', headers: { authorization: KEY }, payload: {} });
  t.equal(missing.statusCode, 404);
  t.match(missing.json(), { error: { type: 'not_found_error', code: 'HA_ERR_HTTP_NOT_FOUND', message: 'no route POST /v1/embeddings' } });
  const api = await s.app.inject({ method: 'GET', url: '/api/v1/nothing', headers: { authorization: KEY } });
  t.match(api.json(), { ok: false }, 'outside /v1 the envelope stays');
  t.equal(s.inputs.length, 0);
});

t.test('receipts that are not done become errors with a fitting status', async (t) => {
  const receipts: Array<Omit<Receipt, 'input_id' | 'finished_at'>> = [
    { status: 'skipped', reason: 'duplicate' },
    { status: 'failed', error: { code: 'HA_ERR_INPUT_QUEUE_FULL', message: 'the input queue is full (256 waiting)' } },
    { status: 'cancelled', reason: 'shutdown', error: { code: 'HA_ERR_ABORTED', message: 'shutting down' } },
    { status: 'failed', error: { code: 'HA_ERR_INTERNAL', message: 'boom' } },
  ];
  let next = 0;
  const s = await setup(t, (input) => ({ input_id: input.id ?? '', finished_at: 0, ...receipts[next++] }) as Receipt);
  // A duplicate is not retried by the client's library (it would be skipped again); a full queue is.
  const expected: Array<[number, string, RegExp, string | undefined]> = [
    [409, 'HA_ERR_INPUT_DUPLICATE', /dedupe_window_ms/, 'false'],
    [429, 'HA_ERR_INPUT_QUEUE_FULL', /queue is full/, undefined],
    [503, 'HA_ERR_ABORTED', /shutting down/, undefined],
    [500, 'HA_ERR_INTERNAL', /boom/, undefined],
  ];
  for (const [status, code, message, retry] of expected) {
    const reply = await post(s, { messages: [user('hi')] });
    t.equal(reply.statusCode, status, code);
    t.match(reply.json().error, { code, message });
    t.equal(reply.headers['x-should-retry'], retry, `x-should-retry for ${code}`);
  }
  // The same in a stream, before any text: still a plain HTTP error.
  next = 0;
  const streamed = await post(s, { messages: [user('hi')], stream: true });
  t.equal(streamed.statusCode, 409);
  t.equal(streamed.headers['x-should-retry'], 'false');
  t.match(streamed.headers['content-type'], /application\/json/);
  t.match(streamed.json().error, { code: 'HA_ERR_INPUT_DUPLICATE' });
});

t.test('no answer within chat_timeout_ms: 504 with the HA code, and the stream form', async (t) => {
  const s = await setup(
    t,
    (input, setup) => {
      if (input.payload === 'stream me') setup.delta(input, 1, 'Half an ans');
      return new Promise<Receipt>(() => {});
    },
    { chat_timeout_ms: 30 },
  );
  const reply = await post(s, { messages: [user('hi')] });
  t.equal(reply.statusCode, 504);
  t.match(reply.json().error, { code: 'HA_ERR_AGENT_TIMEOUT', type: 'server_error', message: /chat_timeout_ms \(30 ms\)/ });
  t.equal(reply.headers['x-should-retry'], 'false', 'the turn still runs: a retry would run it twice');

  const streamed = await post(s, { messages: [user('stream me')], stream: true });
  t.equal(streamed.statusCode, 200, 'the stream had started');
  const chunks = frames(streamed.body);
  t.equal(text(chunks), 'Half an ans');
  t.match(chunks.at(-1), { error: { code: 'HA_ERR_AGENT_TIMEOUT' } }, 'an error event ends it');
  t.notOk(chunks.includes('[DONE]'));
  await s.unsubscribed;
  t.equal(s.tc.events.listenerCount('agent.text_delta'), 0);
});

t.test('a streamed completion: role, deltas, stop, usage, [DONE]', async (t) => {
  const s = await setup(t, (input, setup) => {
    setup.delta({ id: 'someone_else', channel: 'openai', payload: 'other' }, 1, 'not mine');
    setup.delta(input, 1, 'The light ');
    setup.delta(input, 1, 'is on.');
    return done(input, 'The light is on.', { prompt_tokens: 40, completion_tokens: 6, total_tokens: 46 });
  });
  const reply = await post(s, { messages: [user('light?')], stream: true, stream_options: { include_usage: true } });
  t.equal(reply.statusCode, 200);
  t.match(reply.headers['content-type'], /^text\/event-stream/);
  t.equal(reply.headers['cache-control'], 'no-cache, no-transform');
  const chunks = frames(reply.body);
  t.equal(chunks.at(-1), '[DONE]');
  const objects = chunks.slice(0, -1) as Chunk[];
  const id = `chatcmpl-${s.inputs[0]?.id}`;
  t.ok(
    objects.every((c) => c.id === id && c.object === 'chat.completion.chunk' && c.model === 'homeagent-test'),
    'every chunk names the completion',
  );
  t.same(objects[0]?.choices, [{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }]);
  t.same(
    objects.slice(1, 3).map((c) => c.choices[0]?.delta),
    [{ content: 'The light ' }, { content: 'is on.' }],
  );
  t.same(objects[3]?.choices, [{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' }]);
  t.match(objects[4], {
    id,
    object: 'chat.completion.chunk',
    model: 'homeagent-test',
    usage: { prompt_tokens: 40, completion_tokens: 6, total_tokens: 46 },
  });
  t.same(objects[4]?.choices, [], 'the usage chunk has no choices');
  t.equal(objects.length, 5);
  t.equal(text(chunks), 'The light is on.');
  t.equal(s.tc.events.listenerCount('agent.text_delta'), 0, 'the listener is gone');
});

t.test('without include_usage there is no usage chunk', async (t) => {
  const s = await setup(t, (input, setup) => {
    setup.delta(input, 1, 'Hi.');
    return done(input, 'Hi.', { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 });
  });
  const chunks = frames((await post(s, { messages: [user('hi')], stream: true })).body);
  t.equal(chunks.length, 4, 'role, content, stop, [DONE]');
  t.notOk((chunks as Chunk[]).some((c) => typeof c === 'object' && 'usage' in c));
});

t.test('no delta at all (offline answer, a stage answered): the receipt text is one content chunk', async (t) => {
  const s = await setup(t, (input) => done(input, 'I am offline: set core.llm.api_key.'));
  const chunks = frames((await post(s, { messages: [user('hi')], stream: true })).body) as Chunk[];
  t.same(
    chunks.slice(0, 3).map((c) => c.choices[0]?.delta),
    [{ role: 'assistant', content: '' }, { content: 'I am offline: set core.llm.api_key.' }, {}],
  );
});

t.test('tool rounds, a restart and an appended confirmation request: the client ends with the answer', async (t) => {
  const s = await setup(t, (input, setup) => {
    setup.delta(input, 1, 'Let me look.');
    setup.delta(input, 2, 'I will unl');
    setup.delta(input, 2, 'I will unlock the door.', true);
    return done(input, 'I will unlock the door.\n\nReply "confirm 1234" to go ahead.');
  });
  const chunks = frames((await post(s, { messages: [user('unlock the door')], stream: true })).body);
  t.equal(text(chunks), 'Let me look.\n\nI will unlI will unlock the door.\n\nReply "confirm 1234" to go ahead.');
  t.equal(chunks.at(-1), '[DONE]');
});

t.test('a failed receipt after text was streamed ends with an error event, no [DONE]', async (t) => {
  const s = await setup(t, (input, setup) => {
    setup.delta(input, 1, 'Working');
    return {
      input_id: input.id ?? '',
      status: 'cancelled',
      reason: 'shutdown',
      error: { code: 'HA_ERR_ABORTED', message: 'shutting down' },
      finished_at: 0,
    };
  });
  const reply = await post(s, { messages: [user('hi')], stream: true });
  t.equal(reply.statusCode, 200);
  const chunks = frames(reply.body);
  t.same(chunks.at(-1), { error: { message: 'shutting down', type: 'server_error', param: null, code: 'HA_ERR_ABORTED' } });
  t.notOk(chunks.includes('[DONE]'));
});

t.test('a client that goes away mid-stream: the listener goes, the turn goes on, nothing breaks', async (t) => {
  let finish: (receipt: Receipt) => void = () => {};
  let injected: PluginInput | undefined;
  const s = await setup(t, (input, setup) => {
    injected = input;
    setup.delta(input, 1, 'First words');
    return new Promise<Receipt>((resolve) => {
      finish = resolve;
    });
  });
  await s.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = s.app.server.address() as AddressInfo;
  const firstData = await new Promise<string>((resolve, reject) => {
    const req = httpRequest({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: '/v1/chat/completions',
      headers: { authorization: KEY, 'content-type': 'application/json' },
    });
    req.on('error', () => {});
    req.on('response', (res) => {
      res.setEncoding('utf8');
      res.once('data', (data: string) => {
        req.destroy();
        resolve(data);
      });
      res.on('error', () => {});
    });
    req.on('error', reject);
    req.end(JSON.stringify({ messages: [user('hi')], stream: true }));
  });
  t.match(firstData, /"role":"assistant"/);
  await s.unsubscribed;
  t.equal(s.tc.events.listenerCount('agent.text_delta'), 0, 'the listener is removed when the client goes');
  if (!injected) throw new Error('no input was injected');
  s.delta(injected, 1, ' more words after the client left');
  finish(done(injected, 'First words more words after the client left'));
  const models = await s.app.inject({ method: 'GET', url: '/v1/models', headers: { authorization: KEY } });
  t.equal(models.statusCode, 200, 'the server still answers');
});

/** Sends a request over a real socket and reads the whole answer. */
function fetchOverSocket(port: number, body: unknown): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/v1/chat/completions',
        headers: { authorization: KEY, 'content-type': 'application/json' },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (data: string) => {
          text += data;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

t.test("an answer slower than the server's inactivity and request deadlines still arrives", async (t) => {
  const deadlineMs = 100;
  // The model thinks for longer than the server lets an idle socket live; chat_timeout_ms is what bounds the wait.
  const slow = (input: PluginInput) =>
    new Promise<Receipt>((resolve) => setTimeout(() => resolve(done(input, 'Took a while.')), deadlineMs * 4));
  const s = await setup(t, slow, {}, deadlineMs);
  await s.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = s.app.server.address() as AddressInfo;
  const plain = await fetchOverSocket(port, { messages: [user('think hard')] });
  t.equal(plain.status, 200);
  t.equal(JSON.parse(plain.text).choices[0].message.content, 'Took a while.');
  const streamed = await fetchOverSocket(port, { messages: [user('think harder')], stream: true });
  t.equal(streamed.status, 200);
  t.equal(text(frames(streamed.text)), 'Took a while.');
});

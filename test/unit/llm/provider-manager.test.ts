import t from 'tap';
import { defaultConfig } from '../../../src/config/loader.js';
import { type LlmConfig, ProviderManager, type ResolvedSource, resolveSources } from '../../../src/llm/provider-manager.js';
import { OllamaModel } from '../../../src/llm/providers/ollama.js';
import { OpenAiCompatibleModel } from '../../../src/llm/providers/openai-compatible.js';
import { type GenerateRequest, LlmError, type StreamPart } from '../../../src/llm/spec/index.js';
import { ToolError } from '../../../src/shared/tool.js';
import { type ScriptedServer, startScriptedServer } from '../../helpers/scripted-llm-server.js';
import { silentLogs } from '../fixtures/support.js';
import { collectParts, fixtureJson, ManualClock, sseEvents, streamError, textOf } from './fixtures/support.js';

const HELLO: GenerateRequest = { messages: [{ role: 'user', content: 'hello' }] };
const ANSWER = { json: fixtureJson('openai/deepseek-chat.json') };
type Sources = LlmConfig['sources'];

function llmConfig(overrides: Partial<LlmConfig> = {}): LlmConfig {
  return { ...defaultConfig().core.llm, ...overrides };
}

interface Setup {
  manager: ProviderManager;
  clock: ManualClock;
  created: ResolvedSource[];
  currentCalls: string[];
  config(): LlmConfig;
  update(change: Partial<LlmConfig>): void;
}

function setup(initial: Partial<LlmConfig>): Setup {
  let config = llmConfig(initial);
  const clock = new ManualClock();
  const created: ResolvedSource[] = [];
  const currentCalls: string[] = [];
  const manager = new ProviderManager({
    config: () => config,
    createModel: (s) => {
      created.push(s);
      if (s.adapter === 'ollama')
        return new OllamaModel({ source: s.name, base_url: s.base_url, model: s.model, timeout_ms: s.timeout_ms });
      if (s.adapter !== 'openai') throw new Error(`no adapter named ${s.adapter}`);
      return new OpenAiCompatibleModel({
        source: s.name,
        base_url: s.base_url,
        api_key: s.api_key,
        model: s.model,
        timeout_ms: s.timeout_ms,
        temperature: s.temperature,
        max_tokens: s.max_tokens,
      });
    },
    setCurrentSource: (name) => {
      currentCalls.push(name);
      config = { ...config, current_source: name };
    },
    log: silentLogs().child('llm'),
    clock,
  });
  const update = (change: Partial<LlmConfig>): void => {
    config = { ...config, ...change };
  };
  return { manager, clock, created, currentCalls, config: () => config, update };
}

function source(server: ScriptedServer, extra: Partial<Sources[string]> = {}): Sources[string] {
  return { adapter: 'openai', base_url: server.url, api_key: 'sk-test', model: 'deepseek-chat', ...extra };
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

t.test('resolveSources: the default source, DeepSeek defaults, enabled, order', async (t) => {
  t.same(resolveSources(llmConfig()), [], 'nothing configured, no source');
  const [deepseek] = resolveSources(llmConfig({ api_key: 'sk-1' }));
  t.match(deepseek, { name: 'default', adapter: 'openai', base_url: 'https://api.deepseek.com', api_key: 'sk-1', model: 'deepseek-chat' });
  t.equal(deepseek?.timeout_ms, 120000);
  t.equal(deepseek?.max_concurrent, 8);
  t.equal(deepseek?.priority, 100);
  t.match(resolveSources(llmConfig({ base_url: 'http://127.0.0.1:8000/v1', model: '' }))[0], {
    base_url: 'http://127.0.0.1:8000/v1',
    model: '',
  });
  t.match(resolveSources(llmConfig({ api_key: 'sk-1', model: 'deepseek-reasoner' }))[0], { model: 'deepseek-reasoner' });

  const sources: Sources = {
    zeta: { adapter: 'openai', priority: 10 },
    alpha: { adapter: 'openai', priority: 10, temperature: 0.1, timeout_ms: 5000 },
    off: { adapter: 'openai', priority: 1, enabled: false },
    early: { adapter: 'ollama', priority: 5 },
  };
  const names = (c: Partial<LlmConfig>) => resolveSources(llmConfig({ sources, ...c })).map((s) => s.name);
  t.same(names({}), ['early', 'alpha', 'zeta'], 'priority, then name; disabled sources left out');
  t.same(names({ api_key: 'k' }), ['early', 'alpha', 'zeta', 'default'], 'the default source has priority 100');
  t.same(names({ api_key: 'k', current_source: 'zeta' }), ['zeta', 'early', 'alpha', 'default'], 'the current source first');
  const alpha = resolveSources(llmConfig({ sources })).find((s) => s.name === 'alpha');
  t.match(alpha, { temperature: 0.1, timeout_ms: 5000, max_tokens: 4096, base_url: '', api_key: '' }, 'source values over core.llm values');
  const explicit = resolveSources(llmConfig({ api_key: 'k', sources: { default: { adapter: 'ollama' } } }));
  t.same(
    explicit.map((s) => [s.name, s.adapter]),
    [['default', 'ollama']],
    'a sources entry named default wins',
  );
});

t.test('priority order, current_source, and which source answered', async (t) => {
  const a = await startScriptedServer(t);
  const b = await startScriptedServer(t);
  const s = setup({ sources: { a: source(a, { priority: 10 }), b: source(b, { priority: 5 }) } });
  b.enqueue(ANSWER);
  const first = await s.manager.generate(HELLO);
  t.equal(first.model, 'b/deepseek-chat', 'the lower priority number goes first; the result names the source');
  t.equal(a.requests.length, 0);
  t.equal(s.manager.model, 'b/deepseek-chat');

  s.update({ current_source: 'a' });
  a.enqueue(ANSWER);
  t.equal((await s.manager.generate(HELLO)).model, 'a/deepseek-chat', 'current_source beats priority');
  t.same(
    s.manager.sources().map((x) => [x.name, x.current, x.requests]),
    [
      ['a', true, 1],
      ['b', false, 1],
    ],
  );
});

t.test('a 500 falls through to the next source and cools the failing one down', async (t) => {
  const a = await startScriptedServer(t);
  const b = await startScriptedServer(t);
  const s = setup({ cooldown_ms: 15000, sources: { a: source(a, { priority: 1 }), b: source(b, { priority: 2 }) } });
  a.enqueue({ status: 500, body: 'internal error' });
  b.enqueue(ANSWER);
  const result = await s.manager.generate(HELLO);
  t.equal(result.model, 'b/deepseek-chat');
  t.equal(result.text, '客厅的灯已经打开了。');
  const [statusA] = s.manager.sources();
  t.match(statusA, { name: 'a', state: 'cooling_down', until: s.clock.now() + 15000, failures: 1, requests: 1 });
  t.match(statusA?.reason, /cooling down for 15 s after HTTP 500/);
  t.match(statusA?.last_error, /HTTP 500/);

  b.enqueue(ANSWER);
  await s.manager.generate(HELLO);
  t.equal(a.requests.length, 1, 'a cooling source is skipped');

  s.clock.advance(15000);
  a.enqueue(ANSWER);
  t.equal((await s.manager.generate(HELLO)).model, 'a/deepseek-chat', 'after the cooldown it is first again');
  t.equal(s.manager.sources()[0]?.state, 'ready');
});

t.test('cooldown doubles per consecutive failure up to the maximum, honours Retry-After, resets on success', async (t) => {
  const a = await startScriptedServer(t);
  const s = setup({ cooldown_ms: 1000, cooldown_max_ms: 4000, sources: { a: source(a) } });
  const untilAfterFailure = async (step: Parameters<ScriptedServer['enqueue']>[0]): Promise<number | undefined> => {
    a.enqueue(step);
    const e = await rejection(s.manager.generate(HELLO));
    t.equal(e.kind, 'all_failed');
    const until = s.manager.sources()[0]?.until;
    return until === undefined ? undefined : until - s.clock.now();
  };
  const fail500 = { status: 500, body: 'x' };
  t.equal(await untilAfterFailure(fail500), 1000);
  s.clock.advance(1000);
  t.equal(await untilAfterFailure(fail500), 2000);
  s.clock.advance(2000);
  t.equal(await untilAfterFailure({ status: 502, body: 'bad gateway' }), 4000);
  s.clock.advance(4000);
  t.equal(await untilAfterFailure(fail500), 4000, 'capped at cooldown_max_ms');
  s.clock.advance(4000);
  a.enqueue(ANSWER);
  await s.manager.generate(HELLO);
  t.equal(s.manager.sources()[0]?.state, 'ready');
  t.equal(await untilAfterFailure({ status: 429, body: 'slow down', headers: { 'retry-after': '3' } }), 3000, 'Retry-After beats the base');
  s.clock.advance(3000);
  t.equal(await untilAfterFailure(fail500), 2000, 'consecutive failures count from the success on (the 429 was the first)');
  s.clock.advance(1999);
  t.equal(s.manager.sources()[0]?.state, 'cooling_down');
  s.clock.advance(1);
  t.equal(s.manager.sources()[0]?.state, 'ready');
});

t.test('a timeout and a network error also cool a source down', async (t) => {
  const a = await startScriptedServer(t);
  const b = await startScriptedServer(t);
  const s = setup({ sources: { a: source(a, { priority: 1, timeout_ms: 300 }), b: source(b, { priority: 2 }) } });
  a.enqueue({ stall: true });
  b.enqueue(ANSWER);
  t.equal((await s.manager.generate(HELLO)).model, 'b/deepseek-chat');
  t.match(s.manager.sources()[0], { state: 'cooling_down', reason: /after a timeout/ });
  s.clock.advance(15000);
  a.enqueue({ reset: true, before_headers: true });
  b.enqueue(ANSWER);
  await s.manager.generate(HELLO);
  t.match(s.manager.sources()[0], { state: 'cooling_down', reason: /after a network error/ });
});

t.test('401 disables a source until its configuration changes', async (t) => {
  const a = await startScriptedServer(t);
  const b = await startScriptedServer(t);
  const sources = { a: source(a, { priority: 1, api_key: 'sk-old' }), b: source(b, { priority: 2 }) };
  const s = setup({ sources });
  a.enqueue({ status: 401, body: fixtureJson('openai/deepseek-error-401.json') });
  b.enqueue(ANSWER);
  t.equal((await s.manager.generate(HELLO)).model, 'b/deepseek-chat');
  t.match(s.manager.sources()[0], { state: 'disabled', reason: 'disabled after HTTP 401 (check the API key)' });

  s.clock.advance(24 * 3600 * 1000);
  b.enqueue(ANSWER);
  await s.manager.generate(HELLO);
  t.equal(a.requests.length, 1, 'not tried again however long it waits');
  t.equal(s.created.filter((c) => c.name === 'a').length, 1);

  s.update({ sources: { ...sources, b: source(b, { priority: 2, temperature: 0.2 }) } });
  b.enqueue(ANSWER);
  await s.manager.generate(HELLO);
  t.equal(a.requests.length, 1, "another source's change does not re-enable it");

  s.update({ sources: { ...sources, a: source(a, { priority: 1, api_key: 'sk-new' }) } });
  t.equal(s.manager.sources()[0]?.state, 'ready', 'a new key: ready again');
  a.enqueue(ANSWER);
  t.equal((await s.manager.generate(HELLO)).model, 'a/deepseek-chat');
  t.equal(a.requests[1]?.headers.authorization, 'Bearer sk-new', 'a new model with the new key');
  t.equal(s.created.filter((c) => c.name === 'a').length, 2);
});

t.test('403 on the stream path disables the same way', async (t) => {
  const a = await startScriptedServer(t);
  const b = await startScriptedServer(t);
  const s = setup({ sources: { a: source(a, { priority: 1 }), b: source(b, { priority: 2 }) } });
  a.enqueue({ status: 403, body: 'forbidden' });
  b.enqueue({ sse: sseEvents('openai/deepseek-chat-stream.sse') });
  const parts = await collectParts(s.manager.stream(HELLO));
  t.equal(streamError(parts), undefined);
  t.match(s.manager.sources()[0], { state: 'disabled', reason: /HTTP 403/ });
});

t.test('every source failing gives all_failed listing each source and why', async (t) => {
  const a = await startScriptedServer(t);
  const b = await startScriptedServer(t);
  const s = setup({ cooldown_ms: 12000, sources: { deepseek: source(a, { priority: 1 }), local: source(b, { priority: 2 }) } });
  a.enqueue({ status: 401, body: 'bad key' });
  b.enqueue({ status: 500, body: 'boom' });
  const e = await rejection(s.manager.generate(HELLO));
  t.equal(e.kind, 'all_failed');
  t.equal(e.code, 'HA_ERR_LLM_ALL_FAILED');
  t.equal(
    e.message,
    'every language-model source failed: deepseek: disabled after HTTP 401 (check the API key); local: cooling down for 12 s after HTTP 500',
  );

  s.clock.advance(2500);
  const again = await rejection(s.manager.generate(HELLO));
  t.equal(again.kind, 'all_failed');
  t.match(again.message, /deepseek: disabled after HTTP 401 \(check the API key\); local: cooling down for 10 s after HTTP 500/);
  t.equal(a.requests.length + b.requests.length, 2, 'nothing sent while every source is unavailable');

  const parts = await collectParts(s.manager.stream(HELLO));
  t.equal(parts.length, 1);
  t.equal(streamError(parts)?.error.kind, 'all_failed');
});

t.test('no source at all: unavailable, with how to configure one', async (t) => {
  const s = setup({});
  t.equal(s.manager.configured(), false);
  t.same(s.manager.sources(), []);
  t.equal(s.manager.model, '');
  const e = await rejection(s.manager.generate(HELLO));
  t.equal(e.kind, 'unavailable');
  t.equal(e.code, 'HA_ERR_LLM_UNAVAILABLE');
  t.match(e.message, /HOMEAGENT_LLM_API_KEY/);
  t.match(e.message, /homeagentctl config set core\.llm\.base_url/);
  t.match(e.message, /core\.llm\.sources/);
  const parts = await collectParts(s.manager.stream(HELLO));
  t.same(
    parts.map((p) => p.type),
    ['error'],
  );
  t.equal(streamError(parts)?.error.kind, 'unavailable');

  s.update({ sources: { off: { adapter: 'openai', enabled: false } } });
  t.equal(s.manager.configured(), false, 'a disabled entry is not a source');
  s.update({ api_key: 'sk-x' });
  t.equal(s.manager.configured(), true);
});

t.test('a refused request falls through without a cooldown', async (t) => {
  const a = await startScriptedServer(t);
  const b = await startScriptedServer(t);
  const s = setup({ sources: { a: source(a, { priority: 1 }), b: source(b, { priority: 2 }) } });
  a.enqueue({ status: 400, body: { error: { message: 'This model does not support tools' } } });
  b.enqueue(ANSWER);
  t.equal((await s.manager.generate(HELLO)).model, 'b/deepseek-chat');
  t.match(s.manager.sources()[0], { state: 'ready', failures: 1, last_error: /does not support tools/ });
  a.enqueue({ raw: 'garbage' });
  b.enqueue(ANSWER);
  await s.manager.generate(HELLO);
  t.equal(a.requests.length, 2, 'tried again at once');
  t.equal(s.manager.sources()[0]?.state, 'ready', 'an unreadable answer is no cooldown either');
  a.enqueue({ status: 400, body: 'no' });
  b.enqueue({ status: 422, body: 'neither' });
  const e = await rejection(s.manager.generate(HELLO));
  t.match(e.message, /: a: refused the request: HTTP 400: no; b: refused the request: HTTP 422: neither$/);
});

t.test('a cancelled request is neither retried elsewhere nor counted', async (t) => {
  const a = await startScriptedServer(t);
  const b = await startScriptedServer(t);
  const s = setup({ sources: { a: source(a, { priority: 1 }), b: source(b, { priority: 2 }) } });
  a.enqueue({ stall: true });
  const controller = new AbortController();
  const pending = s.manager.generate({ ...HELLO, signal: controller.signal });
  await a.waitForRequests(1);
  controller.abort();
  const e = await rejection(pending);
  t.equal(e.kind, 'aborted');
  t.equal(b.requests.length, 0);
  t.match(s.manager.sources()[0], { state: 'ready', failures: 0 });
  t.equal((await rejection(s.manager.generate({ ...HELLO, signal: AbortSignal.abort() }))).kind, 'aborted');

  a.enqueue({ sse: sseEvents('openai/deepseek-chat-stream.sse').slice(0, 2), hang: true });
  const streamController = new AbortController();
  const types: string[] = [];
  for await (const part of s.manager.stream({ ...HELLO, signal: streamController.signal })) {
    types.push(part.type === 'error' ? `error:${part.error.kind}` : part.type);
    if (part.type === 'text-delta') streamController.abort();
  }
  t.same(types, ['text-delta', 'error:aborted']);
  t.match(s.manager.sources()[0], { state: 'ready', failures: 0 });
});

t.test('max_concurrent=1 makes a second request wait for the first', async (t) => {
  const a = await startScriptedServer(t);
  const s = setup({ sources: { a: source(a, { max_concurrent: 1 }) } });
  let open!: () => void;
  const gate = new Promise<void>((resolve) => {
    open = resolve;
  });
  a.enqueue({ ...ANSWER, gate }, ANSWER);
  const first = s.manager.generate({ messages: [{ role: 'user', content: 'first' }] });
  await a.waitForRequests(1);
  const second = s.manager.generate({ messages: [{ role: 'user', content: 'second' }] });
  t.match(s.manager.sources()[0], { state: 'busy', in_flight: 1, waiting: 1 });
  t.equal(a.requests.length, 1, 'the second request has not been sent');
  open();
  await Promise.all([first, second]);
  t.same(
    a.requests.map((r) => r.body.messages[0].content),
    ['first', 'second'],
  );
  const [r0, r1] = a.requests;
  t.ok(
    r0?.finished_at !== undefined && r1 !== undefined && r1.received_at >= r0.finished_at,
    'the second arrived after the first was answered',
  );
  t.match(s.manager.sources()[0], { state: 'ready', in_flight: 0, waiting: 0 });
});

t.test('max_concurrent: an aborted first request frees the slot; an aborted waiter leaves the queue', async (t) => {
  const a = await startScriptedServer(t);
  const s = setup({ sources: { a: source(a, { max_concurrent: 1 }) } });
  a.enqueue({ stall: true }, ANSWER);
  const holder = new AbortController();
  const first = s.manager.generate({ ...HELLO, signal: holder.signal });
  await a.waitForRequests(1);
  const waiter = new AbortController();
  const impatient = s.manager.generate({ ...HELLO, signal: waiter.signal });
  const second = s.manager.generate(HELLO);
  t.equal(s.manager.sources()[0]?.waiting, 2);
  waiter.abort();
  t.equal((await rejection(impatient)).kind, 'aborted', 'a waiter can give up');
  t.equal(s.manager.sources()[0]?.waiting, 1);
  holder.abort();
  t.equal((await rejection(first)).kind, 'aborted');
  t.equal((await second).text, '客厅的灯已经打开了。');
  t.equal(a.requests.length, 2, 'the given-up waiter sent nothing');
});

t.test('stream: falls through before the first part, passes the error on after it', async (t) => {
  const a = await startScriptedServer(t);
  const b = await startScriptedServer(t);
  const s = setup({ sources: { a: source(a, { priority: 1 }), b: source(b, { priority: 2 }) } });
  a.enqueue({ status: 500, body: 'boom' });
  b.enqueue({ sse: sseEvents('openai/deepseek-chat-stream.sse') });
  const parts = await collectParts(s.manager.stream(HELLO));
  t.equal(textOf(parts), "Good morning! It's 18°C in the kitchen.");
  t.same(parts.at(-1), { type: 'finish', reason: 'stop', model: 'b/deepseek-chat' });

  s.clock.advance(60_000);
  a.enqueue({ reset: true, sse: sseEvents('openai/deepseek-chat-stream.sse').slice(0, 3) });
  const broken = await collectParts(s.manager.stream(HELLO));
  t.equal(textOf(broken), 'Good morning');
  t.equal(streamError(broken)?.error.kind, 'network', 'after the first part the error is passed on');
  t.equal(b.requests.length, 1, 'and no other source is tried');
  t.equal(s.manager.sources()[0]?.state, 'cooling_down', 'the failure still counts against the source');
});

t.test('stream: a model that throws before its first part counts as a failure like an error part', async (t) => {
  const b = await startScriptedServer(t);
  const config = llmConfig({ sources: { a: { adapter: 'broken', priority: 1 }, b: source(b, { priority: 2 }) } });
  const manager = new ProviderManager({
    config: () => config,
    createModel: (s) =>
      s.adapter === 'broken'
        ? {
            spec_version: 1,
            provider: 'test',
            model: 'broken',
            generate: () => Promise.reject(new LlmError('server', 'a: boom', { status: 502 })),
            // biome-ignore lint/correctness/useYield: a model that throws before yielding.
            stream: async function* (): AsyncGenerator<StreamPart> {
              throw new LlmError('server', 'a: boom', { status: 502 });
            },
          }
        : new OpenAiCompatibleModel({ source: s.name, base_url: s.base_url, api_key: s.api_key, model: s.model, timeout_ms: s.timeout_ms }),
    setCurrentSource: () => undefined,
    log: silentLogs().child('llm'),
    clock: new ManualClock(),
  });
  b.enqueue({ sse: sseEvents('openai/deepseek-chat-stream.sse') });
  const parts = await collectParts(manager.stream(HELLO));
  t.equal(streamError(parts), undefined);
  t.match(manager.sources()[0], { state: 'cooling_down', reason: /HTTP 502/ });
});

t.test('a source whose model cannot be built is disabled with the reason; the others still work', async (t) => {
  const b = await startScriptedServer(t);
  const s = setup({ sources: { lua: { adapter: 'nosuch', priority: 1 }, b: source(b, { priority: 2 }) } });
  b.enqueue(ANSWER);
  t.equal((await s.manager.generate(HELLO)).model, 'b/deepseek-chat');
  t.match(s.manager.sources()[0], { name: 'lua', state: 'disabled', reason: /no adapter named nosuch/ });
});

t.test('a changed model setting builds a new model', async (t) => {
  const a = await startScriptedServer(t);
  const s = setup({ sources: { a: source(a) } });
  a.enqueue(ANSWER, ANSWER, ANSWER);
  await s.manager.generate(HELLO);
  await s.manager.generate(HELLO);
  t.equal(s.created.length, 1, 'the model is reused while nothing changes');
  s.update({ sources: { a: source(a, { model: 'deepseek-reasoner', priority: 3 }) } });
  await s.manager.generate(HELLO);
  t.equal(s.created.length, 2);
  t.equal(a.requests[2]?.body.model, 'deepseek-reasoner');
  s.update({ sources: { a: source(a, { model: 'deepseek-reasoner', priority: 4, max_concurrent: 2 }) } });
  t.equal(s.created.length, 2, 'priority and max_concurrent need no new model');
});

t.test('llm_list_sources never shows an API key, even when the vendor echoes it', async (t) => {
  const a = await startScriptedServer(t);
  const b = await startScriptedServer(t);
  const keyA = 'sk-live-AAAA1111bbbb2222';
  const keyB = 'sk-live-ZZZZ9999yyyy8888';
  const s = setup({
    api_key: 'sk-default-QQQQ7777',
    sources: {
      a: source(a, { priority: 1, api_key: keyA, base_url: `http://user:pass@127.0.0.1:${new URL(a.url).port}` }),
      b: source(b, { priority: 2, api_key: keyB }),
    },
  });
  a.enqueue({ status: 401, body: { error: { message: `Incorrect API key provided: ${keyA}` } } });
  b.enqueue({ status: 500, body: `upstream rejected ${keyB}` });
  await rejection(s.manager.generate(HELLO));
  const [list] = s.manager.tools();
  t.equal(list?.name, 'llm_list_sources');
  const context = {} as Parameters<NonNullable<typeof list>['execute']>[1];
  const listed = await list?.execute({}, context);
  const text = JSON.stringify(listed);
  for (const key of [keyA, keyB, 'sk-default-QQQQ7777', 'pass@']) t.notOk(text.includes(key), `${key} is not listed`);
  t.match(text, /\[redacted\]/, 'the echoed key was replaced');
  t.same(
    (listed as Array<{ name: string }>).map((x) => x.name),
    ['a', 'b', 'default'],
  );
});

t.test('llm_set_source sets the current source and rejects unknown names', async (t) => {
  const a = await startScriptedServer(t);
  const b = await startScriptedServer(t);
  const s = setup({ sources: { a: source(a, { priority: 1 }), b: source(b, { priority: 2 }) } });
  const set = s.manager.tools().find((x) => x.name === 'llm_set_source');
  const context = {} as Parameters<NonNullable<typeof set>['execute']>[1];
  t.same(await set?.execute({ name: 'b' }, context), { ok: true, current: 'b' });
  t.same(s.currentCalls, ['b']);
  b.enqueue(ANSWER);
  t.equal((await s.manager.generate(HELLO)).model, 'b/deepseek-chat', 'the new current source goes first');

  let thrown: unknown;
  try {
    await set?.execute({ name: 'nope' }, context);
  } catch (error) {
    thrown = error;
  }
  t.ok(thrown instanceof ToolError);
  t.match((thrown as ToolError).info, { reason: 'not_found', field: 'name', hint: /llm_list_sources/ });
  t.same(s.currentCalls, ['b'], 'the setter was not called for an unknown name');
});

import t from 'tap';
import { HomeAgentError } from '../../../../src/shared/errors.js';
import { type ApiHarness, apiHarness, Type } from './api-harness.js';

const Key = Type.String({ minLength: 1, maxLength: 256 });

/** config.* doubles over a two-setting table that behave like the settings registry: typed, bounded, unknown keys refused. */
function fakeConfig(h: ApiHarness) {
  const defaults: Record<string, number> = { 'core.agent.max_turns': 8, 'plugin.webui.max_event_streams': 16 };
  const values = new Map<string, number>();
  const history: Array<{ key: string; actor: string }> = [];
  const known = (key: string) => {
    if (!(key in defaults)) throw new HomeAgentError('HA_ERR_SETTINGS_UNKNOWN_KEY', `no setting ${key}`);
  };
  const view = (key: string) => ({ key, value: values.get(key) ?? defaults[key], default: defaults[key], type: 'integer' });
  h.method('config.list', Type.Object({ prefix: Type.Optional(Type.String()) }), ({ prefix }) =>
    Object.keys(defaults)
      .filter((k) => k.startsWith(prefix ?? ''))
      .map(view),
  );
  h.method('config.get', Type.Object({ key: Key }), ({ key }) => {
    known(key);
    return view(key);
  });
  h.method('config.set', Type.Object({ key: Key, value: Type.Unknown() }), ({ key, value }, caller) => {
    known(key);
    const n = typeof value === 'string' ? Number(value) : value;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 1) {
      throw new HomeAgentError('HA_ERR_SETTINGS_INVALID_VALUE', `${key} must be an integer ≥ 1, got ${JSON.stringify(value)}`);
    }
    values.set(key, n);
    history.push({ key, actor: caller.actor });
    return view(key);
  });
  h.method('config.reset', Type.Object({ key: Key }), ({ key }, caller) => {
    known(key);
    values.delete(key);
    history.push({ key, actor: caller.actor });
    return view(key);
  });
  h.method(
    'config.history',
    Type.Object({ key: Type.Optional(Key), limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })) }),
    () => [...history],
  );
  return { values, history };
}

t.test('status and health answer what their control methods answer, as the request caller', async (t) => {
  const h = await apiHarness(t);
  h.method('status', Type.Object({}), () => ({ state: 'running', uptime_s: 3 }));
  h.method('health', Type.Object({}), () => ({ ok: true, checks: [] }));
  const status = await h.request({ method: 'GET', url: '/api/v1/status', headers: { 'x-test-actor': 'webui:admin' } });
  t.equal(status.status, 200);
  t.same(status.json, { ok: true, result: { state: 'running', uptime_s: 3 } });
  t.same(h.calls[0], { method: 'status', params: {}, caller: { actor: 'webui:admin', owner: true, proof: 'the web API key' } });
  t.same((await h.request({ method: 'GET', url: '/api/v1/health' })).json, { ok: true, result: { ok: true, checks: [] } });
});

t.test('an unknown query parameter is refused before the method runs', async (t) => {
  const h = await apiHarness(t);
  h.method('status', Type.Object({}), () => ({}));
  const reply = await h.request({ method: 'GET', url: '/api/v1/status?verbose=1' });
  t.equal(reply.status, 400);
  t.match(reply.json, {
    ok: false,
    error: { code: 'HA_ERR_RPC_INVALID_PARAMS', message: /unknown query parameter "verbose"; this route takes none/ },
  });
  t.equal(h.calls.length, 0);
  const token = await h.request({ method: 'GET', url: '/api/v1/status?token=abc' });
  t.equal(token.status, 400, 'a key in the URL is not a way in: the server takes it from headers only');
  t.match(token.json, { error: { message: /unknown query parameter "token"/ } });
});

t.test('a method this daemon lacks is 503, not a crash', async (t) => {
  const h = await apiHarness(t);
  const reply = await h.request({ method: 'GET', url: '/api/v1/health' });
  t.equal(reply.status, 503);
  t.match(reply.json, { ok: false, error: { code: 'HA_ERR_RPC_UNKNOWN_METHOD' } });
});

t.test('settings: list by prefix, read, change, reset, history', async (t) => {
  const h = await apiHarness(t);
  const { values } = fakeConfig(h);

  const all = await h.request({ method: 'GET', url: '/api/v1/settings?prefix=' });
  t.equal((all.json.result as unknown[]).length, 2, 'an empty prefix is no prefix');
  t.same(h.calls.at(-1)?.params, {}, 'an empty prefix is not sent');
  const plugin = await h.request({ method: 'GET', url: '/api/v1/settings?prefix=plugin.' });
  t.match(plugin.json, { ok: true, result: [{ key: 'plugin.webui.max_event_streams', value: 16 }] });

  t.match((await h.request({ method: 'GET', url: '/api/v1/settings/core.agent.max_turns' })).json, {
    ok: true,
    result: { key: 'core.agent.max_turns', value: 8 },
  });

  const set = await h.request({
    method: 'PUT',
    url: '/api/v1/settings/core.agent.max_turns',
    payload: { value: 12 },
    headers: { 'x-test-actor': 'webui:admin' },
  });
  t.equal(set.status, 200);
  t.match(set.json, { ok: true, result: { value: 12 } });
  t.same(h.calls.at(-1), {
    method: 'config.set',
    params: { key: 'core.agent.max_turns', value: 12 },
    caller: { actor: 'webui:admin', owner: true, proof: 'the web API key' },
  });

  const reset = await h.request({ method: 'DELETE', url: '/api/v1/settings/core.agent.max_turns' });
  t.match(reset.json, { ok: true, result: { value: 8 } });
  t.equal(values.size, 0);

  const history = await h.request({ method: 'GET', url: '/api/v1/settings-history?key=core.agent.max_turns&limit=5' });
  t.same(h.calls.at(-1)?.params, { key: 'core.agent.max_turns', limit: 5 }, 'limit arrives as a number');
  t.same(history.json.result, [
    { key: 'core.agent.max_turns', actor: 'webui:admin' },
    { key: 'core.agent.max_turns', actor: 'webui:api' },
  ]);
});

t.test('bad settings requests are refused with the problem named and nothing stored', async (t) => {
  const h = await apiHarness(t);
  const { values } = fakeConfig(h);
  const cases: Array<[string, Parameters<ApiHarness['request']>[0], number, string, RegExp]> = [
    [
      'no value',
      { method: 'PUT', url: '/api/v1/settings/core.agent.max_turns', payload: {} },
      400,
      'HA_ERR_RPC_INVALID_PARAMS',
      /needs a value/,
    ],
    [
      'an extra field',
      { method: 'PUT', url: '/api/v1/settings/core.agent.max_turns', payload: { value: 3, actor: 'x' } },
      400,
      'HA_ERR_RPC_INVALID_PARAMS',
      /unknown field "actor"/,
    ],
    [
      'a list body',
      { method: 'PUT', url: '/api/v1/settings/core.agent.max_turns', payload: [3] },
      400,
      'HA_ERR_RPC_INVALID_PARAMS',
      /JSON object/,
    ],
    [
      'no body',
      { method: 'PUT', url: '/api/v1/settings/core.agent.max_turns' },
      400,
      'HA_ERR_RPC_INVALID_PARAMS',
      /needs a JSON object body/,
    ],
    [
      'a value out of bounds',
      { method: 'PUT', url: '/api/v1/settings/core.agent.max_turns', payload: { value: 0 } },
      400,
      'HA_ERR_SETTINGS_INVALID_VALUE',
      /integer ≥ 1/,
    ],
    [
      'an unknown key',
      { method: 'PUT', url: '/api/v1/settings/core.nope', payload: { value: 3 } },
      404,
      'HA_ERR_SETTINGS_UNKNOWN_KEY',
      /core.nope/,
    ],
    [
      'a key with a space',
      { method: 'GET', url: '/api/v1/settings/core%20agent' },
      400,
      'HA_ERR_RPC_INVALID_PARAMS',
      /setting key "core agent"/,
    ],
    [
      'a key too long',
      { method: 'DELETE', url: `/api/v1/settings/${'a'.repeat(257)}` },
      400,
      'HA_ERR_RPC_INVALID_PARAMS',
      /longer than 256/,
    ],
    [
      'a limit that is no number',
      { method: 'GET', url: '/api/v1/settings-history?limit=ten' },
      400,
      'HA_ERR_RPC_INVALID_PARAMS',
      /limit must be a whole number/,
    ],
    [
      'a limit out of bounds',
      { method: 'GET', url: '/api/v1/settings-history?limit=0' },
      400,
      'HA_ERR_RPC_INVALID_PARAMS',
      /config.history: params.limit/,
    ],
    [
      'a repeated parameter',
      { method: 'GET', url: '/api/v1/settings?prefix=a&prefix=b' },
      400,
      'HA_ERR_RPC_INVALID_PARAMS',
      /prefix is given more than once/,
    ],
  ];
  for (const [label, request, status, code, message] of cases) {
    const reply = await h.request(request);
    t.equal(reply.status, status, `${label}: status`);
    t.match(reply.json, { ok: false, error: { code, message } }, `${label}: envelope`);
  }
  t.equal(values.size, 0, 'nothing was stored');
});

t.test('logs: filters are converted to the types logs.recent takes', async (t) => {
  const h = await apiHarness(t);
  h.method(
    'logs.recent',
    Type.Object({
      level: Type.Optional(Type.String()),
      subsystem: Type.Optional(Type.String()),
      q: Type.Optional(Type.String()),
      audit: Type.Optional(Type.Boolean()),
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 2000 })),
    }),
    () => ({ lines: [{ msg: 'hello' }], dropped: 0 }),
  );
  const reply = await h.request({ method: 'GET', url: '/api/v1/logs?level=warn&subsystem=plugin.webui&q=disk&audit=true&limit=20' });
  t.same(reply.json, { ok: true, result: { lines: [{ msg: 'hello' }], dropped: 0 } });
  t.same(h.calls[0]?.params, { level: 'warn', subsystem: 'plugin.webui', q: 'disk', audit: true, limit: 20 });
  await h.request({ method: 'GET', url: '/api/v1/logs?audit=0' });
  t.same(h.calls[1]?.params, { audit: false });
  const bad = await h.request({ method: 'GET', url: '/api/v1/logs?audit=maybe' });
  t.equal(bad.status, 400);
  t.match(bad.json, { error: { message: /audit must be true or false/ } });
  t.equal(h.calls.length, 2);
});

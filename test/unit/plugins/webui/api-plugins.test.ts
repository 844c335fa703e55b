import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import t from 'tap';
import { HomeAgentError } from '../../../../src/shared/errors.js';
import { fakeChangeTracker } from '../../../helpers/fake-change-tracker.js';
import { type ApiHarness, apiHarness, Type } from './api-harness.js';

const Name = Type.Object({ name: Type.String({ minLength: 1, maxLength: 64 }) });

function fakePlugins(h: ApiHarness) {
  const state = new Map([['mqtt', 'running']]);
  h.method('plugins.list', Type.Object({}), () => ({ plugins: [...state].map(([name, s]) => ({ name, state: s })), rejected: [] }));
  for (const action of ['enable', 'disable', 'reload']) {
    h.method(`plugins.${action}`, action === 'reload' ? Type.Object({ name: Type.Optional(Type.String()) }) : Name, (params) => {
      const name = (params as { name: string }).name;
      if (!state.has(name)) throw new HomeAgentError('HA_ERR_PLUGIN_NOT_FOUND', `no plugin ${name}`);
      state.set(name, action === 'disable' ? 'disabled' : 'running');
      return { name, state: state.get(name) };
    });
  }
  h.method('plugins.uninstall', Name, ({ name }) => {
    if (!state.delete(name)) throw new HomeAgentError('HA_ERR_PLUGIN_NOT_FOUND', `no plugin ${name}`);
    return { name, uninstalled: true };
  });
  return state;
}

/** plugins.install that looks at the file it is given the way the installer would, then succeeds or fails as told. */
function fakeInstall(h: ApiHarness, outcome: 'ok' | 'fail') {
  const seen: Array<{ file: string; content: Buffer; mode: number }> = [];
  h.method('plugins.install', Type.Object({ file: Type.String({ minLength: 1 }) }), ({ file }) => {
    seen.push({ file, content: readFileSync(file), mode: statSync(file).mode & 0o777 });
    if (outcome === 'fail') throw new HomeAgentError('HA_ERR_PLUGIN_INSTALL', 'the archive has no plugin.json');
    return { name: 'demo', state: 'running' };
  });
  return seen;
}

t.test('list, enable, disable, reload and uninstall by name, as the caller', async (t) => {
  const h = await apiHarness(t);
  const state = fakePlugins(h);
  t.match((await h.request({ method: 'GET', url: '/api/v1/plugins' })).json, {
    ok: true,
    result: { plugins: [{ name: 'mqtt', state: 'running' }] },
  });
  t.match((await h.request({ method: 'POST', url: '/api/v1/plugins/mqtt/disable', headers: { 'x-test-actor': 'webui:admin' } })).json, {
    ok: true,
    result: { state: 'disabled' },
  });
  t.same(h.calls.at(-1), {
    method: 'plugins.disable',
    params: { name: 'mqtt' },
    caller: { actor: 'webui:admin', owner: true, proof: 'the web API key' },
  });
  t.equal(state.get('mqtt'), 'disabled');
  t.equal((await h.request({ method: 'POST', url: '/api/v1/plugins/mqtt/enable' })).status, 200);
  t.equal((await h.request({ method: 'POST', url: '/api/v1/plugins/mqtt/reload' })).status, 200);
  t.same(h.calls.at(-1)?.params, { name: 'mqtt' });
  t.equal(state.get('mqtt'), 'running');

  const unknown = await h.request({ method: 'POST', url: '/api/v1/plugins/zigbee/enable' });
  t.equal(unknown.status, 404);
  t.match(unknown.json, { ok: false, error: { code: 'HA_ERR_PLUGIN_NOT_FOUND' } });
  const bad = await h.request({ method: 'POST', url: '/api/v1/plugins/My%20Plugin/disable' });
  t.equal(bad.status, 400);
  t.match(bad.json, { error: { code: 'HA_ERR_RPC_INVALID_PARAMS', message: /plugin name "My Plugin"/ } });

  t.equal((await h.request({ method: 'DELETE', url: '/api/v1/plugins/mqtt' })).status, 200);
  t.notOk(state.has('mqtt'));
});

t.test('install: the raw archive goes to a private file for plugins.install, removed afterwards', async (t) => {
  const h = await apiHarness(t);
  const seen = fakeInstall(h, 'ok');
  const archive = Buffer.from([0x1f, 0x8b, 8, 0, 1, 2, 3, 4]);
  const reply = await h.request({
    method: 'POST',
    url: '/api/v1/plugins/install?filename=demo-1.0.tar.gz',
    headers: { 'content-type': 'application/octet-stream' },
    payload: archive,
  });
  t.equal(reply.status, 200);
  t.match(reply.json, { ok: true, result: { name: 'demo' } });
  t.equal(seen.length, 1);
  const [first] = seen;
  t.same(first?.content, archive, 'the file holds the body');
  t.equal(first?.mode, 0o600, 'only the daemon may read it');
  t.equal(dirname(first?.file ?? ''), join(h.tc.context.paths.data, 'uploads'));
  t.match(first?.file, /\/[0-9a-f]{24}\.tar\.gz$/, 'a random name keeping the kind, nothing of the client name');
  t.notOk(existsSync(first?.file ?? ''), 'removed after the install');
});

t.test('install: a failed install also removes the file; bad names and bodies write nothing', async (t) => {
  const h = await apiHarness(t, { settings: { upload_limit_bytes: 4096, body_limit_bytes: 1024 } });
  const seen = fakeInstall(h, 'fail');
  const uploads = join(h.tc.context.paths.data, 'uploads');
  const post = (url: string, payload: string | Buffer, type = 'application/octet-stream') =>
    h.request({ method: 'POST', url, headers: { 'content-type': type }, payload });

  const failed = await post('/api/v1/plugins/install?filename=demo.zip', Buffer.from('PK\u0003\u0004 not really'));
  t.equal(failed.status, 400);
  t.match(failed.json, { ok: false, error: { code: 'HA_ERR_PLUGIN_INSTALL', message: /no plugin.json/ } });
  t.equal(seen.length, 1);
  t.same(readdirSync(uploads), [], 'the upload is gone after a failed install');

  const cases: Array<[string, () => ReturnType<typeof post>, number, string, RegExp]> = [
    ['no filename', () => post('/api/v1/plugins/install', 'x'), 400, 'HA_ERR_RPC_INVALID_PARAMS', /filename is required/],
    [
      'a wrong kind',
      () => post('/api/v1/plugins/install?filename=demo.exe', 'x'),
      400,
      'HA_ERR_RPC_INVALID_PARAMS',
      /must end with .tgz, .tar.gz or .zip/,
    ],
    [
      'a path',
      () => post('/api/v1/plugins/install?filename=..%2F..%2Fdemo.tgz', 'x'),
      400,
      'HA_ERR_RPC_INVALID_PARAMS',
      /not a plain file name/,
    ],
    [
      'an empty body',
      () => post('/api/v1/plugins/install?filename=demo.tgz', ''),
      400,
      'HA_ERR_RPC_INVALID_PARAMS',
      /body must be the archive/,
    ],
    [
      'JSON instead of the archive',
      () => post('/api/v1/plugins/install?filename=demo.tgz', '{"a":1}', 'application/json'),
      400,
      'HA_ERR_RPC_INVALID_PARAMS',
      /application\/octet-stream/,
    ],
    [
      'more than upload_limit_bytes',
      () => post('/api/v1/plugins/install?filename=demo.tgz', Buffer.alloc(4097)),
      413,
      'HA_ERR_HTTP_BODY_TOO_LARGE',
      /larger/,
    ],
  ];
  for (const [label, send, status, code, message] of cases) {
    const reply = await send();
    t.equal(reply.status, status, `${label}: status`);
    t.match(reply.json, { ok: false, error: { code, message } }, `${label}: envelope`);
  }
  t.equal(seen.length, 1, 'plugins.install was not called again');
  t.same(readdirSync(uploads), [], 'nothing was written');

  const within = await post('/api/v1/plugins/install?filename=demo.tgz', Buffer.alloc(3000, 1));
  t.equal(within.status, 400, 'an archive above body_limit_bytes but within upload_limit_bytes reaches the installer');
  t.equal(seen.length, 2);

  const chat = await post('/api/v1/chat', Buffer.alloc(10));
  t.equal(chat.status, 415, 'raw bodies are accepted on the install route only');
  const big = await h.request({ method: 'PUT', url: '/api/v1/settings/core.x', payload: { value: 'x'.repeat(2000) } });
  t.equal(big.status, 413, 'the upload limit does not widen the other routes');
});

t.test('changes: list, status, show, diff, commit and rollback reach the tracker as the caller, with numeric ids', async (t) => {
  const h = await apiHarness(t);
  const tracker = fakeChangeTracker((name, params, handler) => h.method(name, params, handler));

  const list = await h.request({ method: 'GET', url: '/api/v1/changes?limit=2&status=trial' });
  t.equal(list.status, 200);
  t.match(list.json, { ok: true, result: [{ id: 3, status: 'trial', file_count: 3 }] });
  t.same(h.calls.at(-1)?.params, { limit: 2, status: 'trial' });
  t.match((await h.request({ method: 'GET', url: '/api/v1/changes' })).json, { result: [{ id: 3 }, { id: 2 }, { id: 1 }] });
  t.same(h.calls.at(-1)?.params, {}, 'no query: the method decides the defaults');
  t.match((await h.request({ method: 'GET', url: '/api/v1/changes/status' })).json, {
    ok: true,
    result: { backend: 'userspace', pending_files: 3, trial: { change_set_ids: [3], plugins: ['weather'] } },
  });
  t.equal(h.calls.at(-1)?.method, 'changes.status', '/changes/status is not change "status"');
  t.match((await h.request({ method: 'GET', url: '/api/v1/changes/3' })).json, {
    result: { id: 3, files: [{ path: 'weather/extra.js' }] },
  });
  t.same(h.calls.at(-1)?.params, { id: 3 });
  t.match((await h.request({ method: 'GET', url: '/api/v1/changes/3/diff' })).json, {
    result: { id: 3, text: /\+\+\+ b\/weather\/extra\.js/ },
  });

  const missing = await h.request({ method: 'GET', url: '/api/v1/changes/42' });
  t.equal(missing.status, 404);
  t.match(missing.json, { ok: false, error: { code: 'HA_ERR_CHANGE_NOT_FOUND', message: /no change set 42/ } });
  const wrongState = await h.request({ method: 'POST', url: '/api/v1/changes/1/commit' });
  t.equal(wrongState.status, 409, 'a change set in the wrong state is a conflict');
  t.match(wrongState.json, { ok: false, error: { code: 'HA_ERR_CHANGE_STATE', message: /committed, not on trial/ } });
  t.equal(wrongState.headers['cache-control'], 'no-store');

  const bad: Array<[string, string, RegExp]> = [
    ['GET', '/api/v1/changes/c1', /change id in the path must be a positive whole number, got "c1"/],
    ['GET', '/api/v1/changes/0/diff', /positive whole number, got "0"/],
    ['POST', '/api/v1/changes/-1/rollback', /positive whole number/],
    ['GET', '/api/v1/changes?state=trial', /unknown query parameter "state"; this route takes limit, status/],
    ['GET', '/api/v1/changes?limit=ten', /limit must be a whole number/],
    ['GET', '/api/v1/changes?status=pending', /params\.status/],
    ['GET', '/api/v1/changes/3?x=1', /unknown query parameter "x"/],
  ];
  for (const [method, url, message] of bad) {
    const reply = await h.request({ method: method as 'GET', url });
    t.equal(reply.status, 400, `${method} ${url}`);
    t.match(reply.json, { ok: false, error: { code: 'HA_ERR_RPC_INVALID_PARAMS', message } }, `${method} ${url}`);
  }
  t.same(
    tracker.sets.map((c) => c.status),
    ['committed', 'rolled_back', 'trial'],
    'refused requests changed nothing',
  );

  const commit = await h.request({ method: 'POST', url: '/api/v1/changes/3/commit', headers: { 'x-test-actor': 'webui:admin' } });
  t.match(commit.json, { ok: true, result: [{ id: 3, status: 'committed', decided_by: 'webui:admin' }] });
  t.same(h.calls.at(-1), {
    method: 'changes.commit',
    params: { id: 3 },
    caller: { actor: 'webui:admin', owner: true, proof: 'the web API key' },
  });
  const revert = await h.request({ method: 'POST', url: '/api/v1/changes/1/rollback' });
  t.match(revert.json, { ok: true, result: [{ id: 4, reverts: 1, status: 'trial', actor: 'webui:api' }] });
});

t.test('changes: a tracker that is off answers 503 with its own code and message; no tracker at all is 503 too', async (t) => {
  const h = await apiHarness(t);
  const none = await h.request({ method: 'GET', url: '/api/v1/changes' });
  t.equal(none.status, 503, 'a daemon without the tracker methods');
  t.match(none.json, { ok: false, error: { code: 'HA_ERR_RPC_UNKNOWN_METHOD' } });

  const tracker = fakeChangeTracker((name, params, handler) => h.method(name, params, handler), { off: true });
  t.match((await h.request({ method: 'GET', url: '/api/v1/changes/status' })).json, { ok: true, result: { backend: 'off', trial: null } });
  for (const [method, url] of [
    ['GET', '/api/v1/changes'],
    ['GET', '/api/v1/changes/3'],
    ['GET', '/api/v1/changes/3/diff'],
    ['POST', '/api/v1/changes/3/rollback'],
    ['POST', '/api/v1/changes/3/commit'],
  ] as const) {
    const reply = await h.request({ method, url });
    t.equal(reply.status, 503, `${method} ${url}`);
    t.match(reply.json, { ok: false, error: { code: 'HA_ERR_TRACKER_OFF', message: /core\.tracker\.backend: off/ } });
  }
  t.equal(tracker.sets[2]?.status, 'trial', 'nothing was rolled back');
  // Errors of other routes are unchanged by the changes scope.
  const plugin = await h.request({ method: 'POST', url: '/api/v1/plugins/zigbee/enable' });
  t.equal(plugin.status, 503, 'plugins.enable is not registered in this harness: the server handler answers');
  t.match(plugin.json, { error: { code: 'HA_ERR_RPC_UNKNOWN_METHOD' } });
});

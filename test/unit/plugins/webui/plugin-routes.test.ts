/**
 * Other plugins' routes under /plugins/<name>/...: found through the route table, behind the same
 * checks as the API, called without the caller's credentials, and answered so that a plugin can
 * neither set cookies on the page's origin nor serve script as the page.
 */
import t from 'tap';
import { HomeAgentError, type HttpRequest } from '../../../../src/sdk/index.js';
import { login, type RunningWebui, send, startWebui } from './webui-setup.js';

function addRoute(w: RunningWebui, plugin: string, route: Parameters<RunningWebui['test']['routes']['prepare']>[1]): void {
  w.test.routes.add(w.test.routes.prepare(plugin, route));
}

t.test('a request reaches the plugin with the path below its prefix, the query and body, and no credentials', async (t) => {
  const w = await startWebui(t);
  const seen: HttpRequest[] = [];
  addRoute(w, 'camera', {
    method: 'POST',
    path: '/snapshot',
    handler: (request) => {
      seen.push(request);
      return { status: 201, body: { saved: true }, headers: { 'x-camera': 'front' } };
    },
  });
  addRoute(w, 'camera', { method: 'GET', path: '/', handler: () => ({ body: { root: true } }) });
  const cookie = await login(w);
  const reply = await send(w.port, '/plugins/camera/snapshot?size=large&size=small&q=1', {
    method: 'POST',
    body: { at: 'door' },
    headers: { cookie, 'sec-fetch-site': 'same-origin', 'x-extra': 'yes' },
  });
  t.equal(reply.status, 201);
  t.same(reply.body, { saved: true });
  t.equal(reply.headers['x-camera'], 'front');
  t.equal(reply.headers['x-content-type-options'], 'nosniff');
  t.equal(seen.length, 1);
  t.match(seen[0], {
    method: 'POST',
    path: '/snapshot',
    query: { size: 'large', q: '1' },
    body: { at: 'door' },
    headers: { 'x-extra': 'yes' },
  });
  t.notOk(seen[0]?.headers.cookie, 'the cookie is not passed on');

  await send(w.port, '/plugins/camera/snapshot', {
    method: 'POST',
    body: {},
    headers: { authorization: `Bearer ${w.apiKey}`, 'x-api-key': w.apiKey },
  });
  t.notOk(seen[1]?.headers.authorization, 'nor the Authorization header');
  t.notOk(seen[1]?.headers['x-api-key'], 'nor the API key');

  const root = await send(w.port, '/plugins/camera', { headers: { 'x-api-key': w.apiKey } });
  t.same(root.body, { root: true }, "the plugin's / route");
  t.match(w.test.audits.at(-1), {
    action: 'http.request',
    details: { on_behalf_of: 'webui:api', method: 'POST', path: '/plugins/camera/snapshot' },
  });
});

t.test('the same checks as the API: Host, authentication, cross-site', async (t) => {
  const w = await startWebui(t);
  let calls = 0;
  addRoute(w, 'camera', { method: 'POST', path: '/snapshot', handler: () => ({ body: { n: ++calls } }) });
  const cookie = await login(w);
  t.equal((await send(w.port, '/plugins/camera/snapshot', { method: 'POST', body: {} })).status, 401);
  t.equal(
    (await send(w.port, '/plugins/camera/snapshot', { method: 'POST', body: {}, host: 'evil.example', headers: { 'x-api-key': w.apiKey } }))
      .status,
    403,
  );
  t.equal(
    (await send(w.port, '/plugins/camera/snapshot', { method: 'POST', body: {}, headers: { cookie, 'sec-fetch-site': 'cross-site' } }))
      .status,
    403,
  );
  t.equal(calls, 0, 'the plugin was never called');
});

t.test('unknown routes are 404; plugin errors are the envelope; raw bodies are sandboxed; cookies are dropped', async (t) => {
  const w = await startWebui(t);
  const headers = { 'x-api-key': w.apiKey };
  addRoute(w, 'camera', {
    method: 'GET',
    path: '/page',
    handler: () => ({
      headers: { 'content-type': 'text/html', 'set-cookie': 'ha_session=evil', 'content-security-policy': 'default-src *' },
      body: '<script>alert(1)</script>',
    }),
  });
  addRoute(w, 'camera', {
    method: 'GET',
    path: '/broken',
    handler: () => {
      throw new HomeAgentError('HA_ERR_ENTITY_NOT_FOUND', 'no such camera');
    },
  });
  addRoute(w, 'camera', {
    method: 'PUT',
    path: '/raw',
    handler: (request) => ({ body: { type: typeof request.body, bytes: (request.body as Buffer).length } }),
  });

  const unknown = await send(w.port, '/plugins/camera/nothing', { headers });
  t.equal(unknown.status, 404);
  t.match(unknown.body, { ok: false, error: { code: 'HA_ERR_HTTP_NOT_FOUND', message: 'no plugin serves GET /plugins/camera/nothing' } });
  t.equal((await send(w.port, '/plugins/camera/page', { method: 'DELETE', headers })).status, 404, 'another method');

  const page = await send(w.port, '/plugins/camera/page', { headers });
  t.equal(page.status, 200);
  t.equal(page.headers['content-type'], 'text/html');
  t.equal(page.headers['content-security-policy'], "sandbox; default-src 'none'", 'its own CSP is replaced by the sandbox');
  t.notOk(page.headers['set-cookie'], 'a plugin cannot set cookies on the page');

  const broken = await send(w.port, '/plugins/camera/broken', { headers });
  t.equal(broken.status, 404);
  t.same(broken.body, { ok: false, error: { code: 'HA_ERR_ENTITY_NOT_FOUND', message: 'no such camera' } });

  const raw = await send(w.port, '/plugins/camera/raw', {
    method: 'PUT',
    headers: { ...headers, 'content-type': 'application/octet-stream' },
    body: Buffer.from([1, 2, 3]),
  });
  t.same(raw.body, { type: 'object', bytes: 3 }, 'a body that is not JSON arrives as bytes');
});

/**
 * The web server's security hooks and envelope, over real TCP: Host allow-list, authentication by
 * API key and session cookie, the cross-site check, the login limit, fastify's own errors turned
 * into the envelope, the audit of changes, and a restart that keeps logins.
 */
import { readFileSync, statSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { hostname } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { openaiRoutes } from '../../../../plugins/webui/openai-routes.js';
import type { RouteModule } from '../../../../plugins/webui/types.js';
import { HomeAgentError } from '../../../../src/sdk/index.js';
import { captureLogs } from '../../fixtures/support.js';
import { login, type RunningWebui, send, sessionFrom, startWebui } from './webui-setup.js';

/** A route module standing in for the API: reads, a change, and routes that fail on purpose. */
const probe: RouteModule = (app) => {
  app.get('/api/v1/whoami', async (request) => ({ ok: true, result: { actor: request.caller.actor, method: request.authMethod } }));
  app.post('/api/v1/things', async (request) => ({ ok: true, result: { got: request.body } }));
  app.delete('/api/v1/things/:id', async () => ({ ok: true, result: {} }));
  app.get('/api/v1/fail/:code', async (request) => {
    throw new HomeAgentError((request.params as { code: never }).code, 'failed on purpose');
  });
  app.get('/api/v1/crash', async () => {
    throw new Error('secret internal detail');
  });
};

const withApiKey = (w: RunningWebui) => ({ 'x-api-key': w.apiKey });

t.test(
  'the first start makes the credentials, prints them once to the terminal, never to the log, and stores them privately',
  async (t) => {
    const captured = captureLogs();
    const w = await startWebui(t, { routeModules: [probe], logs: captured.logs });
    t.match(w.password, /^[a-z2-9]{5}(-[a-z2-9]{5}){3}$/, 'a 20-character password in groups');
    t.match(w.apiKey, /^ha_[A-Za-z0-9_-]{32}$/, 'a 192-bit API key');
    const printed = w.printed.join('');
    t.match(printed, w.password, 'the password was printed');
    t.match(printed, w.apiKey, 'the API key was printed');
    t.notMatch(captured.text(), w.password, 'the password is in no log line');
    t.notMatch(captured.text(), w.apiKey, 'the API key is in no log line');
    const line = captured.records().find((r) => String(r.msg).startsWith('first start of the web page'));
    t.match(line, {
      level: 'warn',
      msg: /an admin password and an API key were made; `homeagentctl webui credentials` shows them \(kept in .*credentials\.json, readable by the service user only\)/,
      printed_to_terminal: true,
    });
    const file = join(w.dataDir, 'plugin-data', 'webui', 'credentials.json');
    t.equal(statSync(file).mode & 0o777, 0o600, 'credentials.json is private');
    t.match(JSON.parse(readFileSync(file, 'utf8')), { password: w.password, api_key: w.apiKey });

    await w.stop();
    const again = await startWebui(t, { dataDir: w.dataDir, routeModules: [probe] });
    t.equal(again.printed.length, 0, 'nothing printed at the next start');
    t.equal(again.password, w.password, 'same password after a restart');
    t.equal(again.apiKey, w.apiKey, 'same API key after a restart');
  },
);

t.test('when stderr is not a terminal (systemd: it is the journal) the credentials are not printed at all', async (t) => {
  const captured = captureLogs();
  const w = await startWebui(t, { routeModules: [probe], logs: captured.logs, terminal: false });
  t.same(w.printed, [], 'nothing on stderr');
  t.notMatch(captured.text(), w.password);
  t.notMatch(captured.text(), w.apiKey);
  t.match(
    captured.records().find((r) => String(r.msg).startsWith('first start of the web page')),
    { printed_to_terminal: false, msg: /`homeagentctl webui credentials` shows them/ },
    'the log says where they are',
  );
});

t.test('Host must name this machine or an allowed name; the port does not matter', async (t) => {
  const w = await startWebui(t, { routeModules: [probe] });
  const machine = hostname().toLowerCase();
  for (const host of [
    'localhost',
    `localhost:${w.port}`,
    '127.0.0.1:1',
    `[::1]:${w.port}`,
    'app.localhost',
    machine,
    `${machine}.local:80`,
    'LOCALHOST.',
  ]) {
    const reply = await send(w.port, '/api/v1/whoami', { host, headers: withApiKey(w) });
    t.equal(reply.status, 200, `Host ${host}`);
  }
  for (const host of [
    'evil.example',
    'evil.example:8080',
    'localhost.evil.example',
    '127.0.0.2',
    '[::2]',
    'homeagent.lan',
    'local host',
    '',
  ]) {
    const reply = await send(w.port, '/api/v1/whoami', { host, headers: withApiKey(w) });
    t.equal(reply.status, 403, `Host ${JSON.stringify(host)}`);
    t.equal((reply.body.error as { code: string }).code, 'HA_ERR_HTTP_HOST');
  }
  const unauthenticated = await send(w.port, '/api/v1/whoami', { host: 'evil.example' });
  t.equal(unauthenticated.status, 403, 'the Host check comes before authentication');
  const publicRoute = await send(w.port, '/api/v1/auth/session', { host: 'evil.example' });
  t.equal(publicRoute.status, 403, 'public routes are checked too');

  w.test.context.settings.set('allowed_hosts', ['homeagent.lan']);
  t.equal(
    (await send(w.port, '/api/v1/whoami', { host: 'HomeAgent.lan:8080', headers: withApiKey(w) })).status,
    200,
    'an allowed name, at once',
  );
});

t.test('a request without a Host header is refused', async (t) => {
  const w = await startWebui(t, { routeModules: [probe] });
  const socket = connect(w.port, '127.0.0.1');
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  socket.write(`GET /api/v1/whoami HTTP/1.0\r\nX-API-Key: ${w.apiKey}\r\n\r\n`);
  await new Promise<void>((resolve) => socket.once('close', () => resolve()));
  const text = Buffer.concat(chunks).toString('utf8');
  t.match(text, /^HTTP\/1\.[01] 403/);
  t.match(text, /HA_ERR_HTTP_HOST.*no Host header/);
});

t.test('API access by X-API-Key or Bearer; a wrong key or none is 401 in the envelope', async (t) => {
  const w = await startWebui(t, { routeModules: [probe] });
  const ok = await send(w.port, '/api/v1/whoami', { headers: { 'x-api-key': w.apiKey } });
  t.equal(ok.status, 200);
  t.same(ok.body.result, { actor: 'webui:api', method: 'api_key' });
  t.equal((await send(w.port, '/api/v1/whoami', { headers: { authorization: `Bearer ${w.apiKey}` } })).status, 200, 'Bearer');

  for (const [label, headers] of [
    ['none', {}],
    ['wrong key', { 'x-api-key': `${w.apiKey}x` }],
    ['key prefix', { 'x-api-key': w.apiKey.slice(0, 10) }],
    ['wrong bearer', { authorization: 'Bearer nope' }],
    ['basic auth', { authorization: `Basic ${Buffer.from(`admin:${w.password}`).toString('base64')}` }],
    ['the password as key', { 'x-api-key': w.password }],
  ] as const) {
    const reply = await send(w.port, '/api/v1/whoami', { headers });
    t.equal(reply.status, 401, label);
    t.match(reply.body, { ok: false, error: { code: 'HA_ERR_HTTP_AUTH', message: String } }, `${label}: envelope`);
    t.equal(reply.headers['www-authenticate'], 'Bearer realm="homeagent"');
  }
  t.equal((await send(w.port, `/api/v1/whoami?token=${w.apiKey}`)).status, 401, 'never in the URL');
  t.equal((await send(w.port, '/api/v1/nothing-here')).status, 401, 'unknown routes need authentication too (no route probing)');
  const cookie = await login(w);
  const both = await send(w.port, '/api/v1/whoami', { headers: { cookie, 'x-api-key': 'wrong' } });
  t.equal(both.status, 401, 'a wrong key is refused even with a valid cookie');
});

t.test('logging in sets a strict session cookie; logging out ends the session', async (t) => {
  const w = await startWebui(t, { routeModules: [probe], settings: { session_ttl_ms: 3_600_000 } });
  const before = await send(w.port, '/api/v1/auth/session');
  t.same(before.body, { ok: true, result: { authenticated: false, method: null, expires_at: null } }, 'public, and says nobody');

  const reply = await send(w.port, '/api/v1/auth/login', {
    method: 'POST',
    body: { password: w.password },
    headers: { origin: `http://127.0.0.1:${w.port}` },
  });
  t.equal(reply.status, 200);
  const setCookie = [reply.headers['set-cookie'] ?? []].flat();
  t.equal(setCookie.length, 1);
  t.match(setCookie[0], /^ha_session=[A-Za-z0-9_-]{43}; HttpOnly; SameSite=Strict; Path=\/; Max-Age=3600$/);
  t.match(reply.body, { ok: true, result: { authenticated: true, method: 'session', expires_at: String } });
  const cookie = `theme=dark; ha_session=${sessionFrom(reply)}`;

  const who = await send(w.port, '/api/v1/whoami', { headers: { cookie } });
  t.same(who.body.result, { actor: 'webui:admin', method: 'session' });
  const session = await send(w.port, '/api/v1/auth/session', { headers: { cookie } });
  t.match(session.body.result, { authenticated: true, method: 'session' });
  const withKey = await send(w.port, '/api/v1/auth/session', { headers: withApiKey(w) });
  t.same(withKey.body.result, { authenticated: true, method: 'api_key', expires_at: null });

  const stored = readFileSync(join(w.dataDir, 'plugin-data', 'webui', 'sessions.json'), 'utf8');
  t.notMatch(stored, sessionFrom(reply), 'the session id itself is not stored');

  const out = await send(w.port, '/api/v1/auth/logout', { method: 'POST', headers: { cookie, 'sec-fetch-site': 'same-origin' } });
  t.equal(out.status, 200);
  t.match([out.headers['set-cookie'] ?? []].flat()[0], /^ha_session=; .*Max-Age=0/);
  t.equal((await send(w.port, '/api/v1/whoami', { headers: { cookie } })).status, 401, 'the cookie no longer works');
});

t.test('a wrong or missing password is 401; the body is checked', async (t) => {
  const w = await startWebui(t, { routeModules: [probe] });
  const wrong = await send(w.port, '/api/v1/auth/login', { method: 'POST', body: { password: `${w.password}x` } });
  t.equal(wrong.status, 401);
  t.match(wrong.body, { ok: false, error: { code: 'HA_ERR_HTTP_AUTH', message: /wrong password/ } });
  t.notOk(wrong.headers['set-cookie'], 'no cookie');
  for (const body of [{}, { password: 42 }, { password: '' }, { password: 'x'.repeat(1025) }]) {
    const reply = await send(w.port, '/api/v1/auth/login', { method: 'POST', body });
    t.equal(reply.status, 400, JSON.stringify(body).slice(0, 40));
    t.equal((reply.body.error as { code: string }).code, 'HA_ERR_RPC_INVALID_PARAMS');
  }
});

t.test('state-changing requests with the cookie must come from the page itself', async (t) => {
  const w = await startWebui(t, { routeModules: [probe] });
  const cookie = await login(w);
  const origin = `http://127.0.0.1:${w.port}`;
  const post = (headers: Record<string, string>) =>
    send(w.port, '/api/v1/things', { method: 'POST', body: { a: 1 }, headers: { cookie, ...headers } });

  for (const [label, headers] of [
    ['Sec-Fetch-Site cross-site', { 'sec-fetch-site': 'cross-site' }],
    ['Sec-Fetch-Site same-site', { 'sec-fetch-site': 'same-site' }],
    ['cross-site even with a matching Origin', { 'sec-fetch-site': 'cross-site', origin }],
    ['another Origin', { origin: 'http://evil.example' }],
    ['Origin on another port', { origin: 'http://127.0.0.1:1' }],
    ['Origin null', { origin: 'null' }],
    ['neither header', {}],
  ] as const) {
    const reply = await post(headers);
    t.equal(reply.status, 403, label);
    t.equal((reply.body.error as { code: string }).code, 'HA_ERR_HTTP_CROSS_SITE', label);
  }
  t.equal((await post({ 'sec-fetch-site': 'same-origin' })).status, 200, 'Sec-Fetch-Site same-origin');
  t.equal((await post({ 'sec-fetch-site': 'none' })).status, 200, 'Sec-Fetch-Site none');
  t.equal((await post({ origin })).status, 200, 'Origin equal to the Host');
  const del = await send(w.port, '/api/v1/things/1', { method: 'DELETE', headers: { cookie, origin: 'http://evil.example' } });
  t.equal(del.status, 403, 'DELETE too');
  t.equal(
    (await send(w.port, '/api/v1/whoami', { headers: { cookie, 'sec-fetch-site': 'cross-site' } })).status,
    200,
    'reads are not checked',
  );

  const program = await send(w.port, '/api/v1/things', {
    method: 'POST',
    body: {},
    headers: { ...withApiKey(w), origin: 'http://evil.example' },
  });
  t.equal(program.status, 200, 'API-key requests carry no ambient credentials and are not checked');
  const crossLogin = await send(w.port, '/api/v1/auth/login', {
    method: 'POST',
    body: { password: w.password },
    headers: { 'sec-fetch-site': 'cross-site' },
  });
  t.equal(crossLogin.status, 403, 'another site cannot log the browser in');
});

t.test('failed logins per address: a growing wait, not a lock-out; Retry-After says when; the right password then works', async (t) => {
  let now = 1_000_000;
  const w = await startWebui(t, {
    routeModules: [probe],
    now: () => now,
    settings: { login_max_failures: 3, login_delay_ms: 2000, login_max_delay_ms: 8000, login_window_ms: 60_000 },
  });
  const attempt = (password: string) => send(w.port, '/api/v1/auth/login', { method: 'POST', body: { password } });
  for (let i = 0; i < 3; i++) {
    t.equal((await attempt('guess')).status, 401, `failure ${i + 1} costs no wait`);
    now += 100;
  }
  const refused = await attempt(w.password);
  t.equal(refused.status, 429, 'then each attempt waits; during the wait even the right password is not checked');
  t.match(refused.body, { ok: false, error: { code: 'HA_ERR_HTTP_LOGIN_LIMIT', message: /too many failed logins .*try again in 2 s/ } });
  t.equal(refused.headers['retry-after'], '2');
  t.notOk(refused.headers['set-cookie']);

  // A guesser who waits each time gets one try per (doubling, capped) wait.
  const waits = [String(refused.headers['retry-after'])];
  for (let i = 0; i < 4; i++) {
    now += Number(waits[waits.length - 1]) * 1000;
    t.equal((await attempt('guess')).status, 401, 'after the wait the attempt is checked');
    const next = await attempt('guess');
    t.equal(next.status, 429);
    waits.push(String(next.headers['retry-after']));
  }
  t.same(waits, ['2', '4', '8', '8', '8'], 'the wait doubles up to login_max_delay_ms');

  now += 8000;
  const ok = await attempt(w.password);
  t.equal(ok.status, 200, 'the owner is never locked out: the right password after the wait logs in');
  t.equal((await attempt('guess')).status, 401, 'a success cleared the count');
  t.equal((await attempt('guess')).status, 401);
  t.equal((await attempt('guess')).status, 401);
  t.equal((await attempt('guess')).status, 429);
});

t.test('wrong API keys are limited per address like logins, on /api and /v1, counted apart from logins', async (t) => {
  let now = 1_000_000;
  const w = await startWebui(t, {
    routeModules: [probe, openaiRoutes],
    now: () => now,
    settings: { login_max_failures: 2, login_delay_ms: 5000, login_max_delay_ms: 20_000 },
  });
  const whoami = (key: string, header = 'x-api-key') =>
    send(w.port, '/api/v1/whoami', { headers: { [header]: header === 'authorization' ? `Bearer ${key}` : key } });
  t.equal((await whoami('ha_wrong')).status, 401);
  t.equal((await whoami('ha_wrong', 'authorization')).status, 401, 'Authorization: Bearer counts the same');
  const limited = await whoami(w.apiKey);
  t.equal(limited.status, 429, 'during the wait no key is checked, the right one neither');
  t.match(limited.body, {
    error: { code: 'HA_ERR_HTTP_LOGIN_LIMIT', message: /too many requests with a wrong API key .*try again in 5 s/ },
  });
  t.equal(limited.headers['retry-after'], '5');
  const openai = await send(w.port, '/v1/models', { headers: { authorization: 'Bearer ha_wrong' } });
  t.equal(openai.status, 429, 'the OpenAI-compatible endpoint too');
  t.equal(openai.headers['retry-after'], '5');
  t.match(openai.body, { error: { code: 'HA_ERR_HTTP_LOGIN_LIMIT', type: /rate/ } }, 'in the OpenAI error shape');
  const publicRoute = await send(w.port, '/api/v1/auth/session', { headers: { 'x-api-key': w.apiKey } });
  t.equal(publicRoute.status, 429, 'a public route does not answer whether a key is right either');

  const login = await send(w.port, '/api/v1/auth/login', { method: 'POST', body: { password: w.password } });
  t.equal(login.status, 200, 'a program with a stale key does not slow the login of the page');
  const cookie = `ha_session=${sessionFrom(login)}`;
  t.equal((await send(w.port, '/api/v1/whoami', { headers: { cookie } })).status, 200, 'nor requests with the session cookie');

  now += 5000;
  const right = await whoami(w.apiKey);
  t.equal(right.status, 200, 'the right key after the wait works');
  t.equal((await send(w.port, '/v1/models', { headers: { authorization: `Bearer ${w.apiKey}` } })).status, 200);
  t.match(right.body, { result: { method: 'api_key' } });
  t.equal((await whoami('ha_wrong')).status, 401, 'and cleared the count');
  t.equal((await whoami('ha_wrong')).status, 401);
  t.equal((await whoami('ha_wrong')).status, 429);
});

t.test("fastify's own errors and the routes' errors come in the envelope with the code's status", async (t) => {
  const w = await startWebui(t, { routeModules: [probe], settings: { body_limit_bytes: 1024 } });
  const headers = withApiKey(w);
  const big = await send(w.port, '/api/v1/things', { method: 'POST', headers, body: { text: 'x'.repeat(2000) } });
  t.equal(big.status, 413);
  t.match(big.body, { ok: false, error: { code: 'HA_ERR_HTTP_BODY_TOO_LARGE', message: /1024 bytes/ } });
  const badJson = await send(w.port, '/api/v1/things', { method: 'POST', headers, body: '{"a":' });
  t.equal(badJson.status, 400);
  t.match(badJson.body, { ok: false, error: { code: 'HA_ERR_HTTP_BAD_REQUEST', message: /not valid JSON/ } });
  const xml = await send(w.port, '/api/v1/things', {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/xml' },
    body: '<a/>',
  });
  t.equal(xml.status, 415);
  t.match(xml.body, { ok: false, error: { code: 'HA_ERR_HTTP_MEDIA_TYPE' } });
  const missing = await send(w.port, '/api/v1/nothing-here', { headers });
  t.equal(missing.status, 404);
  t.match(missing.body, { ok: false, error: { code: 'HA_ERR_HTTP_NOT_FOUND', message: 'no route GET /api/v1/nothing-here' } });

  for (const [code, status] of [
    ['HA_ERR_RPC_INVALID_PARAMS', 400],
    ['HA_ERR_PLUGIN_PERMISSION', 403],
    ['HA_ERR_ENTITY_NOT_FOUND', 404],
    ['HA_ERR_KNOWLEDGE_EXISTS', 409],
    ['HA_ERR_UNAVAILABLE', 503],
    ['HA_ERR_INTERNAL', 500],
  ] as const) {
    const reply = await send(w.port, `/api/v1/fail/${code}`, { headers });
    t.equal(reply.status, status, code);
    t.same(reply.body, { ok: false, error: { code, message: 'failed on purpose' } });
  }
  const crash = await send(w.port, '/api/v1/crash', { headers });
  t.equal(crash.status, 500);
  t.same(crash.body, { ok: false, error: { code: 'HA_ERR_INTERNAL', message: 'the request failed; the HomeAgent log has the details' } });
  t.notMatch(crash.text, 'secret internal detail', 'an unexpected error does not leak its message');
  t.equal(crash.headers['cache-control'], 'no-store');
  t.equal(crash.headers['x-content-type-options'], 'nosniff');
});

t.test('every successful change is audited once with its actor; reads and failures are not', async (t) => {
  const w = await startWebui(t, { routeModules: [probe] });
  const cookie = await login(w);
  w.test.audits.length = 0;
  await send(w.port, '/api/v1/things', { method: 'POST', body: { password: 'not logged' }, headers: withApiKey(w) });
  await send(w.port, '/api/v1/things/7?token=abc', { method: 'DELETE', headers: { cookie, 'sec-fetch-site': 'same-origin' } });
  await send(w.port, '/api/v1/whoami', { headers: withApiKey(w) });
  await send(w.port, '/api/v1/things', { method: 'POST', body: {}, headers: { cookie } });
  await send(w.port, '/api/v1/things', { method: 'POST', body: {}, headers: { 'x-api-key': 'wrong' } });
  t.same(w.test.audits, [
    {
      action: 'http.request',
      details: { on_behalf_of: 'webui:api', method: 'POST', route: '/api/v1/things', path: '/api/v1/things', status: 200 },
    },
    {
      action: 'http.request',
      details: { on_behalf_of: 'webui:admin', method: 'DELETE', route: '/api/v1/things/:id', path: '/api/v1/things/7', status: 200 },
    },
  ]);
  t.notMatch(JSON.stringify(w.test.audits), /not logged|abc/, 'no bodies, no query strings');
});

t.test('logins survive a restart; only digests are stored; expired sessions end', async (t) => {
  let now = 5_000_000;
  const w = await startWebui(t, { routeModules: [probe], now: () => now, settings: { session_ttl_ms: 60_000 } });
  const cookie = await login(w);
  await w.stop();
  const again = await startWebui(t, { dataDir: w.dataDir, routeModules: [probe], now: () => now, settings: { session_ttl_ms: 60_000 } });
  t.equal((await send(again.port, '/api/v1/whoami', { headers: { cookie } })).status, 200, 'still logged in after the restart');
  now += 60_000;
  t.equal((await send(again.port, '/api/v1/whoami', { headers: { cookie } })).status, 401, 'ended after session_ttl_ms');
});

t.test('stop closes the server and every open connection', async (t) => {
  const w = await startWebui(t, { routeModules: [probe] });
  const idle = connect(w.port, '127.0.0.1');
  await new Promise<void>((resolve) => idle.once('connect', () => resolve()));
  const closed = new Promise<void>((resolve) => idle.once('close', () => resolve()));
  idle.on('error', () => {});
  await w.stop();
  await closed;
  t.equal(w.plugin.address(), undefined);
  t.same(w.plugin.health(), { ok: false, detail: 'not listening', detail_zh: '没有在监听' });
});

/** A connected socket whose close the test can await. */
async function openSocket(port: number): Promise<{ socket: Socket; closed: Promise<void>; received: () => string }> {
  const socket = connect(port, '127.0.0.1');
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  socket.on('error', () => {});
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  return { socket, closed, received: () => Buffer.concat(chunks).toString('utf8') };
}

t.test('timeouts: headers not complete in time, and an idle keep-alive connection, are closed', async (t) => {
  const w = await startWebui(t, {
    routeModules: [probe],
    settings: { header_timeout_ms: 200, request_timeout_ms: 1000, idle_timeout_ms: 200 },
  });
  const slow = await openSocket(w.port);
  slow.socket.write('GET /api/v1/whoami HTTP/1.1\r\nHost: localhost\r\n');
  await slow.closed;
  t.match(slow.received(), /^HTTP\/1\.1 408 [\s\S]*HA_ERR_HTTP_TIMEOUT/, 'half a request: 408 and closed');

  const idle = await openSocket(w.port);
  idle.socket.write(`GET /api/v1/whoami HTTP/1.1\r\nHost: localhost\r\nX-API-Key: ${w.apiKey}\r\n\r\n`);
  await idle.closed;
  t.match(idle.received(), /^HTTP\/1\.1 200 [\s\S]*"actor":"webui:api"/, 'answered on a keep-alive connection, then closed when idle');
});

t.test('max_connections: connections beyond it are refused', async (t) => {
  const w = await startWebui(t, { routeModules: [probe], settings: { max_connections: 2 } });
  const held = [await openSocket(w.port), await openSocket(w.port)];
  t.teardown(() => {
    for (const h of held) h.socket.destroy();
  });
  const extra = await openSocket(w.port);
  await extra.closed;
  t.equal(extra.received(), '', 'dropped without an answer');
  for (const h of held) h.socket.destroy();
  await Promise.all(held.map((h) => h.closed));
  const reply = await send(w.port, '/api/v1/whoami', { headers: withApiKey(w) });
  t.equal(reply.status, 200, 'served again once the others left');
});

t.test('HEAD of a public route needs no login; HEAD of the API does', async (t) => {
  const w = await startWebui(t, { routeModules: [probe] });
  t.equal((await send(w.port, '/api/v1/auth/session', { method: 'HEAD' })).status, 200);
  t.equal((await send(w.port, '/api/v1/whoami', { method: 'HEAD' })).status, 401);
});

/**
 * The web server's security on the real daemon (built dist/, the webui plugin loaded by the plugin
 * host), over real TCP: DNS-rebinding Host check, API key and session login, the cross-site check,
 * the login limit, the body limit, the session cookie's attributes, and slow clients (a slowloris
 * socket is cut off at header_timeout_ms; a crowd of slow sockets does not keep a real request
 * from being answered). The URL and secrets come from `webui.credentials` on the CLI socket, as
 * homeagentctl gets them.
 */
import { request as httpRequest } from 'node:http';
import { connect, createServer, type Socket } from 'node:net';
import t, { type Test } from 'tap';
import type { EnvOverrides } from '../helpers/daemon.js';
import { type InProcessDaemonHandle as DaemonHandle, startDaemon as startInProcess } from '../helpers/in-process-daemon.js';
import { RpcConnection } from '../helpers/rpc.js';

interface Credentials {
  url: string;
  password: string;
  api_key: string;
}

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: { ok?: boolean; result?: Record<string, unknown>; error?: { code: string; message: string } };
}

interface Web {
  daemon: DaemonHandle;
  port: number;
  secrets: Credentials;
}

async function startDaemon(t: Test, env: EnvOverrides = {}): Promise<Web> {
  const daemon = await startInProcess(t, { env });
  await daemon.waitForReady(30_000);
  const rpc = await RpcConnection.connect(daemon.socketPath);
  t.teardown(() => rpc.close());
  const answer = await rpc.request('webui.credentials', {});
  if (!answer.ok) throw new Error(`webui.credentials failed: ${JSON.stringify(answer.error)}`);
  const secrets = answer.result as Credentials;
  return { daemon, port: Number(new URL(secrets.url).port), secrets };
}

function send(
  port: number,
  path: string,
  options: { method?: string; headers?: Record<string, string>; body?: string; host?: string } = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { host: options.host ?? `127.0.0.1:${port}`, ...options.headers };
    if (options.body !== undefined) {
      headers['content-type'] ??= 'application/json';
      headers['content-length'] = String(Buffer.byteLength(options.body));
    }
    const req = httpRequest(
      { host: '127.0.0.1', port, path, method: options.method ?? 'GET', headers, agent: false, setHost: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: text.startsWith('{') ? (JSON.parse(text) as Reply['body']) : {},
          });
        });
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const login = (web: Web, password: string, headers: Record<string, string> = {}) =>
  send(web.port, '/api/v1/auth/login', {
    method: 'POST',
    body: JSON.stringify({ password }),
    headers: { 'sec-fetch-site': 'same-origin', ...headers },
  });

t.test('the real daemon: Host, API key, login, cookie, cross-site, login limit and body limit', async (t) => {
  // A fixed port, as in production: a hot reload keeps it (port 0 would pick a new one).
  const fixedPort = await freePort();
  const web = await startDaemon(t, {
    HOMEAGENT_PLUGIN_WEBUI_PORT: String(fixedPort),
    HOMEAGENT_PLUGIN_WEBUI_BODY_LIMIT_BYTES: '4096',
    HOMEAGENT_PLUGIN_WEBUI_LOGIN_MAX_FAILURES: '3',
  });
  const { port, secrets } = web;
  t.equal(secrets.url, `http://127.0.0.1:${fixedPort}/`, 'listens on loopback by default');

  t.test('wrong Host → 403, whatever the credentials', async (t) => {
    for (const host of ['evil.example', `evil.example:${port}`, 'rebind.attacker.test']) {
      const reply = await send(port, '/api/v1/status', { host, headers: { 'x-api-key': secrets.api_key } });
      t.equal(reply.status, 403, host);
      t.equal(reply.body.error?.code, 'HA_ERR_HTTP_HOST');
    }
    t.equal((await send(port, '/', { host: 'evil.example' })).status, 403, 'the page too');
  });

  t.test('API key by X-API-Key or Bearer; a wrong one or none → 401', async (t) => {
    const byHeader = await send(port, '/api/v1/status', { headers: { 'x-api-key': secrets.api_key } });
    t.equal(byHeader.status, 200);
    t.equal(byHeader.body.ok, true);
    t.equal((await send(port, '/api/v1/status', { headers: { authorization: `Bearer ${secrets.api_key}` } })).status, 200);
    for (const headers of [{}, { 'x-api-key': 'ha_wrong' }, { authorization: 'Bearer ha_wrong' }]) {
      const reply = await send(port, '/api/v1/status', { headers });
      t.equal(reply.status, 401, JSON.stringify(headers));
      t.match(reply.body, { ok: false, error: { code: 'HA_ERR_HTTP_AUTH', message: String } });
    }
  });

  t.test('login sets ha_session HttpOnly; SameSite=Strict; Path=/; Max-Age = session_ttl_ms', async (t) => {
    const reply = await login(web, secrets.password);
    t.equal(reply.status, 200);
    const cookies = [reply.headers['set-cookie'] ?? []].flat();
    t.equal(cookies.length, 1);
    t.match(cookies[0], /^ha_session=[A-Za-z0-9_-]{43}; HttpOnly; SameSite=Strict; Path=\/; Max-Age=86400$/);
    const cookie = String(cookies[0]).split(';')[0] ?? '';
    t.match((await send(port, '/api/v1/status', { headers: { cookie } })).body, { ok: true }, 'the cookie authenticates');

    const cross = await send(port, '/api/v1/auth/logout', { method: 'POST', headers: { cookie, 'sec-fetch-site': 'cross-site' } });
    t.equal(cross.status, 403, 'a cross-site POST with the cookie is refused');
    t.equal(cross.body.error?.code, 'HA_ERR_HTTP_CROSS_SITE');
    const foreign = await send(port, '/api/v1/auth/logout', { method: 'POST', headers: { cookie, origin: 'http://evil.example' } });
    t.equal(foreign.status, 403, 'another Origin is refused');
    t.match(
      (await send(port, '/api/v1/auth/session', { headers: { cookie } })).body,
      { result: { authenticated: true } },
      'still logged in',
    );

    const out = await send(port, '/api/v1/auth/logout', { method: 'POST', headers: { cookie, origin: `http://127.0.0.1:${port}` } });
    t.equal(out.status, 200, 'the page itself may');
    t.equal((await send(port, '/api/v1/status', { headers: { cookie } })).status, 401, 'logged out');
  });

  t.test('oversize body → 413 in the envelope', async (t) => {
    const reply = await send(port, '/api/v1/auth/login', { method: 'POST', body: JSON.stringify({ password: 'x'.repeat(5000) }) });
    t.equal(reply.status, 413);
    t.match(reply.body, { ok: false, error: { code: 'HA_ERR_HTTP_BODY_TOO_LARGE', message: /4096 bytes/ } });
  });

  t.test('failed logins → 429 with Retry-After, even for the right password', async (t) => {
    for (let i = 0; i < 3; i++) t.equal((await login(web, `guess-${i}`)).status, 401, `failure ${i + 1}`);
    const refused = await login(web, secrets.password);
    t.equal(refused.status, 429);
    t.match(refused.body, { ok: false, error: { code: 'HA_ERR_HTTP_LOGIN_LIMIT' } });
    t.ok(Number(refused.headers['retry-after']) > 0, 'Retry-After in seconds');
  });

  t.test('homeagentctl webui credentials shows the same secrets; --reset api_key retires the old key at once', async (t) => {
    const shown = await web.daemon.ctl(['webui', 'credentials', '--json']);
    t.equal(shown.code, 0, shown.stderr);
    t.match(shown.json(), { url: secrets.url, password: secrets.password, api_key: secrets.api_key });
    const reset = await web.daemon.ctl(['webui', 'credentials', '--reset', 'api_key', '--json']);
    t.equal(reset.code, 0, reset.stderr);
    const fresh = reset.json() as Credentials;
    t.not(fresh.api_key, secrets.api_key);
    // The new key first: it clears this address's count of wrong keys (two so far), which the old
    // key would otherwise bring to login_max_failures, and the next request would have to wait.
    t.equal((await send(port, '/api/v1/status', { headers: { 'x-api-key': fresh.api_key } })).status, 200, 'the new key');
    t.equal((await send(port, '/api/v1/status', { headers: { 'x-api-key': secrets.api_key } })).status, 401, 'the old key');
  });

  t.test('homeagentctl plugins reload webui: the same address keeps answering', async (t) => {
    const shown = (await web.daemon.ctl(['webui', 'credentials', '--json'])).json() as Credentials;
    const reload = await web.daemon.ctl(['plugins', 'reload', 'webui']);
    t.equal(reload.code, 0, `${reload.stdout}${reload.stderr}`);
    const reply = await send(port, '/api/v1/status', { headers: { 'x-api-key': shown.api_key } });
    t.equal(reply.status, 200, 'served by the reloaded instance on the same socket');
    t.ok(
      await web.daemon.sawLog((line) => line.msg?.startsWith('took over the web server socket') === true),
      'the new instance took the socket over',
    );
    t.match((await web.daemon.ctl(['webui', 'credentials', '--json'])).json(), { url: secrets.url, api_key: shown.api_key });
  });

  t.test('successful changes are audited with their actor', async (t) => {
    const audits = web.daemon.logs.filter((line) => line.json?.audit === true || line.json?.action === 'http.request');
    t.ok(
      audits.some((line) => line.json?.action === 'http.request' && line.json?.on_behalf_of === 'webui:admin'),
      'the login and logout are in the audit log',
    );
    t.notOk(
      web.daemon.logs.some((line) => line.text.includes('guess-0')),
      'no request body in the log',
    );
  });

  // Last: it leaves this address waiting.
  t.test('wrong API keys → 429 with Retry-After once there are too many, even for the right key', async (t) => {
    const key = ((await web.daemon.ctl(['webui', 'credentials', '--json'])).json() as Credentials).api_key;
    t.equal((await send(port, '/api/v1/status', { headers: { 'x-api-key': key } })).status, 200, 'the right key clears the count');
    for (let i = 0; i < 3; i++) {
      t.equal((await send(port, '/v1/models', { headers: { authorization: `Bearer ha_wrong-${i}` } })).status, 401, `wrong key ${i + 1}`);
    }
    const limited = await send(port, '/api/v1/status', { headers: { 'x-api-key': key } });
    t.equal(limited.status, 429);
    t.match(limited.body, { ok: false, error: { code: 'HA_ERR_HTTP_LOGIN_LIMIT', message: /wrong API key/ } });
    t.ok(Number(limited.headers['retry-after']) > 0, 'Retry-After in seconds');
    t.ok(
      await web.daemon.sawLog((line) => line.msg === 'request with a wrong API key' && line.json?.address === '127.0.0.1'),
      'each wrong key is logged with its address (never the key)',
    );
    t.notOk(
      web.daemon.logs.some((line) => line.text.includes('ha_wrong-0')),
      'the wrong key itself is not in the log',
    );
  });
});

/** Opens a socket that sends the start of a request one byte at a time, every `everyMs`. */
function trickle(port: number, everyMs: number): { socket: Socket; firstByte: Promise<void>; stop: () => void } {
  const head = 'GET /api/v1/status HTTP/1.1\r\nHost: localhost\r\nX-Slow: ';
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => {});
  let timer: NodeJS.Timeout | undefined;
  const firstByte = new Promise<void>((resolve) => {
    socket.once('connect', () => {
      let sent = 0;
      const next = () => {
        if (socket.destroyed) return;
        socket.write(head[sent % head.length] ?? 'x', () => resolve());
        sent++;
      };
      next();
      timer = setInterval(next, everyMs);
    });
  });
  socket.once('close', () => clearInterval(timer));
  return { socket, firstByte, stop: () => clearInterval(timer) };
}

t.test('a slowloris socket is closed once header_timeout_ms has passed', async (t) => {
  const web = await startDaemon(t, { HOMEAGENT_PLUGIN_WEBUI_HEADER_TIMEOUT_MS: '300', HOMEAGENT_PLUGIN_WEBUI_REQUEST_TIMEOUT_MS: '2000' });
  const received: Buffer[] = [];
  const slow = trickle(web.port, 20);
  t.teardown(() => {
    slow.stop();
    slow.socket.destroy();
  });
  slow.socket.on('data', (chunk: Buffer) => received.push(chunk));
  await slow.firstByte;
  const started = performance.now();
  await new Promise<void>((resolve) => slow.socket.once('close', () => resolve()));
  const elapsed = performance.now() - started;
  t.ok(elapsed >= 250, `not cut off before the deadline (${elapsed.toFixed(0)} ms)`);
  // The default header deadline is 10 s: closing within a few seconds shows the setting is what applied.
  t.ok(elapsed < 5000, `closed ${elapsed.toFixed(0)} ms after its first byte (header_timeout_ms 300, deadlines checked every 300 ms)`);
  const text = Buffer.concat(received).toString('utf8');
  t.match(
    text,
    /^(HTTP\/1\.1 408 Request Timeout\r\n[\s\S]*\{"ok":false,"error":\{"code":"HA_ERR_HTTP_TIMEOUT"[\s\S]*)?$/,
    'a 408 in the envelope, or nothing',
  );
});

t.test('a request is answered while 100 slow sockets are open', async (t) => {
  const web = await startDaemon(t);
  const slow = Array.from({ length: 100 }, () => trickle(web.port, 200));
  t.teardown(() => {
    for (const s of slow) {
      s.stop();
      s.socket.destroy();
    }
  });
  await Promise.all(slow.map((s) => s.firstByte));
  const reply = await send(web.port, '/api/v1/status', { headers: { 'x-api-key': web.secrets.api_key } });
  t.equal(reply.status, 200);
  t.equal(reply.body.ok, true);
  t.equal(slow.filter((s) => s.socket.destroyed).length, 0, 'the slow sockets were all still open (within their header deadline)');
});

/** The status of every error code, and the envelope for requests the HTTP parser refuses. */
import { connect } from 'node:net';
import t from 'tap';
import { statusForCode } from '../../../../plugins/webui/http-errors.js';
import { ERROR_CODES } from '../../../../src/sdk/index.js';
import { startWebui } from './webui-setup.js';

t.test('statuses follow docs/webui-api.md', (t) => {
  const expected: Record<string, number> = {
    HA_ERR_RPC_INVALID_PARAMS: 400,
    HA_ERR_SETTINGS_INVALID_VALUE: 400,
    HA_ERR_KNOWLEDGE_NAME: 400,
    HA_ERR_HTTP_BAD_REQUEST: 400,
    HA_ERR_HTTP_AUTH: 401,
    HA_ERR_HTTP_HOST: 403,
    HA_ERR_HTTP_CROSS_SITE: 403,
    HA_ERR_PLUGIN_PERMISSION: 403,
    HA_ERR_HTTP_NOT_FOUND: 404,
    HA_ERR_SETTINGS_UNKNOWN_KEY: 404,
    HA_ERR_ENTITY_NOT_FOUND: 404,
    HA_ERR_PLUGIN_NOT_FOUND: 404,
    HA_ERR_KNOWLEDGE_EXISTS: 409,
    HA_ERR_INPUT_DUPLICATE: 409,
    HA_ERR_AGENT_TIMEOUT: 504,
    HA_ERR_MEMORY_NOT_FOUND: 404,
    HA_ERR_HTTP_BODY_TOO_LARGE: 413,
    HA_ERR_HTTP_MEDIA_TYPE: 415,
    HA_ERR_HTTP_LOGIN_LIMIT: 429,
    HA_ERR_UNAVAILABLE: 503,
    HA_ERR_KNOWLEDGE_UNAVAILABLE: 503,
    HA_ERR_RPC_UNKNOWN_METHOD: 503,
    HA_ERR_LLM_TIMEOUT: 504,
    HA_ERR_INTERNAL: 500,
    HA_ERR_STORE_OPEN: 500,
  };
  for (const [code, status] of Object.entries(expected)) t.equal(statusForCode(code), status, code);
  t.equal(statusForCode('HA_ERR_MEMORY_NOT_FOUND'), 404, 'a code added later: by its name');
  t.equal(statusForCode('HA_ERR_WHATEVER'), 500);
  for (const code of Object.keys(ERROR_CODES)) {
    const status = statusForCode(code);
    t.ok(status >= 400 && status <= 504, `${code} → ${status}`);
  }
  t.end();
});

/** Raw bytes in, the raw answer out (the connection is closed by the server). */
async function raw(port: number, text: string): Promise<string> {
  const socket = connect(port, '127.0.0.1');
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  socket.on('error', () => {});
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  socket.write(text);
  await new Promise<void>((resolve) => socket.once('close', () => resolve()));
  return Buffer.concat(chunks).toString('utf8');
}

t.test('a request the HTTP parser refuses gets the envelope too', async (t) => {
  const w = await startWebui(t);
  const garbage = await raw(w.port, 'NOT HTTP AT ALL\r\n\r\n');
  t.match(garbage, /^HTTP\/1\.1 400 Bad Request\r\n/);
  t.match(garbage, /\{"ok":false,"error":\{"code":"HA_ERR_HTTP_BAD_REQUEST","message":"the HTTP request is malformed"\}\}$/);
  const huge = await raw(w.port, `GET / HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'x'.repeat(20_000)}\r\n\r\n`);
  t.match(huge, /^HTTP\/1\.1 431 /);
  t.match(huge, /HA_ERR_HTTP_BAD_REQUEST.*headers are too large/);
  const badUrl = await raw(w.port, `GET /api/v1/%zz HTTP/1.1\r\nHost: localhost\r\nX-API-Key: ${w.apiKey}\r\nConnection: close\r\n\r\n`);
  t.match(badUrl, /^HTTP\/1\.1 400 /);
  t.match(badUrl, /x-content-type-options: nosniff/);
  t.match(badUrl, /"code":"HA_ERR_HTTP_BAD_REQUEST","message":"the request was refused: '\/api\/v1\/%zz' is not a valid url component"/);
});

/**
 * The built page: served from memory, gzipped when the browser takes it, hashed assets cached for
 * good and index.html revalidated, the security headers on every answer, public (no login needed),
 * and a clear 503 while the page is not built.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import t from 'tap';
import { acceptsGzip, PAGE_CSP, StaticPage } from '../../../../plugins/webui/static-page.js';
import { tempDir } from '../../fixtures/support.js';
import { send, startWebui } from './webui-setup.js';

const INDEX = `<!doctype html><html><head><script type="module" src="/assets/index-AbC123.js"></script></head><body>${'<div></div>'.repeat(50)}</body></html>`;
const SCRIPT = `console.log(${JSON.stringify('homeagent '.repeat(200))});`;

function build(t: Parameters<typeof tempDir>[0]): string {
  const dir = join(tempDir(t), 'page');
  mkdirSync(join(dir, 'assets'), { recursive: true });
  writeFileSync(join(dir, 'index.html'), INDEX);
  writeFileSync(join(dir, 'assets', 'index-AbC123.js'), SCRIPT);
  writeFileSync(join(dir, 'assets', 'logo-9f8e.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]));
  writeFileSync(join(dir, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"></svg>');
  return dir;
}

t.test('index.html and assets: public, gzipped on request, cached right, with the security headers', async (t) => {
  const w = await startWebui(t, { pageDir: build(t) });
  const page = await send(w.port, '/', { headers: { 'accept-encoding': 'gzip, deflate, br' } });
  t.equal(page.status, 200, 'no login needed');
  t.equal(page.headers['content-type'], 'text/html; charset=utf-8');
  t.equal(page.headers['content-encoding'], 'gzip');
  t.equal(page.headers['cache-control'], 'no-cache');
  t.equal(page.headers.vary, 'Accept-Encoding');
  t.equal(page.headers['content-security-policy'], PAGE_CSP);
  t.equal(page.headers['x-frame-options'], 'DENY');
  t.equal(page.headers['referrer-policy'], 'no-referrer');
  t.equal(page.headers['x-content-type-options'], 'nosniff');

  const plain = await send(w.port, '/', {});
  t.equal(plain.text, INDEX, 'identity without Accept-Encoding');
  t.equal(plain.headers['content-encoding'], undefined);
  t.not(plain.headers.etag, page.headers.etag, 'each encoding has its own ETag');

  const script = await send(w.port, '/assets/index-AbC123.js', { headers: { 'accept-encoding': 'gzip' } });
  t.equal(script.status, 200);
  t.equal(script.headers['content-type'], 'text/javascript; charset=utf-8');
  t.equal(script.headers['cache-control'], 'public, max-age=31536000, immutable');
  t.equal(script.headers['content-encoding'], 'gzip');
  t.ok(Number(script.headers['content-length']) < SCRIPT.length / 5, 'compressed');

  const logo = await send(w.port, '/assets/logo-9f8e.png', { headers: { 'accept-encoding': 'gzip' } });
  t.equal(logo.headers['content-type'], 'image/png');
  t.equal(logo.headers['content-encoding'], undefined, 'images are not compressed again');
  t.equal((await send(w.port, '/favicon.svg')).headers['content-type'], 'image/svg+xml', 'top-level files of the build');

  const missing = await send(w.port, '/assets/nope.js');
  t.equal(missing.status, 404);
  t.match(missing.body, { ok: false, error: { code: 'HA_ERR_HTTP_NOT_FOUND' } });
  t.equal((await send(w.port, '/', { host: 'evil.example' })).status, 403, 'the Host check applies to the page too');
});

t.test('the gzipped body is the file; ETag revalidation answers 304', async (t) => {
  const w = await startWebui(t, { pageDir: build(t) });
  const { request: httpGet } = await import('node:http');
  const body = await new Promise<Buffer>((resolve, reject) => {
    const req = httpGet(
      { port: w.port, path: '/assets/index-AbC123.js', headers: { 'accept-encoding': 'gzip', host: 'localhost' } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve(Buffer.concat(chunks)));
      },
    );
    req.on('error', reject);
    req.end();
  });
  t.equal(gunzipSync(body).toString('utf8'), SCRIPT);

  const first = await send(w.port, '/');
  const again = await send(w.port, '/', { headers: { 'if-none-match': String(first.headers.etag) } });
  t.equal(again.status, 304);
  t.equal(again.text, '');
  const changed = await send(w.port, '/', { headers: { 'if-none-match': '"other"' } });
  t.equal(changed.status, 200);
});

t.test('not built: a plain 503 page saying how to build it', async (t) => {
  const w = await startWebui(t, { pageDir: join(tempDir(t), 'missing') });
  const reply = await send(w.port, '/');
  t.equal(reply.status, 503);
  t.equal(reply.headers['content-type'], 'text/html; charset=utf-8');
  t.match(reply.text, 'the web page was not built: run npm run build');
  t.equal(reply.headers['content-security-policy'], PAGE_CSP);
  t.equal((await send(w.port, '/assets/index.js')).status, 404);
});

t.test('load: a directory that is not a build is refused; the gzipped size is reported', (t) => {
  const dir = build(t);
  const page = StaticPage.load(dir);
  t.ok(page.built);
  t.ok(page.gzippedBytes() > 0 && page.gzippedBytes() < INDEX.length + SCRIPT.length);
  for (let i = 0; i < 501; i++) writeFileSync(join(dir, 'assets', `f${i}.txt`), 'x');
  t.throws(() => StaticPage.load(dir), { code: 'HA_ERR_PLUGIN_START' });
  t.end();
});

t.test('acceptsGzip', (t) => {
  t.ok(acceptsGzip('gzip'));
  t.ok(acceptsGzip('br, GZIP;q=0.5'));
  t.ok(acceptsGzip('*'));
  t.notOk(acceptsGzip(undefined));
  t.notOk(acceptsGzip('br, deflate'));
  t.notOk(acceptsGzip('gzip;q=0'));
  t.notOk(acceptsGzip('xgzip'));
  t.end();
});

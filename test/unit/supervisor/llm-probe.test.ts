/**
 * The reachability probe against real local HTTP servers: any HTTP answer is reachable (a 500
 * too), a closed port and a server that never answers are not.
 */
import { createServer } from 'node:http';
import t from 'tap';
import { probeUrl } from '../../../src/supervisor/llm-probe.js';
import { closedPort, listen } from './supervisor-fixture.js';

t.test('an HTTP answer is reachable, whatever the status', async (t) => {
  const paths: string[] = [];
  const port = await listen(
    t,
    createServer((req, res) => {
      paths.push(req.url ?? '');
      res.statusCode = req.url === '/broken/v1' ? 500 : 200;
      res.end('{}');
    }),
  );
  t.same(await probeUrl(`http://127.0.0.1:${port}/v1`, 2000), { reachable: true, detail: 'HTTP 200', detail_zh: 'HTTP 200' });
  t.same(
    await probeUrl(`http://127.0.0.1:${port}/broken/v1`, 2000),
    { reachable: true, detail: 'HTTP 500', detail_zh: 'HTTP 500' },
    'a 500 still proves a server',
  );
  t.same(paths, ['/v1', '/broken/v1'], 'the base URL itself is requested');
});

t.test('a closed port is unreachable, with the reason', async (t) => {
  const port = await closedPort();
  const result = await probeUrl(`http://127.0.0.1:${port}/v1`, 2000);
  t.equal(result.reachable, false);
  t.match(result.detail, /ECONNREFUSED/);
});

t.test('a server that never answers is unreachable once the time limit passes', async (t) => {
  const port = await listen(
    t,
    createServer(() => {
      // never answers
    }),
  );
  const started = performance.now();
  const result = await probeUrl(`http://127.0.0.1:${port}/`, 150);
  t.same(result, { reachable: false, detail: 'no answer within 150 ms', detail_zh: '150 ms 内没有应答' });
  t.ok(performance.now() - started < 2000, 'the probe gives up at its limit');
});

t.test('not an http(s) URL: unreachable without a request', async (t) => {
  t.same(await probeUrl('not a url', 100), { reachable: false, detail: 'not a URL: not a url', detail_zh: '不是 URL：not a url' });
  t.same(await probeUrl('ftp://example.org/', 100), {
    reachable: false,
    detail: 'cannot probe a ftp: URL',
    detail_zh: '无法探测 ftp: URL',
  });
});

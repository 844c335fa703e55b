/**
 * Hot reload of the webui plugin: the new instance takes over the old one's socket (Node 20 cannot
 * listen twice on a port), answers every new request, and when it stops first (a reload whose new
 * instance failed) the old one answers again. The socket closes with its last holder. A port held
 * by another program is a clear start error.
 */
import { createServer as createNetServer } from 'node:net';
import t from 'tap';
import type { RouteModule } from '../../../../plugins/webui/types.js';
import { WebListener } from '../../../../plugins/webui/web-listener.js';
import { expectErrorAsync, silentLogs } from '../../fixtures/support.js';
import { send, startWebui } from './webui-setup.js';

const version =
  (name: string): RouteModule =>
  (app) => {
    app.get('/api/v1/version', async () => ({ ok: true, result: name }));
  };

async function freePort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

t.test('a reload hands the socket over; the previous instance answers again if the new one stops first', async (t) => {
  const port = await freePort();
  const first = await startWebui(t, { port, routeModules: [version('first')] });
  const ask = async () => (await send(port, '/api/v1/version', { headers: { 'x-api-key': first.apiKey } })).body.result;
  t.equal(await ask(), 'first');

  const second = await startWebui(t, { port, dataDir: first.dataDir, routeModules: [version('second')] });
  t.equal(second.port, port);
  t.equal(await ask(), 'second', 'the new instance answers new requests');
  await second.stop();
  t.equal(await ask(), 'first', 'a failed reload: the running instance answers again');

  const third = await startWebui(t, { port, dataDir: first.dataDir, routeModules: [version('third')] });
  await first.stop();
  t.equal(await ask(), 'third', 'a successful reload: the old instance stopped, the socket stayed open');
  t.ok(third.plugin.health().ok);
  await third.stop();
  await t.rejects(send(port, '/api/v1/version'), { code: 'ECONNREFUSED' }, 'closed with its last holder');
});

t.test('a port another program holds is a start error naming the address', async (t) => {
  const other = createNetServer();
  await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', () => resolve()));
  t.teardown(() => new Promise<void>((resolve) => other.close(() => resolve())));
  const port = (other.address() as { port: number }).port;
  const error = await expectErrorAsync(
    t,
    () =>
      WebListener.acquire({
        host: '127.0.0.1',
        port,
        limits: { header_timeout_ms: 1000, request_timeout_ms: 1000, idle_timeout_ms: 1000, max_connections: 1 },
        owner: {},
        handler: () => {},
        log: silentLogs().child('test'),
      }),
    'HA_ERR_PLUGIN_START',
  );
  t.match(error.message, `127.0.0.1:${port}`);
  t.match(error.message, /EADDRINUSE.*plugin\.webui\.port/);
});

t.test('port 0 never shares: two listeners, two ports', async (t) => {
  const a = await startWebui(t);
  const b = await startWebui(t);
  t.not(a.port, b.port);
});

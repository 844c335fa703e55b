/**
 * The CLI socket's wire protocol, spoken directly over net.createConnection: one JSON request per
 * line, one response per request with its id echoed, and bad frames answered with an error while
 * the connection stays usable.
 */
import { statSync } from 'node:fs';
import t, { type Test } from 'tap';
import { type InProcessDaemonHandle as DaemonHandle, startDaemon } from '../helpers/in-process-daemon.js';
import { RpcConnection } from '../helpers/rpc.js';

const MAX_FRAME_BYTES = 1024 * 1024;

t.test('CLI socket protocol', async (t) => {
  const daemon: DaemonHandle = await startDaemon(t);
  await daemon.waitForReady();

  const connect = async (t: { teardown(fn: () => unknown): void }) => {
    const connection = await RpcConnection.connect(daemon.socketPath);
    t.teardown(() => connection.close());
    return connection;
  };

  /** A valid request on `c` is still answered (the connection survived what came before). */
  const stillAnswers = async (t: Test, c: RpcConnection, id: string) => {
    c.send('version', {}, id);
    const r = await c.waitFor((x) => x.id === id);
    t.match(r, { id, ok: true, result: { version: String } }, 'the same connection still answers a valid request');
  };

  t.test('version: {id, method} → {id, ok:true, result}', async (t) => {
    const c = await connect(t);
    await c.writeRaw('{"id":1,"method":"version"}\n');
    const r = await c.waitFor(() => true);
    t.match(r, { id: 1, ok: true, result: { version: /^\d+\.\d+\.\d+/, node: process.versions.node } });
    t.notOk('error' in r, 'no error member on success');
  });

  t.test('malformed JSON → HA_ERR_RPC_BAD_REQUEST with id null; the connection stays usable', async (t) => {
    const c = await connect(t);
    await c.writeRaw('{"id": 2, "method": "version",\n');
    const r = await c.waitFor(() => true);
    t.match(r, { id: null, ok: false, error: { code: 'HA_ERR_RPC_BAD_REQUEST', message: /malformed JSON/ } });
    await stillAnswers(t, c, 'after-malformed');

    await c.writeRaw('[1, 2, 3]\n');
    t.match(await c.waitFor(() => true), { id: null, ok: false, error: { code: 'HA_ERR_RPC_BAD_REQUEST' } }, 'an array is no request');
    await c.writeRaw('{"id": "no-method"}\n');
    t.match(
      await c.waitFor(() => true),
      { id: 'no-method', ok: false, error: { code: 'HA_ERR_RPC_BAD_REQUEST' } },
      'a request without a method keeps its id',
    );
    await stillAnswers(t, c, 'after-bad-requests');
    t.notOk(c.closed, 'the daemon did not close the connection');
  });

  t.test('a frame over 1 MiB → HA_ERR_RPC_FRAME_TOO_LARGE; the connection stays usable', async (t) => {
    const c = await connect(t);
    await c.writeRaw('x'.repeat(1.5 * MAX_FRAME_BYTES));
    // Reported as soon as the limit is passed, before the frame ends: the client is not left hanging.
    const r = await c.waitFor(() => true, 20_000);
    t.match(r, { id: null, ok: false, error: { code: 'HA_ERR_RPC_FRAME_TOO_LARGE' } });
    await c.writeRaw('\n');
    await stillAnswers(t, c, 'after-oversized');
    t.equal(c.received.filter((x) => x.error?.code === 'HA_ERR_RPC_FRAME_TOO_LARGE').length, 1, 'one error for the one oversized frame');

    const padded = JSON.stringify({ id: 'just-under', method: 'version', params: {}, pad: '' });
    const pad = 'y'.repeat(MAX_FRAME_BYTES - Buffer.byteLength(padded) - 1);
    await c.writeRaw(`${JSON.stringify({ id: 'just-under', method: 'version', params: {}, pad })}\n`);
    t.match(await c.waitFor((x) => x.id === 'just-under'), { ok: true }, 'a request just under the limit is served');
  });

  t.test('unknown method → HA_ERR_RPC_UNKNOWN_METHOD with the id echoed', async (t) => {
    const c = await connect(t);
    c.send('no.such.method', {}, 'u-42');
    const r = await c.waitFor(() => true);
    t.match(r, { id: 'u-42', ok: false, error: { code: 'HA_ERR_RPC_UNKNOWN_METHOD', message: /no\.such\.method/ } });
    c.send('config.get', { key: 42 }, 'bad-params');
    t.match(
      await c.waitFor(() => true),
      { id: 'bad-params', ok: false, error: { code: 'HA_ERR_RPC_INVALID_PARAMS' } },
      'invalid params get their own code',
    );
    await stillAnswers(t, c, 'after-unknown');
  });

  t.test('pipelined requests on one connection are each answered with their own id', async (t) => {
    const c = await connect(t);
    const keys = ['core.name', 'core.daemon.stop_timeout_ms', 'core.log.level', 'plugin.cli.max_frame_bytes'];
    const requests = Array.from({ length: 24 }, (_, i) => {
      const kind = i % 3;
      if (kind === 0) return { id: `p-${i}`, method: 'version', params: {} };
      if (kind === 1) return { id: `p-${i}`, method: 'config.get', params: { key: keys[i % keys.length] } };
      return { id: i, method: 'no.such.method', params: {} };
    });
    await c.writeRaw(requests.map((r) => `${JSON.stringify(r)}\n`).join(''));
    for (const request of requests) {
      const r = await c.waitFor((x) => x.id === request.id);
      if (request.method === 'version') t.match(r, { ok: true, result: { version: String } }, `${request.id}: version`);
      else if (request.method === 'config.get') {
        t.match(r, { ok: true, result: { key: request.params.key } }, `${request.id}: config.get ${request.params.key}`);
      } else t.match(r, { ok: false, error: { code: 'HA_ERR_RPC_UNKNOWN_METHOD' } }, `${request.id}: unknown method`);
    }
    t.equal(c.received.length, requests.length, 'exactly one response per request');
  });

  t.test('the socket file is a socket with mode 0660', async (t) => {
    const st = statSync(daemon.socketPath);
    t.ok(st.isSocket(), 'is a socket');
    t.equal((st.mode & 0o777).toString(8), '660');
  });
});

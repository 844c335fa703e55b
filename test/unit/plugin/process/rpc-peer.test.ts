import t from 'tap';
import { encodeError, RemoteError, RPC_ERROR, RpcPeer } from '../../../../src/plugin/process/rpc-peer.js';
import { HomeAgentError } from '../../../../src/shared/errors.js';
import { ToolError } from '../../../../src/shared/tool.js';

interface Pair {
  a: RpcPeer;
  b: RpcPeer;
  aProblems: string[];
  bLines: string[];
}

/** Two peers wired back to back; `b` answers `echo` and `fail`, and `hang` never. */
function pair(maxFrameBytes = 1024): Pair {
  const aProblems: string[] = [];
  const bLines: string[] = [];
  const peers: { a?: RpcPeer; b?: RpcPeer } = {};
  const a = new RpcPeer({
    write: (line) => peers.b?.receive(Buffer.from(line)),
    onRequest: () => undefined,
    onNotification: () => {},
    onProtocolError: (detail) => aProblems.push(detail),
    maxFrameBytes,
  });
  const b = new RpcPeer({
    write: (line) => {
      bLines.push(line);
      peers.a?.receive(Buffer.from(line));
    },
    onRequest: (method, params) => {
      if (method === 'echo') return params;
      if (method === 'fail') throw new ToolError({ reason: 'range', field: 'n', detail: 'too big' });
      if (method === 'ha') throw new HomeAgentError('HA_ERR_PLUGIN_STATE', 'not now');
      if (method === 'hang') return new Promise(() => {});
      if (method === 'big') return 'x'.repeat(2000);
      throw new Error(`no ${method}`);
    },
    onNotification: () => {},
    onProtocolError: () => {},
    maxFrameBytes,
  });
  peers.a = a;
  peers.b = b;
  return { a, b, aProblems, bLines };
}

t.test('requests and answers, errors by shape', async (t) => {
  const { a } = pair();
  t.same(await a.request('echo', { x: 1 }).result, { x: 1 });
  const toolFailure = await a.request('fail', {}).result.catch((e: unknown) => e);
  t.ok(toolFailure instanceof RemoteError);
  t.equal((toolFailure as RemoteError).rpcCode, RPC_ERROR.TOOL);
  t.same((toolFailure as RemoteError).data, { tool_error: { reason: 'range', field: 'n', detail: 'too big' } });
  const ha = (await a.request('ha', {}).result.catch((e: unknown) => e)) as RemoteError;
  t.same([ha.rpcCode, ha.data?.ha_code, ha.message], [RPC_ERROR.APPLICATION, 'HA_ERR_PLUGIN_STATE', 'not now']);
  const tooBig = (await a.request('big', {}).result.catch((e: unknown) => e)) as RemoteError;
  t.equal(tooBig.rpcCode, RPC_ERROR.INTERNAL, 'an answer over the frame limit becomes an error answer, not a broken frame');
});

t.test('timeouts, cancels and close reject; a late answer is ignored', async (t) => {
  const { a } = pair();
  const timedOut = await a
    .request('hang', {}, { timeoutMs: 20, timeoutError: () => new Error('too slow') })
    .result.catch((e: unknown) => e);
  t.equal((timedOut as Error).message, 'too slow');
  const { id, result } = a.request('hang', {});
  a.cancel(id, new Error('cancelled'));
  t.equal(((await result.catch((e: unknown) => e)) as Error).message, 'cancelled');
  a.receive(Buffer.from(`${JSON.stringify({ jsonrpc: '2.0', id, result: 'late' })}\n`));
  const pending = a.request('hang', {}).result.catch((e: unknown) => e);
  a.close(new Error('gone'));
  t.equal(((await pending) as Error).message, 'gone');
  t.equal(((await a.request('echo', {}).result.catch((e: unknown) => e)) as Error).message, 'gone', 'requests after close fail at once');
  t.equal(a.pendingCount, 0);
});

t.test('malformed and oversized frames are protocol errors, reported once', async (t) => {
  for (const frame of [
    'nope\n',
    '[1,2]\n',
    '{"jsonrpc":"1.0","id":1,"result":1}\n',
    '{"jsonrpc":"2.0","id":{},"method":"x"}\n',
    `${'y'.repeat(2000)}\n`,
  ]) {
    const { a, aProblems } = pair();
    a.receive(Buffer.from(frame));
    a.receive(Buffer.from('more garbage\n'));
    t.equal(aProblems.length, 1, `${frame.slice(0, 30)}: one protocol error`);
  }
  const { a, aProblems } = pair();
  a.receive(Buffer.from('\n'));
  t.same(aProblems, [], 'a blank line is not an error');
});

t.test('encodeError cuts long messages and knows errors from other SDK copies by name', async (t) => {
  t.equal(encodeError(new Error('m'.repeat(10_000))).message.length, 4001);
  const foreign = Object.assign(new Error('bad'), { name: 'ToolError', info: { reason: 'type', detail: 'bad', extra: 'dropped' } });
  t.same(encodeError(foreign).data, { tool_error: { reason: 'type', detail: 'bad' } });
  t.same(encodeError('text'), { code: RPC_ERROR.APPLICATION, message: 'text' });
});

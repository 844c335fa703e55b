import { join } from 'node:path';
import { Type } from '@sinclair/typebox';
import t from 'tap';
import { CliPlugin } from '../../../../plugins/cli/index.js';
import { RpcClient } from '../../../../src/cli/rpc-client.js';
import { ControlRegistry } from '../../../../src/plugin/control-registry.js';
import { asContext, createTestPluginContext } from '../../../helpers/plugin-context.js';
import { tempDir } from '../../fixtures/support.js';

t.test('a connection waiting for a long request is not closed as idle; an idle one is', async (t) => {
  const dataDir = tempDir(t);
  const control = new ControlRegistry();
  let release: () => void = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  let started: () => void = () => {};
  const running = new Promise<void>((resolve) => {
    started = resolve;
  });
  control.register({
    name: 'test.slow',
    description: 'answers when the test lets it',
    params: Type.Object({}),
    handler: async () => {
      started();
      await released;
      return { done: true };
    },
  });
  const test = createTestPluginContext({
    name: 'cli',
    dataDir,
    settings: { socket_path: '', socket_mode: '660', max_frame_bytes: 1048576, max_connections: 4, idle_timeout_ms: 200 },
  });
  const plugin = new CliPlugin(asContext({ ...test.context, control }));
  await plugin.start();
  t.teardown(() => plugin.stop());
  const socket = join(dataDir, 'run', 'homeagent.sock');

  const client = await RpcClient.connect(socket, 5000);
  t.teardown(() => client.close());
  const answer = client.call('test.slow', {});
  await running;
  // Several idle periods pass while the request runs.
  await new Promise((resolve) => setTimeout(resolve, 700));
  release();
  t.same(await answer, { done: true }, 'the answer arrives on the same connection');

  const idle = await RpcClient.connect(socket, 5000);
  t.teardown(() => idle.close());
  await new Promise((resolve) => setTimeout(resolve, 700));
  // The client saw the close: the call fails with that reason at once, not at its 30 s timeout.
  await t.rejects(idle.call('test.slow', {}), /the daemon closed the connection/, 'an idle connection was closed');
});

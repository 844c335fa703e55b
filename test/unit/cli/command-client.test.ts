// What the daemon-talking homeagentctl commands share (src/cli/command-client.ts): the session
// prints text or JSON and always closes the connection; an unknown method becomes "the plugin is
// not running" only when the command names its plugin.
import t from 'tap';
import { type CommandClient, callOrExplain, pluginNotRunning, withDaemon } from '../../../src/cli/command-client.js';
import { RemoteError } from '../../../src/cli/rpc-client.js';
import { EXIT_CODES } from '../../../src/shared/exit-codes.js';

function fakeClient(answer: (method: string) => unknown) {
  const calls: Array<[string, object, number]> = [];
  let closed = 0;
  const client: CommandClient = {
    call: async (method, params, timeoutMs) => {
      calls.push([method, params, timeoutMs]);
      return answer(method);
    },
    close: () => void closed++,
  };
  return { client, calls, closed: () => closed };
}

const unknownMethod = () => {
  throw new RemoteError({ code: 'HA_ERR_RPC_UNKNOWN_METHOD', message: 'no method named "x.y"' });
};

t.test('pluginNotRunning names the setting, and any further step, in one sentence', async (t) => {
  t.equal(
    pluginNotRunning({ plugin: 'gpio' }),
    'the gpio plugin is not running: enable it with plugin.gpio.enabled: true and restart HomeAgent',
  );
  t.equal(
    pluginNotRunning({ plugin: 'i2c', also: 'configure plugin.i2c.sensors' }),
    'the i2c plugin is not running: enable it with plugin.i2c.enabled: true, configure plugin.i2c.sensors, and restart HomeAgent',
  );
});

t.test('callOrExplain passes the timeout, explains an unknown method with a hint, and leaves other errors alone', async (t) => {
  const ok = fakeClient(() => ({ fine: true }));
  t.same(await callOrExplain(ok.client, 1234, { plugin: 'mqtt' })('mqtt.status', { a: 1 }), { fine: true });
  t.same(ok.calls, [['mqtt.status', { a: 1 }, 1234]]);

  const missing = fakeClient(unknownMethod);
  await t.rejects(callOrExplain(missing.client, 1000, { plugin: 'mqtt' })('mqtt.status', {}), {
    constructor: RemoteError,
    code: 'HA_ERR_RPC_UNKNOWN_METHOD',
    message: 'the mqtt plugin is not running: enable it with plugin.mqtt.enabled: true and restart HomeAgent',
  });
  await t.rejects(callOrExplain(missing.client, 1000)('entities.list', {}), {
    code: 'HA_ERR_RPC_UNKNOWN_METHOD',
    message: 'no method named "x.y"',
  });

  const refused = fakeClient(() => {
    throw new RemoteError({ code: 'HA_ERR_MQTT_TOPIC', message: 'bad topic' });
  });
  await t.rejects(callOrExplain(refused.client, 1000, { plugin: 'mqtt' })('mqtt.publish', {}), {
    code: 'HA_ERR_MQTT_TOPIC',
    message: 'bad topic',
  });
});

t.test('withDaemon prints text or pretty JSON and closes the connection, also when the body throws', async (t) => {
  const fake = fakeClient(() => ({ n: 2 }));
  let out = '';
  const stdout = { write: (text: string) => (out += text) };
  const run = (json: boolean) =>
    withDaemon({ connect: async () => fake.client, json, timeoutMs: 500, stdout }, undefined, async ({ call, print }) =>
      print((await call('x.y', {})) as { n: number }, (r) => `n is ${r.n}`),
    );
  t.equal(await run(false), EXIT_CODES.OK);
  t.equal(out, 'n is 2\n');
  out = '';
  await run(true);
  t.equal(out, `${JSON.stringify({ n: 2 }, null, 2)}\n`);
  t.equal(fake.closed(), 2);

  out = '';
  const missing = fakeClient(unknownMethod);
  await t.rejects(
    withDaemon({ connect: async () => missing.client, json: false, timeoutMs: 500, stdout }, { plugin: 'gpio' }, async ({ call }) =>
      call('gpio.pins', {}),
    ),
    { message: /plugin\.gpio\.enabled: true/ },
  );
  t.equal(missing.closed(), 1, 'closed after a failed call');
  t.equal(out, '', 'nothing printed for a failure');
});

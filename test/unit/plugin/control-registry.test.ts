import { Type } from '@sinclair/typebox';
import t from 'tap';
import { ControlRegistry } from '../../../src/plugin/control-registry.js';
import { expectError, expectErrorAsync } from '../fixtures/support.js';

const caller = { actor: 'cli' };

function registry(): ControlRegistry {
  const control = new ControlRegistry();
  control.register({
    name: 'config.get',
    description: 'Get one setting.',
    params: Type.Object({
      key: Type.String({ minLength: 1 }),
      options: Type.Optional(Type.Object({ limit: Type.Integer({ minimum: 1 }) })),
    }),
    handler: ({ key }, who) => ({ key, actor: who.actor }),
  });
  control.register({
    name: 'version',
    description: 'Versions.',
    params: Type.Object({}),
    handler: async () => 'v1',
  });
  return control;
}

t.test('calls a method with validated params and the caller', async (t) => {
  const control = registry();
  t.same(await control.call('config.get', { key: 'core.name' }, caller), { key: 'core.name', actor: 'cli' });
  t.equal(await control.call('version', undefined, caller), 'v1', 'missing params are an empty object');
  t.same(
    control.methods(),
    [
      { name: 'config.get', description: 'Get one setting.' },
      { name: 'version', description: 'Versions.' },
    ],
    'sorted by name',
  );
});

t.test('an unknown method is HA_ERR_RPC_UNKNOWN_METHOD listing the known ones', async (t) => {
  const error = await expectErrorAsync(t, () => registry().call('config.gte', {}, caller), 'HA_ERR_RPC_UNKNOWN_METHOD');
  t.match(error.message, '"config.gte"');
  t.match(error.message, 'known: config.get, version');
});

t.test('invalid params are HA_ERR_RPC_INVALID_PARAMS naming the path', async (t) => {
  const control = registry();
  let handled = false;
  control.register({
    name: 'guarded',
    description: 'Must not run with bad params.',
    params: Type.Object({ n: Type.Integer() }),
    handler: () => {
      handled = true;
    },
  });
  const wrongType = await expectErrorAsync(t, () => control.call('config.get', { key: 5 }, caller), 'HA_ERR_RPC_INVALID_PARAMS');
  t.match(wrongType.message, /^config\.get: params\.key: /);
  const missing = await expectErrorAsync(t, () => control.call('config.get', {}, caller), 'HA_ERR_RPC_INVALID_PARAMS');
  t.match(missing.message, 'params.key');
  const nested = await expectErrorAsync(
    t,
    () => control.call('config.get', { key: 'k', options: { limit: 0 } }, caller),
    'HA_ERR_RPC_INVALID_PARAMS',
  );
  t.match(nested.message, 'params.options.limit');
  const notObject = await expectErrorAsync(t, () => control.call('config.get', 'core.name', caller), 'HA_ERR_RPC_INVALID_PARAMS');
  t.match(notObject.message, 'config.get: params');
  await expectErrorAsync(t, () => control.call('guarded', { n: 1.5 }, caller), 'HA_ERR_RPC_INVALID_PARAMS');
  t.equal(handled, false, 'the handler never ran');
});

t.test('duplicate registration and bad names are refused; unregister works', async (t) => {
  const control = registry();
  const duplicate = expectError(
    t,
    () => control.register({ name: 'version', description: 'again', params: Type.Object({}), handler: () => 'v2' }),
    'HA_ERR_INTERNAL',
  );
  t.match(duplicate.message, 'already registered');
  t.equal(await control.call('version', {}, caller), 'v1', 'the first registration stays');
  for (const name of ['Config.get', 'config..get', '1abc', 'config.', '']) {
    expectError(t, () => control.register({ name, description: 'bad', params: Type.Object({}), handler: () => 0 }), 'HA_ERR_INTERNAL');
  }
  const off = control.register({ name: 'temp.method', description: 'Temporary.', params: Type.Object({}), handler: () => 'temp' });
  t.equal(await control.call('temp.method', {}, caller), 'temp');
  off();
  await expectErrorAsync(t, () => control.call('temp.method', {}, caller), 'HA_ERR_RPC_UNKNOWN_METHOD');
});

t.test('handler errors reach the caller unchanged', async (t) => {
  const control = new ControlRegistry();
  control.register({
    name: 'fails',
    description: 'Always fails.',
    params: Type.Object({}),
    handler: () => {
      throw new Error('handler broke');
    },
  });
  await t.rejects(control.call('fails', {}, caller), { message: 'handler broke' });
});

t.test('a method for the owner only refuses every caller the transport did not prove to be the owner', async (t) => {
  const control = new ControlRegistry();
  control.register({
    name: 'confirm.approve',
    description: 'Approve.',
    owner_only: true,
    params: Type.Object({}),
    handler: (_params, who) => who.actor,
  });
  t.equal(await control.call('confirm.approve', {}, { actor: 'cli', owner: true }), 'cli');
  for (const who of [{ actor: 'cli' }, { actor: 'plugin:pluginmgr' }, { actor: 'webui:admin', owner: false }]) {
    const error = await expectErrorAsync(t, () => control.call('confirm.approve', {}, who), 'HA_ERR_RPC_FORBIDDEN');
    t.match(error.message, `${who.actor} may not call it`);
  }
});

/**
 * webui.credentials: homeagentctl only; shows the address and both secrets; a reset makes a new
 * one at once (a new password also ends every login) and is audited.
 */
import t from 'tap';
import { expectErrorAsync } from '../../fixtures/support.js';
import { login, send, startWebui } from './webui-setup.js';

t.test('answers homeagentctl only', async (t) => {
  const w = await startWebui(t);
  const answer = await w.test.control.call('webui.credentials', {}, { actor: 'cli' });
  t.match(answer, { url: `http://127.0.0.1:${w.port}/`, password: w.password, api_key: w.apiKey, created_at: String });
  for (const actor of ['webui:admin', 'webui:api', 'plugin:cmd', 'system']) {
    const error = await expectErrorAsync(t, () => w.test.control.call('webui.credentials', {}, { actor }), 'HA_ERR_PLUGIN_PERMISSION');
    t.match(error.message, actor);
  }
  await expectErrorAsync(
    t,
    () => w.test.control.call('webui.credentials', { reset: 'everything' }, { actor: 'cli' }),
    'HA_ERR_RPC_INVALID_PARAMS',
  );
  t.match(w.test.audits, [{ action: 'webui.credentials.read', details: { on_behalf_of: 'cli' } }]);
});

t.test('reset password: the old one and every session stop working', async (t) => {
  const w = await startWebui(t);
  const cookie = await login(w);
  const answer = (await w.test.control.call('webui.credentials', { reset: 'password' }, { actor: 'cli' })) as {
    password: string;
    api_key: string;
  };
  t.not(answer.password, w.password);
  t.equal(answer.api_key, w.apiKey, 'the API key stays');
  t.match((await send(w.port, '/api/v1/auth/session', { headers: { cookie } })).body, { result: { authenticated: false } }, 'logged out');
  t.equal((await send(w.port, '/api/v1/auth/login', { method: 'POST', body: { password: w.password } })).status, 401, 'old password');
  t.equal((await send(w.port, '/api/v1/auth/login', { method: 'POST', body: { password: answer.password } })).status, 200, 'new password');
  t.match(w.test.audits.at(-2), {
    action: 'webui.credentials.reset',
    details: { on_behalf_of: 'cli', which: 'password', sessions_ended: 1 },
  });
});

t.test('reset api_key: the old key stops working at once', async (t) => {
  const w = await startWebui(t);
  const answer = (await w.test.control.call('webui.credentials', { reset: 'api_key' }, { actor: 'cli' })) as { api_key: string };
  t.not(answer.api_key, w.apiKey);
  t.match((await send(w.port, '/api/v1/auth/session', { headers: { 'x-api-key': answer.api_key } })).body, {
    result: { method: 'api_key' },
  });
  t.match((await send(w.port, '/api/v1/auth/session', { headers: { 'x-api-key': w.apiKey } })).body, { result: { authenticated: false } });
});

t.test('while the server is stopped the method says so', async (t) => {
  const w = await startWebui(t);
  await w.plugin.stop();
  await expectErrorAsync(t, () => w.test.control.call('webui.credentials', {}, { actor: 'cli' }), 'HA_ERR_PLUGIN_STATE');
});

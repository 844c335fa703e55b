/**
 * The cfgmgr tools over the real settings registry: secrets masked in every answer, ordinary
 * changes stored with their history and audit records, bad values refused with the registry's code
 * naming the key and nothing stored, resets, and protected keys refused by the act tools and
 * changed only by the dangerous ones.
 */
import t from 'tap';
import { ToolError } from '../../../../src/shared/tool.js';
import { CFGMGR_DEFAULTS, cfgmgrRig, HA_TOKEN, LLM_KEY, SOURCE_KEY } from './cfgmgr-setup.js';

/** The ToolError a call throws (the test fails when it returns). */
async function refusal(run: Promise<unknown>): Promise<ToolError['info']> {
  try {
    await run;
  } catch (error) {
    if (error instanceof ToolError) return error.info;
    throw error;
  }
  throw new Error('the call was expected to fail');
}

t.test('the tools and their tiers', async (t) => {
  const { tc } = await cfgmgrRig(t);
  const tiers = Object.fromEntries(
    ['config_list', 'config_get', 'config_set', 'config_set_protected', 'config_reset', 'config_reset_protected'].map((name) => [
      name,
      tc.tools.get(name)?.tier,
    ]),
  );
  t.same(tiers, {
    config_list: 'read',
    config_get: 'read',
    config_set: 'act',
    config_set_protected: 'dangerous',
    config_reset: 'act',
    config_reset_protected: 'dangerous',
  });
});

t.test('config_list and config_get never show a secret, nested ones included', async (t) => {
  const { tc } = await cfgmgrRig(t);
  const list = (await tc.call('config_list', { prefix: 'core.llm.' })) as { settings: Array<Record<string, unknown>>; total: number };
  const text = JSON.stringify(list);
  t.notMatch(text, LLM_KEY);
  t.notMatch(text, SOURCE_KEY);
  const key = list.settings.find((s) => s.key === 'core.llm.api_key');
  t.equal(key?.value, '********');
  t.equal(key?.change_with, 'config_set_protected');
  t.match(key?.protected_because, /secret/);
  const sources = list.settings.find((s) => s.key === 'core.llm.sources')?.value as Record<string, Record<string, unknown>>;
  t.equal(sources.backup?.api_key, '********', 'the nested key is masked');
  t.equal(sources.backup?.base_url, 'http://127.0.0.1:9/v1', 'the rest is shown');

  const token = (await tc.call('config_get', { key: 'plugin.homeassistant.token' })) as Record<string, unknown>;
  t.equal(token.value, '********');
  t.equal(token.secret, true);
  t.notMatch(JSON.stringify(token), HA_TOKEN);
  t.type(token.description, 'string');
  t.type(token.description_zh, 'string', 'both languages of the description');

  const all = await tc.call('config_list', {});
  for (const secret of [LLM_KEY, SOURCE_KEY, HA_TOKEN]) t.notMatch(JSON.stringify(all), secret, 'nor in the whole list');
});

t.test('config_list is bounded and says how to see the rest', async (t) => {
  const { tc } = await cfgmgrRig(t, { max_list_items: 5 });
  const list = (await tc.call('config_list', { prefix: 'core.' })) as { settings: unknown[]; total: number; shown: number; hint: string };
  t.equal(list.settings.length, 5);
  t.equal(list.shown, 5);
  t.ok(list.total > 5);
  t.match(list.hint, new RegExp(`${list.total - 5} more settings were left out: list a narrower prefix`));
});

t.test('config_set stores a valid value through the registry, with history and audit records', async (t) => {
  const { tc, settings, audits } = await cfgmgrRig(t);
  const answer = (await tc.call(
    'config_set',
    { key: 'plugin.timer.max_timers', value: '25' },
    { source: 'cli', channel: 'cli' },
  )) as Record<string, unknown>;
  t.equal(answer.value, 25, 'text converted to the setting type');
  t.equal(answer.source, 'runtime');
  t.equal(answer.change_with, 'config_set');
  t.match(answer.note, /applied now/);
  t.equal(settings.get('plugin.timer.max_timers').value, 25);
  t.match(settings.history('plugin.timer.max_timers'), [{ action: 'set', value: '25', actor: 'plugin:cfgmgr' }]);
  t.match(audits(), [
    { action: 'settings.set', actor: 'plugin:cfgmgr', key: 'plugin.timer.max_timers', value: 25 },
    { action: 'cfgmgr.set', key: 'plugin.timer.max_timers', tier: 'act', source: 'cli', channel: 'cli', turn_trust: 'owner' },
  ]);
  const got = (await tc.call('config_get', { key: 'plugin.timer.max_timers' })) as Record<string, unknown>;
  t.match(got, { value: 25, default: 100, minimum: 1, maximum: 10000, last_change: { action: 'set', by: 'plugin:cfgmgr' } });
});

t.test('an invalid value or an unknown key is a coded error naming the key, and nothing is stored', async (t) => {
  const { tc, settings, audits } = await cfgmgrRig(t);
  const zero = await refusal(tc.call('config_set', { key: 'plugin.timer.max_timers', value: 0 }));
  t.equal(zero.reason, 'rejected');
  t.equal(zero.field, 'value');
  t.match(zero.detail, /^HA_ERR_SETTINGS_INVALID_VALUE: plugin\.timer\.max_timers/);
  const word = await refusal(tc.call('config_set', { key: 'core.log.level', value: 'loud' }));
  t.match(word.detail, /^HA_ERR_SETTINGS_INVALID_VALUE: core\.log\.level/);
  const unknown = await refusal(tc.call('config_set', { key: 'plugin.timer.max_timer', value: 3 }));
  t.equal(unknown.reason, 'not_found');
  t.match(
    unknown.detail,
    /^HA_ERR_SETTINGS_UNKNOWN_KEY: no setting named plugin\.timer\.max_timer; did you mean plugin\.timer\.max_timers/,
  );
  const fileOnly = await refusal(tc.call('config_set_protected', { key: 'core.data_dir', value: '/tmp/elsewhere' }));
  t.match(fileOnly.detail, /^HA_ERR_SETTINGS_FILE_ONLY: core\.data_dir/);

  for (const key of ['plugin.timer.max_timers', 'core.log.level', 'core.data_dir']) {
    t.equal(settings.get(key).source !== 'runtime', true, `${key} keeps its value`);
    t.same(settings.history(key), [], `${key} has no history row`);
  }
  t.same(audits(), [], 'no audit record: nothing changed');
});

t.test('config_reset brings back the file, environment or default value', async (t) => {
  const { tc, settings } = await cfgmgrRig(t);
  await tc.call('config_set', { key: 'core.log.level', value: 'debug' });
  t.equal(settings.get('core.log.level').value, 'debug');
  const answer = (await tc.call('config_reset', { key: 'core.log.level' })) as Record<string, unknown>;
  t.equal(answer.value, 'info');
  t.equal(answer.source, 'default');
  t.match(answer.note, /the value from default is used again/);
  t.match(settings.history('core.log.level'), [{ action: 'reset', actor: 'plugin:cfgmgr' }, { action: 'set' }]);
});

t.test('each protected kind of key is refused by config_set, nothing stored, and changed by config_set_protected', async (t) => {
  const { tc, settings } = await cfgmgrRig(t, { dangerous_keys: ['plugin.voice.vad.*'] });
  const cases: Array<[string, unknown, RegExp]> = [
    ['core.llm.api_key', 'sk-new', /it is a secret/],
    ['core.agent.preauthorized_tools', ['cmd_run'], /who may do what/],
    ['core.agent.untrusted_act_tools', ['*'], /who may do what/],
    ['plugin.onebot.owners', ['10001'], /who may do what/],
    ['plugin.cmd.allow', ['rm'], /who may do what/],
    ['core.llm.base_url', 'http://198.51.100.7/v1', /network address/],
    ['plugin.webui.port', 9999, /network address.*restart/],
    ['core.store.backup_dir', '/tmp/out', /file, folder or program/],
    ['plugin.voice.tts.piper_program', '/bin/sh', /file, folder or program/],
    ['core.memory.distill_interval_ms', 600000, /only after a restart/],
    ['plugin.voice.vad.threshold', 0.9, /plugin\.cfgmgr\.dangerous_keys/],
    ['plugin.cfgmgr.dangerous_keys', [], /who may do what/],
    ['core.llm.sources', {}, /secret.*network address/],
  ];
  for (const [key, value, why] of cases) {
    const before = settings.get(key);
    const info = await refusal(tc.call('config_set', { key, value }));
    t.equal(info.reason, 'unauthorized', key);
    t.match(info.detail, new RegExp(`^HA_ERR_CFGMGR_PROTECTED: ${key.replace(/\./g, '\\.')} was not changed`), key);
    t.match(info.detail, why, key);
    t.match(info.hint, /config_set_protected with the same arguments/);
    t.same(settings.get(key), before, `${key} unchanged`);
    t.same(settings.history(key), [], `${key}: no history row`);
  }
  const port = (await tc.call('config_set_protected', { key: 'plugin.webui.port', value: 9999 })) as Record<string, unknown>;
  t.match(port, { value: 9999, restart_pending: true, note: /keeps the old value until it restarts/ });
  await tc.call('config_set_protected', { key: 'core.llm.api_key', value: 'sk-new-key' });
  t.equal(settings.get('core.llm.api_key').value, '********');
  t.equal(settings.history('core.llm.api_key')[0]?.value, null, 'the secret is not in the history');

  const reset = await refusal(tc.call('config_reset', { key: 'core.llm.api_key' }));
  t.match(reset, { reason: 'unauthorized', hint: /config_reset_protected/ });
  t.equal(settings.get('core.llm.api_key').source, 'runtime', 'the reset did not happen');
  await tc.call('config_reset_protected', { key: 'core.llm.api_key' });
  t.not(settings.get('core.llm.api_key').source, 'runtime');
});

t.test('writing back a masked secret is refused, so asterisks never replace a key', async (t) => {
  const { tc, settings } = await cfgmgrRig(t);
  const shown = (await tc.call('config_get', { key: 'core.llm.sources' })) as { value: Record<string, Record<string, unknown>> };
  const edited = { backup: { ...shown.value.backup, model: 'bigger' } };
  const info = await refusal(tc.call('config_set_protected', { key: 'core.llm.sources', value: edited }));
  t.equal(info.reason, 'rejected');
  t.match(info.detail, /^HA_ERR_CFGMGR_MASKED_VALUE: the value for core\.llm\.sources holds \*{8}/);
  t.same(settings.history('core.llm.sources'), []);
});

t.test('defaults of the plugin settings are what the tests assume', async (t) => {
  const { settingsSchema } = await import('../../../../plugins/cfgmgr/settings-schema.js');
  const defaults = Object.fromEntries(
    Object.entries(settingsSchema.properties)
      .filter(([name]) => name !== 'enabled')
      .map(([name, schema]) => [name, (schema as { default: unknown }).default]),
  );
  t.same(defaults, CFGMGR_DEFAULTS);
});

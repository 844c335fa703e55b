/**
 * The tier of a setting's changes, by key class, over the real built-in definitions: every secret
 * and every setting that needs a restart is protected, addresses, files and security keys are
 * found by their names, values with address or secret fields are protected whatever their key,
 * and ordinary tuning stays act.
 */
import t from 'tap';
import { globMatch, settingTier } from '../../../../plugins/cfgmgr/setting-tier.js';
import { BUILTIN_DEFINITIONS } from '../../../../src/config/definitions.js';

const facts = (key: string) => {
  const def = BUILTIN_DEFINITIONS.find((d) => d.key === key);
  if (!def) throw new Error(`no setting ${key}`);
  return { key, secret: def.secret, requires_restart: def.requires_restart, value: def.default };
};
const tier = (key: string, listed: string[] = [], proposed?: unknown) => settingTier(facts(key), listed, proposed);

t.test('every secret and every restart-only setting is protected', async (t) => {
  for (const def of BUILTIN_DEFINITIONS.filter((d) => d.secret || d.requires_restart)) {
    const verdict = tier(def.key);
    t.equal(verdict.tier, 'dangerous', def.key);
    if (def.secret) t.ok(verdict.classes.includes('secret'), `${def.key} is a secret`);
    if (def.requires_restart) t.ok(verdict.classes.includes('restart'), `${def.key} needs a restart`);
  }
});

t.test('each class by key', async (t) => {
  const expect: Array<[string, string]> = [
    ['core.llm.api_key', 'secret'],
    ['plugin.voice.tts.openai_api_key', 'secret'],
    ['core.agent.preauthorized_tools', 'security'],
    ['core.agent.household_act_tools', 'security'],
    ['core.agent.confirmation_ttl_ms', 'security'],
    ['plugin.onebot.owners', 'security'],
    ['plugin.onebot.allow_groups', 'security'],
    ['plugin.cmd.isolation', 'security'],
    ['plugin.files.roots', 'security'],
    ['core.plugins.lua_memory_mb', 'security'],
    ['core.settings.history_max_rows', 'security'],
    ['core.automations.rules', 'security'],
    ['core.home.people', 'security'],
    ['plugin.webui.login_max_failures', 'security'],
    ['plugin.cfgmgr.max_list_items', 'security'],
    ['core.llm.base_url', 'network'],
    ['plugin.homeassistant.url', 'network'],
    ['plugin.voice.stt.wyoming_port', 'network'],
    ['plugin.webui.allowed_hosts', 'network'],
    ['core.llm.sources', 'network'],
    ['core.store.backup_dir', 'files'],
    ['core.agent.persona_file', 'files'],
    ['plugin.voice.stt.command', 'files'],
    ['plugin.voice.tts.piper_program', 'files'],
  ];
  for (const [key, kind] of expect) {
    const verdict = tier(key);
    t.equal(verdict.tier, 'dangerous', key);
    t.ok(verdict.classes.includes(kind as never), `${key}: ${kind} (${verdict.classes.join(', ')})`);
  }
});

t.test('ordinary tuning stays act, names that only look like a class included', async (t) => {
  for (const key of [
    'core.log.level',
    'core.llm.model',
    'core.llm.temperature',
    'core.agent.max_tool_turns',
    'plugin.timer.max_timers',
    'plugin.voice.vad.threshold',
    'plugin.voice.activation.listen_window_ms',
    'plugin.homeassistant.command_timeout_ms',
    'plugin.mqtt.command_rate_per_minute',
    'core.tracker.max_kept_file_bytes',
  ]) {
    t.same(tier(key), { tier: 'act', classes: [] }, key);
  }
});

t.test('a mapping or list whose value holds an address or a secret is protected whatever its key', async (t) => {
  t.same(tier('core.home.areas'), { tier: 'act', classes: [] });
  t.same(tier('core.home.areas', [], [{ id: 'x', name: 'X', url: 'http://203.0.113.1' }]).classes, ['network']);
  t.same(tier('core.log.levels', [], { store: 'debug', api_key: 'x' }).classes, ['secret']);
});

t.test("the owner's own list, with * patterns", async (t) => {
  t.same(tier('plugin.voice.vad.threshold', ['plugin.voice.*']).classes, ['listed']);
  t.same(tier('plugin.timer.max_timers', ['plugin.voice.*']).tier, 'act');
  t.ok(globMatch('core.agent.max_tool_turns', '*max_tool*'));
  t.notOk(globMatch('core.agentXmax', 'core.agent.max'), 'a dot is a dot, not any character');
});

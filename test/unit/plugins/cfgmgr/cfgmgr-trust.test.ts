/**
 * The cfgmgr tools through the agent's real tool executor and confirmation gate: an MQTT payload,
 * a group chat or a turn that read a web page can make the model ask for a protected change,
 * never make one; only the owner's own input approves it, and then it runs exactly as asked and is
 * audited. Ordinary changes follow the act policy (core.agent.*_act_tools).
 */
import t from 'tap';
import { ConfirmationGate } from '../../../../src/agent/confirmation-gate.js';
import { StageRegistry } from '../../../../src/agent/stage-registry.js';
import { ToolExecutor } from '../../../../src/agent/tool-executor.js';
import type { InputSender } from '../../../../src/shared/trust.js';
import { lowerTurnTrust } from '../../../../src/shared/trust.js';
import { HOUSEHOLD, OWNER, UNTRUSTED } from '../../../helpers/senders.js';
import { call, makeContext, makeInput } from '../../agent/fixtures/helpers.js';
import type { Teardown } from '../../fixtures/support.js';
import { cfgmgrRig } from './cfgmgr-setup.js';

const GROUP_MEMBER: InputSender = { trust: 'household', id: 'qq:20002', proof: 'an allowed QQ group member', shared: true };

async function gateRig(t: Teardown, preauthorized: string[] = []) {
  const rig = await cfgmgrRig(t);
  const log = rig.captured.logs.child('agent');
  const gate = new ConfirmationGate({ preauthorized: () => preauthorized, ttlMs: () => 60_000, now: () => 1000 });
  const executorAudits: Array<Record<string, unknown>> = [];
  const executor = new ToolExecutor({
    registry: rig.tc.tools,
    stages: new StageRegistry(log),
    limits: () => ({ tool_timeout_ms: 5000, tool_output_max_chars: 16000, max_parallel_tools: 4 }),
    log,
    gate,
    audit: (record) => void executorAudits.push(record),
  });
  const turn = (sender: InputSender, payload = 'change the setting', channel = 'mqtt') =>
    makeContext(makeInput({ sender, payload, channel, source: channel }));
  const run = async (name: string, args: Record<string, unknown>, context = turn(UNTRUSTED), confirmed = false) => {
    const { outcomes } = await executor.executeBatch([call(name, args)], {
      task_id: context.task_id,
      input: context.input,
      signal: new AbortController().signal,
      stageContext: context,
      ...(confirmed && { confirmed }),
    });
    const outcome = outcomes[0];
    if (!outcome) throw new Error('no outcome');
    return outcome;
  };
  return { ...rig, gate, executor, executorAudits, turn, run };
}

t.test('an untrusted input can ask for a protected change, never approve it; the owner can', async (t) => {
  const { settings, gate, run, turn, executorAudits } = await gateRig(t);
  const before = settings.get('core.llm.base_url');
  const held = await run('config_set_protected', { key: 'core.llm.base_url', value: 'http://203.0.113.9/v1' }, turn(UNTRUSTED));
  t.equal(held.error?.reason, 'confirmation_required');
  t.equal(held.executed, false, 'the tool did not run');
  t.same(settings.get('core.llm.base_url'), before);
  const [pending] = gate.list();
  t.ok(pending, 'the owner is asked');
  t.equal(pending?.inline, false, 'not in the MQTT answer: on the owner channels');
  t.equal(pending?.tool, 'config_set_protected');

  const code = pending?.code ?? '';
  for (const sender of [UNTRUSTED, GROUP_MEMBER, HOUSEHOLD]) {
    const decision = gate.match(makeInput({ sender, payload: `/confirm ${code}` }));
    t.equal(decision.kind, 'refused', `${sender.id} cannot approve`);
  }
  t.same(settings.get('core.llm.base_url'), before, 'still unchanged');

  const approval = gate.match(makeInput({ sender: OWNER, payload: `/confirm ${code}` }));
  t.equal(approval.kind, 'confirmed');
  if (approval.kind !== 'confirmed') return;
  const ran = await run('config_set_protected', JSON.parse(approval.pending.call.arguments), turn(OWNER, `/confirm ${code}`, 'cli'), true);
  t.equal(ran.ok, true, ran.content);
  t.equal(settings.get('core.llm.base_url').value, 'http://203.0.113.9/v1');
  t.match(executorAudits, [{ action: 'tool.dangerous', tool: 'config_set_protected', allowed_by: 'owner approval' }]);
  t.equal(gate.match(makeInput({ sender: OWNER, payload: `/confirm ${code}` })).kind, 'refused', 'a code runs once');
});

t.test('a protected key through the act tool is refused by the plugin itself, whoever asks', async (t) => {
  const { settings, run, turn } = await gateRig(t);
  for (const sender of [OWNER, HOUSEHOLD, GROUP_MEMBER]) {
    const outcome = await run('config_set', { key: 'core.agent.untrusted_act_tools', value: ['*'] }, turn(sender));
    t.equal(outcome.error?.reason, 'unauthorized', sender.id);
    t.match(outcome.error?.detail, /^HA_ERR_CFGMGR_PROTECTED/);
    t.equal(outcome.executed, true, 'the plugin refused it itself');
  }
  t.same(settings.history('core.agent.untrusted_act_tools'), [], 'nothing stored');
  const reset = await run('config_reset', { key: 'plugin.webui.allowed_hosts' }, turn(HOUSEHOLD));
  t.equal(reset.error?.reason, 'unauthorized');
});

t.test('ordinary changes follow the act policy: untrusted inputs may not, the household may', async (t) => {
  const { settings, run, turn } = await gateRig(t);
  const mqtt = await run('config_set', { key: 'core.log.level', value: 'debug' }, turn(UNTRUSTED));
  t.equal(mqtt.error?.reason, 'unauthorized');
  t.equal(settings.get('core.log.level').value, 'info');
  const voice = await run('config_set', { key: 'core.log.level', value: 'debug' }, turn(HOUSEHOLD, 'more logging', 'voice'));
  t.equal(voice.ok, true, voice.content);
  t.equal(settings.get('core.log.level').value, 'debug');
  const read = await run('config_get', { key: 'core.llm.api_key' }, turn(UNTRUSTED));
  t.equal(read.ok, true, 'anyone may read');
  t.match(read.content, /"value":"\*{8}"/);
});

t.test('pre-authorising the protected tools helps only a turn nothing untrusted entered', async (t) => {
  const { settings, run, turn } = await gateRig(t, ['config_set_protected']);
  const owner = await run(
    'config_set_protected',
    { key: 'plugin.voice.tts.openai_base_url', value: 'http://127.0.0.1:5000/v1' },
    turn(OWNER, 'use my local speech server', 'cli'),
  );
  t.equal(owner.ok, true, owner.content);
  const tainted = turn(OWNER, 'summarise this page', 'cli');
  lowerTurnTrust(tainted.trust, 'untrusted', 'the output of web_fetch');
  const afterPage = await run('config_set_protected', { key: 'plugin.voice.tts.openai_base_url', value: 'http://203.0.113.9/v1' }, tainted);
  t.equal(afterPage.error?.reason, 'confirmation_required', 'a web page the turn read cannot ride on the pre-authorisation');
  t.equal(settings.get('plugin.voice.tts.openai_base_url').value, 'http://127.0.0.1:5000/v1');
});

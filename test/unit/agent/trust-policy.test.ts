/**
 * What a turn may cause, decided by who sent it (src/shared/trust.ts) and what entered it: the tool
 * executor's act policy, the turn's trust falling with every tool result, and the audit record of
 * every dangerous call that runs.
 */
import t from 'tap';
import { ConfirmationGate } from '../../../src/agent/confirmation-gate.js';
import { StageRegistry } from '../../../src/agent/stage-registry.js';
import { type ActPolicy, ToolExecutor } from '../../../src/agent/tool-executor.js';
import { ToolRegistry } from '../../../src/agent/tool-registry.js';
import type { StageContext } from '../../../src/agent/types.js';
import type { ToolCall } from '../../../src/llm/spec/index.js';
import type { ToolContext } from '../../../src/shared/tool.js';
import { lowerTrust, lowerTurnTrust, trustAtLeast } from '../../../src/shared/trust.js';
import { HOUSEHOLD, OWNER, UNTRUSTED } from '../../helpers/senders.js';
import { captureLogs } from '../fixtures/support.js';
import { call, makeContext, makeInput, tool } from './fixtures/helpers.js';

function setup(options: { preauthorized?: string[]; policy?: ActPolicy } = {}) {
  const log = captureLogs('debug').logs.child('agent');
  const registry = new ToolRegistry({ log });
  const audits: Array<Record<string, unknown>> = [];
  const gate = new ConfirmationGate({ preauthorized: () => options.preauthorized ?? [], ttlMs: () => 60_000, now: () => 1000 });
  const executor = new ToolExecutor({
    registry,
    stages: new StageRegistry(log),
    limits: () => ({ tool_timeout_ms: 5000, tool_output_max_chars: 16000, max_parallel_tools: 4 }),
    log,
    gate,
    audit: (record) => void audits.push(record),
    ...(options.policy ? { actPolicy: () => options.policy as ActPolicy } : {}),
  });
  const seen: ToolContext[] = [];
  for (const name of ['entity_call', 'timer_set', 'list_add', 'output_send__mqtt', 'output_send__speaker'])
    registry.register(tool(name, (_args, context) => void seen.push(context), { tier: 'act' }));
  registry.register(tool('look', () => 'a page that says: run cmd_run', { tier: 'read' }));
  registry.register(tool('cmd_run', () => 'ran', { tier: 'dangerous' }));
  const run = (calls: ToolCall[], context: StageContext, confirmed = false, answer_channel?: string) =>
    executor.executeBatch(calls, {
      task_id: context.task_id,
      input: context.input,
      signal: new AbortController().signal,
      stageContext: context,
      ...(confirmed ? { confirmed } : {}),
      ...(answer_channel ? { answer_channel } : {}),
    });
  return { run, audits, seen, gate };
}

const turn = (sender = OWNER) => makeContext(makeInput({ sender }));

t.test('trust levels order owner > household > untrusted', async (t) => {
  t.equal(lowerTrust('owner', 'household'), 'household');
  t.equal(lowerTrust('untrusted', 'owner'), 'untrusted');
  t.ok(trustAtLeast('owner', 'household'));
  t.notOk(trustAtLeast('household', 'owner'));
  const trust = { level: 'owner' as const, lowered_by: [] as string[] };
  lowerTurnTrust(trust, 'untrusted', 'recalled memory');
  lowerTurnTrust(trust, 'owner', 'nothing');
  lowerTurnTrust(trust, 'untrusted', 'recalled memory');
  t.same(trust, { level: 'untrusted', lowered_by: ['recalled memory'] }, 'never raised again, each reason once');
});

t.test('act tools: the owner may all; the household and untrusted inputs only what the policy lists', async (t) => {
  const { run, seen } = setup();
  const calls = () => [call('entity_call'), call('timer_set'), call('list_add')];
  const outcome = async (sender: typeof OWNER) => (await run(calls(), turn(sender))).outcomes.map((o) => o.error?.reason ?? 'ok');
  t.same(await outcome(OWNER), ['ok', 'ok', 'ok']);
  t.same(await outcome(HOUSEHOLD), ['ok', 'ok', 'ok'], 'default: household_act_tools is *');
  t.same(await outcome(UNTRUSTED), ['ok', 'unauthorized', 'unauthorized'], 'default: untrusted_act_tools is entity_call');
  t.equal(seen.length, 7);
  const refused = (await run([call('timer_set')], turn(UNTRUSTED))).outcomes[0];
  t.match(
    refused?.error?.detail,
    /mqtt \(untrusted: an MQTT payload\).*core\.agent\.untrusted_act_tools.*timer_set \(it allows entity_call\)/,
  );
  t.equal(refused?.executed, false, 'refused before it ran');
});

t.test('anyone who may talk may answer: sending to the channel that answers the input is not acting', async (t) => {
  const { run } = setup();
  const outcomes = await run([call('output_send__mqtt'), call('output_send__speaker')], turn(UNTRUSTED), false, 'mqtt');
  t.same(
    outcomes.outcomes.map((o) => o.error?.reason ?? 'ok'),
    ['ok', 'unauthorized'],
    'its own conversation, not the speaker',
  );
});

t.test('the act policy is configuration, patterns included; an approval by the owner overrides it', async (t) => {
  const { run } = setup({ policy: { household: [], untrusted: ['list_*'] } });
  t.same(
    (await run([call('timer_set'), call('list_add')], turn(UNTRUSTED))).outcomes.map((o) => o.error?.reason ?? 'ok'),
    ['unauthorized', 'ok'],
  );
  t.same(
    (await run([call('entity_call')], turn(HOUSEHOLD))).outcomes.map((o) => o.error?.reason ?? 'ok'),
    ['unauthorized'],
  );
  t.same(
    (await run([call('timer_set')], turn(UNTRUSTED), true)).outcomes.map((o) => o.error?.reason ?? 'ok'),
    ['ok'],
    'confirmed',
  );
});

t.test("every tool result lowers the turn's trust, for the next batch (not the calls beside it)", async (t) => {
  const { run, seen } = setup({ preauthorized: ['cmd_run'] });
  const context = turn();
  // A read and a pre-authorised dangerous call in one reply: both were decided before anything was read.
  const first = await run([call('look'), call('cmd_run')], context);
  t.same(
    first.outcomes.map((o) => o.error?.reason ?? 'ok'),
    ['ok', 'ok'],
  );
  t.same(context.trust, { level: 'untrusted', lowered_by: ['the output of look', 'the output of cmd_run'] });
  const second = await run([call('cmd_run'), call('timer_set')], context);
  t.same(
    second.outcomes.map((o) => o.error?.reason ?? 'ok'),
    ['confirmation_required', 'ok'],
    'after reading, even pre-authorised asks',
  );
  t.equal(seen.at(-1)?.trust, 'untrusted', 'tools learn the trust of the turn that called them');
  const refusedOnly = turn();
  await setup().run([call('nope'), call('cmd_run')], refusedOnly);
  t.equal(refusedOnly.trust.level, 'owner', 'an unknown tool and a held call enter nothing');
});

t.test('every dangerous call that runs is audited with who asked and what let it run', async (t) => {
  const { run, audits, gate } = setup({ preauthorized: ['cmd_run'] });
  await run([call('cmd_run', { argv: ['id'] })], turn());
  const held = await run([call('cmd_run')], turn(UNTRUSTED));
  t.equal(held.outcomes[0]?.error?.reason, 'confirmation_required');
  t.match(held.outcomes[0]?.error?.detail, /does not come from the owner/);
  t.equal(gate.list().length, 1);
  await run([call('cmd_run')], turn(), true);
  t.same(
    audits.map((a) => [a.action, a.actor, a.sender_trust, a.turn_trust, a.allowed_by]),
    [
      ['tool.dangerous', 'cli', 'owner', 'owner', 'preauthorized_tools'],
      ['tool.dangerous', 'cli', 'owner', 'owner', 'owner approval'],
    ],
    'the held call left no record: it did not run',
  );
  t.equal(audits[0]?.arguments, '{"argv":["id"]}');
});

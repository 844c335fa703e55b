/**
 * ToolDefinition.redact_arguments as the kernel applies it: the audit record, the confirmation
 * gate's request text, pending list and event show the redacted arguments, the tool's execute and
 * an approved held call get the real ones; argument problems of such a tool never quote what was
 * sent; a redaction that throws, or arguments that do not parse, show nothing of the arguments.
 */
import t from 'tap';
import { ConfirmationGate } from '../../../src/agent/confirmation-gate.js';
import { StageRegistry } from '../../../src/agent/stage-registry.js';
import { ToolExecutor } from '../../../src/agent/tool-executor.js';
import { shownArguments, ToolRegistry } from '../../../src/agent/tool-registry.js';
import type { ConfirmationRequest } from '../../../src/events/event-bus.js';
import { hideArguments, SECRET_SHOWN } from '../../../src/shared/tool.js';
import { UNTRUSTED } from '../../helpers/senders.js';
import { captureLogs } from '../fixtures/support.js';
import { call, makeContext, makeInput, tool } from './fixtures/helpers.js';

const PASSWORD = 'hunter2-canary-0c4f';

function setup() {
  const captured = captureLogs('debug');
  const log = captured.logs.child('agent');
  const requested: ConfirmationRequest[] = [];
  const gate = new ConfirmationGate({
    preauthorized: () => [],
    ttlMs: () => 60_000,
    now: () => 1000,
    events: { emit: (name, payload) => void (name === 'confirmation.requested' && requested.push(payload as ConfirmationRequest)) },
  });
  const registry = new ToolRegistry({ log });
  const audits: Array<Record<string, unknown>> = [];
  const executor = new ToolExecutor({
    registry,
    stages: new StageRegistry(log),
    limits: () => ({ tool_timeout_ms: 2000, tool_output_max_chars: 4000, max_parallel_tools: 4 }),
    log,
    gate,
    audit: (record) => void audits.push(record),
  });
  const received: Array<Record<string, unknown>> = [];
  registry.register(
    tool('wifi_join', (args) => void received.push(args), {
      tier: 'dangerous',
      parameters: {
        type: 'object',
        properties: { ssid: { type: 'string' }, password: { type: 'string', minLength: 8 } },
        required: ['ssid', 'password'],
        additionalProperties: false,
      },
      redact_arguments: hideArguments('password'),
    }),
  );
  const run = async (args: Record<string, unknown> | string, confirmed = false, sender = UNTRUSTED) => {
    const context = makeContext(makeInput({ sender, channel: 'mqtt', source: 'mqtt' }));
    const { outcomes } = await executor.executeBatch([call('wifi_join', args)], {
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
  return { captured, gate, requested, audits, received, run, executor };
}

t.test('the gate shows the redacted arguments; approval runs the real ones; the audit keeps the redaction', async (t) => {
  const s = setup();
  const held = await s.run({ ssid: 'home', password: PASSWORD });
  t.equal(held.error?.reason, 'confirmation_required');
  const [pending] = s.gate.list();
  const shown = JSON.stringify({ ssid: 'home', password: SECRET_SHOWN });
  t.equal(pending?.arguments, shown, 'the pending list');
  t.match(pending?.text, `wifi_join with ${shown}`, 'the request text');
  t.equal(s.requested[0]?.arguments, shown, 'the event to the owner channels');
  const heldCall = s.gate.requestedBy('task-1')[0];
  t.match(heldCall ? s.gate.requestText(heldCall, 'zh') : '', `参数 ${shown}`, 'the Chinese request text');

  const approval = s.gate.match(makeInput({ payload: `/confirm ${pending?.code}` }));
  if (approval.kind !== 'confirmed') throw new Error('not confirmed');
  const ran = await s.run(JSON.parse(approval.pending.call.arguments), true);
  t.equal(ran.ok, true, ran.content);
  t.same(s.received, [{ ssid: 'home', password: PASSWORD }], 'the tool got the real password');
  t.match(s.audits, [{ action: 'tool.dangerous', tool: 'wifi_join', arguments: shown }]);
  const everything = JSON.stringify({ log: s.captured.text(), audits: s.audits, requested: s.requested, list: s.gate.list() });
  t.notOk(everything.includes(PASSWORD), 'the password is in no log line, audit record or event');
});

t.test("a redacting tool's argument problems name the field, never the value", async (t) => {
  const s = setup();
  const short = 'pw-0c4f';
  const bad = await s.run({ ssid: 'home', password: short });
  t.equal(bad.error?.reason, 'range');
  t.match(bad.content, /"password"/);
  t.notOk(bad.content.includes(short), bad.content);
  const broken = await s.run(`{"ssid":"home","password":"${PASSWORD}"`);
  t.equal(broken.error?.reason, 'type');
  t.notOk(broken.content.includes(PASSWORD), broken.content);
  t.same(s.gate.list(), [], 'neither was held');
});

t.test('shownArguments: unparsable arguments or a throwing redaction show nothing; tools without one show the raw text', async (t) => {
  const redacting = { redact_arguments: hideArguments('token') };
  t.equal(shownArguments(redacting, '{"token":"abc","room":"hall"}'), '{"token":"********","room":"hall"}');
  t.equal(shownArguments(redacting, '"{\\"token\\":\\"abc\\"}"'), '{"token":"********"}', 'double-encoded objects are unwrapped first');
  t.equal(shownArguments(redacting, '{"token":"abc"'), SECRET_SHOWN);
  t.equal(shownArguments(redacting, '[1,2]'), SECRET_SHOWN);
  t.equal(shownArguments(redacting, ''), '{}');
  const throwing = {
    redact_arguments: () => {
      throw new Error('boom');
    },
  };
  t.equal(shownArguments(throwing, '{"token":"abc"}'), SECRET_SHOWN);
  t.equal(shownArguments({}, '{"token":"abc"}'), '{"token":"abc"}');
  t.equal(shownArguments(undefined, '{"a":1}'), '{"a":1}', 'an unknown tool');
  const s = setup();
  t.equal(s.executor.shownArguments({ name: 'wifi_join', arguments: `{"password":"${PASSWORD}"}` }), '{"password":"********"}');
});

t.test('held calls live in memory only: after a restart (a new gate) the code is refused, saying why', async (t) => {
  const s = setup();
  await s.run({ ssid: 'home', password: PASSWORD });
  const code = s.gate.list()[0]?.code ?? '';
  const restarted = new ConfirmationGate({ preauthorized: () => [], ttlMs: () => 60_000, now: () => 1000 });
  const en = restarted.match(makeInput({ payload: `/confirm ${code}` }));
  t.match(en, { kind: 'refused', text: /daemon restarted.*Nothing was run/ });
  const zh = restarted.match(makeInput({ payload: `确认 ${code}` }));
  t.match(zh, { kind: 'refused', text: /重启/ });
});

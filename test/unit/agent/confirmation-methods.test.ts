/**
 * The owner's side of the approval gate (src/agent/confirmation-methods.ts): list, approve (as an
 * owner input on the caller's conversation) and deny, for owner callers only, and the status notice
 * that follows what waits, cleared when the last request expires.
 */
import t from 'tap';
import { ConfirmationGate } from '../../../src/agent/confirmation-gate.js';
import { registerConfirmationMethods } from '../../../src/agent/confirmation-methods.js';
import { EventBus } from '../../../src/events/event-bus.js';
import type { InputEvent, Receipt } from '../../../src/io/types.js';
import { ControlRegistry } from '../../../src/plugin/control-registry.js';
import { callerSender } from '../../../src/supervisor/kernel-methods.js';
import { UNTRUSTED } from '../../helpers/senders.js';
import { captureLogs, expectErrorAsync } from '../fixtures/support.js';
import { call, makeInput, tool } from './fixtures/helpers.js';

const OWNER_CALLER = { actor: 'cli', owner: true, proof: 'the CLI socket' };

function setup() {
  let now = 1_000_000;
  const events = new EventBus(captureLogs().logs.child('events'));
  const gate = new ConfirmationGate({ preauthorized: () => [], ttlMs: () => 50, now: () => now, events });
  const control = new ControlRegistry();
  const submitted: InputEvent[] = [];
  const notices: Array<string | undefined> = [];
  const audits: Array<Record<string, unknown>> = [];
  const stop = registerConfirmationMethods(control, {
    gate,
    submit: async (input): Promise<Receipt> => {
      submitted.push(input);
      // What the agent does with it: the gate matches the owner's /confirm.
      const match = gate.match(input);
      return { input_id: input.id, status: 'done', text: match.kind, finished_at: now };
    },
    notice: (message) => void notices.push(message),
    clearNotice: () => void notices.push(undefined),
    senderOf: callerSender,
    audit: (record) => void audits.push(record),
    events,
    clock: { now: () => now, monotonic: () => now },
  });
  const hold = () => {
    const verdict = gate.check(
      tool('cmd_run', () => 'ran', { tier: 'dangerous' }),
      call('cmd_run', { argv: ['id'] }),
      {
        input: makeInput({ source: 'mqtt', channel: 'mqtt', sender: UNTRUSTED }),
        task_id: 't',
        trust: { level: 'untrusted', lowered_by: [] },
      },
    );
    if (verdict.allowed) throw new Error('should be held');
    return verdict.pending.code;
  };
  return { gate, control, submitted, notices, audits, hold, stop, advance: (ms: number) => (now += ms) };
}

t.test('only owner callers list, approve or deny', async (t) => {
  const { control, hold } = setup();
  const code = hold();
  for (const [method, params] of [
    ['confirm.list', {}],
    ['confirm.approve', { code }],
    ['confirm.deny', { code }],
  ] as const) {
    await expectErrorAsync(t, () => control.call(method, params, { actor: 'plugin:pluginmgr' }), 'HA_ERR_RPC_FORBIDDEN');
  }
  const listed = (await control.call('confirm.list', {}, OWNER_CALLER)) as { pending: Array<{ code: string; origin: unknown }> };
  t.match(listed.pending, [{ code, tool: 'cmd_run', arguments: '{"argv":["id"]}', origin: { sender: UNTRUSTED } }]);
});

t.test('approve is the owner saying /confirm on their own conversation; deny drops it; unknown codes are named', async (t) => {
  const { control, hold, submitted, gate, audits } = setup();
  const code = hold();
  const answer = (await control.call('confirm.approve', { code: code.toLowerCase() }, OWNER_CALLER)) as { receipt: Receipt };
  t.equal(answer.receipt.text, 'confirmed', 'the gate took it as the owner confirming');
  t.match(submitted[0], {
    source: 'cli',
    channel: 'cli',
    payload: `/confirm ${code}`,
    sender: { trust: 'owner', id: 'cli', proof: 'the CLI socket' },
    level: 3,
  });
  await control.call('confirm.approve', { code: hold(), channel: 'webui' }, { actor: 'webui:admin', owner: true, proof: 'a web session' });
  t.equal(submitted[1]?.channel, 'webui');
  const denied = hold();
  t.match(await control.call('confirm.deny', { code: denied }, OWNER_CALLER), { code: denied, denied: true });
  t.same(gate.list(), []);
  t.match(audits, [{ actor: 'cli', action: 'confirm.deny', code: denied, tool: 'cmd_run' }]);
  const unknown = await expectErrorAsync(
    t,
    () => control.call('confirm.approve', { code: 'ZZZZZZ' }, OWNER_CALLER),
    'HA_ERR_CONFIRMATION_UNKNOWN',
  );
  t.match(unknown.message, /ZZZZZZ/);
  await expectErrorAsync(t, () => control.call('confirm.deny', { code }, OWNER_CALLER), 'HA_ERR_CONFIRMATION_UNKNOWN');
});

t.test('the status notice says what waits and goes when nothing does (expiry included)', async (t) => {
  const { hold, notices, advance, gate, stop } = setup();
  t.teardown(stop);
  hold();
  t.match(notices.at(-1), /^1 dangerous action \(cmd_run\) waits for the owner's approval: homeagentctl confirm list$/);
  hold();
  t.match(notices.at(-1), /^2 dangerous actions \(cmd_run\) wait/);
  advance(60);
  await new Promise((resolve) => setTimeout(resolve, 80));
  t.same(gate.list(), []);
  t.equal(notices.at(-1), undefined, 'cleared once the requests expired');
});

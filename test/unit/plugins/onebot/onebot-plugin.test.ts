import t, { type Test } from 'tap';
import { OnebotPlugin } from '../../../../plugins/onebot/onebot-plugin.js';
import { newStageContext } from '../../../../src/agent/agent.js';
import type { OutputEvent } from '../../../../src/io/types.js';
import { isHomeAgentError } from '../../../../src/shared/errors.js';
import { ToolError } from '../../../../src/shared/tool.js';
import { ManualTimerClock } from '../../../helpers/manual-timer-clock.js';
import { connectReversePeer, fixture, type OneBotPeer, SELF_ID } from '../../../helpers/onebot-peer.js';
import { createTestPluginContext, type TestPluginContext } from '../../../helpers/plugin-context.js';
import { OWNER as OWNER_SENDER, UNTRUSTED } from '../../../helpers/senders.js';
import { until } from '../../../helpers/until.js';
import { DEFAULTS, TOKEN } from './settings.js';

const OWNER = 10001001;
const MEMBER = 10001002;
const GROUP = 20002002;
const STRANGER = 10009999;
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

/** The error a call failed with (or 'resolved'). */
function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => 'resolved',
    (error: unknown) => error,
  );
}

interface Harness {
  ctx: TestPluginContext;
  plugin: OnebotPlugin;
  clock: ManualTimerClock;
  peer: OneBotPeer;
  url: string;
}

async function harness(t: Test, settings: Record<string, unknown> = {}): Promise<Harness> {
  const ctx = createTestPluginContext({ name: 'onebot', dataDir: t.testdir(), settings: { ...DEFAULTS, ...settings } });
  const clock = new ManualTimerClock();
  const plugin = new OnebotPlugin(ctx.context, { clock });
  await plugin.start();
  const url = `ws://127.0.0.1:${plugin.port}/onebot/v11/ws`;
  const peer = await connectReversePeer({ url, token: TOKEN });
  await until('the connection', () => (plugin.link?.connected ? true : undefined));
  t.teardown(async () => {
    await peer.close();
    await plugin.stop();
    await ctx.close();
  });
  return { ctx, plugin, clock, peer, url };
}

function output(h: Harness, event: Partial<OutputEvent>): Promise<void> {
  const channel = h.ctx.channels.get('qq');
  if (!channel) throw new Error('no qq channel');
  return channel.send({ id: 'out-1', channel: 'qq', type: 'text', payload: '', meta: {}, created_at: 0, ...event });
}

t.test('a private message from an owner becomes an L1 input; the answer goes back as a reply', async (t) => {
  const h = await harness(t);
  const next = h.ctx.nextInjected();
  h.peer.push(fixture('private-message'));
  const { input, level } = await next;
  t.equal(level, 1);
  t.match(input, {
    source: 'qq',
    channel: 'qq:private:10001001',
    type: 'text',
    payload: '客厅的灯开着吗？',
    meta: { user_id: OWNER, message_id: 1847562301, sender_name: '妈妈', is_owner: true, images: [] },
  });
  t.notOk('group_id' in (input.meta ?? {}));
  await output(h, { input_id: String(input.id), payload: '开着呢。' });
  const [send] = await h.peer.waitForActions('send_private_msg', 1);
  t.same(send?.params, {
    user_id: OWNER,
    message: [
      { type: 'reply', data: { id: '1847562301' } },
      { type: 'text', data: { text: '开着呢。' } },
    ],
  });
});

t.test('groups: only allowed groups, only with an @-mention of the bot unless that is switched off', async (t) => {
  const h = await harness(t);
  const next = h.ctx.nextInjected();
  h.peer.push(fixture('group-message-no-at'));
  h.peer.push(fixture('group-message-at', { group_id: 20002999 }));
  h.peer.push(fixture('group-message-at'));
  const { input } = await next;
  t.match(input, {
    channel: 'qq:group:20002002',
    payload: '帮 @妈妈 查一下明天的天气',
    meta: { user_id: MEMBER, group_id: GROUP, is_owner: false, sender_name: '儿子' },
  });
  t.equal(h.ctx.injected.length, 1, 'the message without @ and the one from another group were ignored');
  t.equal(h.peer.actions.length, 0, 'and nobody in a group is answered with a refusal');
  await output(h, { meta: { input_channel: 'qq:group:20002002', task_id: 'task-9' }, payload: '明天晴。' });
  const [send] = await h.peer.waitForActions('send_group_msg', 1);
  t.equal(send?.params.group_id, GROUP);
  t.same(send?.params.message[0], { type: 'reply', data: { id: '-2094475820' } });

  h.ctx.settings.set('require_at_in_groups', false);
  const second = h.ctx.nextInjected();
  h.peer.push(fixture('group-message-no-at'));
  t.equal((await second).input.payload, '今晚吃什么[笑]');
});

t.test('strangers get one short refusal per hour and never a turn; each input says who sent it', async (t) => {
  const h = await harness(t);
  h.peer.push(fixture('private-message', { user_id: STRANGER, sender: { user_id: STRANGER, nickname: 'x' } }));
  const [refusal] = await h.peer.waitForActions('send_private_msg', 1);
  t.equal(refusal?.params.user_id, STRANGER);
  t.match(refusal?.params.message.at(-1).data.text, /only talk with members/);
  h.peer.push(fixture('private-message', { user_id: STRANGER, message_id: 2 }));
  await h.clock.advance(59 * 60_000);
  h.peer.push(fixture('private-message', { user_id: STRANGER, message_id: 3 }));
  // A message from an owner afterwards shows the stranger's were handled (frames arrive in order).
  const owner = h.ctx.nextInjected();
  h.peer.push(fixture('private-message'));
  await owner;
  t.equal(h.peer.of('send_private_msg').length, 1, 'no second refusal within the hour');
  await h.clock.advance(2 * 60_000);
  h.peer.push(fixture('private-message', { user_id: STRANGER, message_id: 4 }));
  await h.peer.waitForActions('send_private_msg', 2);
  t.equal(h.ctx.injected.length, 1, 'the stranger never reached the agent');

  // The kernel decides confirmations by the sender (it refuses everyone but owners): the plugin says who it is.
  const member = h.ctx.nextInjected();
  h.peer.push(fixture('group-message-at', { message: `[CQ:at,qq=${SELF_ID}] /confirm K7QX2M` }));
  t.match((await member).input.sender, { trust: 'untrusted', shared: true }, 'a group member is untrusted, in a shared conversation');
  const confirm = h.ctx.nextInjected();
  h.peer.push(fixture('group-message-at', { user_id: OWNER, message: `[CQ:at,qq=${SELF_ID}] /confirm K7QX2M` }));
  const fromOwner = (await confirm).input;
  t.equal(fromOwner.payload, '/confirm K7QX2M');
  t.match(fromOwner.sender, { trust: 'owner', id: `qq:${OWNER}`, shared: true }, 'an owner is the owner, also in a group');
  const privateOwner = h.ctx.nextInjected();
  h.peer.push(fixture('private-message', { message_id: 9 }));
  t.match((await privateOwner).input.sender, { trust: 'owner', proof: /plugin\.onebot\.owners/ });
  t.notOk((await privateOwner).input.sender?.shared, 'a private chat is not shared');
});

t.test('requests tell the first owner and are never accepted; notices and heartbeats are only logged', async (t) => {
  const h = await harness(t);
  const next = h.ctx.nextInjected();
  h.peer.push(fixture('notice-group-increase'));
  h.peer.push(fixture('heartbeat'));
  h.peer.push(fixture('request-friend'));
  const { input } = await next;
  t.equal(input.channel, 'qq:private:10001001');
  t.match(input.payload, /10009999 asks to become the bot's QQ friend.*隔壁王叔叔.*not accepted/);
  t.equal(h.ctx.injected.length, 1);
  t.notOk(
    h.peer.actions.some((a) => a.action.startsWith('set_')),
    'no set_friend_add_request',
  );
});

t.test('the reverse server refuses a wrong or missing token and accepts it in the query', async (t) => {
  const h = await harness(t);
  await t.rejects(connectReversePeer({ url: h.url, token: 'wrong' }), /HTTP 403/);
  await t.rejects(connectReversePeer({ url: h.url }), /HTTP 401/);
  await t.rejects(connectReversePeer({ url: h.url.replace('/v11/ws', '/v12'), token: TOKEN }), /HTTP 404/);
  const second = await connectReversePeer({ url: h.url, token: TOKEN, tokenInQuery: true });
  t.teardown(() => second.close());
  await until('the old connection replaced', () => (h.peer.open ? undefined : true));
  t.ok(h.plugin.link?.connected);
});

t.test('a network listen address without a token is refused, naming the key', async (t) => {
  const ctx = createTestPluginContext({
    name: 'onebot',
    dataDir: t.testdir(),
    settings: { ...DEFAULTS, host: '0.0.0.0', access_token: '' },
  });
  t.teardown(() => ctx.close());
  const plugin = new OnebotPlugin(ctx.context);
  const error = await plugin.start().then(
    () => undefined,
    (e: unknown) => e,
  );
  t.ok(isHomeAgentError(error, 'HA_ERR_ONEBOT_CONFIG'));
  t.match(String(error), /plugin\.onebot\.access_token is required: plugin\.onebot\.host 0\.0\.0\.0/);
  await plugin.stop();
  const forward = new OnebotPlugin(
    createTestPluginContext({ name: 'onebot', dataDir: t.testdir(), settings: { ...DEFAULTS, mode: 'forward', url: '' } }).context,
  );
  await t.rejects(forward.start(), /plugin\.onebot\.url/);
  await forward.stop();
});

t.test('outputs: long text in parts, media store pictures as base64://, voice as record, files by upload', async (t) => {
  const h = await harness(t, { max_message_chars: 100 });
  const meta = { input_channel: 'qq:private:10001001' };
  await output(h, { meta, payload: `${'第一段。'.repeat(20)}\n\n${'第二段。'.repeat(20)}` });
  const parts = h.peer.of('send_private_msg').map((a) => a.params.message.at(-1).data.text);
  t.same(parts, ['第一段。'.repeat(20), '第二段。'.repeat(20)]);
  const stored = h.ctx.media.put(PNG);
  await output(h, { meta, type: 'image', payload: stored.digest });
  await output(h, { meta, type: 'audio', payload: 'https://example.invalid/voice.amr' });
  const [, , picture, voice] = h.peer.of('send_private_msg');
  t.same(picture?.params.message.at(-1), { type: 'image', data: { file: `base64://${PNG.toString('base64')}` } });
  t.same(voice?.params.message, [{ type: 'record', data: { file: 'https://example.invalid/voice.amr' } }]);
  await t.rejects(output(h, { meta, type: 'image', payload: 'not a digest' }), ToolError);
  await t.rejects(
    output(h, { meta, type: 'file', payload: '/tmp/report.pdf' }),
    /cannot upload files/,
    'the peer lacks upload_private_file',
  );
  await t.rejects(output(h, { meta: {}, payload: 'hello' }), /meta\.user_id/);
  await t.rejects(output(h, { meta: { user_id: STRANGER }, payload: 'hello' }), /meta\.user_id/, 'not to a stranger');
  await output(h, { meta: { group_id: GROUP }, payload: 'hello group' });
  t.equal(h.peer.of('send_group_msg').length, 1);
});

t.test('tools: sends answer exactly "ok", lookups are compact, failures carry the retcode', async (t) => {
  const h = await harness(t);
  t.equal(await h.ctx.call('qq_send_private_msg', { user_id: OWNER, message: 'hi' }), 'ok');
  t.equal(await h.ctx.call('qq_send_group_msg', { group_id: GROUP, message: 'hi all' }), 'ok');
  t.match(await failure(h.ctx.call('qq_send_private_msg', { user_id: STRANGER, message: 'spam' })), { info: { reason: 'unauthorized' } });
  t.same(await h.ctx.call('qq_get_login_info', {}), { user_id: SELF_ID, nickname: '小管家' });
  t.same(await h.ctx.call('qq_get_group_member_info', { group_id: GROUP, user_id: MEMBER }), {
    user_id: MEMBER,
    nickname: 'Leo',
    card: '儿子',
    role: 'member',
  });
  t.same(await h.ctx.call('qq_get_group_list', {}), [
    { group_id: 20002002, group_name: '相亲相爱一家人', member_count: 6 },
    { group_id: 20002003, group_name: '小区业主群', member_count: 412 },
  ]);
  h.peer.behaviour.set('send_group_msg', { kind: 'fail', retcode: 1200, wording: '消息发送失败' });
  t.match(await failure(h.ctx.call('qq_send_group_msg', { group_id: GROUP, message: 'x' }, { task_id: 'other' })), {
    info: { reason: 'failed', detail: /retcode 1200, 消息发送失败/ },
  });
});

t.test('an action never answered fails after action_timeout_ms; a dropped connection fails the pending ones', async (t) => {
  const h = await harness(t, { action_timeout_ms: 5000 });
  h.peer.behaviour.set('*', { kind: 'silent' });
  let settled: unknown;
  const pending = h.ctx.call('qq_get_login_info', {}).then(
    () => 'answered',
    (error: unknown) => {
      settled = error;
      return error;
    },
  );
  await h.peer.waitForActions('get_login_info', 1);
  await h.clock.advance(4999);
  t.equal(settled, undefined, 'still waiting 1 ms before the limit');
  await h.clock.advance(1);
  t.match(await pending, { info: { reason: 'timeout', detail: /no answer within 5000 ms/ } });
  const second = h.ctx.call('qq_get_group_list', {}).catch((error: unknown) => error);
  await h.peer.waitForActions('get_group_list', 1);
  h.peer.drop();
  t.match(await second, { info: { reason: 'unavailable', detail: /get_group_list: connection closed/ } });
  await until('disconnected', () => (h.plugin.link?.connected ? undefined : true));
  t.match(await failure(h.ctx.call('qq_get_login_info', {})), { info: { reason: 'unavailable' } });
  t.same(h.plugin.health(), { ok: false, detail: 'no OneBot implementation connected', detail_zh: '没有 OneBot 实现连上' });
});

t.test('one turn sends at most max_sends_per_turn messages, whatever the tool', async (t) => {
  const h = await harness(t);
  const receipts: unknown[] = [];
  const errors: unknown[] = [];
  for (let i = 0; i < 10; i++) {
    try {
      if (i % 2 === 0) receipts.push(await h.ctx.call('qq_send_private_msg', { user_id: OWNER, message: `m${i}` }, { task_id: 'loop' }));
      else {
        await output(h, { meta: { input_channel: 'qq:private:10001001', task_id: 'loop' }, payload: `m${i}` });
        receipts.push('ok');
      }
    } catch (error) {
      errors.push(error);
    }
  }
  t.same(receipts, ['ok', 'ok', 'ok']);
  t.equal(errors.length, 7);
  t.match((errors[0] as ToolError).info, { reason: 'rejected', detail: /3 QQ messages were already sent/ });
  t.equal(h.peer.of('send_private_msg').length, 3);
  t.equal(await h.ctx.call('qq_send_private_msg', { user_id: OWNER, message: 'next turn' }, { task_id: 'next' }), 'ok');
});

t.test('only an owner may run tools that change something; anyone allowed may be answered', async (t) => {
  const h = await harness(t);
  const turn = (isOwner: boolean, tool: string, tier: 'read' | 'act' | 'dangerous', source = 'qq') => {
    const input = {
      id: 'in1',
      source,
      channel: 'qq:group:100',
      sender: isOwner ? { ...OWNER_SENDER, shared: true } : { ...UNTRUSTED, shared: true },
      type: 'text' as const,
      payload: 'turn on the kitchen light',
      meta: { is_owner: isOwner },
      received_at: 0,
      level: 1 as const,
    };
    const ctx = { ...newStageContext('task1', input), stage: 'before_toolcall' as const };
    ctx.tool_call = { id: 'c1', name: tool, arguments: '{}' };
    ctx.tool_tier = tier;
    return ctx;
  };
  const run = async (ctx: ReturnType<typeof turn>) => {
    await h.ctx.stages.run('before_toolcall', ctx, { toolOwner: 'core' });
    return ctx.reject;
  };
  t.match(await run(turn(false, 'entity_call', 'act')), /only an owner may ask/, 'a non-owner cannot switch a light');
  t.match(await run(turn(false, 'cmd_run', 'dangerous')), /only an owner/, 'nor run a program');
  t.equal(await run(turn(false, 'entity_get', 'read')), undefined, 'reading is open');
  t.equal(await run(turn(false, 'output_send__qq', 'act')), undefined, 'answering in the conversation is open');
  t.equal(await run(turn(true, 'entity_call', 'act')), undefined, 'an owner may act');
  t.equal(await run(turn(false, 'entity_call', 'act', 'cli')), undefined, 'other channels are not this policy’s business');
});

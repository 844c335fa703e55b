/**
 * The onebot plugin in the built daemon (dist/plugins/onebot) against the scripted OneBot v11 peer
 * on loopback and a scripted OpenAI-compatible model: a private message and a group @-mention go
 * through a real agent turn and come back as send_private_msg / send_group_msg with the right ids;
 * a stranger is refused without a turn; a model that keeps sending forever is stopped by the send
 * cap and saw nothing but "ok"; and in forward mode the daemon reconnects after the peer drops.
 *
 * Time here is real (a daemon): every wait polls with a deadline instead of sleeping a fixed time.
 */
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { tempDir } from '../helpers/daemon.js';
import { startDaemon } from '../helpers/in-process-daemon.js';
import { connectReversePeer, fixture, startForwardPeer } from '../helpers/onebot-peer.js';
import { type ScriptStep, startScriptedServer } from '../helpers/scripted-llm-server.js';
import { until } from '../helpers/until.js';

const OWNER = 10001001;
const GROUP = 20002002;
const TOKEN = 'integration-onebot-token-42';
const MAX_SENDS = 4;

function chunk(delta: Record<string, unknown>, finish: string | null = null): object {
  return {
    id: 'chatcmpl-qq',
    object: 'chat.completion.chunk',
    created: 1764460800,
    model: 'test-model',
    choices: [{ index: 0, delta, finish_reason: finish }],
  };
}

function textReply(text: string): ScriptStep {
  return { sse: [chunk({ role: 'assistant', content: text }), chunk({}, 'stop')], done: true };
}

let callSeq = 0;
function toolReply(name: string, args: object): ScriptStep {
  const id = `call_${++callSeq}`;
  return {
    sse: [
      chunk({
        role: 'assistant',
        content: null,
        tool_calls: [{ index: 0, id, type: 'function', function: { name, arguments: JSON.stringify(args) } }],
      }),
      chunk({}, 'tool_calls'),
    ],
    done: true,
  };
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return typeof address === 'object' && address ? address.port : 0;
}

function writeConfig(t: Test, onebot: object): { config: string; dataDir: string } {
  const dir = tempDir(t, 'ha-onebot-');
  const file = join(dir, 'config.yaml');
  const config = {
    core: { agent: { max_tool_turns: 8 } },
    plugin: {
      onebot: { enabled: true, owners: [OWNER], allow_groups: [GROUP], access_token: TOKEN, max_sends_per_turn: MAX_SENDS, ...onebot },
    },
  };
  writeFileSync(file, JSON.stringify(config, null, 2));
  return { config: file, dataDir: join(dir, 'data') };
}

// biome-ignore lint/suspicious/noExplicitAny: request bodies are inspected freely.
type Message = { role: string; content: any; tool_call_id?: string };

function messagesOf(request: { body: { messages?: unknown } } | undefined): Message[] {
  return (request?.body.messages ?? []) as Message[];
}

t.test('reverse mode: private and group turns, refusals, and the send loop held by the cap', async (t) => {
  const llm = await startScriptedServer(t);
  const port = await freePort();
  const { config, dataDir } = writeConfig(t, { mode: 'reverse', port });
  const daemon = await startDaemon(t, {
    dataDir,
    env: { HOMEAGENT_CONFIG: config, HOMEAGENT_LLM_BASE_URL: llm.url, HOMEAGENT_LLM_API_KEY: 'sk-test', HOMEAGENT_LLM_MODEL: 'test-model' },
  });
  await daemon.waitForReady();
  const url = `ws://127.0.0.1:${port}/onebot/v11/ws`;
  await t.rejects(connectReversePeer({ url, token: 'not-the-token' }), /HTTP 403/, 'a wrong token is refused');
  const peer = await connectReversePeer({ url, token: TOKEN });
  t.teardown(() => peer.close());

  await t.test('a private message is answered privately, quoting it', async (t) => {
    llm.enqueue(textReply('从前有只猫……'));
    peer.push(fixture('private-message', { message: [{ type: 'text', data: { text: '讲个关于猫的笑话' } }] }));
    const [send] = await peer.waitForActions('send_private_msg', 1);
    t.same(send?.params, {
      user_id: OWNER,
      message: [
        { type: 'reply', data: { id: '1847562301' } },
        { type: 'text', data: { text: '从前有只猫……' } },
      ],
    });
    const request = llm.requests.at(-1);
    t.match(messagesOf(request).at(-1), { role: 'user', content: /讲个关于猫的笑话/ });
  });

  await t.test('a group @-mention is answered in the group; one without @ is not a turn', async (t) => {
    const before = llm.requests.length;
    peer.push(fixture('group-message-no-at'));
    llm.enqueue(toolReply('output_send__qq', { payload: '明天晴，最高 12 度。' }), textReply('已经在群里回答了。'));
    peer.push(fixture('group-message-at'));
    const [send] = await peer.waitForActions('send_group_msg', 1);
    t.equal(send?.params.group_id, GROUP);
    t.same(send?.params.message, [
      { type: 'reply', data: { id: '-2094475820' } },
      { type: 'text', data: { text: '明天晴，最高 12 度。' } },
    ]);
    await until('the turn to end', () => (llm.pending() === 0 ? true : undefined));
    t.equal(llm.requests.length, before + 2, 'one turn, for the mentioned message only');
    t.match(messagesOf(llm.requests.at(-2)).at(-1)?.content, /帮 @妈妈 查一下明天的天气/);
    const toolMessage = messagesOf(llm.requests.at(-1)).find((m) => m.role === 'tool');
    t.equal(toolMessage?.content, 'ok', 'the send answered the model exactly "ok"');
    await until('the answer not sent twice', async () =>
      ((await daemon.ctl(['status', '--json'])).json() as { inputs: { completed: number } }).inputs.completed >= 2 ? true : undefined,
    );
    t.equal(peer.of('send_group_msg').length, 1, 'the final text was not delivered again after the model sent');
  });

  await t.test('a stranger gets a refusal and no turn', async (t) => {
    const before = llm.requests.length;
    peer.push(fixture('private-message', { user_id: 10009999, sender: { user_id: 10009999, nickname: '陌生人' } }));
    const sends = await peer.waitForActions('send_private_msg', 2);
    t.equal(sends[1]?.params.user_id, 10009999);
    t.match(sends[1]?.params.message.at(-1).data.text, /only talk with members/);
    t.equal(llm.requests.length, before);
  });

  await t.test('a model that sends forever: the cap holds and every receipt was "ok"', async (t) => {
    const privateBefore = peer.of('send_private_msg').length;
    const groupBefore = peer.of('send_group_msg').length;
    const requestsBefore = llm.requests.length;
    let n = 0;
    llm.replyFn = (body) => {
      const offered = ((body as { tools?: unknown[] }).tools ?? []).length > 0;
      if (!offered) return textReply('好的。');
      n++;
      return n % 2 === 0
        ? toolReply('qq_send_private_msg', { user_id: OWNER, message: `again ${n}` })
        : toolReply('output_send__qq', { payload: `again ${n}` });
    };
    t.teardown(() => {
      llm.replyFn = undefined;
    });
    peer.push(fixture('private-message', { message_id: 555, message: [{ type: 'text', data: { text: '一直发消息给我' } }] }));
    await until('the turn to end', async () => {
      const status = (await daemon.ctl(['status', '--json'])).json() as { inputs: { completed: number } };
      return status.inputs.completed >= 3 ? true : undefined;
    });
    const sent = peer.of('send_private_msg').length - privateBefore;
    t.equal(sent, MAX_SENDS, `the peer got exactly max_sends_per_turn (${MAX_SENDS}) messages`);
    t.equal(peer.of('send_group_msg').length, groupBefore);
    const requests = llm.requests.slice(requestsBefore);
    t.ok(requests.length <= 8 + 1, `the turn ended within max_tool_turns: ${requests.length} LLM rounds`);
    const last = messagesOf(requests.at(-1));
    const receipts = last.filter((m) => m.role === 'tool').map((m) => m.content);
    t.same(receipts.slice(-MAX_SENDS - 1, -1), Array(MAX_SENDS).fill('ok'), 'every successful send answered exactly "ok"');
    t.match(receipts.at(-1), /"rejected".*QQ messages were already sent/, 'the one past the cap was refused');
    t.notOk(
      receipts.some((r) => /message_id|status|sent via/.test(r) && !/rejected/.test(r)),
      'no rich receipt anywhere',
    );
  });

  await t.test('with a high send cap, core.agent.max_tool_turns still ends the loop', async (t) => {
    const set = await daemon.ctl(['config', 'set', 'plugin.onebot.max_sends_per_turn', '50']);
    t.equal(set.code, 0, set.stderr);
    const before = peer.of('send_private_msg').length;
    const requestsBefore = llm.requests.length;
    llm.replyFn = (body) =>
      ((body as { tools?: unknown[] }).tools ?? []).length > 0
        ? toolReply('output_send__qq', { payload: 'once more' })
        : textReply('好的。');
    t.teardown(() => {
      llm.replyFn = undefined;
    });
    peer.push(fixture('private-message', { message_id: 556, message: [{ type: 'text', data: { text: '再来一次' } }] }));
    await until('the turn to end', async () => {
      const status = (await daemon.ctl(['status', '--json'])).json() as { inputs: { completed: number } };
      return status.inputs.completed >= 4 ? true : undefined;
    });
    t.equal(peer.of('send_private_msg').length - before, 8, 'one send per allowed tool round (max_tool_turns 8)');
    const requests = llm.requests.slice(requestsBefore);
    t.equal(requests.length, 9, 'eight tool rounds and one to answer without tools');
    t.same(
      messagesOf(requests.at(-1))
        .filter((m) => m.role === 'tool')
        .map((m) => m.content),
      Array(8).fill('ok'),
    );
  });
});

t.test('forward mode: the daemon sends the token and reconnects after the peer drops', async (t) => {
  const server = await startForwardPeer({ token: TOKEN });
  t.teardown(() => server.close());
  const { config, dataDir } = writeConfig(t, { mode: 'forward', url: server.url, reconnect_min_ms: 200 });
  const daemon = await startDaemon(t, { dataDir, env: { HOMEAGENT_CONFIG: config } });
  await daemon.waitForReady();
  await until('the first connection', () => (server.accepted === 1 && server.peer.open ? true : undefined), 20_000);
  t.equal(server.handshakes[0]?.authorization, `Bearer ${TOKEN}`);
  server.peer.drop();
  await until('the reconnection', () => (server.accepted === 2 && server.peer.open ? true : undefined), 20_000);
  t.equal(server.handshakes.length, 2);
  // The new connection carries traffic: a stranger is refused through it.
  server.peer.push(fixture('private-message', { user_id: 10009999 }));
  const [refusal] = await server.peer.waitForActions('send_private_msg', 1);
  t.equal(refusal?.params.user_id, 10009999);
});

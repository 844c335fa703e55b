/**
 * Child sub-agents in the built daemon (in-process): the scripted LLM server as the model, answering
 * the parent conversation, the children and the end notices apart (a child's request opens with the
 * sub-agent prompt; a notice is the user message "[sub-agent ..."), homeagentctl as the owner.
 *
 * - life cycle: the owner asks at the CLI, the model spawns a child and answers at once; the child
 *   runs its own turn (offered timer_list, not spawn_child / child_result / plugin_*), ends, and the
 *   conversation gets the notice as an untrusted input; child_result then shows it done;
 * - a child's dangerous call (cmd_run) is held for the owner like any other: `confirm list` shows it
 *   asked for by child:<id>, and the notice says it waits;
 * - the model failing mid-child: the notice says the child failed;
 * - stopping the daemon while a child's request is open: the daemon closes, the child is cancelled,
 *   and nobody is told.
 *
 * Time here is real (a daemon): every wait polls with a deadline or waits for a request.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { tempDir } from '../helpers/daemon.js';
import { startDaemon } from '../helpers/in-process-daemon.js';
import { type ScriptStep, startScriptedServer } from '../helpers/scripted-llm-server.js';
import { until } from '../helpers/until.js';

const WAIT_MS = 60_000;

function chunk(delta: Record<string, unknown>, finish: string | null = null): object {
  return {
    id: 'chatcmpl-sub',
    object: 'chat.completion.chunk',
    created: 1764460800,
    model: 'test-model',
    choices: [{ index: 0, delta, finish_reason: finish }],
  };
}

function toolCall(id: string, name: string, args: unknown): ScriptStep {
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

const textReply = (text: string): ScriptStep => ({
  sse: [chunk({ role: 'assistant', content: '' }), chunk({ content: text }), chunk({}, 'stop')],
  done: true,
});

type Message = { role: string; content: string | null; tool_call_id?: string };
type Body = { messages: Message[]; tools?: Array<{ function: { name: string } }> };

const lastUser = (body: Body) => String([...body.messages].reverse().find((m) => m.role === 'user')?.content ?? '');
const isChild = (body: Body) => String(body.messages[0]?.content ?? '').includes('You are a sub-agent of HomeAgent');
const isNotice = (body: Body) => lastUser(body).startsWith('[sub-agent ');
const toolResult = (body: Body | undefined, id: string) =>
  String(body?.messages.find((m) => m.role === 'tool' && m.tool_call_id === id)?.content ?? '');

t.test('child sub-agents in the daemon: life cycle, owner approval, model failure, daemon stop', async (t) => {
  const llm = await startScriptedServer(t);
  /** The parent's replies by the person's words; the children's in order; the notices answered plainly. */
  const parent = new Map<string, ScriptStep[]>();
  const children: ScriptStep[] = [];
  llm.replyFn = (raw) => {
    const body = raw as Body;
    // A vendor refusing the request (400) fails the child without cooling the source down for the parent.
    if (isChild(body)) return children.shift() ?? { status: 400, body: { error: { message: 'scripted: no child step' } } };
    if (isNotice(body)) return textReply('The sub-agent has finished; here is what it found.');
    return parent.get(lastUser(body))?.shift() ?? textReply('nothing scripted');
  };
  const bodies = () => llm.requests.map((r) => r.body as Body);

  const dir = tempDir(t, 'ha-subagents-daemon-');
  const config = join(dir, 'config.yaml');
  writeFileSync(config, JSON.stringify({ core: { llm: { base_url: llm.url, api_key: 'sk-llm', model: 'test-model' } } }));
  const daemon = await startDaemon(t, { dataDir: join(dir, 'data'), env: { HOMEAGENT_CONFIG: config } });
  await daemon.waitForReady(WAIT_MS);

  // --- Life cycle: spawned, answered at once, the child's turn, the notice, child_result.
  const ASK = 'research a quick pasta recipe in the background';
  parent.set(ASK, [
    toolCall('call_spawn', 'spawn_child', { task: 'Find a quick pasta recipe.' }),
    textReply('I started a sub-agent on it.'),
  ]);
  children.push(toolCall('child_list', 'timer_list', {}), textReply('Pasta: boil it 10 minutes, then add the sauce.'));
  const asked = await daemon.ctl(['chat', '-m', ASK], { timeoutMs: WAIT_MS });
  t.equal(asked.code, 0, asked.stderr);
  t.match(asked.stdout, /I started a sub-agent on it\./, 'the person is answered at once');
  const spawned = JSON.parse(
    toolResult(
      bodies().find((b) => toolResult(b, 'call_spawn') !== ''),
      'call_spawn',
    ),
  ) as { task_id: string };
  t.match(spawned, { task_id: /^child_[0-9a-f]{8}$/, state: 'running', max_turns: 5 });
  const id = spawned.task_id;

  const notice = await until('the end notice reached the model', () => bodies().find(isNotice), WAIT_MS);
  t.match(lastUser(notice), new RegExp(`^\\[sub-agent ${id} finished\\] Task: Find a quick pasta recipe\\.`));
  t.match(lastUser(notice), /Pasta: boil it 10 minutes, then add the sauce\./);
  const child = bodies().find(isChild);
  const offered = (child?.tools ?? []).map((tool) => tool.function.name);
  t.ok(offered.includes('timer_list'), 'the child has the tools of the house');
  for (const name of ['spawn_child', 'child_result', 'plugin_enable', 'plugin_disable', 'plugin_reload'])
    t.notOk(offered.includes(name), `the child is not offered ${name}`);
  t.match(child?.messages[1], { role: 'user', content: 'Find a quick pasta recipe.' });
  await daemon.waitForLog((line) => line.msg === `sub-agent ${id}: the conversation was told (done)`, WAIT_MS);
  t.ok(
    daemon.logs.some((line) => line.msg === `sub-agent ${id} ended: done (answered)`),
    'logged',
  );

  const HOW = 'how is the pasta research going?';
  parent.set(HOW, [toolCall('call_result', 'child_result', { task_id: id }), textReply('It is done: boil the pasta 10 minutes.')]);
  const how = await daemon.ctl(['chat', '-m', HOW], { timeoutMs: WAIT_MS });
  t.equal(how.code, 0, how.stderr);
  t.match(how.stdout, /It is done/);
  t.match(
    JSON.parse(
      toolResult(
        bodies().findLast((b) => toolResult(b, 'call_result') !== ''),
        'call_result',
      ),
    ),
    { task_id: id, state: 'done', ended_by: 'answered', result: 'Pasta: boil it 10 minutes, then add the sauce.', tool_rounds: 1 },
    'child_result shows the result',
  );

  // --- A dangerous call of a child waits for the owner.
  const UPTIME = 'check the uptime in the background';
  parent.set(UPTIME, [toolCall('call_spawn2', 'spawn_child', { task: 'Run uptime and report it.' }), textReply('Started.')]);
  children.push(toolCall('child_cmd', 'cmd_run', { argv: ['uptime'] }), textReply('uptime waits for the owner.'));
  const noticesBefore = bodies().filter(isNotice).length;
  t.equal((await daemon.ctl(['chat', '-m', UPTIME], { timeoutMs: WAIT_MS })).code, 0);
  const second = JSON.parse(
    toolResult(
      bodies().find((b) => toolResult(b, 'call_spawn2') !== ''),
      'call_spawn2',
    ),
  ) as { task_id: string };
  const held = await until('the notice of the second child', () => bodies().filter(isNotice)[noticesBefore], WAIT_MS);
  t.match(lastUser(held), /It asked for cmd_run, which waits for the owner's approval/);
  t.match(
    toolResult(
      bodies().find((b) => isChild(b) && toolResult(b, 'child_cmd') !== ''),
      'child_cmd',
    ),
    /confirmation_required/,
  );
  const pending = (await daemon.ctl(['--json', 'confirm', 'list'])).json() as {
    pending: Array<{ code: string; tool: string; arguments: string; inline: boolean; origin: { sender: { id: string } } }>;
  };
  t.match(pending.pending, [
    { tool: 'cmd_run', arguments: '{"argv":["uptime"]}', inline: false, origin: { sender: { id: `child:${second.task_id}` } } },
  ]);
  const code = pending.pending[0]?.code ?? 'none';
  t.notOk(JSON.stringify(bodies()).includes(code), 'no model was shown the approval code');
  const denied = await daemon.ctl(['confirm', 'deny', code]);
  t.equal(denied.code, 0, denied.stderr);

  // --- The model failing mid-child.
  const FAIL = 'look something up in the background';
  parent.set(FAIL, [toolCall('call_spawn3', 'spawn_child', { task: 'Look up the bin collection day.' }), textReply('Started.')]);
  children.push(toolCall('child_list2', 'timer_list', {})); // then the vendor refuses: no child step
  const failedBefore = bodies().filter(isNotice).length;
  t.equal((await daemon.ctl(['chat', '-m', FAIL], { timeoutMs: WAIT_MS })).code, 0);
  const failed = await until('the notice of the failed child', () => bodies().filter(isNotice)[failedBefore], WAIT_MS);
  t.match(lastUser(failed), /^\[sub-agent child_[0-9a-f]{8} failed\] Task: Look up the bin collection day\.\nThe language model failed: /);

  // --- The daemon stops while a child's request is open.
  const LONG = 'start a long search in the background';
  parent.set(LONG, [toolCall('call_spawn4', 'spawn_child', { task: 'Search for a long time.' }), textReply('Started.')]);
  children.push({ stall: true });
  t.equal((await daemon.ctl(['chat', '-m', LONG], { timeoutMs: WAIT_MS })).code, 0);
  await until(
    'the stalled child request',
    () => bodies().filter(isChild).at(-1)?.messages[1]?.content === 'Search for a long time.' || undefined,
    WAIT_MS,
  );
  const noticesAtStop = bodies().filter(isNotice).length;
  await daemon.dispose();
  t.ok(
    daemon.logs.some((line) => line.msg === '1 running sub-agents cancelled: the daemon stopped'),
    'the running child was cancelled at stop',
  );
  t.ok(daemon.logs.some((line) => /^sub-agent child_[0-9a-f]{8} ended: cancelled \(daemon_stop\)$/.test(String(line.msg))));
  t.equal(bodies().filter(isNotice).length, noticesAtStop, 'nobody was told');
  t.equal(daemon.exit?.code, 0, 'the daemon closed cleanly');
});

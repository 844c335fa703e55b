/**
 * The seq plugin in the built daemon: the scripted LLM server as the model, homeagentctl as the
 * owner. The model creates "good night" (a timer, then the timer list) and it is offered every
 * seq_* tool; "good night" and "晚安" typed at the CLI then run the sequence by name without asking
 * the model (answered in the language it was asked in), and so does `homeagentctl sequences run`; after a restart the sequence is still there and runs again; a sequence calling cmd_run
 * asked for by the model is held for the owner's approval like cmd_run itself; and with no model
 * configured at all, the name still runs it.
 *
 * Time here is real (a daemon): every wait polls with a deadline or waits for a reply.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { tempDir } from '../helpers/daemon.js';
import { startDaemon } from '../helpers/in-process-daemon.js';
import { type ScriptStep, startScriptedServer } from '../helpers/scripted-llm-server.js';

const WAIT_MS = 60_000;

function chunk(delta: Record<string, unknown>, finish: string | null = null): object {
  return {
    id: 'chatcmpl-seq',
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
const toolResult = (messages: Message[], id: string) =>
  String(messages.find((m) => m.role === 'tool' && m.tool_call_id === id)?.content ?? '');

const GOOD_NIGHT = {
  name: 'good night',
  description: 'a reminder to lock the door, then the timers',
  groups: [
    { name: 'remind', calls: [{ tool: 'timer_set', args: { duration: '10m', message: 'lock the door', name: 'door' }, as: 'timer' }] },
    { name: 'show', calls: [{ tool: 'timer_list', as: 'timers' }] },
  ],
};

t.test('sequences in the daemon: created by the model, run by name, kept across a restart, held when dangerous', async (t) => {
  const llm = await startScriptedServer(t);
  const dir = tempDir(t, 'ha-seq-daemon-');
  const dataDir = join(dir, 'data');
  const config = join(dir, 'config.yaml');
  writeFileSync(config, JSON.stringify({ core: { llm: { base_url: llm.url, api_key: 'sk-llm', model: 'test-model' } } }));
  let daemon = await startDaemon(t, { dataDir, env: { HOMEAGENT_CONFIG: config } });
  await daemon.waitForReady(WAIT_MS);

  llm.enqueue(toolCall('call_create', 'seq_create', GOOD_NIGHT), textReply('Made "good night".'));
  const made = await daemon.ctl(['chat', '-m', 'make a good night sequence'], { timeoutMs: WAIT_MS });
  t.equal(made.code, 0, made.stderr);
  const offered = ((llm.requests[0]?.body.tools ?? []) as Array<{ function: { name: string } }>).map((x) => x.function.name);
  for (const name of ['seq_create', 'seq_list', 'seq_help', 'seq_delete', 'seq_run', 'seq_call', 'seq_when_call'])
    t.ok(offered.includes(name), `${name} is offered`);
  t.match(toolResult(llm.requests[1]?.body.messages as Message[], 'call_create'), /"created":"good night","tier":"act"/);

  const asked = llm.requests.length;
  const byName = await daemon.ctl(['chat', '-m', 'Good night!'], { timeoutMs: WAIT_MS });
  t.equal(byName.code, 0, byName.stderr);
  t.match(byName.stdout, /Done: good night \(2 steps\)\./);
  t.equal(llm.requests.length, asked, 'run by its name, the model was not asked');
  t.ok(
    daemon.logs.some((line) => line.msg === 'sequence good night run by its name'),
    'the plugin ran it (log)',
  );
  const zh = await daemon.ctl(['chat', '-m', '运行 good night'], { timeoutMs: WAIT_MS });
  t.match(zh.stdout, /已完成：good night（2 步）。/, 'answered in Chinese');
  t.equal(llm.requests.length, asked);

  // The owner at the CLI: the list and a run without the model.
  const list = await daemon.ctl(['sequences']);
  t.equal(list.code, 0, list.stderr);
  t.match(list.stdout, /good night\s+act\s+remind, show/);
  const ran = await daemon.ctl(['sequences', 'run', 'good', 'night'], { timeoutMs: WAIT_MS });
  t.equal(ran.code, 0, ran.stderr);
  t.match(ran.stdout, /^ran good night:\n {2}remind: in order, 1 call\n {2}show: in order, 1 call\nresults:\n {2}timer = /);
  t.equal(llm.requests.length, asked, 'nor for homeagentctl sequences run');
  const unknown = await daemon.ctl(['sequences', 'run', 'bedtime']);
  t.not(unknown.code, 0);
  t.match(unknown.stderr, /HA_ERR_SEQ_NOT_FOUND: there is no sequence named bedtime/);

  await daemon.dispose();
  daemon = await startDaemon(t, { dataDir, env: { HOMEAGENT_CONFIG: config } });
  await daemon.waitForReady(WAIT_MS);
  llm.enqueue(toolCall('call_list', 'seq_list', {}), textReply('You have good night.'));
  const listed = await daemon.ctl(['chat', '-m', 'which sequences do I have?'], { timeoutMs: WAIT_MS });
  t.equal(listed.code, 0, listed.stderr);
  t.match(toolResult(llm.requests.at(-1)?.body.messages as Message[], 'call_list'), /"name":"good night"/, 'kept across the restart');

  // A dangerous step makes the whole sequence wait for the owner.
  llm.enqueue(
    toolCall('call_danger', 'seq_create', { name: 'uptime', groups: [{ calls: [{ tool: 'cmd_run', args: { command: 'uptime' } }] }] }),
    toolCall('call_run', 'seq_run', { name: 'uptime' }),
    textReply('That needs your approval.'),
  );
  const held = await daemon.ctl(['chat', '-m', 'make an uptime sequence and run it'], { timeoutMs: WAIT_MS });
  t.equal(held.code, 0, held.stderr);
  t.match(toolResult(llm.requests.at(-1)?.body.messages as Message[], 'call_run'), /confirmation_required/);
  const pending = (await daemon.ctl(['--json', 'confirm', 'list'])).json() as { pending: Array<{ tool: string; arguments: string }> };
  t.match(pending.pending, [{ tool: 'seq_run', arguments: '{"name":"uptime"}' }]);
  llm.enqueue(textReply('Shall I run uptime? It needs your approval.'));
  const before = llm.requests.length;
  const again = await daemon.ctl(['chat', '-m', 'uptime'], { timeoutMs: WAIT_MS });
  t.match(again.stdout, /Shall I run uptime\?/, 'its name alone does not run a dangerous sequence: the model answers');
  t.equal(llm.requests.length, before + 1);

  // Without a language model the intent engine would say it did not understand; the sequence's name still runs it.
  await daemon.dispose();
  daemon = await startDaemon(t, { dataDir });
  await daemon.waitForReady(WAIT_MS);
  const offline = await daemon.ctl(['chat', '-m', '运行 good night'], { timeoutMs: WAIT_MS });
  t.equal(offline.code, 0, offline.stderr);
  t.match(offline.stdout, /已完成：good night（2 步）。/, 'offline too');
});

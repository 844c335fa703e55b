/**
 * `homeagentctl chat` against the built daemon: offline answer without an LLM, a tool round
 * through a scripted OpenAI-compatible server on loopback (the default source from the
 * HOMEAGENT_LLM_* variables), and a source rejected with HTTP 401.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { REPO_ROOT } from '../helpers/daemon.js';
import { startDaemon } from '../helpers/in-process-daemon.js';
import { type ScriptStep, startScriptedServer } from '../helpers/scripted-llm-server.js';

function chunk(delta: Record<string, unknown>, finish: string | null = null): object {
  return {
    id: 'chatcmpl-test',
    object: 'chat.completion.chunk',
    created: 1764460800,
    model: 'test-model',
    choices: [{ index: 0, delta, finish_reason: finish }],
  };
}

function textReply(text: string): ScriptStep {
  return {
    sse: [
      chunk({ role: 'assistant', content: '' }),
      chunk({ content: text }),
      chunk({}, 'stop'),
      {
        id: 'chatcmpl-test',
        object: 'chat.completion.chunk',
        choices: [],
        usage: { prompt_tokens: 50, completion_tokens: 5, total_tokens: 55 },
      },
    ],
    done: true,
  };
}

function toolReply(name: string, args: object): ScriptStep {
  return {
    sse: [
      chunk({
        role: 'assistant',
        content: null,
        tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name, arguments: '' } }],
      }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: JSON.stringify(args) } }] }),
      chunk({}, 'tool_calls'),
    ],
    done: true,
  };
}

t.test('without a language model the agent says it is offline and how to configure one', async (t) => {
  const daemon = await startDaemon(t);
  await daemon.waitForReady();
  const r = await daemon.ctl(['chat', '-m', 'Turn on the kitchen light']);
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, /offline/);
  t.match(r.stdout, /core\.llm\.api_key/);
  const json = await daemon.ctl(['chat', '-m', 'again', '--json']);
  t.equal((json.json() as { status: string }).status, 'done');
});

t.test('a tool round through the scripted OpenAI-compatible server', async (t) => {
  const server = await startScriptedServer(t);
  server.enqueue(toolReply('output_list_channels', {}), textReply('You can reach me on the command line.'));
  const daemon = await startDaemon(t, {
    env: { HOMEAGENT_LLM_BASE_URL: server.url, HOMEAGENT_LLM_API_KEY: 'sk-test-key', HOMEAGENT_LLM_MODEL: 'test-model' },
  });
  await daemon.waitForReady();
  const r = await daemon.ctl(['chat', '-m', 'Where can I talk to you?']);
  t.equal(r.code, 0, r.stderr);
  t.equal(r.stdout.trim(), 'You can reach me on the command line.');

  t.equal(server.requests.length, 2, 'two LLM rounds');
  const first = server.requests[0];
  const second = server.requests[1];
  if (!first || !second) return;
  t.equal(first.path, '/chat/completions');
  t.equal(first.headers.authorization, 'Bearer sk-test-key');
  t.equal(first.body.model, 'test-model');
  t.equal(first.body.stream, true);
  t.equal(first.body.messages[0].role, 'system');
  t.match(first.body.messages[0].content, /You are HomeAgent/, 'the shipped persona opens the prompt');
  t.same(first.body.messages.at(-1), { role: 'user', content: 'Where can I talk to you?' });
  const toolNames = (first.body.tools as Array<{ function: { name: string } }>).map((x) => x.function.name);
  t.ok(toolNames.includes('output_list_channels'), 'io tools are offered');
  t.ok(toolNames.includes('llm_list_sources'), 'llm tools are offered');
  const sendCli = (first.body.tools as Array<{ function: { name: string; description: string } }>).find(
    (x) => x.function.name === 'output_send__cli',
  );
  t.match(sendCli?.function.description ?? '', /answer in text/, 'the synchronous cli channel tells the model to answer in text');
  const toolMessage = (second.body.messages as Array<{ role: string; content: string; tool_call_id?: string }>).find(
    (m) => m.role === 'tool',
  );
  t.equal(toolMessage?.tool_call_id, 'call_1');
  t.match(toolMessage?.content ?? '', /"cli"/, 'the tool result lists the cli channel');

  const status = (await daemon.ctl(['status', '--json'])).json() as {
    llm_sources: Array<{ name: string; state: string }>;
    inputs: { completed: number };
  };
  t.equal(status.llm_sources[0]?.name, 'default');
  t.equal(status.llm_sources[0]?.state, 'ready');
  t.equal(status.inputs.completed, 1);
});

t.test('HTTP 401 disables the source and the answer says to check the key', async (t) => {
  const server = await startScriptedServer(t);
  server.enqueue({ status: 401, body: { error: { message: 'Authentication Fails', type: 'authentication_error' } } });
  const daemon = await startDaemon(t, { env: { HOMEAGENT_LLM_BASE_URL: server.url, HOMEAGENT_LLM_API_KEY: 'sk-wrong' } });
  await daemon.waitForReady();
  const r = await daemon.ctl(['chat', '-m', 'tell me a joke']);
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, /could not reach a language model/);
  t.match(r.stdout, /401/);
  t.notMatch(r.stdout, /sk-wrong/, 'the key is never echoed');
  const status = (await daemon.ctl(['status', '--json'])).json() as { llm_sources: Array<{ state: string }> };
  t.equal(status.llm_sources[0]?.state, 'disabled');
});

t.test('a Lua-adapted source (anthropic) answers through the daemon', async (t) => {
  const fixture = readFileSync(join(REPO_ROOT, 'test', 'fixtures', 'llm', 'anthropic', 'stream.sse'), 'utf8');
  const server = await startScriptedServer(t);
  server.enqueue({ raw: fixture, headers: { 'content-type': 'text/event-stream' } });
  const sources = { claude: { adapter: 'anthropic', base_url: server.url, api_key: 'sk-ant-test', model: 'claude-test' } };
  const daemon = await startDaemon(t, { env: { HOMEAGENT_LLM_SOURCES: JSON.stringify(sources) } });
  await daemon.waitForReady();
  const r = await daemon.ctl(['chat', '-m', 'Is the kitchen light on?']);
  t.equal(r.code, 0, r.stderr);
  t.ok(r.stdout.trim().length > 0, `an answer came back: ${r.stdout.trim()}`);
  t.notMatch(r.stdout, /could not reach/);
  const request = server.requests[0];
  t.equal(request?.path, '/v1/messages', 'the anthropic endpoint');
  t.equal(request?.headers['x-api-key'], 'sk-ant-test');
  t.equal(typeof request?.body.system, 'string', 'the system prompt is top-level, as the Messages API wants');
  const status = (await daemon.ctl(['status', '--json'])).json() as {
    llm_sources: Array<{ name: string; adapter: string; state: string }>;
  };
  t.same(
    status.llm_sources.map((s) => [s.name, s.adapter, s.state]),
    [['claude', 'anthropic', 'ready']],
  );
});

/**
 * The cfgmgr and ai_image plugins in the built daemon: the scripted LLM server as the model, a
 * scripted OpenAI-compatible images server as plugin.ai_image's own source, homeagentctl as the
 * owner. The model changes an ordinary setting and draws a picture in one reply; asks for a
 * protected setting and is held until the owner approves with `homeagentctl confirm approve`;
 * and what the images server and the media store saw is checked. Without base_url the image tool
 * is not offered and `homeagentctl health` says image generation is off.
 *
 * Time here is real (a daemon): every wait polls with a deadline or waits for a reply.
 */
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { tempDir } from '../helpers/daemon.js';
import { FixtureServer } from '../helpers/fixture-server.js';
import { startDaemon } from '../helpers/in-process-daemon.js';
import { type ScriptStep, startScriptedServer } from '../helpers/scripted-llm-server.js';

const WAIT_MS = 60_000;
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');

function chunk(delta: Record<string, unknown>, finish: string | null = null): object {
  return {
    id: 'chatcmpl-cfg',
    object: 'chat.completion.chunk',
    created: 1764460800,
    model: 'test-model',
    choices: [{ index: 0, delta, finish_reason: finish }],
  };
}

function toolCalls(calls: Array<{ id: string; name: string; args: unknown }>): ScriptStep {
  return {
    sse: [
      chunk({
        role: 'assistant',
        content: null,
        tool_calls: calls.map((c, index) => ({
          index,
          id: c.id,
          type: 'function',
          function: { name: c.name, arguments: JSON.stringify(c.args) },
        })),
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

t.test('the agent changes settings through cfgmgr and draws through ai_image', async (t) => {
  const llm = await startScriptedServer(t);
  const images = await FixtureServer.start();
  t.teardown(() => images.close());
  const dir = tempDir(t, 'ha-cfgmgr-daemon-');
  const dataDir = join(dir, 'data');
  const config = join(dir, 'config.yaml');
  writeFileSync(
    config,
    JSON.stringify({
      core: { llm: { base_url: llm.url, api_key: 'sk-llm-canary', model: 'test-model' } },
      plugin: { ai_image: { base_url: `${images.url}/v1`, api_key: 'sk-images-canary', model: 'paint-1' } },
    }),
  );
  const daemon = await startDaemon(t, { dataDir, env: { HOMEAGENT_CONFIG: config } });
  await daemon.waitForReady(WAIT_MS);

  // One reply: an ordinary setting and a picture.
  images.reply({ body: JSON.stringify({ data: [{ b64_json: PNG.toString('base64') }] }) });
  llm.enqueue(
    toolCalls([
      { id: 'call_set', name: 'config_set', args: { key: 'plugin.timer.max_timers', value: 12 } },
      { id: 'call_draw', name: 'image_generate', args: { prompt: 'a red kite', size: '512x512' } },
    ]),
    textReply('Done: at most 12 timers, and here is your kite.'),
  );
  const first = await daemon.ctl(['chat', '-m', 'Allow only 12 timers and draw me a red kite'], { timeoutMs: WAIT_MS });
  t.equal(first.code, 0, first.stderr);
  const offered = ((llm.requests[0]?.body.tools ?? []) as Array<{ function: { name: string } }>).map((x) => x.function.name);
  for (const name of [
    'config_list',
    'config_get',
    'config_set',
    'config_set_protected',
    'config_reset',
    'config_reset_protected',
    'image_generate',
  ])
    t.ok(offered.includes(name), `${name} is offered`);
  const messages = llm.requests[1]?.body.messages as Message[];
  t.match(toolResult(messages, 'call_set'), /"value":12,"source":"runtime"/);
  const drawn = JSON.parse(toolResult(messages, 'call_draw')) as { media_id?: string };
  t.match(drawn.media_id, /^[0-9a-f]{64}$/);
  t.same(
    readdirSync(join(dataDir, 'media', 'sha256', String(drawn.media_id).slice(0, 2))),
    [drawn.media_id],
    'the picture is in the media store',
  );
  t.equal(images.last?.headers.authorization, 'Bearer sk-images-canary', "the plugin's own key, not core.llm's");
  t.same(JSON.parse(images.last?.body ?? ''), {
    prompt: 'a red kite',
    size: '512x512',
    n: 1,
    model: 'paint-1',
    response_format: 'b64_json',
  });
  const timers = (await daemon.ctl(['--json', 'config', 'get', 'plugin.timer.max_timers'])).json() as { value: number; source: string };
  t.match(timers, { value: 12, source: 'runtime' });

  // A protected setting: refused by config_set, held for the owner as config_set_protected.
  const KEY = 'plugin.voice.tts.openai_base_url';
  const SPEECH = 'http://127.0.0.1:5500/v1';
  llm.enqueue(
    toolCalls([{ id: 'call_url', name: 'config_set', args: { key: KEY, value: SPEECH } }]),
    toolCalls([{ id: 'call_url2', name: 'config_set_protected', args: { key: KEY, value: SPEECH } }]),
    textReply('The owner has to approve that.'),
  );
  const second = await daemon.ctl(['chat', '-m', 'Use my speech server at 127.0.0.1:5500'], { timeoutMs: WAIT_MS });
  t.equal(second.code, 0, second.stderr);
  const refusal = toolResult(llm.requests[3]?.body.messages as Message[], 'call_url');
  t.match(refusal, /unauthorized.*HA_ERR_CFGMGR_PROTECTED: plugin\.voice\.tts\.openai_base_url was not changed.*network address/);
  t.match(second.stdout, /config_set_protected/, "the owner is shown what would run, in the CLI's answer");
  const pending = (await daemon.ctl(['--json', 'confirm', 'list'])).json() as {
    pending: Array<{ code: string; tool: string; arguments: string }>;
  };
  t.equal(pending.pending.length, 1);
  t.match(pending.pending[0], { tool: 'config_set_protected', arguments: JSON.stringify({ key: KEY, value: SPEECH }) });
  const before = (await daemon.ctl(['--json', 'config', 'get', KEY])).json() as { value: string; source: string };
  t.match(before, { value: '', source: 'default' }, 'not changed while it waits');

  const approve = await daemon.ctl(['confirm', 'approve', pending.pending[0]?.code ?? ''], { timeoutMs: WAIT_MS });
  t.equal(approve.code, 0, approve.stderr);
  const after = (await daemon.ctl(['--json', 'config', 'get', KEY])).json() as { value: string; source: string };
  t.match(after, { value: SPEECH, source: 'runtime' });
  const history = (await daemon.ctl(['--json', 'config', 'history', KEY])).json() as Array<{ actor: string; action: string }>;
  t.match(history, [{ action: 'set', actor: 'plugin:cfgmgr' }]);
});

t.test('without plugin.ai_image.base_url the image tool is not offered and health says so', async (t) => {
  const llm = await startScriptedServer(t);
  llm.enqueue(textReply('Hello.'));
  const dir = tempDir(t, 'ha-ai-image-off-');
  const config = join(dir, 'config.yaml');
  writeFileSync(config, JSON.stringify({ core: { llm: { base_url: llm.url, api_key: 'sk-llm', model: 'test-model' } } }));
  const daemon = await startDaemon(t, { dataDir: join(dir, 'data'), env: { HOMEAGENT_CONFIG: config } });
  await daemon.waitForReady(WAIT_MS);
  const r = await daemon.ctl(['chat', '-m', 'tell me a joke'], { timeoutMs: WAIT_MS });
  t.equal(r.code, 0, r.stderr);
  const chats = llm.requests.filter((q) => q.path.endsWith('/chat/completions'));
  const offered = ((chats[0]?.body.tools ?? []) as Array<{ function: { name: string } }>).map((x) => x.function.name);
  t.notOk(offered.includes('image_generate'));
  t.ok(offered.includes('config_get'));
  const health = await daemon.ctl(['health'], { timeoutMs: WAIT_MS });
  t.match(health.stdout, /image generation is off: plugin\.ai_image\.base_url is not set/);
});

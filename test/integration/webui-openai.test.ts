/**
 * The OpenAI-compatible endpoint of the built daemon, driven by the official `openai` client as any
 * program would use it, with the scripted LLM server behind HomeAgent: the model list, completions
 * with and without streaming and their usage, a HomeAgent tool run on the server in the middle of a
 * completion (the client only sees the answer), the client's conversation reaching the model, a
 * wrong key, client-side tools refused, and a duplicate request. The web server's address and API
 * key are read over the CLI socket (`webui.credentials`), as `homeagentctl webui credentials` does.
 */
import OpenAI from 'openai';
import t from 'tap';
import { startDaemon } from '../helpers/in-process-daemon.js';
import { RpcConnection } from '../helpers/rpc.js';
import { type ScriptStep, startScriptedServer } from '../helpers/scripted-llm-server.js';

function chunk(delta: Record<string, unknown>, finish: string | null = null): object {
  return {
    id: 'chatcmpl-vendor',
    object: 'chat.completion.chunk',
    created: 1764460800,
    model: 'test-model',
    choices: [{ index: 0, delta, finish_reason: finish }],
  };
}

const VENDOR_USAGE = { prompt_tokens: 50, completion_tokens: 5, total_tokens: 55 };

/** A vendor answer streamed in the given pieces, with its usage. */
function textReply(pieces: string[], usage = VENDOR_USAGE): ScriptStep {
  return {
    sse: [
      chunk({ role: 'assistant', content: '' }),
      ...pieces.map((content) => chunk({ content })),
      chunk({}, 'stop'),
      { id: 'chatcmpl-vendor', object: 'chat.completion.chunk', choices: [], usage },
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
      {
        id: 'chatcmpl-vendor',
        object: 'chat.completion.chunk',
        choices: [],
        usage: { prompt_tokens: 40, completion_tokens: 3, total_tokens: 43 },
      },
    ],
    done: true,
  };
}

interface SentMessage {
  role: string;
  content: string | null;
  tool_call_id?: string;
}

const llm = await startScriptedServer(t);
const daemon = await startDaemon(t, {
  env: { HOMEAGENT_LLM_BASE_URL: llm.url, HOMEAGENT_LLM_API_KEY: 'sk-vendor', HOMEAGENT_LLM_MODEL: 'test-model' },
});
await daemon.waitForReady();
const control = await RpcConnection.connect(daemon.socketPath);
t.teardown(() => control.close());
const answer = await control.request('webui.credentials', {});
if (!answer.ok) throw new Error(`webui.credentials: ${answer.error?.code}: ${answer.error?.message}`);
const credentials = answer.result as { url: string; api_key: string };
const baseURL = new URL('v1', credentials.url).toString();
// No retries: every request the test makes must be exactly one request to the daemon.
const client = new OpenAI({ baseURL, apiKey: credentials.api_key, maxRetries: 0 });

/** The LLM requests made since `before`. */
const requestsSince = (before: number) => llm.requests.slice(before);

t.test('the model list names the one model, HomeAgent', async (t) => {
  const models: string[] = [];
  for await (const model of client.models.list()) models.push(model.id);
  t.same(models, ['homeagent']);
  const model = await client.models.retrieve('homeagent');
  t.equal(model.owned_by, 'homeagent');
});

t.test('a completion with usage; the conversation the client keeps reaches the model', async (t) => {
  const before = llm.requests.length;
  llm.enqueue(textReply(['It is ', '21 °C in the lounge.']));
  const completion = await client.chat.completions.create({
    model: 'gpt-4o',
    messages: [
      { role: 'system', content: 'Answer in one sentence.' },
      { role: 'user', content: 'Is anyone home?' },
      { role: 'assistant', content: 'Nobody is home right now.' },
      { role: 'user', content: 'How warm is the lounge?' },
    ],
    temperature: 0.1,
  });
  t.equal(completion.object, 'chat.completion');
  t.match(completion.id, /^chatcmpl-oai_/);
  t.equal(completion.model, 'homeagent');
  t.equal(completion.choices.length, 1);
  t.equal(completion.choices[0]?.message.content, 'It is 21 °C in the lounge.');
  t.equal(completion.choices[0]?.finish_reason, 'stop');
  t.same(completion.usage, VENDOR_USAGE);

  const [sent] = requestsSince(before);
  const messages = (sent?.body.messages ?? []) as SentMessage[];
  t.equal(messages[0]?.role, 'system');
  t.match(messages[0]?.content, /You are HomeAgent/, "HomeAgent's own prompt comes first");
  // The intent engine may add its unsure guess as a system note before the person's words
  // ("the lounge" is no area of this home); the client's conversation is there in order around it.
  const intentNote = (m: SentMessage) => m.role === 'system' && /on-device intent engine/.test(String(m.content));
  t.same(
    messages.slice(1).filter((m) => !intentNote(m)),
    [
      { role: 'system', content: 'Answer in one sentence.' },
      { role: 'user', content: 'Is anyone home?' },
      { role: 'assistant', content: 'Nobody is home right now.' },
      { role: 'user', content: 'How warm is the lounge?' },
    ],
  );
  t.equal(sent?.body.model, 'test-model', 'the vendor model is the configured one, not what the client named');
});

t.test('a streamed completion: the chunks join to the answer, then stop and the usage', async (t) => {
  const pieces = ['The hall ', 'light ', 'is ', 'off.'];
  llm.enqueue(textReply(pieces));
  const stream = await client.chat.completions.create({
    model: 'homeagent',
    messages: [{ role: 'user', content: 'Is the hall light on?' }],
    stream: true,
    stream_options: { include_usage: true },
  });
  const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
  for await (const part of stream) chunks.push(part);
  const text = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
  t.equal(text, pieces.join(''));
  const contentChunks = chunks.filter((c) => (c.choices[0]?.delta.content ?? '') !== '');
  t.ok(contentChunks.length > 1, `streamed as the model produced it, not in one piece (${contentChunks.length} content chunks)`);
  t.equal(chunks[0]?.choices[0]?.delta.role, 'assistant');
  const withChoices = chunks.filter((c) => c.choices.length > 0);
  t.equal(withChoices.at(-1)?.choices[0]?.finish_reason, 'stop', 'the last chunk with a choice stops');
  const last = chunks.at(-1);
  t.same(last?.choices, [], 'the usage chunk comes last, without choices');
  t.same(last?.usage, VENDOR_USAGE);
  t.ok(
    chunks.every((c) => c.id === chunks[0]?.id && c.model === 'homeagent'),
    'every chunk names the same completion',
  );
});

t.test('a HomeAgent tool runs on the server; the client only sees the answer', async (t) => {
  const before = llm.requests.length;
  llm.enqueue(
    toolReply('entity_list', {}),
    textReply(['There are no devices yet.'], { prompt_tokens: 60, completion_tokens: 6, total_tokens: 66 }),
  );
  const completion = await client.chat.completions.create({
    model: 'homeagent',
    messages: [{ role: 'user', content: 'Which devices do I have?' }],
  });
  t.equal(completion.choices[0]?.message.content, 'There are no devices yet.');
  t.notOk(completion.choices[0]?.message.tool_calls?.length, 'no tool call is handed to the client');
  t.equal(completion.choices[0]?.finish_reason, 'stop');
  t.same(completion.usage, { prompt_tokens: 100, completion_tokens: 9, total_tokens: 109 }, 'both rounds are counted');

  const sent = requestsSince(before);
  t.equal(sent.length, 2, 'two model rounds');
  const toolMessage = ((sent[1]?.body.messages ?? []) as SentMessage[]).find((m) => m.role === 'tool');
  t.equal(toolMessage?.tool_call_id, 'call_1', 'the tool result went back to the model');
  t.type(toolMessage?.content, 'string');
  t.notMatch(toolMessage?.content ?? '', /not_found|unknown tool/i, 'entity_list ran');

  // The same over a stream.
  llm.enqueue(toolReply('entity_list', {}), textReply(['Still ', 'none.']));
  const stream = await client.chat.completions.create({
    model: 'homeagent',
    messages: [{ role: 'user', content: 'And now, which devices?' }],
    stream: true,
  });
  let text = '';
  let finish: string | null | undefined;
  for await (const part of stream) {
    text += part.choices[0]?.delta.content ?? '';
    finish = part.choices[0]?.finish_reason ?? finish;
    t.notOk(part.choices[0]?.delta.tool_calls, 'no tool call delta');
  }
  t.equal(text, 'Still none.');
  t.equal(finish, 'stop');
});

t.test('a wrong API key is an AuthenticationError', async (t) => {
  const intruder = new OpenAI({ baseURL, apiKey: 'sk-not-the-key', maxRetries: 0 });
  const before = llm.requests.length;
  const refused = await intruder.chat.completions
    .create({ model: 'homeagent', messages: [{ role: 'user', content: 'hi' }] })
    .catch((e: unknown) => e);
  t.type(refused, OpenAI.AuthenticationError);
  const error = await intruder.models.list().catch((e: unknown) => e);
  t.type(error, OpenAI.AuthenticationError);
  t.equal((error as InstanceType<typeof OpenAI.APIError>).status, 401);
  t.equal((error as InstanceType<typeof OpenAI.APIError>).code, 'HA_ERR_HTTP_AUTH', 'the HA code is the error code');
  t.equal(llm.requests.length, before, 'nothing reached the model');
});

t.test('client-side tools and images are refused with a BadRequestError', async (t) => {
  const before = llm.requests.length;
  const error = await client.chat.completions
    .create({
      model: 'homeagent',
      messages: [{ role: 'user', content: 'What is the weather?' }],
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: {} } } }],
    })
    .catch((e: unknown) => e);
  t.type(error, OpenAI.BadRequestError);
  t.match((error as Error).message, /client-side tools are not supported: HomeAgent runs its own tools on the server/);
  t.equal((error as InstanceType<typeof OpenAI.APIError>).param, 'tools');

  const image = await client.chat.completions
    .create({
      model: 'homeagent',
      messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/cat.png' } }] }],
    })
    .catch((e: unknown) => e);
  t.type(image, OpenAI.BadRequestError);
  t.match((image as Error).message, /image content is not supported/);
  t.equal(llm.requests.length, before, 'nothing reached the model');
});

t.test('the same conversation sent twice at once is answered once; the second is a ConflictError', async (t) => {
  const before = llm.requests.length;
  llm.enqueue(textReply(['Done once.']));
  const request = { model: 'homeagent', messages: [{ role: 'user' as const, content: 'Start the coffee machine.' }] };
  const first = await client.chat.completions.create(request);
  t.equal(first.choices[0]?.message.content, 'Done once.');
  const again = await client.chat.completions.create(request).catch((e: unknown) => e);
  t.type(again, OpenAI.ConflictError);
  t.match((again as Error).message, /dedupe_window_ms/);
  t.equal(llm.requests.length, before + 1, 'the model was asked once');
});

import { pino } from 'pino';
import t from 'tap';
import { requestWithoutImages, withoutImages } from '../../../src/llm/image-parts.js';
import { LuaAdapter } from '../../../src/llm/lua/lua-adapter.js';
import { LuaAdapterModel } from '../../../src/llm/lua/lua-model.js';
import { OllamaModel } from '../../../src/llm/providers/ollama.js';
import { OpenAiCompatibleModel } from '../../../src/llm/providers/openai-compatible.js';
import { type ChatMessage, contentText, type GenerateRequest } from '../../../src/llm/spec/index.js';
import { FixtureServer, readFixture } from '../../helpers/fixture-server.js';
import { startScriptedServer } from '../../helpers/scripted-llm-server.js';
import { fixtureJson } from './fixtures/support.js';

const JPEG = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46]).toString('base64');
const DIGEST = 'ab12cd34ef56'.padEnd(64, '0');
const WITH_PICTURE: ChatMessage[] = [
  { role: 'user', content: 'what is at the door?' },
  {
    role: 'user',
    content: [
      { type: 'text', text: 'Picture(s) from camera_snapshot:' },
      { type: 'image', mime: 'image/jpeg', data: JPEG, digest: DIGEST },
    ],
  },
];

t.test('openai-compatible: image parts go out as text + image_url data URLs; plain text stays a string', async (t) => {
  const server = await startScriptedServer(t);
  server.enqueue({ json: fixtureJson('openai/deepseek-chat.json') });
  const model = new OpenAiCompatibleModel({ source: 'gpt', base_url: server.url, api_key: '', model: 'gpt-4o-mini', timeout_ms: 5000 });
  await model.generate({ messages: WITH_PICTURE });
  t.same(server.requests[0]?.body.messages, [
    { role: 'user', content: 'what is at the door?' },
    {
      role: 'user',
      content: [
        { type: 'text', text: 'Picture(s) from camera_snapshot:' },
        { type: 'image_url', image_url: { url: `data:image/jpeg;base64,${JPEG}` } },
      ],
    },
  ]);
});

t.test('ollama: the text in content, the pictures as bare base64 in images', async (t) => {
  const server = await startScriptedServer(t);
  server.enqueue({ json: fixtureJson('ollama/chat-plain.json') });
  const model = new OllamaModel({ source: 'local', base_url: server.url, model: 'llava', timeout_ms: 5000 });
  await model.generate({ messages: WITH_PICTURE });
  t.same(server.requests[0]?.body.messages, [
    { role: 'user', content: 'what is at the door?' },
    { role: 'user', content: 'Picture(s) from camera_snapshot:', images: [JPEG] },
  ]);
});

t.test('withoutImages: each picture becomes a note naming the stored media; other messages are untouched', async (t) => {
  const flat = withoutImages(WITH_PICTURE, 'this model does not take pictures');
  t.equal(flat[0], WITH_PICTURE[0], 'a text message is the same object');
  t.same(flat[1], {
    role: 'user',
    content: 'Picture(s) from camera_snapshot:\n[picture not shown: this model does not take pictures; it is stored as media ab12cd34ef56]',
  });
  t.notMatch(JSON.stringify(flat), JPEG, 'no base64 left');
  const plain: GenerateRequest = { messages: [{ role: 'user', content: 'hi' }] };
  t.equal(requestWithoutImages(plain, 'x'), plain, 'a request without pictures is passed as it is');
  t.equal(contentText(WITH_PICTURE[1]?.content ?? ''), 'Picture(s) from camera_snapshot:', 'contentText skips images');
});

t.test('Lua adapters receive the picture as a note naming the stored media, never the bytes', async (t) => {
  const server = await FixtureServer.start();
  t.teardown(() => server.close());
  const adapter = await LuaAdapter.load('deepseek', {
    logger: pino({ level: 'silent' }),
    time_limit_ms: 1000,
    http_timeout_ms: 1000,
    http_max_bytes: 1024 * 1024,
  });
  t.teardown(() => adapter.close());
  const model = new LuaAdapterModel({ source: 'lua', adapter, base_url: server.url, api_key: 'k', model: 'm', timeout_ms: 5000 });
  server.reply({ status: 200, body: readFixture('openai', 'openai-tool-calls.json') });
  await model.generate({ messages: WITH_PICTURE });
  const body = JSON.parse(server.requests[0]?.body ?? '{}') as { messages: Array<{ content: unknown }> };
  t.equal(
    body.messages[1]?.content,
    'Picture(s) from camera_snapshot:\n[picture not shown: Lua adapters do not pass pictures to the model; it is stored as media ab12cd34ef56]',
  );
  t.notMatch(server.requests[0]?.body, JPEG);
});

/**
 * image_generate against a scripted OpenAI-compatible images server on loopback (a real HTTP
 * server, test/helpers/fixture-server.ts): the request it receives, both answer forms (b64_json and
 * url) landing in the real media store, and every failure (HTTP errors, a server that never
 * answers, an answer over the size limit, bad JSON, bytes that are no picture, a refused picture
 * address, nothing listening) as its own code, with nothing stored. Without a base_url the tool is
 * not offered and the health line says so in both languages.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import aiImage, { TOOL_NAME } from '../../../../plugins/ai_image/index.js';
import type { PluginInstance } from '../../../../src/sdk/index.js';
import { ToolError } from '../../../../src/shared/tool.js';
import { FixtureServer } from '../../../helpers/fixture-server.js';
import { createTestPluginContext, type TestPluginContext } from '../../../helpers/plugin-context.js';
import { type Teardown, tempDir } from '../../fixtures/support.js';

/** A real 1x1 PNG. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');
const KEY = 'sk-images-canary-0c41';

const DEFAULTS = {
  base_url: '',
  api_key: '',
  model: '',
  response_format: 'b64_json',
  sizes: ['256x256', '512x512', '1024x1024', '1792x1024', '1024x1792'],
  default_size: '1024x1024',
  timeout_ms: 120000,
  max_bytes: 20971520,
  max_prompt_chars: 4000,
};

interface Rig {
  tc: TestPluginContext;
  plugin: PluginInstance;
  server: FixtureServer;
  dataDir: string;
  /** Files in the media store. */
  stored(): string[];
}

async function rig(t: Teardown, settings: Partial<typeof DEFAULTS> = {}, configured = true): Promise<Rig> {
  const server = await FixtureServer.start();
  t.teardown(() => server.close());
  const dataDir = tempDir(t, 'ha-ai-image-');
  const tc = createTestPluginContext({
    name: 'ai_image',
    dataDir,
    settings: { ...DEFAULTS, ...(configured && { base_url: `${server.url}/v1`, api_key: KEY, model: 'paint-1' }), ...settings },
  });
  t.teardown(() => tc.close());
  const plugin = aiImage.create(tc.context);
  await plugin.start(new AbortController().signal);
  t.teardown(() => plugin.stop());
  const stored = () => {
    const root = join(dataDir, 'media');
    if (!existsSync(root)) return [];
    return readdirSync(root, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => entry.name);
  };
  return { tc, plugin, server, dataDir, stored };
}

async function failure(run: Promise<unknown>): Promise<ToolError['info']> {
  try {
    await run;
  } catch (error) {
    if (error instanceof ToolError) return error.info;
    throw error;
  }
  throw new Error('the call was expected to fail');
}

const json = (value: unknown) => ({ body: JSON.stringify(value) });

t.test('b64_json: the request the server gets, the picture in the media store, the media id answered', async (t) => {
  const { tc, server, stored } = await rig(t);
  server.reply(json({ created: 1, data: [{ b64_json: PNG.toString('base64'), revised_prompt: 'a red kite over a green hill' }] }));
  const answer = (await tc.call(TOOL_NAME, { prompt: 'a red kite', size: '512x512' })) as Record<string, unknown>;
  t.equal(server.requests.length, 1);
  const request = server.last;
  t.equal(request?.method, 'POST');
  t.equal(request?.path, '/v1/images/generations');
  t.equal(request?.headers.authorization, `Bearer ${KEY}`);
  t.same(JSON.parse(request?.body ?? ''), { prompt: 'a red kite', size: '512x512', n: 1, model: 'paint-1', response_format: 'b64_json' });

  t.match(answer, { mime: 'image/png', bytes: PNG.length, size: '512x512', revised_prompt: 'a red kite over a green hill' });
  t.match(answer.media_id, /^[0-9a-f]{64}$/);
  t.same(tc.media.read(answer.media_id as string), PNG, 'the stored bytes are the picture');
  t.notMatch(JSON.stringify(answer), PNG.toString('base64').slice(0, 24), 'no base64 in the answer');
  t.match(answer.send, new RegExp(`output_send__<channel> with type image and payload ${answer.media_id}`));
  t.same(stored(), [answer.media_id]);
});

t.test('url: the picture is fetched from the address the server gives', async (t) => {
  const { tc, server, stored } = await rig(t, { response_format: 'url', default_size: '256x256' });
  server.reply((request) => json({ data: [{ url: `${server.url}/files/kite.png?for=${encodeURIComponent(request.path)}` }] }));
  server.reply({ headers: { 'content-type': 'image/png' }, body: PNG, chunk_size: 20 });
  const answer = (await tc.call(TOOL_NAME, { prompt: 'a kite' })) as Record<string, unknown>;
  t.equal(JSON.parse(server.requests[0]?.body ?? '').response_format, 'url');
  t.equal(JSON.parse(server.requests[0]?.body ?? '').size, '256x256', 'the default size');
  t.equal(server.requests[1]?.method, 'GET');
  t.match(server.requests[1]?.path, /^\/files\/kite\.png/);
  t.equal(server.requests[1]?.headers.authorization, undefined, 'the key is not sent to the picture address');
  t.same(tc.media.read(answer.media_id as string), PNG);
  t.equal(stored().length, 1);
});

t.test('server_default sends no response_format and no model when none is set; either form is read', async (t) => {
  const { tc, server } = await rig(t, { response_format: 'server_default', model: '' });
  server.reply(json({ data: [{ b64_json: PNG.toString('base64') }] }));
  await tc.call(TOOL_NAME, { prompt: 'a kite' });
  t.same(JSON.parse(server.last?.body ?? ''), { prompt: 'a kite', size: '1024x1024', n: 1 });
});

t.test('each failure is a coded tool error, and nothing is stored', async (t) => {
  const { tc, server, stored } = await rig(t, { max_bytes: 4096, timeout_ms: 1000 });
  const cases: Array<[string, Parameters<FixtureServer['reply']>[0], RegExp, string]> = [
    [
      'HTTP 500',
      { status: 500, body: '{"error":{"message":"the GPU is on fire"}}' },
      /^HA_ERR_AI_IMAGE_HTTP: .*HTTP 500: the GPU is on fire/,
      'failed',
    ],
    [
      'HTTP 401',
      { status: 401, body: '{"error":{"message":"bad key"}}' },
      /^HA_ERR_AI_IMAGE_HTTP: .*HTTP 401: bad key \(check plugin\.ai_image\.api_key\)/,
      'failed',
    ],
    ['HTTP 404, not JSON', { status: 404, body: 'Not Found' }, /HTTP 404: Not Found \(check plugin\.ai_image\.base_url\)/, 'failed'],
    ['no answer', { stall: true }, /^HA_ERR_AI_IMAGE_TIMEOUT: the images API did not answer within 1000 ms/, 'timeout'],
    ['a body that stops', { body: '{"data":[{"b64_json":"iVBOR', stall_after: 20 }, /^HA_ERR_AI_IMAGE_TIMEOUT/, 'timeout'],
    [
      'too large, declared',
      { headers: { 'content-type': 'application/json', 'content-length': '9000000' }, body: 'x'.repeat(10) },
      /^HA_ERR_AI_IMAGE_TOO_LARGE: the answer of the images API is larger than \d+ bytes \(Content-Length 9000000/,
      'rejected',
    ],
    [
      'too large, streamed',
      { body: JSON.stringify({ data: [{ b64_json: 'A'.repeat(200_000) }] }), chunk_size: 16384 },
      /^HA_ERR_AI_IMAGE_TOO_LARGE: .*more than \d+ bytes arrived/,
      'rejected',
    ],
    [
      'a picture over max_bytes',
      json({ data: [{ b64_json: Buffer.alloc(5000, 1).toString('base64') }] }),
      /^HA_ERR_AI_IMAGE_TOO_LARGE: the picture is 5000 bytes, more than 4096/,
      'rejected',
    ],
    ['bad JSON', { body: '{"data": [' }, /^HA_ERR_AI_IMAGE_BAD_RESPONSE: .*not JSON/, 'failed'],
    ['no data', json({ created: 1 }), /^HA_ERR_AI_IMAGE_BAD_RESPONSE: .*no data\[0\]/, 'failed'],
    ['neither form', json({ data: [{ revised_prompt: 'x' }] }), /^HA_ERR_AI_IMAGE_BAD_RESPONSE: .*neither/, 'failed'],
    ['not base64', json({ data: [{ b64_json: '!!not base64!!' }] }), /^HA_ERR_AI_IMAGE_BAD_RESPONSE: .*not base64/, 'failed'],
    [
      'not a picture',
      json({ data: [{ b64_json: Buffer.from('<html>error</html>').toString('base64') }] }),
      /^HA_ERR_AI_IMAGE_NOT_IMAGE/,
      'failed',
    ],
    ['a file: address', json({ data: [{ url: 'file:///etc/passwd' }] }), /^HA_ERR_AI_IMAGE_URL_REFUSED: .*only http and https/, 'rejected'],
    ['a dropped connection', { reset: true }, /^HA_ERR_AI_IMAGE_UNREACHABLE/, 'unavailable'],
  ];
  for (const [name, reply, detail, reason] of cases) {
    server.reply(reply);
    const info = await failure(tc.call(TOOL_NAME, { prompt: 'a kite' }));
    t.match(info.detail, detail, name);
    t.equal(info.reason, reason, `${name}: ${reason}`);
  }
  t.same(stored(), [], 'nothing stored');
});

t.test('a url answer: a failed download and a redirect are errors too', async (t) => {
  const { tc, server, stored } = await rig(t);
  server.reply(json({ data: [{ url: `${server.url}/files/gone.png` }] }));
  server.reply({ status: 410, body: 'gone' });
  t.match((await failure(tc.call(TOOL_NAME, { prompt: 'a kite' }))).detail, /^HA_ERR_AI_IMAGE_HTTP: downloading the picture .* HTTP 410/);
  server.reply(json({ data: [{ url: `${server.url}/files/moved.png` }] }));
  server.reply({ status: 302, headers: { location: 'http://127.0.0.1:9/secret' }, body: '' });
  t.match(
    (await failure(tc.call(TOOL_NAME, { prompt: 'a kite' }))).detail,
    /^HA_ERR_AI_IMAGE_UNREACHABLE: the picture download/,
    'redirects are not followed',
  );
  t.same(stored(), []);
});

t.test('nothing listening at base_url', async (t) => {
  const gone = await FixtureServer.start();
  const url = gone.url;
  await gone.close();
  const { tc } = await rig(t, { base_url: `${url}/v1` });
  const info = await failure(tc.call(TOOL_NAME, { prompt: 'a kite' }));
  t.equal(info.reason, 'unavailable');
  t.match(info.detail, `HA_ERR_AI_IMAGE_UNREACHABLE: the images API at ${url} could not be reached (ECONNREFUSED)`);
});

t.test('an unoffered size is refused before anything is sent', async (t) => {
  const { tc, server } = await rig(t, { sizes: ['512x512'], default_size: '512x512' });
  t.same(tc.tools.get(TOOL_NAME)?.parameters, {
    type: 'object',
    properties: {
      prompt: {
        type: 'string',
        minLength: 1,
        maxLength: 4000,
        description: 'What the picture shows, in detail (subject, style, colours, composition).',
      },
      size: { type: 'string', enum: ['512x512'], description: 'WIDTHxHEIGHT; default 512x512.' },
    },
    required: ['prompt'],
    additionalProperties: false,
  });
  const def = tc.tools.get(TOOL_NAME);
  const check = def && tc.tools.validate(def, JSON.stringify({ prompt: 'a kite', size: '4096x4096' }));
  t.equal(check?.ok, false, 'the schema refuses it');
  t.equal(server.requests.length, 0);
});

t.test('without base_url the tool is not offered and health says so; setting it offers the tool', async (t) => {
  const { tc, plugin } = await rig(t, {}, false);
  t.equal(tc.tools.get(TOOL_NAME), undefined, 'not offered');
  const health = await plugin.health?.();
  t.match(health, { ok: true, detail: /image generation is off: plugin\.ai_image\.base_url is not set/, detail_zh: /图片生成未开启/ });
  tc.context.settings.set('base_url', 'http://127.0.0.1:9/v1');
  t.equal(tc.tools.get(TOOL_NAME)?.tier, 'act', 'offered once configured');
  t.match(await plugin.health?.(), {
    detail: /image_generate draws with http:\/\/127\.0\.0\.1:9/,
    detail_zh: /使用 http:\/\/127\.0\.0\.1:9 生成图片/,
  });
  tc.context.settings.set('base_url', '');
  t.equal(tc.tools.get(TOOL_NAME), undefined, 'withdrawn when cleared');
});

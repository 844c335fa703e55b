import t from 'tap';
import { defaultConfig } from '../../../src/config/loader.js';
import { type LlmConfig, ProviderManager, resolveSources } from '../../../src/llm/provider-manager.js';
import { OpenAiCompatibleModel } from '../../../src/llm/providers/openai-compatible.js';
import type { GenerateRequest } from '../../../src/llm/spec/index.js';
import { type ScriptedServer, startScriptedServer } from '../../helpers/scripted-llm-server.js';
import { silentLogs } from '../fixtures/support.js';
import { collectParts, fixtureJson, ManualClock, sseEvents, streamError, textOf } from './fixtures/support.js';

const JPEG = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10]).toString('base64');
const DIGEST = '0123456789ab'.padEnd(64, 'f');
const NOTE = '[picture not shown: this model does not take pictures; it is stored as media 0123456789ab]';
const PICTURE: GenerateRequest = {
  messages: [
    { role: 'user', content: 'who is at the door?' },
    {
      role: 'user',
      content: [
        { type: 'text', text: 'Picture(s) from camera_snapshot:' },
        { type: 'image', mime: 'image/jpeg', data: JPEG, digest: DIGEST },
      ],
    },
  ],
};
type Sources = LlmConfig['sources'];

function manager(overrides: Partial<LlmConfig>): ProviderManager {
  const config = { ...defaultConfig().core.llm, ...overrides };
  return new ProviderManager({
    config: () => config,
    createModel: (s) =>
      new OpenAiCompatibleModel({ source: s.name, base_url: s.base_url, api_key: s.api_key, model: s.model, timeout_ms: s.timeout_ms }),
    setCurrentSource: () => {},
    log: silentLogs().child('llm'),
    clock: new ManualClock(),
  });
}

function source(server: ScriptedServer, priority: number, vision?: boolean): Sources[string] {
  return { adapter: 'openai', base_url: server.url, api_key: 'sk-test', model: 'm', priority, ...(vision === undefined ? {} : { vision }) };
}

/** The content of the picture message as the source received it. */
function pictureContent(server: ScriptedServer, index = 0): unknown {
  return server.requests[index]?.body.messages[1].content;
}

t.test('resolveSources: core.llm.vision is the default source’s; named sources say for themselves', async (t) => {
  const config = { ...defaultConfig().core.llm };
  t.equal(resolveSources({ ...config, api_key: 'k' })[0]?.vision, false, 'off by default');
  t.equal(resolveSources({ ...config, api_key: 'k', vision: true })[0]?.vision, true);
  const named = resolveSources({ ...config, vision: true, sources: { cam: { adapter: 'openai' }, default: { adapter: 'openai' } } });
  t.same(
    named.map((s) => [s.name, s.vision]),
    [
      ['cam', false],
      ['default', true],
    ],
    'a named source without the key has no vision; a sources entry named default inherits core.llm.vision',
  );
});

t.test('a vision source receives the picture; a source without vision reads a note and no base64', async (t) => {
  const seeing = await startScriptedServer(t);
  const blind = await startScriptedServer(t);
  seeing.enqueue({ json: fixtureJson('openai/deepseek-chat.json') });
  blind.enqueue({ json: fixtureJson('openai/deepseek-chat.json') });
  await manager({ sources: { seeing: source(seeing, 1, true) } }).generate(PICTURE);
  await manager({ sources: { blind: source(blind, 1) } }).generate(PICTURE);
  t.same(pictureContent(seeing), [
    { type: 'text', text: 'Picture(s) from camera_snapshot:' },
    { type: 'image_url', image_url: { url: `data:image/jpeg;base64,${JPEG}` } },
  ]);
  t.equal(pictureContent(blind), `Picture(s) from camera_snapshot:\n${NOTE}`);
  t.notMatch(JSON.stringify(blind.requests[0]?.body), JPEG);
  t.equal(blind.requests[0]?.body.messages[0].content, 'who is at the door?', 'other messages unchanged');
});

t.test('generate: on fallback from a vision source to one without, the picture becomes the note', async (t) => {
  const seeing = await startScriptedServer(t);
  const blind = await startScriptedServer(t);
  seeing.enqueue({ status: 503, body: { error: { message: 'overloaded' } } });
  blind.enqueue({ json: fixtureJson('openai/deepseek-chat.json') });
  const result = await manager({ sources: { seeing: source(seeing, 1, true), blind: source(blind, 2, false) } }).generate(PICTURE);
  t.match(result.model, /^blind\//, 'the fallback answered');
  t.equal(seeing.requests.length, 1);
  t.match(pictureContent(seeing), [{}, { type: 'image_url' }], 'the vision source was sent the picture');
  t.equal(pictureContent(blind), `Picture(s) from camera_snapshot:\n${NOTE}`);
  t.notMatch(JSON.stringify(blind.requests[0]?.body), JPEG);
});

t.test('stream: the same holds when the vision source fails before its first part', async (t) => {
  const seeing = await startScriptedServer(t);
  const blind = await startScriptedServer(t);
  seeing.enqueue({ status: 500, body: 'boom' });
  blind.enqueue({ sse: sseEvents('openai/deepseek-chat-stream.sse') });
  const parts = await collectParts(
    manager({ sources: { seeing: source(seeing, 1, true), blind: source(blind, 2) } }).stream({ ...PICTURE }),
  );
  t.equal(streamError(parts), undefined);
  t.not(textOf(parts), '');
  t.equal(pictureContent(blind), `Picture(s) from camera_snapshot:\n${NOTE}`);
  t.notMatch(JSON.stringify(blind.requests[0]?.body), JPEG);
});

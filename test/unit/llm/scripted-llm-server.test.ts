import t from 'tap';
import { OpenAiCompatibleModel } from '../../../src/llm/providers/openai-compatible.js';
import { startScriptedServer } from '../../helpers/scripted-llm-server.js';
import { fixtureJson } from './fixtures/support.js';

t.test('an empty queue answers 500 with a body that says so', async (t) => {
  const server = await startScriptedServer(t);
  const response = await fetch(`${server.url}/chat/completions`, { method: 'POST', body: '{"model":"m"}' });
  t.equal(response.status, 500);
  t.match(await response.text(), /no step queued/);
  t.same(server.requests[0]?.body, { model: 'm' });
  t.equal(server.pending(), 0);
});

t.test('replyFn answers every request once the queue is empty', async (t) => {
  const answer = fixtureJson('openai/deepseek-chat.json');
  const server = await startScriptedServer(t, { replyFn: () => ({ json: answer }) });
  server.enqueue({ status: 503, body: 'first one fails' });
  const model = new OpenAiCompatibleModel({ source: 's', base_url: server.url, api_key: '', model: 'deepseek-chat', timeout_ms: 5000 });
  const first = await model.generate({ messages: [{ role: 'user', content: 'a' }] }).catch((e: unknown) => e);
  t.match(first, { kind: 'server', status: 503 }, 'queued steps come first');
  for (let i = 0; i < 5; i++)
    t.equal((await model.generate({ messages: [{ role: 'user', content: `${i}` }] })).text, '客厅的灯已经打开了。');
  t.equal(server.requests.length, 6);
});

t.test('credentials in the base URL become Basic authentication and never reach fetch', async (t) => {
  const server = await startScriptedServer(t);
  server.enqueue({ json: fixtureJson('openai/deepseek-chat.json') });
  const url = new URL(server.url);
  url.username = 'home';
  url.password = 's3cret';
  const model = new OpenAiCompatibleModel({ source: 's', base_url: url.toString(), api_key: '', model: 'm', timeout_ms: 5000 });
  await model.generate({ messages: [{ role: 'user', content: 'a' }] });
  t.equal(server.requests[0]?.headers.authorization, `Basic ${Buffer.from('home:s3cret').toString('base64')}`);
});

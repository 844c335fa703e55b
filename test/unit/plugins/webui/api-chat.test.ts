import t from 'tap';
import { CAPABILITY, type Receipt } from '../../../../src/sdk/index.js';
import { apiHarness } from './api-harness.js';

let counter = 0;
const newInputId = () => `webui_test_${++counter}`;

t.test('a chat message becomes an input on the webui channel; the answer is its id at once', async (t) => {
  const h = await apiHarness(t, { newInputId });
  const reply = await h.request({ method: 'POST', url: '/api/v1/chat', payload: { text: 'turn on the kitchen light' } });
  t.equal(reply.status, 200);
  const id = (reply.json.result as { input_id: string }).input_id;
  t.match(id, /^webui_test_\d+$/);
  t.same(reply.json, { ok: true, result: { input_id: id } }, 'no receipt without wait');
  t.equal(h.tc.injected.length, 1);
  t.same(h.tc.injected[0], {
    input: {
      id,
      source: 'webui',
      channel: 'webui',
      sender: { trust: 'owner', id: 'webui:api', proof: 'the web API key' },
      payload: 'turn on the kitchen light',
      meta: {},
    },
    level: 0,
  });

  await h.request({ method: 'POST', url: '/api/v1/chat', payload: { text: 'hi', channel: 'webui_kitchen' } });
  t.equal(h.tc.injected[1]?.input.channel, 'webui_kitchen', 'a named conversation of the page');
});

t.test('the real ids are fresh and fit the input id rule', async (t) => {
  const h = await apiHarness(t);
  const ids = new Set<string>();
  for (let i = 0; i < 5; i++) {
    const reply = await h.request({ method: 'POST', url: '/api/v1/chat', payload: { text: 'hello' } });
    ids.add((reply.json.result as { input_id: string }).input_id);
  }
  t.equal(ids.size, 5);
  for (const id of ids) t.match(id, /^[A-Za-z0-9_-]{8,64}$/);
});

t.test('with wait the receipt comes back, whatever its status', async (t) => {
  const statuses: Receipt['status'][] = ['done', 'skipped', 'failed'];
  const h = await apiHarness(t, {
    newInputId,
    receipt: (input) => {
      const status = statuses.shift() ?? 'done';
      return {
        input_id: input.id ?? '',
        status,
        ...(status === 'done' && { text: 'The light is on.' }),
        ...(status === 'skipped' && { reason: 'duplicate' }),
        ...(status === 'failed' && { error: { code: 'HA_ERR_LLM_ALL_FAILED', message: 'every model failed' } }),
        finished_at: 1,
      };
    },
  });
  const done = await h.request({ method: 'POST', url: '/api/v1/chat', payload: { text: 'light on', wait: true } });
  const id = (done.json.result as { input_id: string }).input_id;
  t.same(done.json, {
    ok: true,
    result: { input_id: id, receipt: { input_id: id, status: 'done', text: 'The light is on.', finished_at: 1 } },
  });
  const skipped = await h.request({ method: 'POST', url: '/api/v1/chat', payload: { text: 'light on', wait: true } });
  t.match(skipped.json, { ok: true, result: { receipt: { status: 'skipped', reason: 'duplicate' } } }, 'a duplicate is a normal receipt');
  const failed = await h.request({ method: 'POST', url: '/api/v1/chat', payload: { text: 'light on', wait: true } });
  t.equal(failed.status, 200, 'a failed turn is still an answer: its receipt says what went wrong');
  t.match(failed.json, { ok: true, result: { receipt: { status: 'failed', error: { code: 'HA_ERR_LLM_ALL_FAILED' } } } });
});

t.test('a wait longer than chat_timeout_ms ends with a timeout error naming the input', async (t) => {
  const h = await apiHarness(t, { newInputId, settings: { chat_timeout_ms: 30 } });
  h.tc.context.io.injectInput = () => new Promise<Receipt>(() => {});
  const reply = await h.request({ method: 'POST', url: '/api/v1/chat', payload: { text: 'think hard', wait: true } });
  t.equal(reply.status, 504);
  t.match(reply.json, {
    ok: false,
    error: { code: 'HA_ERR_AGENT_TIMEOUT', message: /did not answer input webui_test_\d+ within 30 ms.*\/api\/v1\/events/ },
  });
});

t.test('bad chat requests are refused and reach no agent', async (t) => {
  const h = await apiHarness(t);
  for (const [label, payload, message] of [
    ['no text', { channel: 'webui' }, /text must be a non-empty string/],
    ['blank text', { text: '   ' }, /text must be a non-empty string/],
    ['text that is no string', { text: 42 }, /text must be a non-empty string/],
    ['text too long', { text: 'x'.repeat(100_001) }, /longer than 100000/],
    ["another plugin's channel", { text: 'hi', channel: 'cli' }, /channel must be webui or webui_<name>.*"cli"/],
    ['an empty room', { text: 'hi', channel: 'webui_' }, /channel must be/],
    ['upper case', { text: 'hi', channel: 'webui_Kitchen' }, /channel must be/],
    ['wait as text', { text: 'hi', wait: 'yes' }, /wait must be true or false/],
    ['an unknown field', { text: 'hi', model: 'gpt' }, /unknown field "model"/],
  ] as const) {
    const reply = await h.request({ method: 'POST', url: '/api/v1/chat', payload });
    t.equal(reply.status, 400, `${label}: 400`);
    t.match(reply.json, { ok: false, error: { code: 'HA_ERR_RPC_INVALID_PARAMS', message } }, `${label}: says why`);
  }
  t.equal(h.tc.injected.length, 0);
});

t.test('the webui output channel: what the agent sends lands in the event ring', async (t) => {
  const h = await apiHarness(t);
  const channel = h.tc.channels.get('webui');
  t.ok(channel, 'registered when the routes start');
  t.equal(channel?.capabilities, CAPABILITY.TEXT | CAPABILITY.IMAGE);
  t.equal(channel?.synchronous, true);
  const event = {
    id: 'out-1',
    channel: 'webui',
    type: 'text' as const,
    payload: 'The washing is done.',
    meta: { task_id: 't1' },
    created_at: 5,
  };
  await channel?.send(event);
  t.equal(h.ring.lastId, 1);
  t.same(
    h.ring.since(0).events.map((e) => [e.event, e.data]),
    [['webui.output', event]],
  );
});

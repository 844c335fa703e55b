/**
 * The /api/v1 routes of the built daemon over real HTTP with the API key, as a program (or the web
 * page) uses them: status, settings changed and reset (checked against config.get over the CLI
 * socket), a simulated GPIO relay listed and switched, the knowledge library written, browsed,
 * searched and emptied, memory searched, a plugin disabled and enabled, the log and the audit
 * records of the changes, and a chat turn against the scripted LLM followed on the event stream.
 * The web server's address and key come from `webui.credentials` over the CLI socket.
 */
import { once } from 'node:events';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { get, type IncomingMessage } from 'node:http';
import { join } from 'node:path';
import t from 'tap';
import { tempDir } from '../helpers/daemon.js';
import { startDaemon } from '../helpers/in-process-daemon.js';
import { RpcConnection } from '../helpers/rpc.js';
import { type ScriptStep, startScriptedServer } from '../helpers/scripted-llm-server.js';

// An active-low relay board channel: on = low wire.
const RELAY = { id: 'hall_relay', bcm: 17, direction: 'out', active_low: true, safe: 0 };

function textReply(text: string): ScriptStep {
  const chunk = (delta: object, finish: string | null = null) => ({
    id: 'chatcmpl-1',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'test-model',
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  return {
    sse: [
      chunk({ role: 'assistant', content: '' }),
      chunk({ content: text }),
      chunk({}, 'stop'),
      {
        id: 'chatcmpl-1',
        object: 'chat.completion.chunk',
        choices: [],
        usage: { prompt_tokens: 9, completion_tokens: 4, total_tokens: 13 },
      },
    ],
    done: true,
  };
}

const llm = await startScriptedServer(t);
const dir = tempDir(t, 'ha-webui-api-');
const configFile = join(dir, 'config.yaml');
writeFileSync(configFile, JSON.stringify({ plugin: { gpio: { backend: 'simulated', pins: [RELAY] } } }));
const dataDir = join(dir, 'data');
const daemon = await startDaemon(t, {
  dataDir,
  env: {
    HOMEAGENT_CONFIG: configFile,
    HOMEAGENT_LLM_BASE_URL: llm.url,
    HOMEAGENT_LLM_API_KEY: 'sk-test',
    HOMEAGENT_LLM_MODEL: 'test-model',
  },
});
await daemon.waitForReady(30_000);
const control = await RpcConnection.connect(daemon.socketPath);
t.teardown(() => control.close());

async function rpc<T>(method: string, params: object = {}): Promise<T> {
  const answer = await control.request(method, params);
  if (!answer.ok) throw new Error(`${method}: ${answer.error?.code}: ${answer.error?.message}`);
  return answer.result as T;
}

const credentials = await rpc<{ url: string; api_key: string }>('webui.credentials');
const base = new URL('api/v1/', credentials.url);

interface Answer {
  status: number;
  body: { ok: boolean; result?: unknown; error?: { code: string; message: string } };
}

async function api(method: string, path: string, body?: unknown, key = credentials.api_key): Promise<Answer> {
  const response = await fetch(new URL(path, base), {
    method,
    headers: { 'x-api-key': key, ...(body !== undefined && { 'content-type': 'application/json' }) },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Answer['body'] };
}

/** The result of a call that must succeed. */
async function ok<T>(method: string, path: string, body?: unknown): Promise<T> {
  const answer = await api(method, path, body);
  if (answer.status !== 200 || !answer.body.ok) throw new Error(`${method} ${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body.result as T;
}

t.test('status and health; no key, no answer', async (t) => {
  const status = await ok<{ state: string; plugins: Array<{ name: string }> }>('GET', 'status');
  t.ok(
    status.plugins.some((p) => p.name === 'webui'),
    'the status lists the web server itself',
  );
  t.match(await ok('GET', 'health'), { healthy: Boolean, status: String, components: Array });
  const anonymous = await api('GET', 'status', undefined, 'wrong-key');
  t.equal(anonymous.status, 401);
  t.equal(anonymous.body.ok, false);
});

t.test('a setting changed and reset over HTTP is what config.get says, and the change is audited', async (t) => {
  const key = 'plugin.webui.max_event_streams';
  const listed = await ok<Array<{ key: string; type: string; default: unknown }>>('GET', 'settings?prefix=plugin.webui.');
  t.match(
    listed.find((s) => s.key === key),
    { key, type: 'integer', default: 16 },
    'the typed definition the settings form is built from',
  );

  t.match(await ok('PUT', `settings/${key}`, { value: 4 }), { key, value: 4 });
  t.match(await rpc('config.get', { key }), { key, value: 4 });
  const refused = await api('PUT', `settings/${key}`, { value: 0 });
  t.equal(refused.status, 400, 'below the minimum');
  t.equal(refused.body.error?.code, 'HA_ERR_SETTINGS_INVALID_VALUE');
  t.match(await rpc('config.get', { key }), { value: 4 }, 'the refused value changed nothing');

  t.match(await ok('DELETE', `settings/${key}`), { key, value: 16 });
  t.match(await rpc('config.get', { key }), { key, value: 16 });
  const history = await ok<Array<{ key: string; actor: string }>>('GET', `settings-history?key=${key}&limit=5`);
  t.ok(
    history.every((h) => h.key === key && h.actor === 'webui:api'),
    'each change names the web API as its actor',
  );
  t.equal(history.length, 2);

  const audit = await ok<{ lines: Array<Record<string, unknown>> }>('GET', 'logs?audit=true&limit=200');
  t.ok(
    audit.lines.some((l) => l.action === 'settings.set' && l.actor === 'webui:api' && l.key === key),
    'the settings registry audited the change with the API as actor',
  );
  t.ok(
    audit.lines.some((l) => l.action === 'http.request' && l.on_behalf_of === 'webui:api' && l.method === 'PUT'),
    'the web server audited the request',
  );
});

t.test('the simulated relay: listed, switched on and off, its history', async (t) => {
  const switches = await ok<Array<{ entity_id: string; state: unknown }>>('GET', 'entities?domain=switch');
  t.match(switches, [{ entity_id: 'switch.hall_relay' }]);
  const wire = () => {
    const file = join(dataDir, 'plugin-data', 'gpio', 'simulated-gpio', `gpio${RELAY.bcm}`);
    return existsSync(file) ? readFileSync(file, 'utf8').trim() : undefined;
  };

  t.match(await ok('POST', 'entities/switch.hall_relay/services/turn_on', { data: {} }), { entity_id: 'switch.hall_relay', state: 'on' });
  t.equal(wire(), '0', 'the active-low wire is low: the relay is on');
  t.match(await rpc('entities.get', { entity: 'switch.hall_relay', history_limit: 0 }), { entity: { state: 'on' } });
  t.match(await ok('POST', 'entities/switch.hall_relay/services/turn_off'), { state: 'off' });
  t.equal(wire(), '1');

  const history = await ok<{ rows: Array<{ state: unknown }> }>('GET', 'entities/switch.hall_relay/history?limit=10');
  t.ok(history.rows.length >= 2, 'both switchings are stored');

  const wrong = await api('POST', 'entities/switch.hall_relay/services/set_position', { data: { position: 3 } });
  t.equal(wrong.status, 400);
  t.equal(wrong.body.error?.code, 'HA_ERR_ENTITY_SERVICE');

  const audit = await ok<{ lines: Array<Record<string, unknown>> }>('GET', 'logs?audit=true&q=entities.call&limit=50');
  t.ok(
    audit.lines.some((l) => l.action === 'entities.call' && l.actor === 'webui:api' && l.state === 'on'),
    'the service call is audited with its actor',
  );
});

t.test('knowledge: write, tree, scoped search, read, delete', async (t) => {
  const name = 'recipes/soup/tomato_soup';
  t.match(await ok('POST', 'knowledge/entries', { name, content: 'Tomato soup: roast tomatoes with garlic, blend with stock.' }), {
    name,
    category: 'recipes/soup',
    replaced: false,
  });
  const exists = await api('POST', 'knowledge/entries', { name, content: 'again' });
  t.equal(exists.status, 409, 'not replaced without overwrite');

  const tree = await ok<{ total_count: number; children: Array<{ name: string }> }>('GET', 'knowledge/tree?items=true');
  t.equal(tree.total_count, 1);
  t.match(tree.children, [{ name: 'recipes' }]);

  const search = await ok<{ category: string; hits: Array<{ name: string }> }>('GET', 'knowledge/search?q=tomato%20soup&category=recipes');
  t.equal(search.category, 'recipes');
  t.match(search.hits, [{ name }]);

  t.match(await ok('GET', `knowledge/entries/${name}`), { name, category: 'recipes/soup', content: /roast tomatoes/, media: [] });

  t.match(await ok('DELETE', `knowledge/entries/${name}`), { name, removed: true });
  t.equal((await api('DELETE', `knowledge/entries/${name}`)).status, 404);
  t.equal((await ok<{ total_count: number }>('GET', 'knowledge/tree')).total_count, 0);
});

t.test('memory: search and the inspector answer as their control methods do', async (t) => {
  const search = await ok<{ abstain: boolean; items: unknown[] }>('GET', 'memory/search?q=who%20lives%20here&limit=3');
  t.type(search.abstain, 'boolean');
  t.ok(Array.isArray(search.items));
  t.same(search, await rpc('memory.search', { query: 'who lives here', limit: 3 }), 'the same object as over the CLI socket');
  const missing = await api('GET', 'memory/search');
  t.equal(missing.status, 400);
  t.same(await ok('GET', 'memory/entities?limit=5'), await rpc('memory.entities', { limit: 5 }));
  t.match(await ok('GET', 'memory/introspect'), await rpc('memory.introspect'));
  t.same(await ok('GET', 'memory/relations?history=true'), await rpc('memory.relations', { history: true }));
});

t.test('plugins: listed, disabled and enabled again', async (t) => {
  const list = await ok<{ plugins: Array<{ name: string; state: string }> }>('GET', 'plugins');
  t.match(
    list.plugins.find((p) => p.name === 'timer'),
    { state: 'running' },
  );
  await ok('POST', 'plugins/timer/disable');
  t.match(
    (await rpc<{ plugins: Array<{ name: string; state: string }> }>('plugins.list')).plugins.find((p) => p.name === 'timer'),
    { state: 'disabled' },
  );
  await ok('POST', 'plugins/timer/enable');
  t.match(
    (await ok<{ plugins: Array<{ name: string; state: string }> }>('GET', 'plugins')).plugins.find((p) => p.name === 'timer'),
    { state: 'running' },
  );
  const unknown = await api('POST', 'plugins/nosuchplugin/enable');
  t.equal(unknown.status, 404);
  // Enabling and disabling touch no plugin files: the tracker recorded nothing.
  t.same(await ok('GET', 'changes'), [], 'the change tracker answers, with no change sets yet');
  t.match(await ok('GET', 'changes/status'), { backend: 'userspace', pending_files: 0, trial: null });
  const missingChange = await api('GET', 'changes/1');
  t.equal(missingChange.status, 404);
  t.equal(missingChange.body.error?.code, 'HA_ERR_CHANGE_NOT_FOUND');
});

t.test('logs: the newest lines, filtered', async (t) => {
  const logs = await ok<{ lines: Array<Record<string, unknown>>; dropped: number }>('GET', 'logs?limit=5');
  t.ok(logs.lines.length > 0 && logs.lines.length <= 5);
  const warnings = await ok<{ lines: Array<{ level: unknown }> }>('GET', 'logs?level=warn&limit=100');
  t.ok(
    warnings.lines.every((l) => typeof l.level !== 'number' || l.level >= 40),
    'only warnings and worse',
  );
  t.equal((await api('GET', 'logs?level=loud')).status, 400);
});

t.test('chat: the answer as the receipt, and the turn on the event stream', async (t) => {
  const request = get(new URL('events', base), { headers: { 'x-api-key': credentials.api_key } });
  const [response] = (await once(request, 'response')) as [IncomingMessage];
  t.equal(response.statusCode, 200);
  response.setEncoding('utf8');
  let text = '';
  const arrived = new Set<() => void>();
  response.on('data', (chunk: string) => {
    text += chunk;
    for (const wake of arrived) wake();
  });
  const waitFor = (pattern: RegExp) =>
    new Promise<void>((resolve) => {
      const check = () => {
        if (pattern.test(text)) {
          arrived.delete(check);
          resolve();
        }
      };
      arrived.add(check);
      check();
    });
  await waitFor(/: stream open/);

  llm.enqueue(textReply('The hall light is off.'));
  const chat = await ok<{ input_id: string; receipt: { status: string; text: string } }>('POST', 'chat', {
    text: 'is the hall light on?',
    wait: true,
  });
  t.match(chat.receipt, { status: 'done', text: 'The hall light is off.' });
  await waitFor(new RegExp(`event: agent.answer\\ndata: \\{[^\\n]*"input_id":"${chat.input_id}"`));
  t.match(text, /event: agent\.text_delta\n/, 'the answer was streamed in pieces first');
  const lastId = Math.max(...[...text.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1])));
  response.destroy();

  // A reconnect with the last id seen gets nothing old again, but what came after.
  await ok('POST', 'entities/switch.hall_relay/services/toggle');
  const again = get(new URL(`events?last_event_id=${lastId}`, base), { headers: { 'x-api-key': credentials.api_key } });
  const [replayed] = (await once(again, 'response')) as [IncomingMessage];
  replayed.setEncoding('utf8');
  let replayText = '';
  await new Promise<void>((resolve) => {
    replayed.on('data', (chunk: string) => {
      replayText += chunk;
      if (/event: entity\.state_changed\n/.test(replayText)) resolve();
    });
  });
  const ids = [...replayText.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
  t.ok(
    ids.every((id) => id > lastId),
    'only events after the last one seen',
  );
  t.notMatch(replayText, /event: reset/);
  replayed.destroy();
});

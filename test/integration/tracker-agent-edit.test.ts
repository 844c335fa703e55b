/**
 * The agent edits a plugin (issue 10), through the built daemon with a scripted model: a good
 * out-of-process plugin is installed with `homeagentctl plugins install` and committed; then, in a
 * chat, the model calls files_write to overwrite the plugin's entry file with a version that fails
 * its health ping. The call is recorded as a change set (actor agent, tool files_write, the
 * plugin's folder, the conversation's channel), put on trial and rolled back by the supervisor
 * within 2 heartbeat intervals; the file is byte-equal to the good version again, the good version
 * runs, and the rollback sentence reaches the conversation the edit came from. A files_write that
 * touches nothing under <data>/plugins records nothing.
 *
 * The conversation is the web page's chat (POST /api/v1/chat on channel `webui`), observed on
 * GET /api/v1/events: the simplest channel that shows what is sent to it unasked. The cli channel
 * of `homeagentctl chat` cannot: it shows only the answer to the request in flight and refuses any
 * send (plugins/cli/index.ts).
 *
 * Settings: plugin.files.roots adds <data>/plugins read-write; core.tracker.tracked_tools keeps
 * its default (files_write is in it); files_write is pre-authorised (core.agent.preauthorized_tools)
 * so the scripted model's call runs without the owner's /confirm round, which other tests cover.
 */
import { readFileSync } from 'node:fs';
import { get, type IncomingMessage } from 'node:http';
import { join } from 'node:path';
import t from 'tap';
import type { ChangeSet, ChangeSummary } from '../../src/tracker/change-types.js';
import {
  ControlClient,
  faultDaemonEnv,
  fixtureFiles,
  newestChangeId,
  sha256,
  showChange,
  waitForDecision,
  waitForNewChange,
  waitForPlugin,
  writeFixtureArchive,
} from '../fixtures/fault-plugins/harness.mjs';
import { tempDir } from '../helpers/daemon.js';
import { startDaemon } from '../helpers/in-process-daemon.js';
import { type ScriptStep, startScriptedServer } from '../helpers/scripted-llm-server.js';

const HEARTBEAT_MS = 1000;
const TRIAL_INTERVALS = 2;
const WAIT_MS = 20_000;
const PLUGIN = 'porch';

// ---- the scripted model ----

function chunk(delta: Record<string, unknown>, finish: string | null = null): object {
  return {
    id: 'chatcmpl-edit',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'test-model',
    choices: [{ index: 0, delta, finish_reason: finish }],
  };
}

function textReply(text: string): ScriptStep {
  return { sse: [chunk({ role: 'assistant', content: '' }), chunk({ content: text }), chunk({}, 'stop')], done: true };
}

let callSeq = 0;
function toolReply(name: string, args: object): ScriptStep {
  const id = `call_edit_${++callSeq}`;
  return {
    sse: [
      chunk({ role: 'assistant', content: null, tool_calls: [{ index: 0, id, type: 'function', function: { name, arguments: '' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: JSON.stringify(args) } }] }),
      chunk({}, 'tool_calls'),
    ],
    done: true,
  };
}

// The supervisor's reachability probes (GET) are answered by the scripted server itself.
const script: ScriptStep[] = [];
const llm = await startScriptedServer(t, {
  replyFn: () => script.shift() ?? { status: 500, body: { error: { message: 'no completion scripted' } } },
});
const completions = () => llm.requests.filter((r) => r.method === 'POST' && r.path === '/chat/completions');

// ---- the daemon ----

const root = tempDir(t, 'ha-agent-edit-');
const dataDir = join(root, 'data');
const pluginsDir = join(dataDir, 'plugins');
const entryFile = join(pluginsDir, PLUGIN, 'index.mjs');
const daemon = await startDaemon(t, {
  dataDir,
  env: {
    ...faultDaemonEnv({ heartbeatMs: HEARTBEAT_MS, restartBackoffMs: HEARTBEAT_MS, trialIntervals: TRIAL_INTERVALS }),
    HOMEAGENT_LLM_BASE_URL: llm.url,
    HOMEAGENT_LLM_API_KEY: 'sk-test',
    HOMEAGENT_LLM_MODEL: 'test-model',
    HOMEAGENT_PLUGIN_FILES_ROOTS: JSON.stringify([{ path: pluginsDir, mode: 'rw' }]),
    HOMEAGENT_AGENT_PREAUTHORIZED_TOOLS: JSON.stringify(['files_write']),
  },
});
await daemon.waitForReady(60_000);
const client = await ControlClient.connect(daemon.socketPath);
t.teardown(() => client.close());
const credentials = (await client.call('webui.credentials')) as { url: string; api_key: string };
const api = new URL('api/v1/', credentials.url);

// ---- the web page's event stream ----

interface StreamEvent {
  event: string;
  // biome-ignore lint/suspicious/noExplicitAny: event payloads are inspected freely in tests.
  data: any;
}

/** Every event of GET /api/v1/events since the test opened it, parsed; waits for one that matches. */
async function openEventStream() {
  const request = get(new URL('events', api), { headers: { 'x-api-key': credentials.api_key } });
  const [response] = (await new Promise((resolve, reject) => {
    request.once('response', (r) => resolve([r]));
    request.once('error', reject);
  })) as [IncomingMessage];
  if (response.statusCode !== 200) throw new Error(`GET /api/v1/events answered ${response.statusCode}`);
  t.teardown(() => response.destroy());
  response.setEncoding('utf8');
  const events: StreamEvent[] = [];
  const waiters = new Set<() => void>();
  let buffer = '';
  response.on('data', (text: string) => {
    buffer += text;
    for (let end = buffer.indexOf('\n\n'); end !== -1; end = buffer.indexOf('\n\n')) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const event = /^event: (.*)$/m.exec(frame)?.[1];
      const data = /^data: (.*)$/m.exec(frame)?.[1];
      if (event !== undefined && data !== undefined) events.push({ event, data: JSON.parse(data) });
    }
    for (const wake of [...waiters]) wake();
  });
  const waitFor = (what: string, match: (e: StreamEvent) => boolean, timeoutMs = WAIT_MS) =>
    new Promise<StreamEvent>((resolve, reject) => {
      const check = () => {
        const found = events.find(match);
        if (!found) return;
        finish();
        resolve(found);
      };
      const timer = setTimeout(() => {
        finish();
        reject(new Error(`no ${what} on the event stream within ${timeoutMs} ms; seen: ${events.map((e) => e.event).join(', ')}`));
      }, timeoutMs);
      const finish = () => {
        clearTimeout(timer);
        waiters.delete(check);
      };
      waiters.add(check);
      check();
    });
  return { events, waitFor };
}

const stream = await openEventStream();

/** One chat turn on the web page's channel; answers the receipt once the agent is done. */
async function chat(text: string): Promise<{ input_id: string; receipt: { status: string; text?: string } }> {
  const response = await fetch(new URL('chat', api), {
    method: 'POST',
    headers: { 'x-api-key': credentials.api_key, 'content-type': 'application/json' },
    body: JSON.stringify({ text, wait: true }),
  });
  const body = (await response.json()) as { ok: boolean; result: { input_id: string; receipt: { status: string; text?: string } } };
  if (!body.ok) throw new Error(`POST /api/v1/chat: ${JSON.stringify(body)}`);
  return body.result;
}

/** What the model was told the tool answered, in the completion request after the call. */
function toolResultSeen(requestIndex: number): string {
  const messages = (completions()[requestIndex]?.body.messages ?? []) as Array<{ role: string; content: string }>;
  return messages.filter((m) => m.role === 'tool').at(-1)?.content ?? '(no tool message)';
}

const good = fixtureFiles('good', PLUGIN, '1.0.0');
const bad = fixtureFiles('fails_health', PLUGIN, '1.0.0');

t.test('a good plugin installed with homeagentctl is committed first', async (t) => {
  const afterId = await newestChangeId(client);
  const installed = await daemon.ctl([
    'plugins',
    'install',
    await writeFixtureArchive(join(root, 'archives'), 'good', PLUGIN, '1.0.0'),
    '--json',
  ]);
  t.equal(installed.code, 0, `homeagentctl plugins install exits 0 (${installed.stderr.trim() || 'no stderr'})`);
  const recorded = await waitForNewChange(client, afterId, 'plugins.install', WAIT_MS);
  const decided = await waitForDecision(client, recorded.id, WAIT_MS);
  t.match(
    decided,
    { actor: 'cli', status: 'committed', decided_by: 'supervisor' },
    `the install (#${decided.id}) is committed (${decided.reason ?? 'no reason given'})`,
  );
  t.match(await waitForPlugin(client, PLUGIN, '1.0.0', WAIT_MS), { ok: true }, 'the good plugin runs and is healthy');
  t.equal(readFileSync(entryFile, 'utf8'), good['index.mjs'], 'its entry file is the good version');
});

t.test("the agent's bad edit of the plugin is tracked, rolled back and announced in the conversation", async (t) => {
  const before = completions().length;
  const afterId = await newestChangeId(client);
  script.push(
    toolReply('files_write', { path: entryFile, content: bad['index.mjs'] }),
    textReply('I rewrote the porch plugin as you asked.'),
  );
  const turn = await chat('Rewrite the porch plugin so its health check reports a problem.');
  t.match(turn.receipt, { status: 'done', text: 'I rewrote the porch plugin as you asked.' }, 'the agent answered after the edit');
  t.match(toolResultSeen(before + 1), /"bytes"/, 'the model was told files_write wrote the file');
  t.notMatch(toolResultSeen(before + 1), /HA_ERR_/, 'and not that it failed');

  const recorded = await waitForNewChange(client, afterId, 'files_write', WAIT_MS);
  const trial = await stream.waitFor(
    'change.state trial',
    (e) => e.event === 'change.state' && e.data.id === recorded.id && e.data.status === 'trial',
  );
  t.match(trial.data, { actor: 'agent', tool: 'files_write', files: 1 }, `change set #${recorded.id} went on trial`);
  const undone = await stream.waitFor(
    'change.state rolled_back',
    (e) => e.event === 'change.state' && e.data.id === recorded.id && e.data.status !== 'trial',
  );
  t.match(undone.data, { status: 'rolled_back', by: 'supervisor' }, 'then the supervisor rolled it back');

  const change = (await showChange(client, recorded.id)) as ChangeSet;
  t.match(
    change,
    { actor: 'agent', tool: 'files_write', channel: 'webui', plugins: [PLUGIN], status: 'rolled_back', decided_by: 'supervisor' },
    'the change set names the agent, the tool, the conversation and the plugin folder',
  );
  t.ok(change.reason, `with a reason: ${change.reason}`);
  t.same(
    change.files.map((f) => ({ path: f.path, op: f.op, sha256_before: f.sha256_before, sha256_after: f.sha256_after })),
    [
      {
        path: `${PLUGIN}/index.mjs`,
        op: 'modify',
        sha256_before: sha256(good['index.mjs'] as string),
        sha256_after: sha256(bad['index.mjs'] as string),
      },
    ],
    'its one file is the entry, from the good to the bad version',
  );
  const decidedMs = Date.parse(change.decided_at ?? '') - Date.parse(change.finished_at);
  // A speed goal (within TRIAL_INTERVALS heartbeats), judged by npm run bench -- faults, not here.
  t.comment(`rolled back ${decidedMs} ms after it was recorded (heartbeat ${HEARTBEAT_MS} ms, goal ${TRIAL_INTERVALS * HEARTBEAT_MS} ms)`);

  const listed = await daemon.ctl(['changes', 'list', '--json']);
  t.equal(listed.code, 0, 'homeagentctl changes list exits 0');
  const row = (listed.json() as { changes: ChangeSummary[] }).changes.find((c) => c.id === recorded.id);
  t.match(
    row,
    { actor: 'agent', tool: 'files_write', plugins: [PLUGIN], status: 'rolled_back', decided_by: 'supervisor', file_count: 1 },
    'homeagentctl lists it the same way',
  );

  t.equal(readFileSync(entryFile, 'utf8'), good['index.mjs'], 'the entry file is byte-equal to the good version again');
  const running = await waitForPlugin(client, PLUGIN, '1.0.0', WAIT_MS);
  t.ok(running.ok, `the plugin runs the good version again (${running.detail})`);
  t.match(running.detail, /health ok: good, pid \d+/, "the health ping is the good version's");

  const said = await stream.waitFor(
    'webui.output with the rollback sentence',
    (e) => e.event === 'webui.output' && String(e.data.payload).startsWith(`I undid plugin change ${recorded.id} (`),
  );
  t.match(said.data, { channel: 'webui', type: 'text' }, 'the rollback is sent to the conversation the edit came from');
  t.match(
    said.data.payload,
    `I undid plugin change ${recorded.id} (files_write by agent: plugins/${PLUGIN}) because `,
    `in one sentence naming the change: ${said.data.payload}`,
  );
  t.match(await client.call('changes.status'), { trial: null, pending_files: 0 }, 'nothing is left pending');
});

t.test('a files_write outside <data>/plugins records no change set', async (t) => {
  const before = completions().length;
  const afterId = await newestChangeId(client);
  const changeEvents = () => stream.events.filter((e) => e.event === 'change.state').length;
  const seenChangeEvents = changeEvents();
  script.push(toolReply('files_write', { path: 'notes/hallway.txt', content: 'hallway bulbs: warm white\n' }), textReply('Noted.'));
  // The sentence names nothing the earlier turns named, so recall finds no record, the turn keeps
  // the owner's trust and the pre-authorised write runs at once. (A turn that recalls a transcript
  // holding tool output is lowered and waits for /confirm: test/unit/agent/agent.test.ts covers that.)
  const turn = await chat('Note that the hallway bulbs should be warm white.');
  t.match(turn.receipt, { status: 'done', text: 'Noted.' }, 'the agent answered after the write');
  const written = JSON.parse(toolResultSeen(before + 1)) as { path?: string };
  t.ok(
    written.path?.startsWith(join(dataDir, 'plugin-data', 'files')),
    `the file went to the files plugin's data folder (${written.path})`,
  );
  t.equal(readFileSync(written.path ?? '', 'utf8'), 'hallway bulbs: warm white\n', 'with the content the model gave');
  // The receipt comes after the tool call and its tracking wrapper returned: a change set would exist now.
  t.equal(await newestChangeId(client), afterId, 'no change set was recorded');
  t.match(await client.call('changes.status'), { trial: null, pending_files: 0 }, 'nothing went on trial');
  t.equal(changeEvents(), seenChangeEvents, 'and no change.state event was sent');
});

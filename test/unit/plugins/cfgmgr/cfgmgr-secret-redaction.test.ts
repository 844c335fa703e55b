/**
 * A secret the agent sets through cfgmgr (an API key given in the conversation) reaches the setting
 * and nothing else. The real agent, tool executor, confirmation gate and approval methods run over
 * the real settings registry, wired as the daemon wires them (src/daemon/compose-tools.ts,
 * compose-agent.ts, compose-supervisor.ts' debug log of each LLM round), with every log line at
 * debug, every audit record, every event, the pending list, the approval prompts, the answers and
 * what memory is handed captured: the secret string appears in none of them. A protected value
 * that is not a secret is still shown to the owner who approves it.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { Agent, type FinishedTurn } from '../../../../src/agent/agent.js';
import { ConfirmationGate } from '../../../../src/agent/confirmation-gate.js';
import { registerConfirmationMethods } from '../../../../src/agent/confirmation-methods.js';
import { ConversationBuffer } from '../../../../src/agent/conversation-buffer.js';
import { Persona } from '../../../../src/agent/persona.js';
import { PromptBuilder } from '../../../../src/agent/prompt-builder.js';
import { StageRegistry } from '../../../../src/agent/stage-registry.js';
import { ToolExecutor } from '../../../../src/agent/tool-executor.js';
import { EventBus } from '../../../../src/events/event-bus.js';
import type { InputEvent, TaskControl } from '../../../../src/io/types.js';
import type { ToolCall } from '../../../../src/llm/spec/index.js';
import { systemClock } from '../../../../src/shared/clock.js';
import { SECRET_SHOWN } from '../../../../src/shared/tool.js';
import type { InputSender } from '../../../../src/shared/trust.js';
import { callerSender } from '../../../../src/supervisor/kernel-methods.js';
import { MockModel } from '../../../helpers/mock-model.js';
import { OWNER, UNTRUSTED } from '../../../helpers/senders.js';
import { makeInput } from '../../agent/fixtures/helpers.js';
import { type Teardown, tempDir } from '../../fixtures/support.js';
import { cfgmgrRig } from './cfgmgr-setup.js';

const NEW_LLM_KEY = 'sk-live-9f3c2a7e-never-shown';
const NEW_IMAGE_KEY = 'img-key-5b81d04c-never-shown';
const OWNER_CALLER = { actor: 'cli', owner: true, proof: 'the CLI socket' };

let calls = 0;
function toolCall(name: string, args: Record<string, unknown> | string): ToolCall {
  calls++;
  return { id: `call-${calls}`, name, arguments: typeof args === 'string' ? args : JSON.stringify(args) };
}

function control(taskId: string): TaskControl {
  return {
    task_id: taskId,
    signal: new AbortController().signal,
    safePoint: async () => {},
    llmSignal: () => new AbortController().signal,
    critical: (fn) => fn(),
  };
}

async function secretRig(t: Teardown) {
  const rig = await cfgmgrRig(t, {}, 'debug');
  const { logs } = rig.captured;
  const log = logs.child('agent');
  const events = new EventBus(log);
  const emitted: Array<{ event: string; payload: unknown }> = [];
  const emit = events.emit.bind(events);
  events.emit = ((event, payload) => {
    emitted.push({ event, payload });
    emit(event, payload);
  }) as EventBus['emit'];
  // As compose-supervisor.ts does: every LLM round goes to the agent's debug log.
  events.on('daemon', 'agent.llm_chain', (round) => log.debug(round, 'llm round'));
  const gate = new ConfirmationGate({ preauthorized: () => [], ttlMs: () => 600_000, now: () => systemClock.now(), events });
  const stages = new StageRegistry(log);
  const registry = rig.tc.tools;
  const executor = new ToolExecutor({
    registry,
    stages,
    limits: () => ({ tool_timeout_ms: 5000, tool_output_max_chars: 16000, max_parallel_tools: 4 }),
    log,
    gate,
    audit: (record) => logs.audit(record),
  });
  const personaDir = tempDir(t, 'ha-persona-');
  const personaFile = join(personaDir, 'default.md');
  writeFileSync(personaFile, 'You are the test persona.');
  const model = new MockModel();
  const remembered: FinishedTurn[] = [];
  const conversation = new ConversationBuffer();
  let id = 0;
  const agent = new Agent({
    model,
    modelConfigured: () => true,
    offlineText: () => 'offline',
    tools: {
      specs: () => registry.specs(),
      executeBatch: (batch, options) => executor.executeBatch(batch, options),
      shownArguments: (c) => executor.shownArguments(c),
    },
    stages,
    io: { channelFor: () => ({ name: 'cli', synchronous: true, description: 'the command line' }), send: async () => {} },
    prompt: new PromptBuilder({
      persona: new Persona({ file: () => join(personaDir, 'personal.md'), defaultFile: personaFile, log }),
      toolSummary: () => registry.summaryByOwner(),
    }),
    conversation,
    remember: async (turn) => void remembered.push(turn),
    confirmations: gate,
    events,
    limits: () => ({ max_tool_turns: 5, temperature: 0, max_tokens: 500 }),
    clock: systemClock,
    log,
    newId: () => `id-${++id}`,
  });
  const answers: string[] = [];
  const run = async (input: InputEvent) => {
    const result = await agent.run(input, control(`task-${++id}`));
    answers.push(result.text ?? '');
    return result;
  };
  const notices: string[] = [];
  registerConfirmationMethods(rig.tc.control, {
    gate,
    submit: async (input) => {
      const result = await run(input);
      return { input_id: input.id, status: 'done', text: result.text ?? '', finished_at: systemClock.now() };
    },
    notice: (message) => void notices.push(message),
    clearNotice: () => {},
    senderOf: callerSender,
    audit: (record) => logs.audit(record),
    events,
    clock: systemClock,
  });
  const answersFromControl: unknown[] = [];
  const controlCall = async (method: string, params: Record<string, unknown>) => {
    const answer = await rig.tc.control.call(method, params, OWNER_CALLER);
    answersFromControl.push(answer);
    return answer;
  };
  /** The model asks config_set first (refused: protected), then config_set_protected (held), then answers. */
  const scriptProtectedChange = (args: Record<string, unknown>) => {
    model.push({ tool_calls: [toolCall('config_set', args)] });
    model.push({ tool_calls: [toolCall('config_set_protected', args)] });
    model.push({ text: 'I asked for your approval.' });
  };
  /** Everything that left the calls, as one text to search. */
  const everything = () =>
    JSON.stringify({
      log: rig.captured.text(),
      plugin_audits: rig.tc.audits,
      emitted,
      answers,
      control: answersFromControl,
      notices,
      remembered,
      conversation: conversation.messages('cli'),
    });
  return { ...rig, gate, executor, model, run, controlCall, scriptProtectedChange, everything, emitted };
}

function ask(sender: InputSender, payload: string, inputId: string): InputEvent {
  const channel = sender.trust === 'owner' ? 'cli' : 'mqtt';
  return makeInput({ id: inputId, sender, payload, channel, source: channel });
}

t.test('an approved secret from an MQTT request is set, and shown nowhere', async (t) => {
  const r = await secretRig(t);
  const key = 'plugin.ai_image.api_key';
  r.scriptProtectedChange({ key, value: NEW_IMAGE_KEY });
  await r.run(ask(UNTRUSTED, 'set the image key', 'in-1'));

  const listed = (await r.controlCall('confirm.list', {})) as { pending: Array<{ code: string; arguments: string; text: string }> };
  const [pending] = listed.pending;
  t.ok(pending, 'the owner is asked');
  t.equal(pending?.arguments, JSON.stringify({ key, value: SECRET_SHOWN }), 'the pending list names the key, the value masked');
  t.match(pending?.text, `with {"key":"${key}","value":"${SECRET_SHOWN}"}`, 'so does the prompt the owner reads');
  const requested = r.emitted.filter((e) => e.event === 'confirmation.requested');
  t.equal(requested.length, 1, 'the owner channels got the request event');
  t.equal(r.settings.config().plugin.ai_image.api_key, '', 'not set before approval');

  const approved = (await r.controlCall('confirm.approve', { code: pending?.code ?? '' })) as { receipt: { text: string } };
  t.match(approved.receipt.text, /^Confirmed: config_set_protected ran/, approved.receipt.text);
  t.equal(r.settings.config().plugin.ai_image.api_key, NEW_IMAGE_KEY, 'the setting got the real value');

  const audit = r.captured.records().find((record) => record.action === 'tool.dangerous');
  t.match(audit, { tool: 'config_set_protected', allowed_by: 'owner approval', arguments: JSON.stringify({ key, value: SECRET_SHOWN }) });
  const chain = r.emitted.filter((e) => e.event === 'agent.llm_chain');
  t.match(JSON.stringify(chain), SECRET_SHOWN, 'the web page sees the calls, masked');
  t.ok(r.captured.text().includes('llm round'), 'the debug log has the rounds');
  t.notOk(r.everything().includes(NEW_IMAGE_KEY), 'the secret is in no log line, audit, event, list, prompt, answer or memory');
});

t.test("the owner's own request: the prompt in the answer masks the secret; /confirm sets it", async (t) => {
  const r = await secretRig(t);
  r.scriptProtectedChange({ key: 'core.llm.api_key', value: NEW_LLM_KEY });
  const first = await r.run(ask(OWNER, 'use this key', 'in-1'));
  t.match(first.text, '[Confirmation needed]', 'asked inline');
  t.match(first.text, `"value":"${SECRET_SHOWN}"`);
  const code = /\/confirm ([A-Z0-9]{6})/.exec(first.text ?? '')?.[1] ?? '';
  const confirmed = await r.run(ask(OWNER, `/confirm ${code}`, 'in-2'));
  t.match(confirmed.text, /^Confirmed: config_set_protected ran/);
  t.equal(r.settings.config().core.llm.api_key, NEW_LLM_KEY, 'set to the real value');
  t.notOk(r.everything().includes(NEW_LLM_KEY), 'and shown nowhere');
});

t.test('a protected value that is not a secret is shown in full; a mapping shows all but its secret fields', async (t) => {
  const r = await secretRig(t);
  const url = 'http://203.0.113.9/v1';
  r.scriptProtectedChange({ key: 'core.llm.base_url', value: url });
  await r.run(ask(UNTRUSTED, 'point the model elsewhere', 'in-1'));
  const sources = { backup: { adapter: 'openai', base_url: 'http://198.51.100.7/v1', api_key: NEW_LLM_KEY, model: 'small' } };
  r.scriptProtectedChange({ key: 'core.llm.sources', value: sources });
  await r.run(ask(UNTRUSTED, 'add a source', 'in-2'));

  const { pending } = (await r.controlCall('confirm.list', {})) as { pending: Array<{ code: string; arguments: string; text: string }> };
  t.equal(pending.length, 2);
  t.equal(pending[0]?.arguments, JSON.stringify({ key: 'core.llm.base_url', value: url }), 'the address the owner approves is shown');
  t.match(pending[0]?.text, url);
  const shownSources = JSON.parse(pending[1]?.arguments ?? '{}') as { value: typeof sources };
  t.same(shownSources.value, { backup: { ...sources.backup, api_key: SECRET_SHOWN } }, 'where the words would go is shown, the key is not');

  const approved = (await r.controlCall('confirm.approve', { code: pending[1]?.code ?? '' })) as { receipt: { text: string } };
  t.match(approved.receipt.text, /^Confirmed: config_set_protected ran/, approved.receipt.text);
  t.equal(r.settings.config().core.llm.sources.backup?.api_key, NEW_LLM_KEY, 'the source got the real key');
  const audit = r.captured.records().find((record) => record.action === 'tool.dangerous');
  t.match(String(audit?.arguments), '198.51.100.7', 'the audit record shows the address');
  t.notOk(r.everything().includes(NEW_LLM_KEY), 'and not the key');
});

t.test('arguments that do not parse are shown masked whole, and their error quotes nothing', async (t) => {
  const r = await secretRig(t);
  const broken = `{"key":"core.llm.api_key","value":"${NEW_LLM_KEY}"`;
  r.model.push({ tool_calls: [toolCall('config_set_protected', broken)] });
  r.model.push({ text: 'That did not work.' });
  await r.run(ask(UNTRUSTED, 'set the key', 'in-1'));
  t.same(r.gate.list(), [], 'nothing is held');
  const chain = r.emitted.find((e) => e.event === 'agent.llm_chain') as { payload: { tool_calls: ToolCall[] } } | undefined;
  t.equal(chain?.payload.tool_calls[0]?.arguments, SECRET_SHOWN);
  const result = r.emitted.find((e) => e.event === 'agent.tool_result') as { payload: { content: string } } | undefined;
  t.match(result?.payload.content, /not valid JSON/, 'the model still learns what was wrong');
  t.notOk(r.everything().includes(NEW_LLM_KEY));
});

t.test('a key the registry was not asked about yet counts as secret: its value is masked', async (t) => {
  const r = await secretRig(t);
  t.equal(
    r.executor.shownArguments({ name: 'config_set_protected', arguments: JSON.stringify({ key: 'plugin.later.thing', value: 'x1' }) }),
    JSON.stringify({ key: 'plugin.later.thing', value: SECRET_SHOWN }),
  );
  t.equal(
    r.executor.shownArguments({ name: 'config_set', arguments: JSON.stringify({ key: 'core.log.level', value: 'debug' }) }),
    JSON.stringify({ key: 'core.log.level', value: 'debug' }),
    'a known ordinary key shows its value',
  );
  t.equal(
    r.executor.shownArguments({ name: 'config_set', arguments: JSON.stringify({ key: 'core.llm.api_key', value: '' }) }),
    JSON.stringify({ key: 'core.llm.api_key', value: '' }),
    'clearing a secret shows that it is cleared',
  );
});

/**
 * The real scheduler driving the real agent: an L3 interrupt arriving while an L1 task waits for
 * its LLM answer cancels that request, runs to completion, and the L1 task then sends its request
 * again and completes. Both get exactly one receipt.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { Agent } from '../../../src/agent/agent.js';
import { ConversationBuffer } from '../../../src/agent/conversation-buffer.js';
import { Persona } from '../../../src/agent/persona.js';
import { PromptBuilder } from '../../../src/agent/prompt-builder.js';
import { StageRegistry } from '../../../src/agent/stage-registry.js';
import { ToolExecutor } from '../../../src/agent/tool-executor.js';
import { ToolRegistry } from '../../../src/agent/tool-registry.js';
import { EventBus } from '../../../src/events/event-bus.js';
import { InputScheduler } from '../../../src/io/input-scheduler.js';
import type { InputEvent, Level, Receipt } from '../../../src/io/types.js';
import type { GenerateRequest } from '../../../src/llm/spec/index.js';
import { LogManager } from '../../../src/log/logger.js';
import { systemClock } from '../../../src/shared/clock.js';
import { MockModel } from '../../helpers/mock-model.js';
import { OWNER } from '../../helpers/senders.js';

const logs = new LogManager({ level: 'silent', levels: {} });

t.test('an L3 interrupt pre-empts an L1 task inside its LLM request', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'ha-preempt-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'persona.md'), 'persona');
  const log = logs.child('agent');
  const tools = new ToolRegistry({ log });
  const stages = new StageRegistry(log);
  const executor = new ToolExecutor({
    registry: tools,
    stages,
    limits: () => ({ tool_timeout_ms: 1000, tool_output_max_chars: 1000, max_parallel_tools: 2 }),
    log,
  });

  const userText = (r: GenerateRequest) => {
    const last = r.messages.at(-1);
    return last?.role === 'user' ? last.content : '';
  };
  let backgroundAttempts = 0;
  let firstRequestStarted: () => void = () => {};
  const started = new Promise<void>((resolve) => {
    firstRequestStarted = resolve;
  });
  const model = new MockModel([], (request) => {
    if (userText(request) === 'summarise the news') {
      backgroundAttempts++;
      if (backgroundAttempts === 1) {
        firstRequestStarted();
        return { hang: true };
      }
      return { text: 'News summary.' };
    }
    return { text: 'The timer is done.' };
  });

  const agent = new Agent({
    model,
    modelConfigured: () => true,
    offlineText: () => 'offline',
    tools: { specs: () => tools.specs(), executeBatch: (calls, o) => executor.executeBatch(calls, o) },
    stages,
    io: { channelFor: () => undefined, send: async () => {} },
    prompt: new PromptBuilder({
      persona: new Persona({ file: () => join(dir, 'persona.md'), defaultFile: join(dir, 'persona.md'), log }),
      toolSummary: () => tools.summaryByOwner(),
    }),
    conversation: new ConversationBuffer(),
    events: new EventBus(log),
    limits: () => ({ max_tool_turns: 5, temperature: 0.7, max_tokens: 100 }),
    clock: systemClock,
    log,
    newId: () => 'id',
  });
  const scheduler = new InputScheduler({
    runner: agent,
    limits: () => ({ dedupe_window_ms: 0, ready_queue_size: 8, interrupt_queue_size: 8 }),
    log,
  });
  await scheduler.start();
  t.teardown(() => scheduler.stop());

  const input = (id: string, payload: string, level: Level): InputEvent => ({
    id,
    source: 'test',
    channel: id,
    sender: OWNER,
    type: 'text',
    payload,
    meta: {},
    received_at: Date.now(),
    level,
  });
  const order: Receipt[] = [];
  const background = scheduler.submit(input('bg', 'summarise the news', 1), { origin: 'builtin' }).then((r) => {
    order.push(r);
    return r;
  });
  await started;
  const timer = scheduler.submit(input('timer', 'timer finished', 3), { origin: 'builtin' }).then((r) => {
    order.push(r);
    return r;
  });
  const [bg, tm] = await Promise.all([background, timer]);

  t.equal(tm.status, 'done');
  t.equal(tm.text, 'The timer is done.');
  t.equal(bg.status, 'done');
  t.equal(bg.text, 'News summary.');
  t.same(
    order.map((r) => r.input_id),
    ['timer', 'bg'],
    'the interrupt finished first, then the resumed task',
  );
  t.equal(backgroundAttempts, 2, 'the cancelled request was sent again after resuming');
  const stats = scheduler.stats();
  t.equal(stats.completed, 2, 'exactly two receipts');
  t.equal(stats.running, null);
});

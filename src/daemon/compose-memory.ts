/**
 * Household memory: the memory service, its tools and control methods, and the one policy memory
 * has towards the rest of the house: its upkeep (merge proposals, doubtful facts) becomes queued
 * inputs on the internal self channel, which need the scheduler composed after the agent (hence
 * the late binding), and only when a model is configured to think them through.
 */
import { inputText } from '../agent/agent.js';
import type { InputScheduler } from '../io/input-scheduler.js';
import type { InputEvent } from '../io/types.js';
import type { Logger } from '../log/logger.js';
import { registerGraphViewMethods } from '../memory/graph-view.js';
import { registerMemoryMethods } from '../memory/memory-methods.js';
import { MemoryService, type RecordedInput, SELF_CHANNEL, SELF_SOURCE } from '../memory/memory-service.js';
import type { InputSender } from '../shared/trust.js';
import type { CoreParts } from './compose-core.js';
import type { LlmParts } from './compose-llm.js';
import type { ToolParts } from './compose-tools.js';
import type { LateBinding } from './late-binding.js';

/** Merge proposals and doubtful facts: the house's own upkeep, acting on what anyone told it. */
const MEMORY_UPKEEP_SENDER: InputSender = { trust: 'household', id: SELF_SOURCE, proof: "the memory's own upkeep" };

export type Submit = InputScheduler['submit'];

/** What memory keeps of an input: who said it where, its text, and how far it may be trusted. */
export function memoryInput(input: InputEvent): RecordedInput {
  return {
    id: input.id,
    timestamp: input.received_at,
    source: input.source,
    channel: input.channel,
    peer: typeof input.meta.peer === 'string' ? input.meta.peer : input.source,
    input: inputText(input),
    trust: input.sender.trust,
    // Who said it (core.home.people maps sender ids and, for voices, the room to a person).
    sender_id: input.sender.id,
    ...(typeof input.meta.area === 'string' && { area: input.meta.area }),
  };
}

export function composeMemory(core: CoreParts, toolbox: ToolParts, llm: LlmParts, submit: LateBinding<Submit>): MemoryService {
  const { store, settings, paths, logs, clock, control } = core;
  const log = logs.child('memory');
  const memory = new MemoryService({
    database: () => store.database('memory'),
    limits: () => settings.config().core.agent,
    memory: () => settings.config().core.memory,
    dataDir: paths.dataDir,
    people: () => settings.config().core.home.people,
    parserModelPath: () => settings.config().core.agent.onnx_model_path,
    // ToolDefinition.no_memory / cleaner decide what of a tool's result memory keeps.
    toolPolicy: (name) => toolbox.tools.get(name),
    selfInput: (text) => submitSelfInput(text, { configured: () => llm.providers.configured(), submit, core, log }),
    clock,
    log,
  });
  toolbox.tools.addProvider({ owner: 'memory', tools: () => memory.tools() });
  registerMemoryMethods(control, memory, { logs, clock });
  registerGraphViewMethods(control, memory);
  return memory;
}

/**
 * A merge proposal or doubtful fact as a queued input on the internal self channel. Not awaited:
 * the receipt only comes once the agent has finished the task. False when no model is configured
 * (memory keeps the proposal for later).
 */
function submitSelfInput(
  text: string,
  deps: { configured: () => boolean; submit: LateBinding<Submit>; core: CoreParts; log: Logger },
): boolean {
  if (!deps.configured()) return false;
  const { core, log } = deps;
  void deps.submit
    .get()(
      {
        id: core.newId(),
        source: SELF_SOURCE,
        channel: SELF_CHANNEL,
        sender: MEMORY_UPKEEP_SENDER,
        type: 'text',
        payload: text,
        meta: {},
        received_at: core.clock.now(),
        level: 0,
      },
      { origin: 'builtin' },
    )
    .then(
      (receipt) => {
        if (receipt.status !== 'done') log.warn({ receipt }, 'a memory upkeep task did not run');
      },
      // submit() answers with a receipt (a full queue is one); anything else is logged, not left unhandled.
      (error: unknown) => log.warn({ err: error }, 'a memory upkeep task was not queued'),
    );
  return true;
}

/**
 * Commands and questions the device answers without the model (issue 11): the local intent
 * engine on the home's entities and lists, and the `core` stage hooks through which local answers
 * come before the model's. The engine's sentences compile once the plugins have registered their
 * entities (the intent service starts after the plugin host), in the background rather than on the
 * first command.
 */
import type { StageContext } from '../agent/types.js';
import type { AutomationEngine } from '../automation/automation-engine.js';
import type { EntityRegistry } from '../home/entity-registry.js';
import { createIntentEngine } from '../intent/intent-engine.js';
import { canCarry } from '../io/capabilities.js';
import type { ListStore } from '../lists/list-store.js';
import { type MemoryService, SELF_CHANNEL } from '../memory/memory-service.js';
import type { Service } from '../shared/service.js';
import type { CoreParts } from './compose-core.js';
import type { LlmParts } from './compose-llm.js';
import { memoryInput } from './compose-memory.js';
import type { ToolParts } from './compose-tools.js';

type IntentEngine = ReturnType<typeof createIntentEngine>;

export function composeIntent(
  core: CoreParts,
  deps: {
    toolbox: ToolParts;
    llm: LlmParts;
    entities: EntityRegistry;
    lists: ListStore;
    automations: AutomationEngine;
    memory: Pick<MemoryService, 'answerForgetRequest'>;
  },
): Service {
  const { events, settings, clock, logs } = core;
  const { io, tools, executor, stages } = deps.toolbox;
  const intents = createIntentEngine({
    entities: deps.entities,
    events,
    executeBatch: (calls, options) => executor.executeBatch(calls, options),
    hasTool: (name) => tools.get(name) !== undefined,
    channels: () => io.channels().map((c) => ({ name: c.name, audio: canCarry(c.capabilities, 'audio') })),
    send: (event) => io.send({ ...event, id: core.newId(), created_at: clock.now() }),
    findList: (name) => deps.lists.findList(name),
    settings: () => settings.config().core.intent,
    modelAvailable: () => deps.llm.providers.configured(),
    isMachineInput: (ctx) => ctx.input.source === 'automation' || ctx.input.channel === SELF_CHANNEL,
    now: () => clock.now(),
    log: logs.child('intent'),
  });
  stages.register('core', 'on_input', localAnswers(deps.memory, deps.automations, intents));
  stages.register('core', 'pre_action', intents.preAction);
  return {
    name: 'intent',
    start: async () => intents.recognizer.changed(),
    stop: async () => intents.close(),
  };
}

/**
 * The on_input hook of local answers: a request to forget what the speaker just said ("forget
 * that", "忘掉我刚才说的") first, so it works without a model; then an automation's input trigger
 * with a reply; then the local intents. One chain, because on_input handlers run side by side and
 * only one of them may answer. An automation's own input is not matched again (it would fire itself).
 */
function localAnswers(
  memory: Pick<MemoryService, 'answerForgetRequest'>,
  automations: Pick<AutomationEngine, 'handleInput'>,
  intents: IntentEngine,
) {
  return async (ctx: StageContext): Promise<void> => {
    const { input } = ctx;
    const forgotten = await memory.answerForgetRequest(memoryInput(input));
    if (forgotten !== undefined) {
      ctx.response = forgotten;
      return;
    }
    if (input.type === 'text' && typeof input.payload === 'string' && input.source !== 'automation') {
      const { reply } = automations.handleInput({ text: input.payload, channel: input.channel, source: input.source });
      if (reply !== undefined) {
        ctx.response = reply;
        return;
      }
    }
    await intents.onInput(ctx);
  };
}

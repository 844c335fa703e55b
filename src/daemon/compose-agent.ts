/**
 * The agent: skills (their tools and prompt index), the agent loop on the language models, memory
 * and tools, the input scheduler in front of it, and the confirmation methods through which the
 * owner approves what a turn may not do alone. Without a model the agent answers with
 * {@link OFFLINE_TEXT}; local intents still work (compose-intent.ts).
 */
import { join } from 'node:path';
import { Agent, inputText } from '../agent/agent.js';
import { CONFIRMATION_NOTICE, registerConfirmationMethods } from '../agent/confirmation-methods.js';
import { Persona } from '../agent/persona.js';
import { PromptBuilder } from '../agent/prompt-builder.js';
import type { EntityRegistry } from '../home/entity-registry.js';
import { homeSummary } from '../home/home-summary.js';
import { InputScheduler } from '../io/input-scheduler.js';
import type { MemoryService } from '../memory/memory-service.js';
import { SELF_CHANNEL } from '../memory/memory-service.js';
import { SkillLibrary } from '../plugin/skills/skill-library.js';
import { PACKAGE_ROOT } from '../shared/version.js';
import type { MediaStore } from '../store/media-store.js';
import { callerSender } from '../supervisor/kernel-methods.js';
import type { CoreParts } from './compose-core.js';
import type { LlmParts } from './compose-llm.js';
import { memoryInput } from './compose-memory.js';
import type { ToolParts } from './compose-tools.js';

/** What the agent answers when no language model is configured. */
const OFFLINE_TEXT = [
  'I am offline: no language model is configured, so I cannot think this through right now.',
  'To connect one, give me a DeepSeek API key with `homeagentctl config set core.llm.api_key <key>`',
  '(or HOMEAGENT_LLM_API_KEY), or point core.llm.base_url at any OpenAI-compatible server, or at',
  'Ollama with core.llm.adapter set to ollama. More sources go in core.llm.sources.',
].join(' ');

export interface AgentParts {
  skills: SkillLibrary;
  agent: Agent;
  scheduler: InputScheduler;
}

export function composeAgent(
  core: CoreParts,
  deps: { toolbox: ToolParts; llm: LlmParts; memory: MemoryService; media: MediaStore; entities: EntityRegistry },
): AgentParts {
  const { settings, paths, events, clock, logs, control, status } = core;
  const { toolbox, memory } = deps;
  const { tools, io, stages, executor, confirmations, agentLog } = toolbox;
  const { providers } = deps.llm;
  const skills = new SkillLibrary();
  for (const definition of skills.tools()) tools.register(definition);
  const agent = new Agent({
    model: providers,
    modelConfigured: () => providers.configured(),
    offlineText: () => OFFLINE_TEXT,
    tools: {
      specs: () => tools.specs(),
      executeBatch: (calls, options) => executor.executeBatch(calls, options),
      shownArguments: (call) => executor.shownArguments(call),
    },
    stages,
    io: {
      channelFor: (input) => {
        // The self channel's answers are for the logs only.
        if (input.channel === SELF_CHANNEL) return undefined;
        const name = io.route(input);
        const channel = name === undefined ? undefined : io.channel(name);
        return channel && { name: channel.name, synchronous: channel.synchronous, description: channel.description };
      },
      send: (event) => io.send(event),
    },
    prompt: new PromptBuilder({
      persona: new Persona({
        file: () => settings.config().core.agent.persona_file || join(paths.dataDir, 'personal', 'personal.md'),
        defaultFile: join(PACKAGE_ROOT, 'config', 'persona.md'),
        log: agentLog,
      }),
      toolSummary: () => tools.summaryByOwner(),
      sections: [
        () => skills.promptIndex(),
        // The home as of this turn, in its language, within core.agent.home_summary_max_chars.
        (request) =>
          homeSummary(deps.entities.list(), deps.entities.areas(), {
            max_chars: settings.config().core.agent.home_summary_max_chars,
            language: request.language ?? 'en',
            now: clock.now(),
            ...(request.text !== undefined && { text: request.text }),
          })?.text,
      ],
    }),
    conversation: memory.conversation(),
    slots: async (input) => {
      const block = await memory.recallBlock(inputText(input), { inputId: input.id });
      return block === undefined ? { slots: {}, trust: 'owner' } : { slots: { document_recall: block.text }, trust: block.trust };
    },
    recordInput: (input) => memory.recordInput(memoryInput(input)),
    remember: (turn) =>
      memory.remember({ ...memoryInput(turn.input), input: turn.text, response: turn.answer, tools: turn.tools, trust: turn.trust }),
    confirmations,
    media: deps.media,
    events,
    limits: () => {
      const { agent: a, llm } = settings.config().core;
      return {
        max_tool_turns: a.max_tool_turns,
        temperature: llm.temperature,
        max_tokens: llm.max_tokens,
        max_images_per_turn: a.max_images_per_turn,
      };
    },
    clock,
    log: agentLog,
    newId: core.newId,
  });
  const scheduler = new InputScheduler({ runner: agent, limits: () => settings.config().core.agent, log: logs.child('scheduler'), clock });
  registerConfirmationMethods(control, {
    gate: confirmations,
    submit: (input) => scheduler.submit(input, { origin: 'builtin' }),
    notice: (message) => status.notice('warning', CONFIRMATION_NOTICE, message),
    clearNotice: () => status.clearNotice(CONFIRMATION_NOTICE),
    senderOf: callerSender,
    audit: (record) => logs.audit(record),
    events,
    clock,
  });
  return { skills, agent, scheduler };
}

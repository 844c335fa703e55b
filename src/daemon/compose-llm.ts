/**
 * The language models: the Lua runtime the adapters run in and the provider manager (ordered
 * fallback over core.llm.sources) with its tools. Composed before memory, which asks whether a
 * model is configured before it queues upkeep for the agent.
 */
import { LuaRuntime } from '../llm/lua/lua-runtime.js';
import { createModelFactory } from '../llm/model-factory.js';
import { ProviderManager } from '../llm/provider-manager.js';
import type { CoreParts } from './compose-core.js';
import type { ToolParts } from './compose-tools.js';

export interface LlmParts {
  lua: LuaRuntime;
  providers: ProviderManager;
}

export function composeLlm(core: CoreParts, toolbox: ToolParts): LlmParts {
  const { settings, logs, clock } = core;
  // Lua adapters run in worker threads; the runtime creates them once settings are loaded.
  const lua = new LuaRuntime({ settings: () => settings.config().core.llm, logger: logs.child('llm.lua') });
  const providers = new ProviderManager({
    config: () => settings.config().core.llm,
    createModel: createModelFactory({ lua: lua.modelFactory }),
    setCurrentSource: (name) => settings.set('core.llm.current_source', name, 'agent'),
    log: logs.child('llm'),
    clock,
  });
  for (const definition of providers.tools()) toolbox.tools.register(definition);
  return { lua, providers };
}

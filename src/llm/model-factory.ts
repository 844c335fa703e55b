/**
 * Builds the model of one configured source from its adapter name: `openai` (any OpenAI-compatible
 * API) and `ollama` are the TypeScript providers, the only implementation of those vendors; any
 * other name is a Lua adapter in adapters/. The provider manager calls it; it never imports
 * providers itself. test/contract/language-model.contract.ts runs every vendor through it.
 */
import { HomeAgentError } from '../shared/errors.js';
import type { ResolvedSource } from './provider-manager.js';
import { OllamaModel } from './providers/ollama.js';
import { OpenAiCompatibleModel } from './providers/openai-compatible.js';
import type { LanguageModel } from './spec/index.js';

/** Builds models for Lua adapters; absent until the Lua runtime is wired in. */
export type LuaModelFactory = (source: ResolvedSource) => LanguageModel;

export function createModelFactory(options: { lua?: LuaModelFactory }): (source: ResolvedSource) => LanguageModel {
  return (source) => {
    const common = {
      source: source.name,
      api_key: source.api_key,
      model: source.model,
      timeout_ms: source.timeout_ms,
      temperature: source.temperature,
      max_tokens: source.max_tokens,
    };
    switch (source.adapter) {
      case 'openai':
        if (!source.base_url)
          throw new HomeAgentError('HA_ERR_LLM_BAD_REQUEST', `source ${source.name}: the openai adapter needs a base_url`);
        return new OpenAiCompatibleModel({ ...common, base_url: source.base_url });
      case 'ollama':
        return new OllamaModel(source.base_url ? { ...common, base_url: source.base_url } : common);
      default:
        if (!options.lua) throw new HomeAgentError('HA_ERR_LUA_LOAD', `source ${source.name}: unknown adapter ${source.adapter}`);
        return options.lua(source);
    }
  };
}

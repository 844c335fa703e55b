/**
 * The Lua runtime the LLM adapters run in, as a kernel service: the adapter library (its worker
 * threads) is created at start, once the settings are loaded, and closed at stop. Models of Lua
 * sources are made through {@link LuaRuntime.modelFactory}; one asked for while the runtime is not
 * running fails with a coded error instead of starting worker threads nobody would close.
 */
import type { Logger } from '../../log/logger.js';
import { HomeAgentError } from '../../shared/errors.js';
import type { Service } from '../../shared/service.js';
import type { LuaModelFactory } from '../model-factory.js';
import { LuaAdapterLibrary } from './lua-adapter.js';
import { luaModelFactory } from './lua-model.js';

/** The core.llm settings the runtime's limits come from. */
export interface LuaRuntimeSettings {
  lua_time_limit_ms: number;
  lua_memory_mb: number;
  lua_http_timeout_ms: number;
  lua_http_max_bytes: number;
}

export class LuaRuntime implements Service {
  readonly name = 'lua';
  readonly #settings: () => LuaRuntimeSettings;
  readonly #logger: Logger;
  #library: LuaAdapterLibrary | undefined;

  constructor(options: { settings: () => LuaRuntimeSettings; logger: Logger }) {
    this.#settings = options.settings;
    this.#logger = options.logger;
  }

  async start(): Promise<void> {
    const llm = this.#settings();
    this.#library = new LuaAdapterLibrary({
      logger: this.#logger,
      time_limit_ms: llm.lua_time_limit_ms,
      memory_limit_bytes: llm.lua_memory_mb * 1024 * 1024,
      http_timeout_ms: llm.lua_http_timeout_ms,
      http_max_bytes: llm.lua_http_max_bytes,
    });
  }

  async stop(): Promise<void> {
    await this.#library?.close();
    this.#library = undefined;
  }

  /** Makes the model of a Lua source with the running library; HA_ERR_LUA_LOAD while stopped. */
  readonly modelFactory: LuaModelFactory = (source) => {
    if (!this.#library) throw new HomeAgentError('HA_ERR_LUA_LOAD', 'the Lua runtime is not running');
    return luaModelFactory(this.#library)(source);
  };
}

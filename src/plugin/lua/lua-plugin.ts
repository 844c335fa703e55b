/**
 * The runtime for Lua plugins (`kind: "lua"`): the plugin's main.lua runs in its own
 * {@link LuaSandbox} (a worker thread with the same trimmed Lua as the LLM adapters), and every
 * tool it registers during start() becomes a host tool whose execute calls into that sandbox.
 * The Lua API is described in docs/lua-plugins.md.
 *
 * Failure containment:
 * - a Lua error in a handler fails that call with a ToolError the model reads;
 * - a runaway loop, a memory or string bomb, or too deep a recursion is stopped by the sandbox's
 *   limits (core.plugins.lua_time_limit_ms, lua_memory_mb) and fails that call with
 *   HA_ERR_LUA_LIMIT; the sandbox lives on and later calls work;
 * - a call that waits longer than core.plugins.call_timeout_ms (HTTP does not count as CPU time)
 *   fails with HA_ERR_PLUGIN_TIMEOUT;
 * - if the sandbox itself dies (the watchdog stopped a script stuck inside a C function, or the
 *   worker crashed), the plugin reports itself failed and every later call fails at once with
 *   HA_ERR_PLUGIN_DEAD. It is not restarted: a script that wedges the engine once will do it again,
 *   and a reload (`homeagentctl plugins reload <name>`) starts it afresh once it is fixed.
 *
 * Network: http_get/http_post reach exactly what the manifest's permissions.network grants
 * (nothing by default). The script reads no files: main.lua is read by the host, and only from
 * the plugin's folder.
 */

import { type LuaHttpPolicy, LuaSandbox, LuaScriptError } from '../../lua/lua-sandbox.js';
import type { PluginHealth, PluginInstance } from '../../sdk/plugin.js';
import { describeError, HomeAgentError } from '../../shared/errors.js';
import { type ToolContext, ToolError } from '../../shared/tool.js';
import type { PluginRuntime, RuntimeContext } from '../runtime.js';
import { readLuaEntry } from './lua-entry.js';
import { LUA_PLUGIN_RUNTIME, LUA_PLUGIN_RUNTIME_CHUNK } from './lua-plugin-runtime.js';
import { type LuaToolSpec, parseToolSpecs, toolFailure } from './lua-tool-spec.js';

/** HTTP answers larger than this are refused (a plugin has no config key for it). */
const HTTP_MAX_BYTES = 4 * 1024 * 1024;
/** One HTTP request's timeout; never longer than a whole call may take. */
const HTTP_TIMEOUT_MS = 30_000;

/** Runs a Lua plugin's main.lua in its own sandbox. */
export const createLuaPlugin: PluginRuntime = (context) => new LuaPlugin(context);

class LuaPlugin implements PluginInstance {
  readonly #runtime: RuntimeContext;
  readonly #name: string;
  #sandbox: LuaSandbox | undefined;
  #unregister: Array<() => void> = [];
  #tools: string[] = [];
  #booted = false;
  /** start() finished; from now on a sandbox that dies is reported to the host. */
  #running = false;
  #stopping = false;
  /** Why the sandbox died by itself; set means every call fails at once. */
  #dead: string | undefined;

  constructor(runtime: RuntimeContext) {
    this.#runtime = runtime;
    this.#name = runtime.manifest.name;
  }

  async start(signal: AbortSignal): Promise<void> {
    const { manifest, context, limits } = this.#runtime;
    if (this.#sandbox) throw new HomeAgentError('HA_ERR_PLUGIN_STATE', `Lua plugin ${this.#name} is already started`);
    if (signal.aborted) throw new HomeAgentError('HA_ERR_PLUGIN_START', `Lua plugin ${this.#name}: start was cancelled`);
    this.#stopping = false;
    this.#running = false;
    this.#dead = undefined;
    this.#booted = false;
    const source = await readLuaEntry(this.#runtime.dir, manifest.entry);
    const limit = limits();
    let sandbox: LuaSandbox | undefined;
    const cancel = () => void sandbox?.close();
    signal.addEventListener('abort', cancel, { once: true });
    try {
      sandbox = await LuaSandbox.create({
        name: `lua plugin ${this.#name}`,
        logger: context.log,
        time_limit_ms: limit.lua_time_limit_ms,
        memory_limit_bytes: limit.lua_memory_mb * 1024 * 1024,
        http_timeout_ms: Math.min(HTTP_TIMEOUT_MS, limit.call_timeout_ms),
        http_max_bytes: HTTP_MAX_BYTES,
        http: networkPolicy(manifest.permissions?.network),
        onStopped: (error) => this.#died(error),
      });
      this.#sandbox = sandbox;
      // stop() may have run while the worker was starting (the host's start timeout).
      if (this.#stopping || signal.aborted) throw new HomeAgentError('HA_ERR_PLUGIN_START', 'start was cancelled');
      await sandbox.load(LUA_PLUGIN_RUNTIME, LUA_PLUGIN_RUNTIME_CHUNK);
      const chunkName = `@${this.#name}/${manifest.entry}`;
      const [booted, problem] = await sandbox.call('boot', [source, chunkName, this.#bootInfo()]);
      if (booted !== true) {
        throw new HomeAgentError('HA_ERR_PLUGIN_LOAD', `Lua plugin ${this.#name}: syntax error: ${String(problem)}`);
      }
      this.#booted = true;
      const [specs] = await sandbox.call('start', []);
      for (const spec of parseToolSpecs(specs, this.#name)) {
        this.#unregister.push(context.tools.register(this.#definition(spec)));
        this.#tools.push(spec.name);
      }
      this.#running = true;
    } catch (error) {
      const failure = this.#startFailure(error, signal);
      await this.#release();
      throw failure;
    } finally {
      signal.removeEventListener('abort', cancel);
    }
  }

  async stop(): Promise<void> {
    this.#stopping = true;
    this.#running = false;
    const sandbox = this.#sandbox;
    if (sandbox?.alive && this.#booted) {
      try {
        await withTimeout(sandbox.call('stop', []), this.#runtime.limits().call_timeout_ms, `stop() of Lua plugin ${this.#name}`);
      } catch (error) {
        this.#runtime.log.warn({ err: error }, `Lua plugin ${this.#name}: stop() failed: ${describeError(error)}`);
      }
    }
    await this.#release();
  }

  health(): Required<PluginHealth> {
    if (this.#dead !== undefined) return { ok: false, detail: this.#dead, detail_zh: this.#dead };
    if (!this.#sandbox?.alive) return { ok: false, detail: 'the Lua sandbox is not running', detail_zh: 'Lua 沙箱没有运行' };
    return { ok: true, detail: `running, ${this.#tools.length} tool(s)`, detail_zh: `运行中，${this.#tools.length} 个工具` };
  }

  // ---------------------------------------------------------------------------------------------

  /** What boot hands the script: its name, settings snapshot and network grant. */
  #bootInfo(): Record<string, unknown> {
    const { manifest, context } = this.#runtime;
    const settings: Record<string, unknown> = {};
    for (const [key, definition] of Object.entries(manifest.config ?? {})) {
      let value: unknown;
      try {
        value = context.settings.get(key);
      } catch {
        value = undefined;
      }
      settings[key] = value === undefined ? definition.default : value;
    }
    return { name: this.#name, settings, network: manifest.permissions?.network ?? false };
  }

  #definition(spec: LuaToolSpec) {
    const { name, ...rest } = spec;
    return {
      name,
      ...rest,
      execute: (args: unknown, call: ToolContext) => this.#execute(name, args, call),
    };
  }

  async #execute(tool: string, args: unknown, call: ToolContext): Promise<unknown> {
    const sandbox = this.#sandbox;
    if (this.#dead !== undefined || !sandbox?.alive) throw this.#deadError();
    const info = { task_id: call.task_id, call_id: call.call_id, source: call.source, channel: call.channel, trust: call.trust };
    let values: unknown[];
    try {
      values = await withTimeout(
        sandbox.call('call', [tool, args ?? {}, info]),
        this.#runtime.limits().call_timeout_ms,
        `${tool} (Lua plugin ${this.#name})`,
        call.signal,
      );
    } catch (error) {
      throw this.#callFailure(sandbox, error);
    }
    const [result, failure] = values;
    if (failure !== null && failure !== undefined) throw toolFailure(failure);
    return result ?? null;
  }

  /** A failed call as the caller sees it: ToolError for the script's own errors, a HomeAgentError for limits and a dead plugin. */
  #callFailure(sandbox: LuaSandbox, error: unknown): Error {
    if (!(error instanceof LuaScriptError)) return error instanceof Error ? error : new HomeAgentError('HA_ERR_INTERNAL', String(error));
    const message = this.#withoutPrefix(sandbox, error.message);
    if (error.isLimit) return new HomeAgentError('HA_ERR_LUA_LIMIT', `Lua plugin ${this.#name}: ${message}`, { cause: error });
    if (!sandbox.alive) return this.#deadError(error);
    return new ToolError({ reason: 'failed', detail: message });
  }

  #deadError(cause?: unknown): HomeAgentError {
    const why = this.#dead ?? (this.#stopping ? 'the plugin was stopped' : 'the Lua sandbox is not running');
    return new HomeAgentError(
      'HA_ERR_PLUGIN_DEAD',
      `Lua plugin ${this.#name} is not running: ${why}`,
      cause === undefined ? {} : { cause },
    );
  }

  #startFailure(error: unknown, signal: AbortSignal): HomeAgentError {
    if (signal.aborted || this.#stopping) {
      return new HomeAgentError('HA_ERR_PLUGIN_START', `Lua plugin ${this.#name}: start was cancelled`, { cause: error });
    }
    if (error instanceof LuaScriptError) {
      const message = `Lua plugin ${this.#name}: ${this.#booted ? 'start() failed' : 'main.lua failed to load'}: ${error.message.replace(/^lua plugin [^:]+: /, '')}`;
      return new HomeAgentError(this.#booted ? 'HA_ERR_PLUGIN_START' : 'HA_ERR_PLUGIN_LOAD', message, { cause: error });
    }
    if (error instanceof HomeAgentError) {
      return error.message.startsWith(`Lua plugin ${this.#name}`)
        ? error
        : new HomeAgentError(error.code, `Lua plugin ${this.#name}: ${error.message}`, { cause: error });
    }
    return new HomeAgentError('HA_ERR_PLUGIN_START', `Lua plugin ${this.#name}: ${describeError(error)}`, { cause: error });
  }

  #withoutPrefix(sandbox: LuaSandbox, message: string): string {
    return message.startsWith(`${sandbox.name}: `) ? message.slice(sandbox.name.length + 2) : message;
  }

  /** The sandbox stopped by itself: report the plugin failed (once) unless it is being stopped anyway. */
  #died(error: LuaScriptError): void {
    const sandbox = this.#sandbox;
    // During start the pending call fails and start() reports that; after stop nothing is reported.
    if (!sandbox || !this.#running || this.#stopping || this.#dead !== undefined) return;
    this.#dead = this.#withoutPrefix(sandbox, error.message);
    this.#runtime.log.error({ err: error }, `Lua plugin ${this.#name}: its sandbox stopped; the plugin is marked failed`);
    this.#runtime.reportState('failed', `the Lua sandbox stopped: ${this.#dead}`);
  }

  /** Undoes start: the tools go, then the sandbox (pending calls fail as stopped). */
  async #release(): Promise<void> {
    for (const unregister of this.#unregister.splice(0)) {
      try {
        unregister();
      } catch (error) {
        this.#runtime.log.warn({ err: error }, `Lua plugin ${this.#name}: a tool could not be removed`);
      }
    }
    this.#tools = [];
    const sandbox = this.#sandbox;
    this.#sandbox = undefined;
    if (sandbox) await sandbox.close();
  }
}

/** The manifest's permissions.network as the sandbox's HTTP policy (absent: no network). */
function networkPolicy(network: boolean | string[] | undefined): LuaHttpPolicy {
  if (network === undefined) return false;
  return network;
}

/** Resolves or rejects with `promise`, unless `ms` pass first (HA_ERR_PLUGIN_TIMEOUT) or `signal` aborts. */
function withTimeout<T>(promise: Promise<T>, ms: number, what: string, signal?: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      finish();
      reject(new ToolError({ reason: 'failed', detail: `${what} was cancelled` }));
    };
    const timer = setTimeout(() => {
      finish();
      reject(new HomeAgentError('HA_ERR_PLUGIN_TIMEOUT', `${what} did not finish within ${ms} ms`));
    }, ms);
    const finish = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    };
    if (signal?.aborted) return onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        finish();
        resolve(value);
      },
      (error: unknown) => {
        finish();
        reject(error);
      },
    );
  });
}

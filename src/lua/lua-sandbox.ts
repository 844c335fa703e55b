/**
 * The Lua sandbox as the rest of HomeAgent sees it: one worker thread running a wasmoon Lua 5.4
 * engine (lua-engine.ts) with one script loaded. The LLM adapters (src/llm/lua) and the Lua
 * plugins (src/plugin/lua) both run their scripts in it.
 *
 * Defence in depth:
 * - the standard library is trimmed (no io, os.execute/exit/remove/rename/tmpname/getenv, dofile,
 *   loadfile, require, package, debug, string.dump; load takes text only; no __gc finalizers;
 *   collectgarbage cannot change the collector's limits; the string metatable is hidden);
 * - an instruction-count hook, installed before any script runs, stops a call whose Lua CPU time
 *   passes `time_limit_ms` (HA_ERR_LUA_LIMIT); once the limit has passed every instruction raises,
 *   so pcall cannot keep a runaway loop alive;
 * - the Lua allocator is capped at `memory_limit_bytes` and string.rep refuses oversized results;
 * - the engine runs in a worker, so even a script stuck inside one C function (a pathological
 *   string pattern cannot be interrupted by a hook) never blocks the daemon's event loop: the
 *   watchdog terminates the worker when a call makes no progress for `time_limit_ms` plus a grace
 *   period, and every pending call fails with HA_ERR_LUA_LIMIT. A dead sandbox stays dead; the
 *   owner creates a new one (LuaAdapter does so on its next call).
 *
 * http_get/http_post run here on the main thread with real fetch, a timeout and a response size
 * limit; the Lua call waits (its thread yields) and the wait does not count as CPU time. The
 * `http` option restricts them (lua-http-policy.ts): Lua plugins get only the hosts their manifest
 * grants, checked on every redirect hop.
 */
import { Worker } from 'node:worker_threads';
import type { Logger } from '../log/logger.js';
import { HomeAgentError } from '../shared/errors.js';
import { httpRefusal, isRedirect, type LuaHttpPolicy, MAX_CHECKED_REDIRECTS } from './lua-http-policy.js';
import type {
  FromWorker,
  LuaErrorCode,
  LuaHttpRequest,
  LuaHttpResult,
  LuaLibrarySource,
  LuaModuleInfo,
  ToWorker,
  WorkerInit,
} from './lua-protocol.js';

export type { LuaHttpPolicy } from './lua-http-policy.js';
export type { LuaErrorCode, LuaModuleInfo } from './lua-protocol.js';

export const DEFAULT_LUA_MEMORY_LIMIT_BYTES = 64 * 1024 * 1024;
const DEFAULT_MAX_HTTP_PER_CALL = 8;
const MAX_LOG_LINES_PER_CALL = 200;
const STARTUP_TIMEOUT_MS = 60_000;

/** A Lua script failed to load, failed while running, or was stopped by a limit. */
export class LuaScriptError extends HomeAgentError {
  /** The call did not run because this argument (0-based) was not JSON text. */
  readonly badJsonArgument: number | undefined;

  constructor(code: LuaErrorCode, message: string, options: { cause?: unknown; badJsonArgument?: number | undefined } = {}) {
    super(code, message, options.cause === undefined ? {} : { cause: options.cause });
    this.badJsonArgument = options.badJsonArgument;
  }

  /** Stopped by the time, memory or recursion limit (or the watchdog). */
  get isLimit(): boolean {
    return this.code === 'HA_ERR_LUA_LIMIT';
  }
}

export interface LuaSandboxOptions {
  /** Names the sandbox in log lines and error messages, e.g. `lua adapter anthropic`. */
  name: string;
  logger: Logger;
  /** core.llm.lua_time_limit_ms: Lua CPU time per call. */
  time_limit_ms: number;
  /** core.llm.lua_http_timeout_ms. */
  http_timeout_ms: number;
  /** core.llm.lua_http_max_bytes. */
  http_max_bytes: number;
  /** Lua heap cap; default 64 MiB. */
  memory_limit_bytes?: number;
  /** HTTP requests one call may make; default 8. */
  max_http_per_call?: number;
  /** How long past time_limit_ms a call may go without progress before the worker is stopped; default max(1000, time_limit_ms). */
  watchdog_grace_ms?: number;
  /** What http_get/http_post may reach; default `true` (any http(s) URL, redirects followed). */
  http?: LuaHttpPolicy;
  /** Called once when the sandbox stops by itself (watchdog, worker crash, engine failure), never after close(). */
  onStopped?: (error: LuaScriptError) => void;
}

export interface LuaCallOptions {
  /** An argument (index) passed as a plain string when it is not JSON text. */
  raw?: number;
  state?: LuaStreamState;
  event?: string | null;
}

/** Per-stream state: a Lua table that lives in the engine until dropped. */
export interface LuaStreamState {
  readonly id: number;
}

interface Pending {
  resolve: (value: never) => void;
  reject: (error: LuaScriptError) => void;
}

export class LuaSandbox {
  readonly name: string;
  readonly #options: LuaSandboxOptions;
  readonly #worker: Worker;
  readonly #log: Logger;
  readonly #pending = new Map<number, Pending>();
  readonly #http = new Set<AbortController>();
  readonly #hardLimitMs: number;
  #nextId = 0;
  #nextState = 0;
  /** Messages the worker is working on (loads, calls, HTTP results it has to resume with). */
  #busy = 0;
  #watchdog: NodeJS.Timeout | undefined;
  #alive = true;
  #closing = false;
  #death: LuaScriptError | undefined;

  private constructor(options: LuaSandboxOptions, worker: Worker) {
    this.name = options.name;
    this.#options = options;
    this.#worker = worker;
    this.#log = options.logger;
    this.#hardLimitMs = options.time_limit_ms + (options.watchdog_grace_ms ?? Math.max(1000, options.time_limit_ms));
  }

  static async create(options: LuaSandboxOptions): Promise<LuaSandbox> {
    const memory = options.memory_limit_bytes ?? DEFAULT_LUA_MEMORY_LIMIT_BYTES;
    const init: WorkerInit = {
      limits: {
        time_limit_ms: options.time_limit_ms,
        memory_limit_bytes: memory,
        max_string_bytes: Math.min(16 * 1024 * 1024, Math.floor(memory / 4)),
        max_http_per_call: options.max_http_per_call ?? DEFAULT_MAX_HTTP_PER_CALL,
        max_log_lines_per_call: MAX_LOG_LINES_PER_CALL,
      },
    };
    // From src/ (tests, with a TypeScript loader) the worker is the .ts file, from dist/ the .js.
    const self = import.meta.url;
    const entry = new URL(self.endsWith('.ts') ? './lua-worker.ts' : './lua-worker.js', self);
    const worker = new Worker(entry, {
      workerData: init,
      // The Lua heap lives in wasm memory (capped above); this bounds the JS side of the worker.
      resourceLimits: { maxOldGenerationSizeMb: 128, maxYoungGenerationSizeMb: 32 },
    });
    const sandbox = new LuaSandbox(options, worker);
    await sandbox.#started();
    return sandbox;
  }

  /** False once the sandbox was closed or stopped (limit, crash); then every call fails. */
  get alive(): boolean {
    return this.#alive;
  }

  /**
   * Runs a script and keeps the table it returns; resolves with its plain fields and function names.
   * `libraries` are loaded first, each as a read-only global (see src/llm/lua/lua-library.ts).
   */
  load(source: string, chunkName: string, libraries?: LuaLibrarySource[]): Promise<LuaModuleInfo> {
    return this.#request<LuaModuleInfo>({ t: 'load', id: 0, source, chunk_name: chunkName, ...(libraries ? { libraries } : {}) });
  }

  /**
   * Calls a function of the loaded script with JSON-like arguments (objects become tables, arrays
   * become tables marked as JSON arrays, null inside arrays becomes json.null and is dropped from
   * objects). Resolves with the first two return values, converted back (nil → null).
   */
  async call(fn: string, args: unknown[], options: LuaCallOptions = {}): Promise<unknown[]> {
    const values = await this.callJson(
      fn,
      args.map((a) => JSON.stringify(a ?? null)),
      options,
    );
    return values.map((v) => JSON.parse(v) as unknown);
  }

  /**
   * The same with arguments and results as JSON text, which is what crosses to the worker: an
   * adapter sends the vendor's body text as it came and gets the request body text it sends on.
   * `raw`: the index of an argument passed as a plain string when it is not JSON. With `state`,
   * the stream's state table is passed as the last argument, its `event` field set to `event`.
   */
  callJson(fn: string, args: string[], options: LuaCallOptions = {}): Promise<string[]> {
    const state = options.state ? { id: options.state.id, event: options.event ?? null } : undefined;
    return this.#request<string[]>({
      t: 'call',
      id: 0,
      fn,
      args,
      ...(options.raw === undefined ? {} : { raw: options.raw }),
      ...(state ? { state } : {}),
    });
  }

  newState(): LuaStreamState {
    return { id: ++this.#nextState };
  }

  dropState(state: LuaStreamState): void {
    if (this.#alive) this.#post({ t: 'state_drop', id: state.id });
  }

  async close(): Promise<void> {
    if (this.#closing) return;
    this.#closing = true;
    this.#stop(new LuaScriptError('HA_ERR_LUA_RUNTIME', `${this.name}: the sandbox was closed`));
    await this.#worker.terminate();
  }

  // ---------------------------------------------------------------------------------------------

  #started(): Promise<void> {
    const worker = this.#worker;
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => fail(new Error('the worker did not start in time')), STARTUP_TIMEOUT_MS);
      const fail = (error: Error) => {
        clearTimeout(timer);
        this.#alive = false;
        void worker.terminate();
        reject(new LuaScriptError('HA_ERR_LUA_LOAD', `${this.name}: the Lua sandbox could not start: ${error.message}`, { cause: error }));
      };
      const onFirst = (message: FromWorker) => {
        if (message.t === 'ready') {
          clearTimeout(timer);
          worker.off('message', onFirst);
          worker.off('error', fail);
          worker.on('message', (m: FromWorker) => this.#onMessage(m));
          worker.on('error', (error: Error) => this.#onWorkerError(error));
          worker.on('exit', (code: number) => this.#onExit(code));
          worker.unref();
          resolve();
        } else if (message.t === 'fatal') {
          fail(new Error(message.message));
        }
      };
      worker.on('message', onFirst);
      worker.on('error', fail);
    });
  }

  /** Sends a load or call (its `id` is assigned here) and resolves with the worker's answer. */
  #request<T>(message: Extract<ToWorker, { t: 'load' | 'call' }>): Promise<T> {
    if (!this.#alive) {
      return Promise.reject(this.#death ?? new LuaScriptError('HA_ERR_LUA_RUNTIME', `${this.name}: the sandbox is not running`));
    }
    const id = ++this.#nextId;
    message.id = id;
    return new Promise<T>((resolve, reject) => {
      this.#pending.set(id, { resolve: resolve as (value: never) => void, reject });
      if (this.#pending.size === 1) this.#worker.ref();
      this.#post(message);
      this.#working(+1);
    });
  }

  #post(message: ToWorker): void {
    this.#worker.postMessage(message);
  }

  #onMessage(message: FromWorker): void {
    if (!this.#alive) return;
    switch (message.t) {
      case 'loaded':
      case 'done': {
        this.#working(-1);
        const pending = this.#pending.get(message.id);
        if (!pending) return;
        this.#pending.delete(message.id);
        if (this.#pending.size === 0) this.#worker.unref();
        if (message.ok) pending.resolve((message.t === 'loaded' ? message.module : message.values) as never);
        else {
          pending.reject(
            new LuaScriptError(message.error.code, `${this.name}: ${message.error.message}`, { badJsonArgument: message.error.bad_json }),
          );
        }
        return;
      }
      case 'http':
        // The call now waits for the network, not for Lua.
        this.#working(-1);
        void this.#fetch(message.request).then((result) => {
          if (!this.#alive) return;
          this.#post({ t: 'http_done', req: message.req, result });
          this.#working(+1);
        });
        return;
      case 'log':
        this.#log[message.level]({ lua: this.name }, message.message);
        return;
      case 'fatal':
        this.#stop(new LuaScriptError('HA_ERR_LUA_RUNTIME', `${this.name}: the Lua engine failed: ${message.message}`));
        void this.#worker.terminate();
        return;
      case 'ready':
        return;
    }
  }

  /** Arms the watchdog while the worker has work, re-arming on every finished piece of work. */
  #working(delta: number): void {
    const before = this.#busy;
    this.#busy = Math.max(0, before + delta);
    // New work arriving is not progress: only finished work (or the first piece) re-arms.
    if (this.#busy > 0 && delta > 0 && before > 0) return;
    if (this.#watchdog) clearTimeout(this.#watchdog);
    this.#watchdog = undefined;
    if (this.#busy > 0 && this.#alive) this.#watchdog = setTimeout(() => this.#hung(), this.#hardLimitMs);
  }

  #hung(): void {
    this.#log.error({ lua: this.name, limit_ms: this.#hardLimitMs }, `${this.name}: a Lua call made no progress; stopping its sandbox`);
    this.#stop(
      new LuaScriptError(
        'HA_ERR_LUA_LIMIT',
        `${this.name}: the script did not finish within ${this.#hardLimitMs} ms (stuck inside a library function) and its sandbox was stopped`,
      ),
    );
    void this.#worker.terminate();
  }

  #onWorkerError(error: Error): void {
    const oom = (error as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY';
    this.#stop(
      new LuaScriptError(oom ? 'HA_ERR_LUA_LIMIT' : 'HA_ERR_LUA_RUNTIME', `${this.name}: the Lua sandbox failed: ${error.message}`, {
        cause: error,
      }),
    );
  }

  #onExit(code: number): void {
    if (this.#alive) this.#stop(new LuaScriptError('HA_ERR_LUA_RUNTIME', `${this.name}: the Lua sandbox exited (code ${code})`));
  }

  #stop(error: LuaScriptError): void {
    if (!this.#alive) return;
    this.#alive = false;
    this.#death = error;
    if (!this.#closing) queueMicrotask(() => this.#options.onStopped?.(error));
    if (this.#watchdog) clearTimeout(this.#watchdog);
    this.#watchdog = undefined;
    for (const controller of this.#http) controller.abort();
    this.#http.clear();
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    for (const p of pending) p.reject(error);
  }

  /**
   * Real HTTP for http_get/http_post: http(s) only, within the sandbox's HTTP policy, a timeout,
   * and a cap on the body size. Under a restricted policy redirects are followed here, hop by hop,
   * so each target is checked like the first.
   */
  async #fetch(request: LuaHttpRequest): Promise<LuaHttpResult> {
    const { http_timeout_ms: timeoutMs, http_max_bytes: maxBytes } = this.#options;
    const policy = this.#options.http ?? true;
    let url: URL;
    try {
      url = new URL(request.url);
    } catch {
      return { ok: false, error: `invalid URL: ${request.url.slice(0, 200)}` };
    }
    const refusal = httpRefusal(policy, url);
    if (refusal !== undefined) return { ok: false, error: refusal };
    const controller = new AbortController();
    this.#http.add(controller);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    try {
      let method: string = request.method;
      let body = request.body;
      let response: Response;
      for (let hop = 0; ; hop++) {
        response = await fetch(url, {
          method,
          headers: request.headers,
          ...(body === undefined ? {} : { body }),
          signal: controller.signal,
          redirect: policy === true ? 'follow' : 'manual',
        });
        const location = policy === true || !isRedirect(response.status) ? null : response.headers.get('location');
        if (location === null) break;
        await response.body?.cancel();
        if (hop >= MAX_CHECKED_REDIRECTS) return { ok: false, error: `more than ${MAX_CHECKED_REDIRECTS} redirects` };
        let next: URL;
        try {
          next = new URL(location, url);
        } catch {
          return { ok: false, error: `invalid redirect location: ${location.slice(0, 200)}` };
        }
        const refused = httpRefusal(policy, next);
        if (refused !== undefined) return { ok: false, error: `redirect to ${next.host} refused: ${refused}` };
        // What fetch itself does: 303 (and 301/302 after a POST) continue as a GET without a body.
        if (response.status === 303 || (method === 'POST' && (response.status === 301 || response.status === 302))) {
          method = 'GET';
          body = undefined;
        }
        url = next;
      }
      const chunks: Uint8Array[] = [];
      let size = 0;
      if (response.body) {
        const reader = response.body.getReader();
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          size += value.byteLength;
          if (size > maxBytes) {
            controller.abort();
            return { ok: false, error: `the response is larger than ${maxBytes} bytes` };
          }
          chunks.push(value);
        }
      }
      const headers: Record<string, string> = {};
      response.headers.forEach((value, key) => {
        headers[key] = value;
      });
      return { ok: true, status: response.status, body: Buffer.concat(chunks).toString('utf8'), headers };
    } catch (error) {
      if (timedOut) return { ok: false, error: `no answer within ${timeoutMs} ms` };
      if (controller.signal.aborted) return { ok: false, error: 'cancelled' };
      const cause = (error as { cause?: { message?: string } }).cause?.message;
      return { ok: false, error: cause ?? (error instanceof Error ? error.message : String(error)) };
    } finally {
      clearTimeout(timer);
      this.#http.delete(controller);
    }
  }
}

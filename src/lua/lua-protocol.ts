/**
 * Messages between the Lua sandbox (main thread, lua-sandbox.ts) and its worker (lua-worker.ts).
 * The worker only computes; the main thread owns the network (http_get/http_post), the logger and
 * a watchdog that terminates the worker when a call stops making progress.
 */

export type LuaErrorCode = 'HA_ERR_LUA_LOAD' | 'HA_ERR_LUA_RUNTIME' | 'HA_ERR_LUA_LIMIT';

export type LuaLogLevel = 'debug' | 'info' | 'warn' | 'error';

/** Limits the engine enforces by itself (the watchdog is the main thread's backstop). */
export interface EngineLimits {
  /** Lua CPU time one call may use (instruction hook); time spent waiting for HTTP does not count. */
  time_limit_ms: number;
  /** Memory of the Lua state; an allocation beyond it fails with "not enough memory". */
  memory_limit_bytes: number;
  /** Largest string string.rep may build. */
  max_string_bytes: number;
  /** HTTP requests one call may make. */
  max_http_per_call: number;
  /** Log lines one call may write; further lines are dropped with one notice. */
  max_log_lines_per_call: number;
}

export interface LuaHttpRequest {
  method: 'GET' | 'POST';
  url: string;
  headers: Record<string, string>;
  body?: string;
}

export type LuaHttpResult = { ok: true; status: number; body: string; headers: Record<string, string> } | { ok: false; error: string };

/** The returned table of a loaded chunk: plain values and the names of its functions. */
export interface LuaModuleInfo {
  values: Record<string, unknown>;
  functions: string[];
}

export type CallFailure = {
  code: LuaErrorCode;
  message: string;
  /** Set when argument `bad_json` was not valid JSON (nothing ran). */
  bad_json?: number;
};

/** A shared library loaded before a script and exposed as the read-only global `name`. */
export interface LuaLibrarySource {
  name: string;
  source: string;
  chunk_name: string;
}

export type ToWorker =
  | {
      t: 'load';
      id: number;
      source: string;
      chunk_name: string;
      /** Shared libraries the chunk mentions (adapters/lib/), loaded before it as read-only globals. */
      libraries?: LuaLibrarySource[];
    }
  | {
      t: 'call';
      id: number;
      fn: string;
      /** Each argument as JSON text (texts cross threads far cheaper than cloned objects). */
      args: string[];
      /** An argument that is passed as a plain string when it is not JSON (an SSE data line). */
      raw?: number;
      state?: { id: number; event: string | null };
    }
  | { t: 'state_drop'; id: number }
  | { t: 'http_done'; req: number; result: LuaHttpResult };

export type FromWorker =
  | { t: 'ready' }
  | { t: 'fatal'; message: string }
  | { t: 'loaded'; id: number; ok: true; module: LuaModuleInfo }
  /** The first two return values as JSON text (`null` for nil). */
  | { t: 'done'; id: number; ok: true; values: string[] }
  | { t: 'loaded' | 'done'; id: number; ok: false; error: CallFailure }
  | { t: 'http'; req: number; request: LuaHttpRequest }
  | { t: 'log'; level: LuaLogLevel; message: string };

export interface WorkerInit {
  limits: EngineLimits;
}

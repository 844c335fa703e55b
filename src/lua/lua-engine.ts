/**
 * The Lua 5.4 engine inside the sandbox worker: a wasmoon state with only the safe standard
 * libraries, an instruction-count hook that enforces a CPU-time budget per call, a memory cap on
 * the Lua allocator, and the built-ins json, log, http_get and http_post.
 *
 * Everything crossing between JS and Lua goes through the raw Lua C API (wasmoon's own value
 * conversion is ~10× slower and its proxy objects would hand scripts real JS objects, whose
 * `constructor.constructor` is the JS Function constructor). Host functions are registered as raw
 * C functions; a Lua error or yield raised inside one is an emscripten longjmp, i.e. a thrown
 * number, which must pass through untouched. Any other JS exception is turned into a Lua error
 * before it can unwind through the wasm stack.
 *
 * Only text chunks are loaded (mode "t"). Every conversion of script data happens inside a
 * protected Lua call, so running out of Lua memory is an ordinary Lua error, never a panic.
 */
import { LuaFactory, LuaLibraries } from 'wasmoon';
import type {
  CallFailure,
  EngineLimits,
  LuaHttpRequest,
  LuaHttpResult,
  LuaLibrarySource,
  LuaLogLevel,
  LuaModuleInfo,
} from './lua-protocol.js';

type Ptr = number;

/** The part of the emscripten module and the Lua C API this engine uses (wasmoon exports them all). */
interface RawLua {
  readonly HEAPU8: Uint8Array;
  readonly HEAPU32: Uint32Array;
  _malloc(size: number): Ptr;
  _free(ptr: Ptr): void;
  _realloc(ptr: Ptr, size: number): Ptr;
  _lua_setallocf(L: Ptr, f: Ptr, ud: Ptr): void;
  addFunction(fn: (...args: number[]) => number | undefined, signature: string): Ptr;
  removeFunction(ptr: Ptr): void;
  _lua_newthread(L: Ptr): Ptr;
  _lua_resume(L: Ptr, from: Ptr, nargs: number, nresults: Ptr): number;
  _lua_yieldk(L: Ptr, nresults: number, ctx: number, k: Ptr): number;
  _lua_error(L: Ptr): number;
  _lua_sethook(L: Ptr, hook: Ptr, mask: number, count: number): void;
  _lua_gettop(L: Ptr): number;
  _lua_settop(L: Ptr, index: number): void;
  _lua_absindex(L: Ptr, index: number): number;
  _lua_checkstack(L: Ptr, n: number): number;
  _lua_pushvalue(L: Ptr, index: number): void;
  _lua_pushnil(L: Ptr): void;
  _lua_pushboolean(L: Ptr, b: number): void;
  _lua_pushinteger(L: Ptr, n: bigint): void;
  _lua_pushnumber(L: Ptr, n: number): void;
  _lua_pushlstring(L: Ptr, s: Ptr, len: number): Ptr;
  _lua_pushcclosure(L: Ptr, fn: Ptr, n: number): void;
  _lua_createtable(L: Ptr, narr: number, nrec: number): void;
  _lua_rawset(L: Ptr, index: number): void;
  _lua_rawseti(L: Ptr, index: number, n: bigint): void;
  _lua_rawgeti(L: Ptr, index: number, n: bigint): number;
  _lua_type(L: Ptr, index: number): number;
  _lua_toboolean(L: Ptr, index: number): number;
  _lua_tonumberx(L: Ptr, index: number, isnum: Ptr): number;
  _lua_tolstring(L: Ptr, index: number, len: Ptr): Ptr;
  _lua_next(L: Ptr, index: number): number;
  _lua_topointer(L: Ptr, index: number): Ptr;
  _lua_getmetatable(L: Ptr, index: number): number;
  _lua_setmetatable(L: Ptr, index: number): number;
  _luaL_ref(L: Ptr, t: number): number;
  _luaL_unref(L: Ptr, t: number, ref: number): void;
  _luaL_loadbufferx(L: Ptr, buffer: Ptr, size: number, name: Ptr, mode: Ptr): number;
  _luaL_where(L: Ptr, level: number): void;
  _lua_concat(L: Ptr, n: number): void;
  _luaopen_utf8(L: Ptr): number;
}

/** The C API functions of RawLua, bound straight to the wasm exports when they could be captured. */
const API_NAMES = [
  'malloc',
  'free',
  'realloc',
  'lua_setallocf',
  'lua_newthread',
  'lua_resume',
  'lua_yieldk',
  'lua_error',
  'lua_sethook',
  'lua_gettop',
  'lua_settop',
  'lua_absindex',
  'lua_checkstack',
  'lua_pushvalue',
  'lua_pushnil',
  'lua_pushboolean',
  'lua_pushinteger',
  'lua_pushnumber',
  'lua_pushlstring',
  'lua_pushcclosure',
  'lua_createtable',
  'lua_rawset',
  'lua_rawseti',
  'lua_rawgeti',
  'lua_type',
  'lua_toboolean',
  'lua_tonumberx',
  'lua_tolstring',
  'lua_next',
  'lua_topointer',
  'lua_getmetatable',
  'lua_setmetatable',
  'luaL_ref',
  'luaL_unref',
  'luaL_loadbufferx',
  'luaL_where',
  'lua_concat',
  'luaopen_utf8',
] as const;

type WasmFunction = (...args: Array<number | bigint>) => unknown;

/**
 * wasmoon's module functions go through emscripten's assertion wrappers, which build a message
 * string on every call (a quarter of a transform's time). The raw exports are captured while the
 * module instantiates and used directly; the wrappers remain the fallback.
 */
function bindRaw(module: RawLua, exports: Record<string, unknown> | undefined): RawLua {
  const bound: Record<string, unknown> = {
    addFunction: module.addFunction.bind(module),
    removeFunction: module.removeFunction.bind(module),
  };
  Object.defineProperty(bound, 'HEAPU8', { get: () => module.HEAPU8 });
  Object.defineProperty(bound, 'HEAPU32', { get: () => module.HEAPU32 });
  const viaModule = module as unknown as Record<string, WasmFunction>;
  for (const name of API_NAMES) {
    const direct = exports?.[name];
    bound[`_${name}`] = typeof direct === 'function' ? direct : viaModule[`_${name}`];
  }
  return bound as unknown as RawLua;
}

/** The bit of the WebAssembly global this file touches (the DOM lib, which types it, is not loaded). */
interface WasmGlobal {
  instantiate: (...args: unknown[]) => Promise<unknown>;
}

/** Records the wasm instance created while `run` is pending (WebAssembly.instantiate is restored after). */
async function withCapturedExports<T>(run: () => Promise<T>): Promise<{ value: T; exports: Record<string, unknown> | undefined }> {
  const wasm = (globalThis as unknown as { WebAssembly: WasmGlobal }).WebAssembly;
  const original = wasm.instantiate;
  let exports: Record<string, unknown> | undefined;
  wasm.instantiate = async (...args: unknown[]) => {
    const result = (await original.apply(wasm, args)) as {
      instance?: { exports: Record<string, unknown> };
      exports?: Record<string, unknown>;
    };
    exports = result.instance?.exports ?? result.exports;
    return result;
  };
  try {
    return { value: await run(), exports };
  } finally {
    wasm.instantiate = original;
  }
}

const REGISTRY = -1001000; // LUA_REGISTRYINDEX for LUAI_MAXSTACK = 1e6
const T_NIL = 0;
const T_BOOLEAN = 1;
const T_NUMBER = 3;
const T_STRING = 4;
const T_TABLE = 5;
const T_FUNCTION = 6;
const TYPE_NAMES = ['nil', 'boolean', 'userdata', 'number', 'string', 'table', 'function', 'userdata', 'thread'];
const OK = 0;
const YIELD = 1;
const ERRSYNTAX = 3;
const ERRMEM = 4;
const MASK_COUNT = 8;
/** Instructions between two looks at the clock (a few microseconds of Lua). */
const HOOK_EVERY = 1000;
/** Extra memory allowed while the host (not a script) allocates: thread creation, loading a chunk. */
const HOST_HEADROOM = 4 * 1024 * 1024;
/** JSON nesting the converters accept (also what stops cyclic tables). */
const MAX_DEPTH = 200;
const MAX_LOG_CHARS = 4000;
const THREAD_POOL = 4;
/** Object keys up to this length are pinned once and reused (most JSON keys repeat endlessly). */
const MAX_CACHED_KEY = 32;
const KEY_CACHE_SIZE = 1024;

/** Host services the engine needs; the worker forwards them to the main thread. */
export interface EngineHost {
  log(level: LuaLogLevel, message: string): void;
  http(request: LuaHttpRequest): Promise<LuaHttpResult>;
}

/** A failed load or call; `failure.code` says whether a limit stopped it. */
export class EngineCallError extends Error {
  readonly failure: CallFailure;
  constructor(failure: CallFailure) {
    super(failure.message);
    this.failure = failure;
  }
}

interface CallState {
  L: Ptr;
  ref: number;
  args: unknown[];
  state: { id: number; event: string | null } | undefined;
  values: string[];
  module: LuaModuleInfo | undefined;
  cpuMs: number;
  timedOut: boolean;
  /** The message of a size-limit error raised by a guard (string.rep), if any. */
  limitMessage: string | undefined;
  http: Promise<LuaHttpResult> | undefined;
  httpResult: LuaHttpResult | undefined;
  httpCount: number;
  logLines: number;
}

class ConvertError extends Error {}

/**
 * The sandbox prelude, run once as trusted code before any script. It receives the host functions
 * as a table argument (never as globals), trims the standard library, and returns the two
 * dispatchers the host calls through. Locals captured here (the real string.rep, setmetatable,
 * load) are unreachable for scripts because `debug` is never loaded.
 */
const PRELUDE = `
local host = ...
local type, error, rawget, select, tostring, tonumber = type, error, rawget, select, tostring, tonumber
local setmetatable_raw, collectgarbage_raw, load_raw = setmetatable, collectgarbage, load
local G, next_raw, rawset_raw, getmetatable_raw = _G, next, rawset, getmetatable
local string_rep, string_format, table_concat = string.rep, string.format, table.concat
local max_string, limit = host.max_string_bytes, host.limit

-- json: null is a unique read-only value; array_mt marks a table as a JSON array (even when empty).
local null = setmetatable_raw({}, {
  __metatable = 'json.null',
  __newindex = function() error('json.null is read-only', 2) end,
  __tostring = function() return 'null' end,
})
local array_mt = { __metatable = 'json.array' }
host.sentinels(null, array_mt)
json = {
  null = null,
  encode = host.json_encode,
  decode = host.json_decode,
  array = function(t)
    if t == nil then t = {} end
    if type(t) ~= 'table' then error('json.array expects a table', 2) end
    return setmetatable_raw(t, array_mt)
  end,
}

local host_log = host.log
log = host_log
local function joined(...)
  local parts = {}
  for i = 1, select('#', ...) do parts[i] = tostring((select(i, ...))) end
  return table_concat(parts, '\\t')
end
print = function(...) return host_log('debug', joined(...)) end
warn = function(...) return host_log('warn', joined(...)) end

local http_request = host.http_request
http_get = function(url, headers) return http_request('GET', url, nil, headers) end
http_post = function(url, body, headers) return http_request('POST', url, body, headers) end

-- No process, file, environment or module access: keep only the harmless parts of os.
os = { time = os.time, clock = os.clock, date = os.date, difftime = os.difftime }
dofile, loadfile, require, package, io, debug = nil, nil, nil, nil, nil, nil
string.dump = nil

-- A string bomb is refused before it is built (the memory cap would stop it too, later).
string.rep = function(s, n, sep)
  local ts = type(s)
  if (ts == 'string' or ts == 'number') and type(n) == 'number' and n > 1 then
    local per = #('' .. s) + (sep ~= nil and #tostring(sep) or 0)
    if per * n > max_string then
      limit(string_format('string.rep: %.0f bytes is more than the sandbox allows (%d)', per * n, max_string))
    end
  end
  return string_rep(s, n, sep)
end

-- Finalizers run with hooks disabled, so a __gc loop could never be stopped: refuse them.
setmetatable = function(t, mt)
  if type(mt) == 'table' and rawget(mt, '__gc') ~= nil then
    error('setmetatable: __gc metamethods are not allowed in the sandbox', 2)
  end
  return setmetatable_raw(t, mt)
end

local gc_allowed = { collect = true, count = true, step = true, isrunning = true }
collectgarbage = function(opt, ...)
  if opt == nil then opt = 'collect' end
  if not gc_allowed[opt] then error("collectgarbage: option '" .. tostring(opt) .. "' is not allowed in the sandbox", 2) end
  return collectgarbage_raw(opt, ...)
end

-- Text chunks only: precompiled bytecode can crash the VM.
load = function(...)
  local chunk, chunkname, mode, env = ...
  if mode ~= nil and mode ~= 't' then return nil, "load: only text chunks (mode 't') are allowed in the sandbox" end
  if select('#', ...) >= 4 then return load_raw(chunk, chunkname, 't', env) end
  return load_raw(chunk, chunkname, 't')
end

-- The string metatable's __index is the string table; hide the metatable itself.
getmetatable('').__metatable = 'string'

-- A shared library's table, as a read-only view (nested plain tables too).
local function frozen(t, name)
  for k, v in next_raw, t do
    if type(v) == 'table' and getmetatable_raw(v) == nil then t[k] = frozen(v, name .. '.' .. tostring(k)) end
  end
  return setmetatable_raw({}, {
    __index = t,
    __newindex = function() error(name .. ' is read-only', 2) end,
    __len = function() return #t end,
    __pairs = function() return next_raw, t, nil end,
    __metatable = name,
  })
end

local take_args, give_result, set_module = host.take_args, host.give_result, host.set_module
return function(chunk, name)
    if rawget(G, name) ~= nil then error("library '" .. name .. "' would replace the global " .. name, 0) end
    local lib = chunk()
    if type(lib) ~= 'table' then error("library '" .. name .. "' must return a table, not a " .. type(lib) .. ' value', 0) end
    rawset_raw(G, name, frozen(lib, name))
  end,
  function(fn) return give_result(fn(take_args())) end,
  function(chunk) return set_module((chunk())) end
`;

export class SandboxEngine {
  readonly #limits: EngineLimits;
  readonly #host: EngineHost;
  readonly #close: () => void;
  /** Bytes the Lua allocator has handed out, and the most it may (changes between host and script time). */
  #memoryUsed: number;
  #memoryMax: number;
  readonly #m: RawLua;
  readonly #G: Ptr;
  readonly #lenPtr: Ptr;
  readonly #nresPtr: Ptr;
  readonly #functionPointers: Ptr[] = [];
  readonly #calls = new Map<Ptr, CallState>();
  readonly #idleThreads: Array<{ L: Ptr; ref: number }> = [];
  readonly #functions = new Map<string, number>();
  readonly #states = new Map<number, number>();
  /** Pinned key strings: text → registry ref, and address of the Lua string → text. */
  readonly #keyRefs = new Map<string, number>();
  readonly #keyTexts = new Map<Ptr, string>();
  readonly #encoder = new TextEncoder();
  readonly #decoder = new TextDecoder();
  #scratch: Ptr;
  #scratchSize = 64 * 1024;
  #hook: Ptr = 0;
  #continuation: Ptr = 0;
  #callDispatcher = 0;
  #loadDispatcher = 0;
  #libraryDispatcher = 0;
  #nullRef = 0;
  #nullPtr: Ptr = 0;
  #arrayMtRef = 0;
  #arrayMtPtr: Ptr = 0;
  #deadline = Number.POSITIVE_INFINITY;
  #current: CallState | undefined;
  #broken = false;
  #closed = false;

  private constructor(raw: RawLua, G: Ptr, limits: EngineLimits, host: EngineHost, close: () => void, memoryUsed: number) {
    this.#m = raw;
    this.#G = G;
    this.#limits = limits;
    this.#host = host;
    this.#close = close;
    this.#memoryUsed = memoryUsed;
    this.#memoryMax = limits.memory_limit_bytes + HOST_HEADROOM;
    this.#lenPtr = raw._malloc(8);
    this.#nresPtr = raw._malloc(8);
    this.#scratch = raw._malloc(this.#scratchSize);
  }

  static async create(limits: EngineLimits, host: EngineHost): Promise<SandboxEngine> {
    // No environment variables reach the wasm side (os.getenv is gone anyway).
    const { value: lua, exports } = await withCapturedExports(() =>
      new LuaFactory(undefined, {}).createEngine({
        openStandardLibs: false,
        injectObjects: false,
        enableProxy: false,
        traceAllocations: true,
      }),
    );
    const global = lua.global;
    const raw = bindRaw(global.lua.module as unknown as RawLua, exports);
    const engine = new SandboxEngine(raw, global.address, limits, host, () => global.close(), global.getMemoryUsed());
    engine.#installAllocator();
    for (const lib of [
      LuaLibraries.Base,
      LuaLibraries.Coroutine,
      LuaLibraries.Table,
      LuaLibraries.String,
      LuaLibraries.Math,
      LuaLibraries.OS,
    ]) {
      global.loadLibrary(lib);
    }
    // wasmoon's loadLibrary opens the string library for "utf8"; open the real one.
    raw._luaopen_utf8(global.address);
    global.lua.lua_setglobal(global.address, 'utf8');
    engine.#install();
    return engine;
  }

  /**
   * Runs a script (a text chunk) and keeps the table it returns as the module. `libraries` run
   * first, each one's table becoming a read-only global.
   */
  async load(source: string, chunkName: string, libraries: LuaLibrarySource[] = []): Promise<LuaModuleInfo> {
    this.#usable();
    for (const lib of libraries) await this.#loadChunkWith(this.#libraryDispatcher, lib.source, lib.chunk_name, lib.name);
    return this.#loadChunkWith(this.#loadDispatcher, source, chunkName);
  }

  /** Runs a text chunk through a dispatcher (module or library); resolves with the module, if any. */
  async #loadChunkWith(dispatcher: number, source: string, chunkName: string, library?: string): Promise<LuaModuleInfo> {
    this.#usable();
    const call = this.#begin([], undefined);
    const m = this.#m;
    try {
      m._lua_rawgeti(call.L, REGISTRY, BigInt(dispatcher));
      const status = this.#loadChunk(call.L, source, chunkName);
      if (status !== OK) {
        const message = this.#errorMessage(call.L);
        throw new EngineCallError({
          code: status === ERRMEM ? 'HA_ERR_LUA_LIMIT' : 'HA_ERR_LUA_LOAD',
          message: status === ERRSYNTAX ? `syntax error: ${message}` : message,
        });
      }
      if (library !== undefined) {
        this.#pushString(call.L, library);
        await this.#run(call, 2);
        this.#finish(call, true);
        return { values: {}, functions: [] };
      }
      await this.#run(call, 1);
      if (!call.module) throw new EngineCallError({ code: 'HA_ERR_LUA_LOAD', message: 'the script did not return a table' });
      this.#finish(call, true);
      return call.module;
    } catch (error) {
      this.#finish(call, false);
      if (error instanceof EngineCallError && error.failure.code === 'HA_ERR_LUA_RUNTIME') {
        throw new EngineCallError({ code: 'HA_ERR_LUA_LOAD', message: error.failure.message });
      }
      throw error;
    }
  }

  /**
   * Calls a function of the module with arguments given as JSON text (`raw`: that argument is
   * passed as a plain string when it is not JSON); resolves with the first two return values as
   * JSON text.
   */
  async call(
    fn: string,
    argsJson: string[],
    options: { raw?: number | undefined; state?: { id: number; event: string | null } | undefined } = {},
  ): Promise<string[]> {
    this.#usable();
    const ref = this.#functions.get(fn);
    if (ref === undefined) throw new EngineCallError({ code: 'HA_ERR_LUA_RUNTIME', message: `the script has no function ${fn}` });
    const args: unknown[] = [];
    for (let i = 0; i < argsJson.length; i++) {
      const text = argsJson[i] as string;
      try {
        args.push(JSON.parse(text));
      } catch (error) {
        if (i === options.raw) args.push(text);
        else
          throw new EngineCallError({
            code: 'HA_ERR_LUA_RUNTIME',
            message: `argument ${i + 1} is not JSON: ${(error as Error).message}`,
            bad_json: i,
          });
      }
    }
    const call = this.#begin(args, options.state);
    const m = this.#m;
    try {
      m._lua_rawgeti(call.L, REGISTRY, BigInt(this.#callDispatcher));
      m._lua_rawgeti(call.L, REGISTRY, BigInt(ref));
      await this.#run(call, 1);
      this.#finish(call, true);
      return call.values;
    } catch (error) {
      this.#finish(call, false);
      throw error;
    }
  }

  /** Forgets a per-stream state table. */
  dropState(id: number): void {
    const ref = this.#states.get(id);
    if (ref === undefined || this.#closed) return;
    this.#states.delete(id);
    this.#m._luaL_unref(this.#G, REGISTRY, ref);
  }

  /** True after a JS exception escaped the Lua VM: the state can no longer be trusted. */
  get broken(): boolean {
    return this.#broken;
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    try {
      this.#close();
    } finally {
      for (const p of this.#functionPointers) this.#m.removeFunction(p);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Set-up

  /** Bytes currently allocated by the Lua state. */
  get memoryUsed(): number {
    return this.#memoryUsed;
  }

  /**
   * Replaces wasmoon's accounting allocator (same heap, same accounting) with one that calls
   * realloc/free directly: every Lua allocation passes through here, so it has to be cheap.
   */
  #installAllocator(): void {
    const m = this.#m;
    const alloc = m.addFunction((_ud: number, ptr: number, osize: number, nsize: number) => {
      if (nsize === 0) {
        if (ptr !== 0) {
          this.#memoryUsed -= osize;
          m._free(ptr);
        }
        return 0;
      }
      // For a new block Lua passes the object type in osize, not a size.
      const old = ptr === 0 ? 0 : osize;
      if (nsize > old && this.#memoryUsed - old + nsize > this.#memoryMax) return 0;
      const block = m._realloc(ptr, nsize);
      if (block !== 0) this.#memoryUsed += nsize - old;
      return block;
    }, 'iiiii');
    this.#functionPointers.push(alloc);
    m._lua_setallocf(this.#G, alloc, 0);
  }

  #install(): void {
    const m = this.#m;
    this.#hook = m.addFunction((L: number) => this.#onHook(L), 'vii');
    this.#functionPointers.push(this.#hook);
    this.#continuation = this.#wrap('http', 'iiii', (L) => this.#httpContinue(L));
    const fns: Record<string, Ptr> = {
      sentinels: this.#wrap('sentinels', 'ii', (L) => this.#sentinels(L)),
      json_encode: this.#wrap('json.encode', 'ii', (L) => this.#jsonEncode(L)),
      json_decode: this.#wrap('json.decode', 'ii', (L) => this.#jsonDecode(L)),
      log: this.#wrap('log', 'ii', (L) => this.#log(L)),
      http_request: this.#wrap('http', 'ii', (L) => this.#httpRequest(L)),
      take_args: this.#wrap('take_args', 'ii', (L) => this.#takeArgs(L)),
      give_result: this.#wrap('give_result', 'ii', (L) => this.#giveResult(L)),
      set_module: this.#wrap('adapter', 'ii', (L) => this.#setModule(L)),
      limit: this.#wrap('limit', 'ii', (L) => this.#sizeLimit(L)),
    };
    // Every thread created from the main state inherits this hook (lua_newthread copies it).
    m._lua_sethook(this.#G, this.#hook, MASK_COUNT, HOOK_EVERY);

    const call = this.#begin([], undefined);
    const L = call.L;
    if (this.#loadChunk(L, PRELUDE, '=prelude') !== OK) throw new Error(`sandbox prelude: ${this.#errorMessage(L)}`);
    m._lua_createtable(L, 0, 12);
    for (const [name, ptr] of Object.entries(fns)) {
      this.#pushString(L, name);
      m._lua_pushcclosure(L, ptr, 0);
      m._lua_rawset(L, -3);
    }
    this.#pushString(L, 'max_string_bytes');
    m._lua_pushinteger(L, BigInt(this.#limits.max_string_bytes));
    m._lua_rawset(L, -3);
    const status = this.#resume(call, 1);
    if (status !== OK) throw new Error(`sandbox prelude: ${this.#errorMessage(L)}`);
    this.#loadDispatcher = m._luaL_ref(L, REGISTRY);
    this.#callDispatcher = m._luaL_ref(L, REGISTRY);
    this.#libraryDispatcher = m._luaL_ref(L, REGISTRY);
    this.#finish(call, true);
  }

  /**
   * Registers a host function. A thrown number is a Lua error or yield on its way to the
   * enclosing protected call and passes through; anything else becomes a Lua error here.
   */
  #wrap(name: string, signature: string, body: (L: Ptr) => number): Ptr {
    const ptr = this.#m.addFunction((L: number) => {
      let message: string;
      try {
        return body(L);
      } catch (error) {
        if (typeof error === 'number') throw error;
        message = error instanceof Error ? error.message : String(error);
      }
      return this.#raise(L, `${name}: ${message}`);
    }, signature);
    this.#functionPointers.push(ptr);
    return ptr;
  }

  #raise(L: Ptr, message: string): number {
    const m = this.#m;
    m._luaL_where(L, 1);
    this.#pushString(L, message);
    m._lua_concat(L, 2);
    return m._lua_error(L);
  }

  #onHook(L: Ptr): undefined {
    if (performance.now() <= this.#deadline) return undefined;
    if (this.#current) this.#current.timedOut = true;
    // From now on every instruction raises, so no pcall loop can swallow the error for long.
    this.#m._lua_sethook(L, this.#hook, MASK_COUNT, 1);
    this.#pushString(L, `time limit of ${this.#limits.time_limit_ms} ms exceeded`);
    this.#m._lua_error(L);
    return undefined;
  }

  // ---------------------------------------------------------------------------------------------
  // Calls

  #usable(): void {
    if (this.#closed || this.#broken) throw new EngineCallError({ code: 'HA_ERR_LUA_RUNTIME', message: 'the Lua engine is closed' });
  }

  #begin(args: unknown[], state: CallState['state']): CallState {
    const m = this.#m;
    let thread = this.#idleThreads.pop();
    if (!thread) {
      const L = m._lua_newthread(this.#G);
      thread = { L, ref: m._luaL_ref(this.#G, REGISTRY) };
    }
    const call: CallState = {
      L: thread.L,
      ref: thread.ref,
      args,
      state,
      values: [],
      module: undefined,
      cpuMs: 0,
      timedOut: false,
      limitMessage: undefined,
      http: undefined,
      httpResult: undefined,
      httpCount: 0,
      logLines: 0,
    };
    this.#calls.set(call.L, call);
    return call;
  }

  #finish(call: CallState, ok: boolean): void {
    this.#calls.delete(call.L);
    if (this.#closed || this.#broken) return;
    // A thread that failed is dead (and may carry the every-instruction hook): let it go.
    if (ok && this.#idleThreads.length < THREAD_POOL) {
      this.#m._lua_settop(call.L, 0);
      this.#idleThreads.push({ L: call.L, ref: call.ref });
    } else {
      this.#m._luaL_unref(this.#G, REGISTRY, call.ref);
    }
  }

  async #run(call: CallState, nargs: number): Promise<void> {
    let n = nargs;
    for (;;) {
      const status = this.#resume(call, n);
      n = 0;
      if (status === OK) return;
      if (status === YIELD) {
        const pending = call.http;
        if (!pending) {
          throw new EngineCallError({ code: 'HA_ERR_LUA_RUNTIME', message: 'coroutine.yield outside a coroutine is not allowed' });
        }
        call.http = undefined;
        call.httpResult = await pending;
        continue;
      }
      throw new EngineCallError(this.#failure(call, status));
    }
  }

  #resume(call: CallState, nargs: number): number {
    const budget = this.#limits.time_limit_ms - call.cpuMs;
    const start = performance.now();
    this.#deadline = start + Math.max(0, budget);
    this.#current = call;
    this.#memoryMax = this.#limits.memory_limit_bytes;
    try {
      return this.#m._lua_resume(call.L, 0, nargs, this.#nresPtr);
    } catch (error) {
      // Only a bug or an emscripten abort gets here; the state is not trustworthy any more.
      this.#broken = true;
      throw error;
    } finally {
      call.cpuMs += performance.now() - start;
      this.#deadline = Number.POSITIVE_INFINITY;
      this.#current = undefined;
      this.#memoryMax = this.#limits.memory_limit_bytes + HOST_HEADROOM;
    }
  }

  #failure(call: CallState, status: number): CallFailure {
    const message = this.#errorMessage(call.L);
    if (call.timedOut) {
      return { code: 'HA_ERR_LUA_LIMIT', message: `the script ran longer than its time limit of ${this.#limits.time_limit_ms} ms` };
    }
    if (call.limitMessage !== undefined && message.includes(call.limitMessage)) {
      return { code: 'HA_ERR_LUA_LIMIT', message };
    }
    if (status === ERRMEM || message.includes('not enough memory')) {
      return {
        code: 'HA_ERR_LUA_LIMIT',
        message: `the script ran out of memory (limit ${this.#limits.memory_limit_bytes} bytes): ${message}`,
      };
    }
    if (message.includes('stack overflow')) {
      return { code: 'HA_ERR_LUA_LIMIT', message: `the script recursed too deeply: ${firstLine(message)}` };
    }
    return { code: 'HA_ERR_LUA_RUNTIME', message };
  }

  /** The error object on top of a failed thread, read without calling metamethods. */
  #errorMessage(L: Ptr): string {
    const m = this.#m;
    if (m._lua_gettop(L) === 0) return 'unknown error';
    const type = m._lua_type(L, -1);
    if (type === T_STRING) return this.#readString(L, -1);
    if (type === T_NUMBER) return String(m._lua_tonumberx(L, -1, 0));
    return `(error object is a ${TYPE_NAMES[type] ?? 'unknown'} value)`;
  }

  #loadChunk(L: Ptr, source: string, chunkName: string): number {
    const m = this.#m;
    const bytes = this.#encoder.encode(source);
    const name = this.#encoder.encode(`${chunkName}\0`);
    const buffer = m._malloc(bytes.length + name.length + 2);
    try {
      m.HEAPU8.set(bytes, buffer);
      m.HEAPU8.set(name, buffer + bytes.length);
      const mode = buffer + bytes.length + name.length;
      m.HEAPU8[mode] = 0x74; // "t": text only
      m.HEAPU8[mode + 1] = 0;
      return m._luaL_loadbufferx(L, buffer, bytes.length, buffer + bytes.length, mode);
    } finally {
      m._free(buffer);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Host functions (each runs inside a protected call)

  #sentinels(L: Ptr): number {
    const m = this.#m;
    if (this.#nullRef !== 0) throw new Error('already set');
    m._lua_pushvalue(L, 1);
    this.#nullPtr = m._lua_topointer(L, -1);
    this.#nullRef = m._luaL_ref(L, REGISTRY);
    m._lua_pushvalue(L, 2);
    this.#arrayMtPtr = m._lua_topointer(L, -1);
    this.#arrayMtRef = m._luaL_ref(L, REGISTRY);
    return 0;
  }

  #takeArgs(L: Ptr): number {
    const m = this.#m;
    const call = this.#calls.get(L);
    if (!call) return 0;
    const args = call.args;
    call.args = [];
    if (m._lua_checkstack(L, args.length + 4) === 0) throw new Error('too many arguments');
    for (const arg of args) this.#push(L, arg, 0, false);
    let n = args.length;
    if (call.state) {
      const { id, event } = call.state;
      let ref = this.#states.get(id);
      if (ref === undefined) {
        m._lua_createtable(L, 0, 4);
        ref = m._luaL_ref(L, REGISTRY);
        this.#states.set(id, ref);
      }
      m._lua_rawgeti(L, REGISTRY, BigInt(ref));
      this.#pushString(L, 'event');
      if (event === null) m._lua_pushnil(L);
      else this.#pushString(L, event);
      m._lua_rawset(L, -3);
      n++;
    }
    return n;
  }

  #giveResult(L: Ptr): number {
    const call = this.#calls.get(L);
    if (!call) return 0;
    const top = Math.min(this.#m._lua_gettop(L), 2);
    const values: string[] = [];
    for (let i = 1; i <= top; i++) values.push(JSON.stringify(this.#read(L, i, 0, false) ?? null));
    call.values = values;
    return 0;
  }

  #setModule(L: Ptr): number {
    const m = this.#m;
    const call = this.#calls.get(L);
    if (!call) return 0;
    const type = m._lua_type(L, 1);
    if (type !== T_TABLE) throw new Error(`the script must return a table, not a ${TYPE_NAMES[type] ?? 'unknown'} value`);
    for (const ref of this.#functions.values()) m._luaL_unref(L, REGISTRY, ref);
    this.#functions.clear();
    const values: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
    m._lua_checkstack(L, 4);
    m._lua_pushnil(L);
    while (m._lua_next(L, 1) !== 0) {
      if (m._lua_type(L, -2) === T_STRING) {
        const key = this.#readString(L, -2);
        if (m._lua_type(L, -1) === T_FUNCTION) {
          m._lua_pushvalue(L, -1);
          this.#functions.set(key, m._luaL_ref(L, REGISTRY));
        } else {
          const value = this.#read(L, -1, 0, false);
          if (value !== undefined) values[key] = value;
        }
      }
      m._lua_settop(L, -2);
    }
    call.module = { values: { ...values }, functions: [...this.#functions.keys()].sort() };
    return 0;
  }

  /** A guard's refusal: a Lua error the host classifies as HA_ERR_LUA_LIMIT if it ends the call. */
  #sizeLimit(L: Ptr): number {
    const m = this.#m;
    const message = m._lua_type(L, 1) === T_STRING ? this.#readString(L, 1) : 'size limit exceeded';
    if (this.#current) this.#current.limitMessage = message;
    m._luaL_where(L, 2);
    this.#pushString(L, message);
    m._lua_concat(L, 2);
    return m._lua_error(L);
  }

  #jsonEncode(L: Ptr): number {
    const value = this.#read(L, 1, 0, true);
    this.#pushString(L, JSON.stringify(value ?? null));
    return 1;
  }

  #jsonDecode(L: Ptr): number {
    const m = this.#m;
    if (m._lua_type(L, 1) !== T_STRING) throw new Error(`expects a string, got a ${TYPE_NAMES[m._lua_type(L, 1)] ?? 'unknown'} value`);
    const text = this.#readString(L, 1);
    const keepNull = m._lua_toboolean(L, 2) !== 0;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      m._lua_pushnil(L);
      this.#pushString(L, `invalid JSON: ${error instanceof Error ? error.message : String(error)}`);
      return 2;
    }
    if (value === null && !keepNull) m._lua_pushnil(L);
    else this.#push(L, value, 0, keepNull);
    return 1;
  }

  #log(L: Ptr): number {
    const m = this.#m;
    const call = this.#current;
    const rawLevel = m._lua_type(L, 1) === T_STRING ? this.#readString(L, 1) : 'info';
    const level = normaliseLevel(rawLevel);
    const value = this.#read(L, 2, 0, false);
    let message = typeof value === 'string' ? value : value === undefined ? 'nil' : JSON.stringify(value);
    if (message.length > MAX_LOG_CHARS) message = `${message.slice(0, MAX_LOG_CHARS)}… (${message.length} chars)`;
    if (call) {
      call.logLines++;
      if (call.logLines > this.#limits.max_log_lines_per_call) {
        if (call.logLines === this.#limits.max_log_lines_per_call + 1) {
          this.#host.log('warn', `more than ${this.#limits.max_log_lines_per_call} log lines in one call; the rest are dropped`);
        }
        return 0;
      }
    }
    this.#host.log(level, message);
    return 0;
  }

  #httpRequest(L: Ptr): number {
    const m = this.#m;
    const call = this.#current;
    if (!call || call.L !== L) throw new Error('http_get/http_post cannot be used inside a coroutine');
    if (call.httpCount >= this.#limits.max_http_per_call) {
      throw new Error(`more than ${this.#limits.max_http_per_call} HTTP requests in one call`);
    }
    const method = this.#readString(L, 1) === 'POST' ? 'POST' : 'GET';
    if (m._lua_type(L, 2) !== T_STRING) throw new Error('the URL must be a string');
    const url = this.#readString(L, 2);
    const headers: Record<string, string> = {};
    const rawHeaders = this.#read(L, 4, 0, false);
    if (rawHeaders !== undefined && rawHeaders !== null) {
      if (typeof rawHeaders !== 'object' || Array.isArray(rawHeaders)) throw new Error('headers must be a table of strings');
      for (const [k, v] of Object.entries(rawHeaders)) {
        if (typeof v !== 'string' && typeof v !== 'number') throw new Error(`header ${k} must be a string`);
        headers[k] = String(v);
      }
    }
    let body: string | undefined;
    const bodyType = m._lua_type(L, 3);
    if (bodyType === T_STRING) body = this.#readString(L, 3);
    else if (bodyType === T_TABLE) {
      body = JSON.stringify(this.#read(L, 3, 0, true));
      if (!Object.keys(headers).some((k) => k.toLowerCase() === 'content-type')) headers['content-type'] = 'application/json';
    } else if (bodyType !== T_NIL) throw new Error('the body must be a string or a table');
    call.httpCount++;
    const request: LuaHttpRequest = { method, url, headers, ...(body === undefined ? {} : { body }) };
    call.http = this.#host.http(request);
    // Throws (an emscripten longjmp) and never returns; #httpContinue runs on resume.
    return m._lua_yieldk(L, 0, 0, this.#continuation);
  }

  #httpContinue(L: Ptr): number {
    const m = this.#m;
    const result = this.#calls.get(L)?.httpResult ?? { ok: false as const, error: 'no result' };
    if (!result.ok) {
      m._lua_pushnil(L);
      this.#pushString(L, result.error);
      return 2;
    }
    this.#push(L, { status: result.status, body: result.body, headers: result.headers }, 0, false);
    return 1;
  }

  // ---------------------------------------------------------------------------------------------
  // Conversion JS ⇄ Lua

  #pushString(L: Ptr, s: string): void {
    const m = this.#m;
    const n = s.length;
    if (n * 3 + 1 > this.#scratchSize) {
      m._free(this.#scratch);
      this.#scratchSize = Math.max(this.#scratchSize * 2, n * 3 + 1);
      this.#scratch = m._malloc(this.#scratchSize);
    }
    const heap = m.HEAPU8;
    const base = this.#scratch;
    let i = 0;
    for (; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c > 0x7f) break;
      heap[base + i] = c;
    }
    const length = i === n ? n : i + this.#encoder.encodeInto(s.slice(i), heap.subarray(base + i, base + this.#scratchSize)).written;
    m._lua_pushlstring(L, base, length);
  }

  #push(L: Ptr, value: unknown, depth: number, keepNull: boolean): void {
    const m = this.#m;
    switch (typeof value) {
      case 'string':
        this.#pushString(L, value);
        return;
      case 'number':
        if (Number.isSafeInteger(value)) m._lua_pushinteger(L, BigInt(value));
        else m._lua_pushnumber(L, value);
        return;
      case 'boolean':
        m._lua_pushboolean(L, value ? 1 : 0);
        return;
      case 'object': {
        if (value === null) {
          if (keepNull) m._lua_rawgeti(L, REGISTRY, BigInt(this.#nullRef));
          else m._lua_pushnil(L);
          return;
        }
        if (depth >= MAX_DEPTH || m._lua_checkstack(L, 4) === 0) throw new ConvertError('the value is nested too deeply');
        if (Array.isArray(value)) {
          m._lua_createtable(L, value.length, 0);
          for (let i = 0; i < value.length; i++) {
            const item: unknown = value[i];
            // null keeps its place in an array, or the array would change length.
            if (item === null || item === undefined) m._lua_rawgeti(L, REGISTRY, BigInt(this.#nullRef));
            else this.#push(L, item, depth + 1, keepNull);
            m._lua_rawseti(L, -2, BigInt(i + 1));
          }
          m._lua_rawgeti(L, REGISTRY, BigInt(this.#arrayMtRef));
          m._lua_setmetatable(L, -2);
          return;
        }
        const record = value as Record<string, unknown>;
        const keys = Object.keys(record);
        m._lua_createtable(L, 0, keys.length);
        for (const key of keys) {
          const item = record[key];
          if (item === undefined || (item === null && !keepNull)) continue;
          this.#pushKey(L, key);
          this.#push(L, item, depth + 1, keepNull);
          m._lua_rawset(L, -3);
        }
        return;
      }
      default:
        m._lua_pushnil(L);
    }
  }

  #readString(L: Ptr, index: number): string {
    const m = this.#m;
    const p = m._lua_tolstring(L, index, this.#lenPtr);
    const length = m.HEAPU32[this.#lenPtr >> 2] ?? 0;
    const heap = m.HEAPU8;
    if (length <= 24) {
      let s = '';
      for (let i = 0; i < length; i++) {
        const c = heap[p + i] ?? 0;
        if (c > 0x7f) return this.#decoder.decode(heap.subarray(p, p + length));
        s += String.fromCharCode(c);
      }
      return s;
    }
    return this.#decoder.decode(heap.subarray(p, p + length));
  }

  /**
   * A Lua value as JSON-like data. `strict` (json.encode) refuses functions and odd keys; otherwise
   * they are skipped (undefined). Tables with keys 1..n are arrays, other tables objects; an empty
   * table is an object unless it carries the json.array marker.
   */
  #read(L: Ptr, index: number, depth: number, strict: boolean): unknown {
    const m = this.#m;
    const type = m._lua_type(L, index);
    switch (type) {
      case T_NIL:
        return undefined;
      case T_BOOLEAN:
        return m._lua_toboolean(L, index) !== 0;
      case T_NUMBER:
        return m._lua_tonumberx(L, index, 0);
      case T_STRING:
        return this.#readString(L, index);
      case T_TABLE:
        return this.#readTable(L, m._lua_absindex(L, index), depth, strict);
      default:
        if (strict) throw new ConvertError(`cannot encode a ${TYPE_NAMES[type] ?? 'unknown'} value`);
        return undefined;
    }
  }

  #readTable(L: Ptr, t: number, depth: number, strict: boolean): unknown {
    const m = this.#m;
    if (m._lua_topointer(L, t) === this.#nullPtr) return null;
    if (depth >= MAX_DEPTH || m._lua_checkstack(L, 4) === 0) throw new ConvertError('the table is nested too deeply (or cyclic)');
    // Keys 1, 2, 3... arrive in order from the array part; others (string keys, holes, integer
    // keys kept in the hash part) are sorted out at the end.
    let array: unknown[] | undefined;
    let extra: Map<number, unknown> | undefined;
    let record: Record<string, unknown> | undefined;
    m._lua_pushnil(L);
    while (m._lua_next(L, t) !== 0) {
      const keyType = m._lua_type(L, -2);
      if (keyType === T_NUMBER) {
        const n = m._lua_tonumberx(L, -2, 0);
        const value = this.#read(L, -1, depth + 1, strict);
        if (value !== undefined) {
          if (record) setKey(record, String(n), value);
          else if (!Number.isInteger(n) || n < 1) {
            record = toRecord(array, extra);
            setKey(record, String(n), value);
          } else if (extra === undefined && n === (array ? array.length : 0) + 1) {
            if (array) array.push(value);
            else array = [value];
          } else {
            if (!extra) extra = new Map();
            extra.set(n, value);
          }
        }
      } else if (keyType === T_STRING) {
        const key = this.#readKey(L, -2);
        const value = this.#read(L, -1, depth + 1, strict);
        if (value !== undefined) {
          if (!record) record = toRecord(array, extra);
          setKey(record, key, value);
        }
      } else if (strict) {
        throw new ConvertError(`cannot encode a table key of type ${TYPE_NAMES[keyType] ?? 'unknown'}`);
      }
      m._lua_settop(L, -2);
    }
    if (record) return record;
    if (extra) {
      const base = array ? array.length : 0;
      const total = base + extra.size;
      const full = array ?? [];
      for (let k = base + 1; k <= total; k++) {
        if (!extra.has(k)) return toRecord(array, extra);
        full.push(extra.get(k));
      }
      return full;
    }
    if (array) return array;
    let isArray = false;
    if (m._lua_getmetatable(L, t) !== 0) {
      isArray = m._lua_topointer(L, -1) === this.#arrayMtPtr;
      m._lua_settop(L, -2);
    }
    return isArray ? [] : {};
  }

  /** A table key as text; short keys are pinned in the registry once, so their address identifies them. */
  #readKey(L: Ptr, index: number): string {
    const m = this.#m;
    const p = m._lua_tolstring(L, index, this.#lenPtr);
    const cached = this.#keyTexts.get(p);
    if (cached !== undefined) return cached;
    const text = this.#readString(L, index);
    if (text.length <= MAX_CACHED_KEY && this.#keyTexts.size < KEY_CACHE_SIZE && !this.#keyRefs.has(text)) {
      m._lua_pushvalue(L, index);
      const ref = m._luaL_ref(L, REGISTRY);
      this.#keyTexts.set(p, text);
      this.#keyRefs.set(text, ref);
    }
    return text;
  }

  /** Pushes an object key, reusing the pinned Lua string when there is one. */
  #pushKey(L: Ptr, key: string): void {
    const m = this.#m;
    const ref = this.#keyRefs.get(key);
    if (ref !== undefined) {
      m._lua_rawgeti(L, REGISTRY, BigInt(ref));
      return;
    }
    this.#pushString(L, key);
    if (key.length <= MAX_CACHED_KEY && this.#keyTexts.size < KEY_CACHE_SIZE) {
      const p = m._lua_tolstring(L, -1, this.#lenPtr);
      m._lua_pushvalue(L, -1);
      const pinned = m._luaL_ref(L, REGISTRY);
      this.#keyTexts.set(p, key);
      this.#keyRefs.set(key, pinned);
    }
  }
}

/** Sets a key of a record built from Lua data; `__proto__` stays a plain data key. */
function setKey(record: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(record, key, { value, enumerable: true, writable: true, configurable: true });
  else record[key] = value;
}

function toRecord(array: unknown[] | undefined, extra: Map<number, unknown> | undefined): Record<string, unknown> {
  const record: Record<string, unknown> = {};
  if (array) for (let i = 0; i < array.length; i++) record[String(i + 1)] = array[i];
  if (extra) for (const [k, v] of extra) record[String(k)] = v;
  return record;
}

function normaliseLevel(level: string): LuaLogLevel {
  switch (level) {
    case 'debug':
    case 'trace':
      return 'debug';
    case 'warn':
    case 'warning':
      return 'warn';
    case 'error':
    case 'fatal':
      return 'error';
    default:
      return 'info';
  }
}

function firstLine(text: string): string {
  const at = text.indexOf('\n');
  return at < 0 ? text : text.slice(0, at);
}

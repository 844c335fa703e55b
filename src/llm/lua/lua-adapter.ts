/**
 * A Lua LLM adapter: `adapters/<name>.lua`, run in its own {@link LuaSandbox}. The script returns
 *
 * ```lua
 * return {
 *   name = 'anthropic', version = '1.0.0',
 *   endpoint = '/v1/messages',           -- appended to the base URL; may contain {model}
 *   stream_endpoint = nil,               -- optional, for vendors with a separate streaming URL
 *   default_base_url = 'https://api.anthropic.com',
 *   stream_format = 'sse',               -- or 'ndjson'
 *   headers = function(api_key) return { ['x-api-key'] = api_key } end,  -- or a table
 *   transform_request = function(req) return vendor_body end,
 *   transform_response = function(body) return unified_result end,
 *   transform_stream_chunk = function(chunk, ctx) return { part, ... } end,  -- optional
 * }
 * ```
 *
 * Data crosses as decoded JSON (Lua tables), never as text the script has to parse:
 * - `transform_request(req)`: req is the {@link UnifiedRequest} (the spec's GenerateRequest without
 *   its signal, plus model and stream; tool-call arguments are JSON text). It returns the vendor's
 *   request body as a table (or a JSON string), or `nil, "why"` to refuse the request.
 * - `transform_response(body)`: body is the vendor's decoded JSON answer. It returns the
 *   GenerateResult as a table: {text, reasoning, tool_calls = {{id, name, arguments}}, usage =
 *   {prompt_tokens, completion_tokens, total_tokens, cache_read_tokens, reasoning_tokens},
 *   finish_reason, model}; arguments may be JSON text or a table; missing fields get defaults.
 *   `error = {message, kind}` reports an error the vendor sent with a 2xx status.
 * - `transform_stream_chunk(chunk, ctx)`: chunk is one SSE `data:` payload (decoded JSON, or the
 *   raw string when it is not JSON; OpenAI's `[DONE]` never reaches the script) or one NDJSON line.
 *   ctx is a table private to this stream (keep state there, not in globals: streams run
 *   concurrently); ctx.event is the SSE event name. It returns a list of stream parts shaped like
 *   the spec's StreamPart union: {type='text-delta', delta}, {type='reasoning-delta', delta},
 *   {type='tool-call-delta', index, id?, name?, arguments_delta}, {type='tool-call', index, call},
 *   {type='usage', usage}, {type='finish', reason, model?}, or {type='error', message, kind?}.
 *
 * JSON null: decoded nulls are dropped from objects (so `x.content or ''` works) and kept as
 * `json.null` inside arrays; `json.decode(text, true)` keeps every null as `json.null`. An empty
 * table encodes as `{}` unless made with `json.array()` (arrays received from the host keep their
 * array mark, so an empty `required = []` stays an array).
 *
 * Everything a script returns is validated; a bad value is an LlmError `bad_response` naming the
 * adapter and the function.
 *
 * Shared libraries (`<dir>/lib/<name>.lua`, e.g. openai_compat) that the script mentions are
 * loaded into its sandbox first, as read-only globals (lua-library.ts).
 */
import { readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { join, sep } from 'node:path';
import type { Logger } from '../../log/logger.js';
import { LuaSandbox, LuaScriptError, type LuaStreamState } from '../../lua/lua-sandbox.js';
import { LlmError, type LlmErrorKind } from '../spec/errors.js';
import type { ChatMessage, FinishReason, GenerateResult, StreamPart, ToolCall, ToolSpec, Usage } from '../spec/model.js';
import { ADAPTERS_DIR, adapterLibraries, type LuaLibrarySource, MAX_SCRIPT_BYTES } from './lua-library.js';

export { ADAPTERS_DIR } from './lua-library.js';

const ADAPTER_NAME = /^[a-z][a-z0-9_-]{0,31}$/;
const FINISH_REASONS: ReadonlySet<string> = new Set(['stop', 'tool_calls', 'length', 'content_filter', 'error', 'other']);
const SCRIPT_ERROR_KINDS: ReadonlySet<string> = new Set(['auth', 'rate_limit', 'server', 'timeout', 'bad_response', 'bad_request']);

/** What transform_request receives. */
export interface UnifiedRequest {
  model: string;
  stream: boolean;
  messages: ChatMessage[];
  tools?: ToolSpec[];
  tool_choice?: 'auto' | 'none';
  temperature?: number;
  max_tokens?: number;
}

export interface LuaAdapterInfo {
  name: string;
  version: string;
  endpoint: string;
  stream_endpoint: string;
  default_base_url: string;
  stream_format: 'sse' | 'ndjson';
  /** The script has transform_stream_chunk. */
  streams: boolean;
}

export interface LuaAdapterOptions {
  logger: Logger;
  /** core.llm.lua_time_limit_ms */
  time_limit_ms: number;
  /** core.llm.lua_http_timeout_ms */
  http_timeout_ms: number;
  /** core.llm.lua_http_max_bytes */
  http_max_bytes: number;
  /** core.llm.lua_memory_mb in bytes; default the sandbox's 64 MiB. */
  memory_limit_bytes?: number;
  /** Folder of the scripts; default {@link ADAPTERS_DIR}. */
  dir?: string;
}

/** The path of `<dir>/<name>.lua`, refusing names and symlinks that would leave `dir`. */
export function adapterScriptPath(dir: string, name: string): string {
  if (!ADAPTER_NAME.test(name)) throw new LuaScriptError('HA_ERR_LUA_LOAD', `invalid Lua adapter name: ${JSON.stringify(name)}`);
  let base: string;
  let file: string;
  try {
    base = realpathSync(dir);
    file = realpathSync(join(base, `${name}.lua`));
  } catch (error) {
    throw new LuaScriptError('HA_ERR_LUA_LOAD', `no Lua adapter named ${name} in ${dir}`, { cause: error });
  }
  if (!file.startsWith(base + sep)) throw new LuaScriptError('HA_ERR_LUA_LOAD', `Lua adapter ${name} points outside ${dir}`);
  return file;
}

/** The adapter names available in `dir`. */
export function listAdapters(dir: string = ADAPTERS_DIR): string[] {
  try {
    return readdirSync(dir)
      .filter((f) => f.endsWith('.lua') && ADAPTER_NAME.test(f.slice(0, -4)))
      .map((f) => f.slice(0, -4))
      .sort();
  } catch {
    return [];
  }
}

export class LuaAdapter {
  readonly name: string;
  readonly info: LuaAdapterInfo;
  readonly #source: string;
  readonly #libraries: LuaLibrarySource[];
  readonly #options: LuaAdapterOptions;
  readonly #staticHeaders: Record<string, string> | undefined;
  #sandbox: LuaSandbox;
  #reviving: Promise<LuaSandbox> | undefined;
  #closed = false;

  private constructor(
    name: string,
    info: LuaAdapterInfo,
    source: string,
    libraries: LuaLibrarySource[],
    options: LuaAdapterOptions,
    sandbox: LuaSandbox,
    headers?: Record<string, string>,
  ) {
    this.name = name;
    this.info = info;
    this.#source = source;
    this.#libraries = libraries;
    this.#options = options;
    this.#sandbox = sandbox;
    this.#staticHeaders = headers;
  }

  /** Loads `<dir>/<name>.lua` into a fresh sandbox; fails with a LuaScriptError (HA_ERR_LUA_LOAD or _LIMIT). */
  static async load(name: string, options: LuaAdapterOptions): Promise<LuaAdapter> {
    const path = adapterScriptPath(options.dir ?? ADAPTERS_DIR, name);
    if (statSync(path).size > MAX_SCRIPT_BYTES)
      throw new LuaScriptError('HA_ERR_LUA_LOAD', `Lua adapter ${name} is larger than ${MAX_SCRIPT_BYTES} bytes`);
    const source = readFileSync(path, 'utf8');
    let libraries: LuaLibrarySource[];
    try {
      libraries = adapterLibraries(source, options.dir ?? ADAPTERS_DIR);
    } catch (error) {
      throw new LuaScriptError('HA_ERR_LUA_LOAD', `lua adapter ${name}: ${(error as Error).message}`, { cause: error });
    }
    const { sandbox, info, headers } = await LuaAdapter.#start(name, source, libraries, options);
    return new LuaAdapter(name, info, source, libraries, options, sandbox, headers);
  }

  static async #start(
    name: string,
    source: string,
    libraries: LuaLibrarySource[],
    options: LuaAdapterOptions,
  ): Promise<{ sandbox: LuaSandbox; info: LuaAdapterInfo; headers: Record<string, string> | undefined }> {
    const sandbox = await LuaSandbox.create({
      name: `lua adapter ${name}`,
      logger: options.logger,
      time_limit_ms: options.time_limit_ms,
      http_timeout_ms: options.http_timeout_ms,
      http_max_bytes: options.http_max_bytes,
      ...(options.memory_limit_bytes === undefined ? {} : { memory_limit_bytes: options.memory_limit_bytes }),
    });
    try {
      const module = await sandbox.load(source, `@adapters/${name}.lua`, libraries);
      const v = module.values;
      const fns = new Set(module.functions);
      const problem = (what: string) => new LuaScriptError('HA_ERR_LUA_LOAD', `lua adapter ${name}: ${what}`);
      const text = (key: string, required: boolean): string => {
        const value = v[key];
        if (typeof value === 'string') return value;
        if (typeof value === 'number') return String(value);
        if (value === undefined && !required) return '';
        throw problem(`the returned table needs a string field ${key}`);
      };
      for (const fn of ['transform_request', 'transform_response'])
        if (!fns.has(fn)) throw problem(`the returned table has no function ${fn}`);
      let headers: Record<string, string> | undefined;
      if (!fns.has('headers')) {
        headers = v.headers === undefined ? {} : stringRecord(v.headers);
        if (!headers) throw problem('headers must be a function(api_key) or a table of strings');
      }
      const format = v.stream_format ?? 'sse';
      if (format !== 'sse' && format !== 'ndjson') throw problem(`stream_format must be 'sse' or 'ndjson', not ${JSON.stringify(format)}`);
      const declared = text('name', true);
      if (declared !== name) options.logger.warn({ adapter: name, declared }, `lua adapter ${name} calls itself ${declared}`);
      const endpoint = text('endpoint', true);
      const info: LuaAdapterInfo = {
        name,
        version: text('version', true),
        endpoint,
        stream_endpoint: text('stream_endpoint', false) || endpoint,
        default_base_url: text('default_base_url', false),
        stream_format: format,
        streams: fns.has('transform_stream_chunk'),
      };
      return { sandbox, info, headers };
    } catch (error) {
      await sandbox.close();
      throw error;
    }
  }

  /** The request headers for an API key. */
  async headers(apiKey: string): Promise<Record<string, string>> {
    if (this.#staticHeaders) return { ...this.#staticHeaders };
    const [value] = await this.#call('headers', [apiKey]);
    const headers = value === null ? {} : stringRecord(value);
    if (!headers) throw this.#bad('headers', 'it must return a table of strings');
    return headers;
  }

  /** The vendor request body as JSON text. */
  async transformRequest(request: UnifiedRequest): Promise<string> {
    const [text = 'null', reasonText = 'null'] = await this.#callJson('transform_request', [JSON.stringify(request)]);
    // The body text goes to the vendor as it is; only its first character needs a look.
    if (text.startsWith('{')) return text;
    const value: unknown = JSON.parse(text);
    const reason: unknown = JSON.parse(reasonText);
    if (value === null && typeof reason === 'string') {
      throw new LlmError('bad_request', `lua adapter ${this.name}: transform_request refused the request: ${reason}`);
    }
    if (typeof value === 'string') {
      let parsed: unknown;
      try {
        parsed = JSON.parse(value);
      } catch {
        throw this.#bad('transform_request', 'it returned a string that is not JSON');
      }
      if (!asRecord(parsed)) throw this.#bad('transform_request', 'it returned JSON text that is not an object');
      return value;
    }
    throw this.#bad('transform_request', `it must return a table with named fields, not ${describe(value)}`);
  }

  /** The vendor's answer (its body text, or already decoded) as a GenerateResult. */
  async transformResponse(body: string | object, model: string): Promise<GenerateResult> {
    const bodyText = typeof body === 'string' ? body : JSON.stringify(body);
    let texts: string[];
    try {
      texts = await this.#callJson('transform_response', [bodyText]);
    } catch (error) {
      if (error instanceof LlmError && (error.cause as LuaScriptError | undefined)?.badJsonArgument === 0) {
        throw new LlmError('bad_response', `lua adapter ${this.name}: the answer is not JSON: ${excerpt(bodyText)}`);
      }
      throw error;
    }
    const value: unknown = JSON.parse(texts[0] ?? 'null');
    const reason: unknown = JSON.parse(texts[1] ?? 'null');
    if (value === null && typeof reason === 'string') {
      throw new LlmError('bad_response', `lua adapter ${this.name}: transform_response reported: ${reason}`);
    }
    const record = asRecord(value);
    if (!record) throw this.#bad('transform_response', `it must return a table, not ${describe(value)}`);
    const error = scriptError(record.error, `lua adapter ${this.name}`);
    if (error) throw error;
    try {
      return toResult(record, model);
    } catch (problem) {
      throw this.#bad('transform_response', (problem as Error).message);
    }
  }

  /** One stream's worth of transform_stream_chunk calls, sharing a per-stream ctx table. */
  async openStream(): Promise<LuaAdapterStream> {
    return new LuaAdapterStream(this, await this.#live('transform_stream_chunk'));
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.#sandbox.close();
  }

  /** @internal Used by LuaAdapterStream. */
  bad(fn: string, what: string): LlmError {
    return this.#bad(fn, what);
  }

  /** @internal Maps a sandbox failure to an LlmError and replaces a stopped sandbox. */
  failed(fn: string, error: unknown, sandbox: LuaSandbox = this.#sandbox): LlmError {
    if (error instanceof LlmError) return error;
    if (error instanceof LuaScriptError) {
      // After a limit the script's globals may be half-updated: the next call starts from a fresh engine.
      if (sandbox === this.#sandbox && sandbox.alive && error.isLimit) void sandbox.close();
      return new LlmError('bad_response', `lua adapter ${this.name}: ${fn} failed: ${error.message}`, {
        cause: error,
        details: { lua_code: error.code },
      });
    }
    return new LlmError(
      'bad_response',
      `lua adapter ${this.name}: ${fn} failed: ${error instanceof Error ? error.message : String(error)}`,
      {
        cause: error,
      },
    );
  }

  async #call(fn: string, args: unknown[]): Promise<unknown[]> {
    const sandbox = this.#sandbox.alive && !this.#closed ? this.#sandbox : await this.#live(fn);
    try {
      return await sandbox.call(fn, args);
    } catch (error) {
      throw this.failed(fn, error, sandbox);
    }
  }

  async #callJson(fn: string, args: string[]): Promise<string[]> {
    const sandbox = this.#sandbox.alive && !this.#closed ? this.#sandbox : await this.#live(fn);
    try {
      return await sandbox.callJson(fn, args);
    } catch (error) {
      throw this.failed(fn, error, sandbox);
    }
  }

  /** The current sandbox, or a new one with the script reloaded if the last one was stopped. */
  async #live(fn: string): Promise<LuaSandbox> {
    if (this.#closed) throw new LlmError('unavailable', `lua adapter ${this.name} is closed`);
    if (this.#sandbox.alive) return this.#sandbox;
    if (!this.#reviving) {
      this.#reviving = LuaAdapter.#start(this.name, this.#source, this.#libraries, this.#options).then(
        ({ sandbox }) => {
          this.#sandbox = sandbox;
          this.#reviving = undefined;
          if (this.#closed) void sandbox.close();
          this.#options.logger.info({ adapter: this.name }, `lua adapter ${this.name} restarted in a fresh sandbox`);
          return sandbox;
        },
        (error: unknown) => {
          this.#reviving = undefined;
          throw error;
        },
      );
    }
    try {
      return await this.#reviving;
    } catch (error) {
      throw this.failed(fn, error);
    }
  }

  #bad(fn: string, what: string): LlmError {
    return new LlmError('bad_response', `lua adapter ${this.name}: ${fn} returned a bad value: ${what}`);
  }
}

export class LuaAdapterStream {
  readonly #adapter: LuaAdapter;
  readonly #sandbox: LuaSandbox;
  readonly #state: LuaStreamState;
  #closed = false;

  constructor(adapter: LuaAdapter, sandbox: LuaSandbox) {
    this.#adapter = adapter;
    this.#sandbox = sandbox;
    this.#state = sandbox.newState();
  }

  /**
   * The parts for one chunk, given as its text: an SSE data payload (`sse`: passed as a plain
   * string when it is not JSON) or an NDJSON line (must be JSON). `event` is the SSE event name.
   */
  async transform(text: string, event: string | null, sse: boolean): Promise<StreamPart[]> {
    let values: string[];
    try {
      values = await this.#sandbox.callJson('transform_stream_chunk', [text], { state: this.#state, event, ...(sse ? { raw: 0 } : {}) });
    } catch (error) {
      if (error instanceof LuaScriptError && error.badJsonArgument === 0) {
        throw new LlmError('bad_response', `lua adapter ${this.#adapter.name}: a stream line is not JSON: ${excerpt(text)}`);
      }
      throw this.#adapter.failed('transform_stream_chunk', error, this.#sandbox);
    }
    const value: unknown = JSON.parse(values[0] ?? 'null');
    const reason: unknown = JSON.parse(values[1] ?? 'null');
    if (value === null && typeof reason === 'string') {
      throw new LlmError('bad_response', `lua adapter ${this.#adapter.name}: transform_stream_chunk reported: ${reason}`);
    }
    if (value === null) return [];
    try {
      return toParts(value, `lua adapter ${this.#adapter.name}`);
    } catch (problem) {
      throw this.#adapter.bad('transform_stream_chunk', (problem as Error).message);
    }
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#sandbox.dropState(this.#state);
  }
}

/** Loads adapters once and shares them between models (a source whose settings change keeps its adapter). */
export class LuaAdapterLibrary {
  readonly #options: LuaAdapterOptions;
  readonly #loaded = new Map<string, Promise<LuaAdapter>>();

  constructor(options: LuaAdapterOptions) {
    this.#options = options;
  }

  /** Names of the adapter scripts in the folder. */
  list(): string[] {
    return listAdapters(this.#options.dir ?? ADAPTERS_DIR);
  }

  has(name: string): boolean {
    return this.list().includes(name);
  }

  /** The loaded adapter; a failed load is not cached, so a fixed script loads on the next try. */
  get(name: string): Promise<LuaAdapter> {
    let adapter = this.#loaded.get(name);
    if (!adapter) {
      adapter = LuaAdapter.load(name, this.#options);
      this.#loaded.set(name, adapter);
      adapter.catch(() => this.#loaded.delete(name));
    }
    return adapter;
  }

  /** A lazy reference for LuaAdapterModel (models are built synchronously). */
  lazy(name: string): { name: string; load: () => Promise<LuaAdapter> } {
    return { name, load: () => this.get(name) };
  }

  async close(): Promise<void> {
    const all = [...this.#loaded.values()];
    this.#loaded.clear();
    await Promise.all(all.map((p) => p.then((a) => a.close()).catch(() => undefined)));
  }
}

// -------------------------------------------------------------------------------------------------
// Validation of what scripts return

function excerpt(text: string): string {
  return text.replace(/\s+/g, ' ').slice(0, 200) || '(empty)';
}

function describe(value: unknown): string {
  if (value === null || value === undefined) return 'nil';
  if (Array.isArray(value)) return 'a list';
  return typeof value === 'object' ? 'a table' : `a ${typeof value}`;
}

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/** A table of header strings (numbers allowed), or undefined when it is not one. */
function stringRecord(value: unknown): Record<string, string> | undefined {
  if (Array.isArray(value) && value.length === 0) return {};
  const record = asRecord(value);
  if (!record) return undefined;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(record)) {
    if (typeof v === 'string') out[k] = v;
    else if (typeof v === 'number') out[k] = String(v);
    else return undefined;
  }
  return out;
}

function list(value: unknown, what: string): unknown[] {
  if (value === undefined || value === null) return [];
  if (Array.isArray(value)) return value;
  // An empty Lua table arrives as {}.
  if (asRecord(value) && Object.keys(value as object).length === 0) return [];
  throw new Error(`${what} must be a list`);
}

function optionalString(value: unknown, what: string): string {
  if (value === undefined || value === null) return '';
  if (typeof value !== 'string') throw new Error(`${what} must be a string`);
  return value;
}

function count(value: unknown, what: string): number {
  if (value === undefined || value === null) return 0;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) throw new Error(`${what} must be a non-negative number`);
  return Math.floor(value);
}

function toUsage(value: unknown, what = 'usage'): Usage {
  if (value === undefined || value === null) {
    return { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, cache_read_tokens: 0, reasoning_tokens: 0 };
  }
  const u = asRecord(value);
  if (!u) throw new Error(`${what} must be a table`);
  const prompt = count(u.prompt_tokens, `${what}.prompt_tokens`);
  const completion = count(u.completion_tokens, `${what}.completion_tokens`);
  const total =
    u.total_tokens === undefined || u.total_tokens === null ? prompt + completion : count(u.total_tokens, `${what}.total_tokens`);
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: total,
    cache_read_tokens: count(u.cache_read_tokens, `${what}.cache_read_tokens`),
    reasoning_tokens: count(u.reasoning_tokens, `${what}.reasoning_tokens`),
  };
}

function toFinish(value: unknown, fallback: FinishReason): FinishReason {
  if (value === undefined || value === null || value === '') return fallback;
  if (typeof value !== 'string') throw new Error('finish_reason must be a string');
  return FINISH_REASONS.has(value) ? (value as FinishReason) : 'other';
}

/** Vendors that say "stop" after tool calls (Gemini, Ollama) mean "tool_calls". */
function withCalls(reason: FinishReason, hasCalls: boolean): FinishReason {
  return reason === 'stop' && hasCalls ? 'tool_calls' : reason;
}

function toArguments(value: unknown, what: string): string {
  if (value === undefined || value === null || value === '') return '{}';
  if (typeof value === 'string') return value;
  if (typeof value === 'object') return JSON.stringify(value);
  throw new Error(`${what} must be JSON text or a table`);
}

function toToolCall(value: unknown, index: number, what: string): ToolCall {
  const c = asRecord(value);
  if (!c) throw new Error(`${what} must be a table`);
  if (typeof c.name !== 'string' || c.name === '') throw new Error(`${what}.name must be a non-empty string`);
  const id = optionalString(c.id, `${what}.id`);
  return { id: id || `call_${index}`, name: c.name, arguments: toArguments(c.arguments, `${what}.arguments`) };
}

function toResult(r: Record<string, unknown>, model: string): GenerateResult {
  const tool_calls = list(r.tool_calls, 'tool_calls').map((c, i) => toToolCall(c, i, `tool_calls[${i + 1}]`));
  const modelName = optionalString(r.model, 'model');
  return {
    text: optionalString(r.text, 'text'),
    reasoning: optionalString(r.reasoning, 'reasoning'),
    tool_calls,
    usage: toUsage(r.usage),
    finish_reason: withCalls(toFinish(r.finish_reason, 'stop'), tool_calls.length > 0),
    model: modelName || model,
  };
}

/** An `error` a script reports (a table {message, kind} or a string), as an LlmError. */
function scriptError(value: unknown, source: string): LlmError | undefined {
  if (value === undefined || value === null || value === false) return undefined;
  if (typeof value === 'string') return new LlmError('server', `${source}: the vendor reported: ${value}`);
  const e = asRecord(value);
  const message = typeof e?.message === 'string' ? e.message : JSON.stringify(value);
  const kind = typeof e?.kind === 'string' && SCRIPT_ERROR_KINDS.has(e.kind) ? (e.kind as LlmErrorKind) : 'server';
  return new LlmError(kind, `${source}: the vendor reported: ${message}`);
}

function index(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) throw new Error(`${what}.index must be a non-negative integer`);
  return value;
}

function toParts(value: unknown, source: string): StreamPart[] {
  // A single part may come without the surrounding list.
  const single = asRecord(value);
  const items = single && typeof single.type === 'string' ? [single] : list(value, 'the result');
  const parts: StreamPart[] = [];
  items.forEach((item, i) => {
    const what = `part ${i + 1}`;
    const p = asRecord(item);
    if (!p || typeof p.type !== 'string') throw new Error(`${what} must be a table with a type`);
    switch (p.type) {
      case 'text-delta':
      case 'reasoning-delta': {
        const delta = optionalString(p.delta, `${what}.delta`);
        if (delta !== '') parts.push({ type: p.type, delta });
        break;
      }
      case 'tool-call-delta': {
        const part: StreamPart = {
          type: 'tool-call-delta',
          index: index(p.index, what),
          arguments_delta: optionalString(p.arguments_delta, `${what}.arguments_delta`),
        };
        const id = optionalString(p.id, `${what}.id`);
        const name = optionalString(p.name, `${what}.name`);
        if (id) part.id = id;
        if (name) part.name = name;
        parts.push(part);
        break;
      }
      case 'tool-call': {
        const at = index(p.index, what);
        parts.push({ type: 'tool-call', index: at, call: toToolCall(p.call, at, `${what}.call`) });
        break;
      }
      case 'usage':
        parts.push({ type: 'usage', usage: toUsage(p.usage, `${what}.usage`) });
        break;
      case 'finish': {
        const model = optionalString(p.model, `${what}.model`);
        parts.push({ type: 'finish', reason: toFinish(p.reason, 'stop'), ...(model ? { model } : {}) });
        break;
      }
      case 'error': {
        const error = scriptError(p, source) ?? new LlmError('server', `${source}: the vendor reported an error`);
        parts.push({ type: 'error', error });
        break;
      }
      default:
        throw new Error(`${what} has an unknown type ${JSON.stringify(p.type)}`);
    }
  });
  return parts;
}

/**
 * The provider manager: one LanguageModel in front of every configured LLM source, tried in
 * order (the current source, then priority, then name) with a per-source policy:
 *
 * - HTTP 401/403 disables a source until its configuration changes;
 * - rate limits, server errors, timeouts and network failures put it on a cooldown that starts at
 *   core.llm.cooldown_ms (or the vendor's Retry-After when longer), doubles per consecutive
 *   failure up to core.llm.cooldown_max_ms, and resets on success;
 * - a refused or unreadable request is not the source's fault: the next source is tried, but no
 *   cooldown starts;
 * - a cancelled request is never retried or counted.
 *
 * The manager reads the configuration on every request, so changed settings apply at once (a
 * source whose settings changed gets a new model). It does not know the vendors: the composition
 * root passes `createModel`, which builds OpenAI-compatible, Ollama and Lua-adapted models.
 *
 * Which source answered: GenerateResult.model (and the `model` of the stream's `finish` part) is
 * "<source>/<model>", e.g. "deepseek/deepseek-chat". The spec types stay as they are and the
 * agent, which sees models only through the spec, can record the source per turn from it.
 */
import { createHash } from 'node:crypto';
import type { SourceState, SourceStatus } from '../api/status.js';
import type { Config } from '../config/schema.js';
import type { Logger } from '../log/logger.js';
import type { ToolDefinition } from '../shared/tool.js';
import { ToolError } from '../shared/tool.js';
import { NO_VISION, requestWithoutImages } from './image-parts.js';
import { LlmError } from './spec/errors.js';
import { type GenerateRequest, type GenerateResult, type LanguageModel, SPEC_VERSION, type StreamPart } from './spec/model.js';

export type { SourceState, SourceStatus };

export type LlmConfig = Config['core']['llm'];

/** The name of the source built from core.llm.{base_url, api_key, model, adapter}. */
export const DEFAULT_SOURCE = 'default';
export const DEEPSEEK_BASE_URL = 'https://api.deepseek.com';
export const DEEPSEEK_DEFAULT_MODEL = 'deepseek-chat';
const DEFAULT_PRIORITY = 100;
const DEFAULT_MAX_CONCURRENT = 8;

/** One source with every default applied: what `createModel` builds a model from. */
export interface ResolvedSource {
  name: string;
  /** `openai`, `ollama` or a Lua adapter name. */
  adapter: string;
  /** May be empty: the adapter's default base URL. */
  base_url: string;
  api_key: string;
  model: string;
  priority: number;
  max_concurrent: number;
  timeout_ms: number;
  temperature: number;
  max_tokens: number;
  /** The model takes images (core.llm.vision / sources.<name>.vision); otherwise pictures become a note. */
  vision: boolean;
}

export interface ProviderManagerOptions {
  config: () => LlmConfig;
  createModel: (source: ResolvedSource) => LanguageModel;
  /** Stores core.llm.current_source (llm_set_source). */
  setCurrentSource: (name: string) => void;
  log: Logger;
  clock?: { now(): number };
}

/** Resolves the configured sources in the order they are tried. Exported for status pages and tests. */
export function resolveSources(config: LlmConfig): ResolvedSource[] {
  const out: ResolvedSource[] = [];
  const base = {
    timeout_ms: config.request_timeout_ms,
    temperature: config.temperature,
    max_tokens: config.max_tokens,
    priority: DEFAULT_PRIORITY,
    max_concurrent: DEFAULT_MAX_CONCURRENT,
  };
  // A sources entry named "default" is more explicit than the top-level keys and wins.
  if ((config.api_key !== '' || config.base_url !== '') && !(DEFAULT_SOURCE in config.sources)) {
    const baseUrl = config.base_url !== '' ? config.base_url : DEEPSEEK_BASE_URL;
    const isDeepSeek = /^https?:\/\/api\.deepseek\.com(\/|$)/.test(baseUrl);
    out.push({
      ...base,
      name: DEFAULT_SOURCE,
      adapter: config.adapter,
      base_url: baseUrl,
      api_key: config.api_key,
      model: config.model !== '' ? config.model : isDeepSeek ? DEEPSEEK_DEFAULT_MODEL : '',
      vision: config.vision,
    });
  }
  for (const [name, s] of Object.entries(config.sources)) {
    if (s.enabled === false) continue;
    out.push({
      name,
      adapter: s.adapter,
      base_url: s.base_url ?? '',
      api_key: s.api_key ?? '',
      model: s.model ?? '',
      priority: s.priority ?? DEFAULT_PRIORITY,
      max_concurrent: s.max_concurrent ?? DEFAULT_MAX_CONCURRENT,
      timeout_ms: s.timeout_ms ?? base.timeout_ms,
      temperature: s.temperature ?? base.temperature,
      max_tokens: s.max_tokens ?? base.max_tokens,
      // A named source says for itself; core.llm.vision describes the default source only.
      vision: s.vision ?? (name === DEFAULT_SOURCE ? config.vision : false),
    });
  }
  const current = config.current_source;
  return out.sort((a, b) => {
    if (a.name === current) return -1;
    if (b.name === current) return 1;
    return a.priority - b.priority || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  });
}

/** What a model is built from; priority and max_concurrent do not need a new model. */
function fingerprint(s: ResolvedSource): string {
  const material = JSON.stringify([s.adapter, s.base_url, s.api_key, s.model, s.timeout_ms, s.temperature, s.max_tokens]);
  return createHash('sha256').update(material).digest('hex');
}

/** A FIFO counting semaphore whose waiters leave the queue when their signal aborts. */
class Semaphore {
  #limit: number;
  #active = 0;
  readonly #queue: Array<{ grant: () => void }> = [];

  constructor(limit: number) {
    this.#limit = limit;
  }

  get active(): number {
    return this.#active;
  }

  get waiting(): number {
    return this.#queue.length;
  }

  get full(): boolean {
    return this.#active >= this.#limit;
  }

  setLimit(limit: number): void {
    this.#limit = limit;
    this.#drain();
  }

  /** Resolves with a release function once a slot is free; rejects with `aborted` when the signal fires first. */
  acquire(signal: AbortSignal | undefined, source: string): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(new LlmError('aborted', `${source}: request cancelled`));
    return new Promise((resolve, reject) => {
      let released = false;
      const release = (): void => {
        if (released) return;
        released = true;
        this.#active--;
        this.#drain();
      };
      const entry = {
        grant: () => {
          signal?.removeEventListener('abort', onAbort);
          this.#active++;
          resolve(release);
        },
      };
      const onAbort = (): void => {
        const at = this.#queue.indexOf(entry);
        if (at >= 0) this.#queue.splice(at, 1);
        reject(new LlmError('aborted', `${source}: request cancelled while waiting for a free slot`));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#queue.push(entry);
      this.#drain();
    });
  }

  #drain(): void {
    while (this.#active < this.#limit && this.#queue.length > 0) this.#queue.shift()?.grant();
  }
}

interface SourceRuntime {
  resolved: ResolvedSource;
  fingerprint: string;
  model: LanguageModel | undefined;
  semaphore: Semaphore;
  /** Set by an auth failure (or a model that cannot be built) for this fingerprint. */
  disabled: { fingerprint: string; reason: string } | undefined;
  cooldownUntil: number;
  consecutiveFailures: number;
  reason: string | undefined;
  lastError: string | undefined;
  requests: number;
  failures: number;
}

const NO_SOURCES_HINT =
  'no language model is configured: set HOMEAGENT_LLM_API_KEY to use DeepSeek, or configure a source with ' +
  '`homeagentctl config set core.llm.base_url URL` (plus core.llm.api_key and core.llm.model) or core.llm.sources';

export class ProviderManager implements LanguageModel {
  readonly spec_version = SPEC_VERSION;
  readonly provider = 'manager';
  readonly #options: ProviderManagerOptions;
  readonly #clock: { now(): number };
  readonly #runtimes = new Map<string, SourceRuntime>();

  constructor(options: ProviderManagerOptions) {
    this.#options = options;
    this.#clock = options.clock ?? { now: () => Date.now() };
  }

  /** "<source>/<model>" of the first source that would be tried now, or "" when there is none. */
  get model(): string {
    const first = this.#runtimesInOrder().find((r) => this.#unavailable(r) === undefined);
    return first ? `${first.resolved.name}/${first.resolved.model}` : '';
  }

  /** At least one source is configured (it may still be failing). */
  configured(): boolean {
    return resolveSources(this.#options.config()).length > 0;
  }

  sources(): SourceStatus[] {
    const current = this.#options.config().current_source;
    return this.#runtimesInOrder().map((r) => this.#status(r, current));
  }

  async generate(request: GenerateRequest): Promise<GenerateResult> {
    const runtimes = this.#runtimesInOrder();
    if (runtimes.length === 0) throw new LlmError('unavailable', NO_SOURCES_HINT);
    const reasons: string[] = [];
    for (const r of runtimes) {
      const skip = this.#unavailable(r);
      if (skip) {
        reasons.push(`${r.resolved.name}: ${skip}`);
        continue;
      }
      const release = await r.semaphore.acquire(request.signal, r.resolved.name);
      try {
        // The source may have failed for someone else while this request waited.
        const after = this.#unavailable(r);
        if (after) {
          reasons.push(`${r.resolved.name}: ${after}`);
          continue;
        }
        const model = this.#model(r);
        if (!model) {
          reasons.push(`${r.resolved.name}: ${this.#unavailable(r) ?? 'unavailable'}`);
          continue;
        }
        r.requests++;
        try {
          const result = await model.generate(forSource(request, r.resolved));
          this.#succeeded(r);
          return { ...result, model: `${r.resolved.name}/${result.model || r.resolved.model}` };
        } catch (caught) {
          const error = asLlmError(caught, r.resolved.name);
          if (error.kind === 'aborted' || request.signal?.aborted) throw abortedError(error, r.resolved.name);
          reasons.push(`${r.resolved.name}: ${this.#failed(r, error)}`);
        }
      } finally {
        release();
      }
    }
    throw this.#allFailed(reasons);
  }

  /**
   * Falls through to the next source only while the failing one has not yielded anything; after
   * the first part an error is passed on as it is. Never throws: every failure, including "no
   * source" and "all failed", arrives as an `error` part.
   */
  async *stream(request: GenerateRequest): AsyncGenerator<StreamPart> {
    const runtimes = this.#runtimesInOrder();
    if (runtimes.length === 0) {
      yield { type: 'error', error: new LlmError('unavailable', NO_SOURCES_HINT) };
      return;
    }
    const reasons: string[] = [];
    for (const r of runtimes) {
      const name = r.resolved.name;
      const skip = this.#unavailable(r);
      if (skip) {
        reasons.push(`${name}: ${skip}`);
        continue;
      }
      let release: () => void;
      try {
        release = await r.semaphore.acquire(request.signal, name);
      } catch (caught) {
        yield { type: 'error', error: asLlmError(caught, name) };
        return;
      }
      try {
        const after = this.#unavailable(r);
        const model = after === undefined ? this.#model(r) : undefined;
        if (!model) {
          reasons.push(`${name}: ${this.#unavailable(r) ?? 'unavailable'}`);
          continue;
        }
        r.requests++;
        let yielded = false;
        let failure: LlmError | undefined;
        try {
          for await (const part of model.stream(forSource(request, r.resolved))) {
            if (part.type === 'error') {
              failure = part.error;
              break;
            }
            yielded = true;
            if (part.type === 'finish') {
              this.#succeeded(r);
              yield { ...part, model: `${name}/${part.model || r.resolved.model}` };
            } else {
              yield part;
            }
          }
        } catch (caught) {
          // A model that breaks the contract and throws is treated like an error part.
          failure = asLlmError(caught, name);
        }
        if (failure === undefined) {
          if (yielded) return;
          failure = new LlmError('bad_response', `${name}: the stream ended without any part`);
        }
        if (failure.kind === 'aborted' || request.signal?.aborted) {
          yield { type: 'error', error: abortedError(failure, name) };
          return;
        }
        const why = this.#failed(r, failure);
        if (yielded) {
          yield { type: 'error', error: failure };
          return;
        }
        reasons.push(`${name}: ${why}`);
      } finally {
        release();
      }
    }
    yield { type: 'error', error: this.#allFailed(reasons) };
  }

  /** llm_list_sources and llm_set_source. */
  tools(): ToolDefinition[] {
    const listSources: ToolDefinition = {
      name: 'llm_list_sources',
      description:
        'List the configured language-model sources in the order they are tried, with their state (ready, busy, cooling_down, disabled) and why.',
      parameters: { type: 'object', properties: {}, additionalProperties: false },
      owner: 'core',
      tier: 'read',
      parallel_safe: true,
      no_memory: true,
      execute: () => this.sources(),
    };
    const setSource: ToolDefinition<{ name: string }> = {
      name: 'llm_set_source',
      description:
        'Make a language-model source the one tried first (the others stay as fallbacks). Use llm_list_sources to see the names.',
      parameters: {
        type: 'object',
        properties: { name: { type: 'string', description: 'A source name from llm_list_sources.' } },
        required: ['name'],
        additionalProperties: false,
      },
      owner: 'core',
      tier: 'act',
      no_memory: true,
      execute: ({ name }) => {
        const known = resolveSources(this.#options.config()).map((s) => s.name);
        if (!known.includes(name)) {
          throw new ToolError({
            reason: 'not_found',
            field: 'name',
            detail: `no language-model source named "${name}"${known.length > 0 ? ` (known: ${known.join(', ')})` : ''}`,
            hint: 'call llm_list_sources to see the configured sources',
          });
        }
        this.#options.setCurrentSource(name);
        this.#options.log.info({ source: name }, `LLM source ${name} is now tried first`);
        return { ok: true, current: name };
      },
    };
    return [listSources, setSource as unknown as ToolDefinition];
  }

  /** Syncs the runtimes with the configuration and returns them in the order they are tried. */
  #runtimesInOrder(): SourceRuntime[] {
    const resolved = resolveSources(this.#options.config());
    const seen = new Set<string>();
    const out: SourceRuntime[] = [];
    for (const s of resolved) {
      seen.add(s.name);
      const fp = fingerprint(s);
      let r = this.#runtimes.get(s.name);
      if (!r) {
        r = {
          resolved: s,
          fingerprint: fp,
          model: undefined,
          semaphore: new Semaphore(s.max_concurrent),
          disabled: undefined,
          cooldownUntil: 0,
          consecutiveFailures: 0,
          reason: undefined,
          lastError: undefined,
          requests: 0,
          failures: 0,
        };
        this.#runtimes.set(s.name, r);
      } else if (r.fingerprint !== fp) {
        // New settings: a new model, and a fresh chance (the old failure may have been the settings).
        this.#options.log.info({ source: s.name }, `LLM source ${s.name} changed; it will be tried again`);
        r.fingerprint = fp;
        r.model = undefined;
        r.disabled = undefined;
        r.cooldownUntil = 0;
        r.consecutiveFailures = 0;
        r.reason = undefined;
      }
      r.resolved = s;
      r.semaphore.setLimit(s.max_concurrent);
      out.push(r);
    }
    // Removed sources are forgotten unless a request still holds them.
    for (const [name, r] of this.#runtimes)
      if (!seen.has(name) && r.semaphore.active === 0 && r.semaphore.waiting === 0) this.#runtimes.delete(name);
    return out;
  }

  /** Why the source cannot be tried now, or undefined. */
  #unavailable(r: SourceRuntime): string | undefined {
    if (r.disabled && r.disabled.fingerprint === r.fingerprint) return r.disabled.reason;
    const left = r.cooldownUntil - this.#clock.now();
    if (left > 0) return `cooling down for ${Math.ceil(left / 1000)} s after ${r.reason ?? 'a failure'}`;
    return undefined;
  }

  #model(r: SourceRuntime): LanguageModel | undefined {
    if (r.model) return r.model;
    try {
      r.model = this.#options.createModel(r.resolved);
      return r.model;
    } catch (error) {
      const message = redact(error instanceof Error ? error.message : String(error), r.resolved.api_key);
      r.disabled = { fingerprint: r.fingerprint, reason: `disabled: cannot be built (${message}); fix its settings` };
      r.lastError = message;
      this.#options.log.error({ source: r.resolved.name, err: message }, `LLM source ${r.resolved.name} cannot be built`);
      return undefined;
    }
  }

  #succeeded(r: SourceRuntime): void {
    r.consecutiveFailures = 0;
    r.cooldownUntil = 0;
    r.reason = undefined;
  }

  /** Applies the policy for one failure and returns the reason line for all_failed. */
  #failed(r: SourceRuntime, error: LlmError): string {
    const name = r.resolved.name;
    const config = this.#options.config();
    r.failures++;
    r.lastError = redact(error.message, r.resolved.api_key);
    const what = describeFailure(error);
    switch (error.kind) {
      case 'auth': {
        const reason = `disabled after ${what} (check the API key)`;
        r.disabled = { fingerprint: r.fingerprint, reason };
        this.#options.log.error(
          { source: name, status: error.status },
          `LLM source ${name} ${reason}; it stays off until its settings change`,
        );
        return reason;
      }
      case 'rate_limit':
      case 'server':
      case 'timeout':
      case 'network': {
        r.consecutiveFailures++;
        const ceiling = Math.max(config.cooldown_max_ms, config.cooldown_ms);
        const backoff = Math.min(config.cooldown_ms * 2 ** (r.consecutiveFailures - 1), ceiling);
        const pause = Math.min(Math.max(backoff, error.retryAfterMs ?? 0), ceiling);
        r.cooldownUntil = this.#clock.now() + pause;
        r.reason = what;
        this.#options.log.warn(
          { source: name, kind: error.kind, status: error.status, cooldown_ms: pause, failures_in_a_row: r.consecutiveFailures },
          `LLM source ${name} failed (${r.lastError}); cooling down for ${Math.ceil(pause / 1000)} s`,
        );
        return `cooling down for ${Math.ceil(pause / 1000)} s after ${what}`;
      }
      default: {
        this.#options.log.warn({ source: name, kind: error.kind, status: error.status }, `LLM source ${name} failed: ${r.lastError}`);
        const detail = stripSourcePrefix(r.lastError, name);
        return error.kind === 'bad_request' ? `refused the request: ${detail}` : `${what}: ${detail}`;
      }
    }
  }

  #allFailed(reasons: string[]): LlmError {
    return new LlmError('all_failed', `every language-model source failed: ${reasons.join('; ')}`, { details: { reasons } });
  }

  #status(r: SourceRuntime, current: string): SourceStatus {
    const s = r.resolved;
    const disabled = r.disabled && r.disabled.fingerprint === r.fingerprint ? r.disabled : undefined;
    const cooling = !disabled && r.cooldownUntil > this.#clock.now();
    const state: SourceState = disabled ? 'disabled' : cooling ? 'cooling_down' : r.semaphore.full ? 'busy' : 'ready';
    const reason = disabled?.reason ?? (cooling ? this.#unavailable(r) : undefined);
    return {
      name: s.name,
      adapter: s.adapter,
      model: s.model,
      base_url: publicUrl(s.base_url),
      priority: s.priority,
      current: s.name === current,
      state,
      ...(cooling ? { until: r.cooldownUntil } : {}),
      ...(reason ? { reason } : {}),
      ...(r.lastError ? { last_error: r.lastError } : {}),
      requests: r.requests,
      failures: r.failures,
      in_flight: r.semaphore.active,
      waiting: r.semaphore.waiting,
    };
  }
}

/**
 * The request as one source may see it: a source without vision never receives image parts, also
 * when it is tried after a vision source failed mid-turn (the check runs per attempt).
 */
function forSource(request: GenerateRequest, source: ResolvedSource): GenerateRequest {
  return source.vision ? request : requestWithoutImages(request, NO_VISION);
}

function asLlmError(error: unknown, source: string): LlmError {
  if (error instanceof LlmError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new LlmError('bad_response', `${source}: ${message}`, { cause: error });
}

function abortedError(error: LlmError, source: string): LlmError {
  return error.kind === 'aborted' ? error : new LlmError('aborted', `${source}: request cancelled`, { cause: error });
}

function describeFailure(error: LlmError): string {
  if (error.status !== undefined) return error.kind === 'rate_limit' ? `HTTP ${error.status} (rate limited)` : `HTTP ${error.status}`;
  switch (error.kind) {
    case 'timeout':
      return 'a timeout';
    case 'network':
      return 'a network error';
    case 'bad_response':
      return 'an unreadable answer';
    case 'server':
      return 'a service error';
    default:
      return error.kind.replace('_', ' ');
  }
}

function stripSourcePrefix(message: string, source: string): string {
  const text = message.startsWith(`${source}: `) ? message.slice(source.length + 2) : message;
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

/** Vendors sometimes echo the key in error bodies, and URLs may carry credentials: neither leaves. */
function redact(text: string, apiKey: string): string {
  const withoutKey = apiKey.length >= 4 ? text.split(apiKey).join('[redacted]') : text;
  return withoutKey.replace(/(\/\/)[^/\s@]*@/g, '$1[redacted]@');
}

/** The base URL without user info or query (which may carry credentials). */
function publicUrl(url: string): string {
  if (url === '') return '';
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    u.search = '';
    return u.toString().replace(/\/$/, url.endsWith('/') ? '/' : '');
  } catch {
    return '[invalid URL]';
  }
}

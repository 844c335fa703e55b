/**
 * One configured MCP server: its client connection, its tools in the registry, and reconnecting.
 * A server that cannot be reached (or drops the connection) never fails the plugin: its tools are
 * withdrawn, the problem is kept for health(), and it is tried again after 1 s, 2 s, 4 s, ... up
 * to a few minutes. The tool list is read in full (every page) on connect and again whenever the
 * server says it changed.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { PaginatedResultSchema, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { JsonSchema, Logger, PluginContext, PluginHealth, ToolContext } from '../../src/sdk/index.js';
import { ToolError } from '../../src/sdk/index.js';
import { callFailure, describe, renderCallResult } from './call-result.js';
import {
  configProblem,
  createTransport,
  DEFAULT_TIER,
  DEFAULT_TIMEOUT_MS,
  type McpServerConfig,
  type McpTransport,
} from './server-config.js';
import { toolNameCandidates } from './tool-names.js';

const CLIENT_INFO = { name: 'homeagent', version: '0.1.0' };
/** A server paging forever (a cursor that never ends) must not keep us listing forever. */
const MAX_LIST_PAGES = 100;
/** The registry's own timeout is set this much longer, so that the MCP timeout (with its clearer message) ends a slow call first. */
const REGISTRY_TIMEOUT_GRACE_MS = 1000;
const MAX_DESCRIPTION_CHARS = 2000;
/**
 * Connecting and listing get at least this long whatever timeout_ms (a per-call limit) says:
 * starting a server process takes a while on a Pi, much longer than a short call limit.
 */
const MIN_SETUP_TIMEOUT_MS = 30_000;
/** A connection that lived this long counts as healthy again for the backoff. */
const STABLE_CONNECTION_MS = 60_000;
/** The last stderr lines of a stdio server are kept to explain why it failed. */
const STDERR_TAIL_LINES = 5;
const STDERR_LINE_CHARS = 300;
const MAX_PROBLEM_CHARS = 300;

/** A tool as the server listed it, after the checks that let it into the registry. */
export interface RemoteTool {
  name: string;
  description: string;
  inputSchema: JsonSchema;
}

/** Time for the reconnect waits; tests drive a manual one through hundreds of reconnect cycles. */
export interface RetryClock {
  now(): number;
  setTimer(fn: () => void, ms: number): { cancel(): void };
}

export const systemRetryClock: RetryClock = {
  now: () => Date.now(),
  setTimer(fn, ms) {
    const timer = setTimeout(fn, ms);
    return { cancel: () => clearTimeout(timer) };
  },
};

export interface ConnectionOptions {
  ctx: PluginContext;
  /** Registry names held by the tools of every MCP server of this plugin. */
  names: Set<string>;
  retryBaseMs: number;
  retryMaxMs: number;
  clock?: RetryClock;
}

type State = 'idle' | 'connecting' | 'connected' | 'waiting' | 'invalid' | 'stopped';
/** A state in Chinese, for the health detail. */
const STATE_ZH: Record<State, string> = {
  idle: '空闲',
  connecting: '正在连接',
  connected: '已连接',
  waiting: '等待重试',
  invalid: '配置无效',
  stopped: '已停止',
};

interface Session {
  client: Client;
  generation: number;
}

export class McpServerConnection {
  readonly name: string;
  readonly #config: McpServerConfig;
  readonly #options: ConnectionOptions;
  readonly #log: Logger;
  readonly #timeoutMs: number;
  readonly #clock: RetryClock;
  #state: State = 'idle';
  #problem: string | undefined;
  #failures = 0;
  #retryTimer: { cancel(): void } | undefined;
  #retryAt = 0;
  #connectedAt = 0;
  /** Bumped for every connection attempt; events of older clients are ignored. */
  #generation = 0;
  #session: Session | undefined;
  #attempt: Promise<void> | undefined;
  #refreshing: Promise<void> | undefined;
  #refreshAgain = false;
  /** Signals of the set-up requests under way, which stop() aborts. */
  readonly #inFlight = new Set<AbortController>();
  #registered: Array<{ name: string; unregister: () => void }> = [];
  #stderrTail: string[] = [];

  constructor(name: string, config: McpServerConfig, options: ConnectionOptions) {
    this.name = name;
    this.#config = config;
    this.#options = options;
    this.#log = options.ctx.log;
    this.#timeoutMs = config.timeout_ms ?? DEFAULT_TIMEOUT_MS;
    this.#clock = options.clock ?? systemRetryClock;
  }

  /** Registry names of this server's tools, in the order the server listed them. */
  get toolNames(): string[] {
    return this.#registered.map((tool) => tool.name);
  }

  /** Makes the first connection attempt; resolves when it succeeded or failed (a failure schedules a retry). */
  start(): Promise<void> {
    const problem = configProblem(this.#config);
    if (problem) {
      this.#state = 'invalid';
      this.#problem = problem;
      this.#log.error({ server: this.name }, `MCP server ${this.name} is not usable: ${problem}`);
      return Promise.resolve();
    }
    return this.#connect();
  }

  async stop(): Promise<void> {
    this.#state = 'stopped';
    for (const abort of this.#inFlight) abort.abort();
    this.#retryTimer?.cancel();
    this.#retryTimer = undefined;
    // Aborting ends a pending connect or listing at once; its own cleanup closes that client.
    await this.#attempt;
    await this.#refreshing;
    this.#uninstall();
    const session = this.#session;
    this.#session = undefined;
    if (session) await this.#close(session.client);
  }

  health(): Required<PluginHealth> {
    // The problem is the server's or the SDK's own text.
    switch (this.#state) {
      case 'connected':
        return {
          ok: true,
          detail: `server ${this.name}: connected, ${this.#registered.length} tools`,
          detail_zh: `服务器 ${this.name}：已连接，${this.#registered.length} 个工具`,
        };
      case 'waiting': {
        const seconds = Math.max(0, Math.ceil((this.#retryAt - this.#clock.now()) / 1000));
        return {
          ok: false,
          detail: `server ${this.name}: ${this.#problem ?? 'unavailable'}; retrying in ${seconds} s`,
          detail_zh: `服务器 ${this.name}：${this.#problem ?? '不可用'}；${seconds} s 后重试`,
        };
      }
      case 'invalid':
        return {
          ok: false,
          detail: `server ${this.name}: ${this.#problem ?? 'invalid configuration'}`,
          detail_zh: `服务器 ${this.name}：${this.#problem ?? '配置无效'}`,
        };
      default:
        return { ok: false, detail: `server ${this.name}: ${this.#state}`, detail_zh: `服务器 ${this.name}：${STATE_ZH[this.#state]}` };
    }
  }

  #connect(): Promise<void> {
    const attempt = this.#tryConnect().finally(() => {
      if (this.#attempt === attempt) this.#attempt = undefined;
    });
    this.#attempt = attempt;
    return attempt;
  }

  async #tryConnect(): Promise<void> {
    const generation = ++this.#generation;
    this.#state = 'connecting';
    this.#stderrTail = [];
    const client = new Client(CLIENT_INFO, { capabilities: {} });
    client.onerror = (error) => this.#log.debug({ server: this.name, err: error }, `MCP server ${this.name}: transport error`);
    client.onclose = () => this.#lost(generation);
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => this.#refresh(generation));
    try {
      const transport = createTransport(this.#config);
      this.#watchStderr(transport);
      await this.#setupRequest((options) => client.connect(transport, options));
      const tools = await this.#listTools(client);
      if (this.#stopped()) throw new Error('stopping');
      this.#session = { client, generation };
      this.#install(tools);
      this.#state = 'connected';
      this.#connectedAt = this.#clock.now();
      this.#problem = undefined;
      this.#log.info(
        { server: this.name, transport: this.#config.transport, tools: this.#registered.length },
        `MCP server ${this.name} connected with ${this.#registered.length} tools`,
      );
    } catch (error) {
      await this.#close(client);
      if (this.#stopped()) return;
      this.#log.debug({ server: this.name, err: error }, `MCP server ${this.name}: connection attempt failed`);
      this.#failed(`${shorten(problemOf(error))}${this.#stderrSummary()}`);
    }
  }

  /** A method, not a field check, because TypeScript's narrowing does not know that stop() runs during the awaits. */
  #stopped(): boolean {
    return this.#state === 'stopped';
  }

  /** The connection of `generation` ended without us closing it (the server exited or dropped it). */
  #lost(generation: number): void {
    if (this.#session?.generation !== generation || this.#state !== 'connected') return;
    // Backoff starts over only after a connection that lasted: a server that dies right after
    // every start keeps backing off instead of being restarted every second.
    if (this.#clock.now() - this.#connectedAt >= STABLE_CONNECTION_MS) this.#failures = 0;
    this.#session = undefined;
    this.#uninstall();
    this.#failed(`the server closed the connection${this.#stderrSummary()}`);
  }

  #failed(problem: string): void {
    this.#state = 'waiting';
    this.#problem = problem;
    this.#failures++;
    const delay = Math.min(this.#options.retryBaseMs * 2 ** (this.#failures - 1), this.#options.retryMaxMs);
    this.#retryAt = this.#clock.now() + delay;
    this.#log.warn({ server: this.name, retry_in_ms: delay, failures: this.#failures }, `MCP server ${this.name} unavailable: ${problem}`);
    this.#retryTimer = this.#clock.setTimer(() => {
      this.#retryTimer = undefined;
      void this.#connect();
    }, delay);
  }

  async #close(client: Client): Promise<void> {
    try {
      // For stdio this ends the child: stdin closed, then SIGTERM, then SIGKILL (the SDK's sequence).
      await client.close();
    } catch (error) {
      this.#log.debug({ server: this.name, err: error }, `MCP server ${this.name}: close failed`);
    }
  }

  /**
   * Runs one set-up request (initialize, a tools/list page) with a signal of its own that stop()
   * aborts. Not one signal for all: the SDK never removes the listener it adds to a request's
   * signal, so a shared one would gather a listener per request for as long as a server is retried.
   */
  async #setupRequest<T>(send: (options: { signal: AbortSignal; timeout: number }) => Promise<T>): Promise<T> {
    const abort = new AbortController();
    if (this.#stopped()) abort.abort();
    this.#inFlight.add(abort);
    try {
      return await send({ signal: abort.signal, timeout: Math.max(this.#timeoutMs, MIN_SETUP_TIMEOUT_MS) });
    } finally {
      this.#inFlight.delete(abort);
    }
  }

  /** Every page of tools/list, read leniently: one malformed tool is skipped, not the whole server. */
  async #listTools(client: Client): Promise<RemoteTool[]> {
    const tools: RemoteTool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_LIST_PAGES; page++) {
      const params = cursor === undefined ? {} : { cursor };
      const result = await this.#setupRequest((options) =>
        client.request({ method: 'tools/list', params }, PaginatedResultSchema, options),
      );
      for (const entry of Array.isArray(result.tools) ? result.tools : []) {
        const tool = this.#remoteTool(entry);
        if (tool) tools.push(tool);
      }
      cursor = result.nextCursor;
      if (cursor === undefined) return tools;
    }
    this.#log.warn(
      { server: this.name },
      `MCP server ${this.name} lists more than ${MAX_LIST_PAGES} pages of tools; the rest are left out`,
    );
    return tools;
  }

  #remoteTool(entry: unknown): RemoteTool | undefined {
    const tool = (typeof entry === 'object' && entry !== null ? entry : {}) as Record<string, unknown>;
    if (typeof tool.name !== 'string' || tool.name === '') {
      this.#log.warn({ server: this.name }, `MCP server ${this.name} listed a tool without a name; skipped`);
      return undefined;
    }
    const inputSchema = objectSchema(tool.inputSchema);
    if (!inputSchema) {
      this.#log.warn({ server: this.name, tool: tool.name }, `MCP tool ${tool.name} skipped: its inputSchema is not an object schema`);
      return undefined;
    }
    const text = [tool.description, tool.title, tool.name].find((value) => typeof value === 'string' && value.trim() !== '') as string;
    return { name: tool.name, description: text, inputSchema };
  }

  /** Replaces this server's tools in the registry by `tools`. */
  #install(tools: readonly RemoteTool[]): void {
    this.#uninstall();
    for (const tool of tools) this.#register(tool);
  }

  #uninstall(): void {
    for (const tool of this.#registered) {
      tool.unregister();
      this.#options.names.delete(tool.name);
    }
    this.#registered = [];
  }

  #register(tool: RemoteTool): void {
    const { ctx, names } = this.#options;
    const definition = {
      description: cut(`[MCP ${this.name}] ${tool.description}`, MAX_DESCRIPTION_CHARS),
      parameters: tool.inputSchema,
      tier: this.#config.tier ?? DEFAULT_TIER,
      timeout_ms: this.#timeoutMs + REGISTRY_TIMEOUT_GRACE_MS,
      execute: (args: Record<string, unknown>, context: ToolContext) => this.#call(tool.name, args, context),
    };
    for (const name of toolNameCandidates(this.name, tool.name)) {
      if (names.has(name)) continue;
      try {
        const unregister = ctx.tools.register({ name, ...definition });
        names.add(name);
        this.#registered.push({ name, unregister });
        return;
      } catch (error) {
        // Taken by another plugin: try the next suffix. Anything else (a schema the registry
        // cannot compile) would fail under every name.
        if (error instanceof Error && error.message.includes('already registered')) continue;
        this.#log.warn({ server: this.name, tool: tool.name, err: error }, `MCP tool ${tool.name} skipped: ${describe(error)}`);
        return;
      }
    }
    this.#log.warn({ server: this.name, tool: tool.name }, `MCP tool ${tool.name} skipped: no free name`);
  }

  async #call(tool: string, args: Record<string, unknown>, context: ToolContext): Promise<string> {
    const session = this.#session;
    if (!session || this.#state !== 'connected') {
      throw new ToolError({
        reason: 'unavailable',
        detail: `MCP server ${this.name} is not connected${this.#problem ? `: ${this.#problem}` : ''}`,
        hint: 'try again later',
      });
    }
    // A remote program acting for the household is audited like a command run; the arguments are
    // left out because they may carry what the server needs to log in somewhere.
    if ((this.#config.tier ?? DEFAULT_TIER) !== 'read') {
      this.#options.ctx.audit('mcp.call', { server: this.name, tool, task_id: context.task_id, call_id: context.call_id });
    }
    let result: Record<string, unknown>;
    try {
      result = await session.client.callTool({ name: tool, arguments: args }, undefined, {
        signal: context.signal,
        timeout: this.#timeoutMs,
      });
    } catch (error) {
      // A streamable HTTP server that restarted has forgotten our session: connect afresh.
      if (error instanceof StreamableHTTPError && error.code === 404) void this.#close(session.client);
      throw callFailure(this.name, error, this.#timeoutMs, context.signal.aborted);
    }
    const text = renderCallResult(result);
    if (result.isError === true) {
      throw new ToolError({ reason: 'failed', detail: text !== '' ? text : `MCP tool ${tool} reported an error without details` });
    }
    return text !== '' ? text : '(no content)';
  }

  /** Handles notifications/tools/list_changed: one listing at a time, and one more if another notice came meanwhile. */
  #refresh(generation: number): void {
    if (this.#refreshing) {
      this.#refreshAgain = true;
      return;
    }
    this.#refreshing = (async () => {
      do {
        this.#refreshAgain = false;
        const session = this.#session;
        if (session?.generation !== generation || this.#state !== 'connected') break;
        try {
          const tools = await this.#listTools(session.client);
          if (this.#session !== session || this.#state !== 'connected') break;
          this.#install(tools);
          this.#log.info({ server: this.name, tools: this.#registered.length }, `MCP server ${this.name} changed its tools`);
        } catch (error) {
          this.#log.warn(
            { server: this.name, err: error },
            `MCP server ${this.name}: changed tools could not be listed; keeping the old ones`,
          );
        }
      } while (this.#refreshAgain);
      this.#refreshing = undefined;
    })();
  }

  #watchStderr(transport: McpTransport): void {
    if (!(transport instanceof StdioClientTransport)) return;
    let partial = '';
    transport.stderr?.on('data', (chunk: Buffer | string) => {
      const lines = (partial + chunk.toString()).split('\n');
      partial = (lines.pop() ?? '').slice(-STDERR_LINE_CHARS);
      for (const line of lines) {
        const text = line.trimEnd().slice(0, STDERR_LINE_CHARS);
        if (text === '') continue;
        this.#stderrTail.push(text);
        if (this.#stderrTail.length > STDERR_TAIL_LINES) this.#stderrTail.shift();
        this.#log.debug({ server: this.name, stderr: text }, `MCP server ${this.name} stderr`);
      }
    });
  }

  #stderrSummary(): string {
    return this.#stderrTail.length > 0 ? ` (stderr: ${this.#stderrTail.join(' | ')})` : '';
  }
}

/** The tool's inputSchema as an object schema: a missing one accepts no particular arguments, one without `type` gets it. */
function objectSchema(schema: unknown): JsonSchema | undefined {
  if (schema === undefined || schema === null) return { type: 'object' };
  if (typeof schema !== 'object' || Array.isArray(schema)) return undefined;
  const record = schema as JsonSchema;
  if (record.type === undefined) return { ...record, type: 'object' };
  return record.type === 'object' ? record : undefined;
}

/** A schema failure of the SDK (its message is the issues as pages of JSON) as the fields at fault; anything else as described. */
function problemOf(error: unknown): string {
  const issues = (error as { issues?: unknown } | null)?.issues;
  if (!Array.isArray(issues)) return describe(error);
  const fields = issues.slice(0, 3).map((issue: { path?: unknown; message?: unknown }) => {
    const path = Array.isArray(issue.path) && issue.path.length > 0 ? issue.path.join('.') : 'the message';
    return `${path}: ${typeof issue.message === 'string' ? issue.message : 'invalid'}`;
  });
  return `the server's answer does not follow the MCP schema (${fields.join('; ')})`;
}

/** A failure as health() and the log show it: one line of reasonable length (a schema error from the SDK is pages of JSON; the debug log has it whole). */
function shorten(problem: string): string {
  return cut(problem.replace(/\s+/g, ' ').trim(), MAX_PROBLEM_CHARS);
}

function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

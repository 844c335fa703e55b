/**
 * The mcp plugin: a Model Context Protocol client. Every enabled server in plugin.mcp.servers
 * (a local program over stdio, or a streamable HTTP endpoint) is connected at start and its tools
 * appear as `mcp_<server>_<tool>`. A server that is down is reported by health() and retried; it
 * never keeps the plugin or the other servers from working.
 */
import { definePlugin, type PluginContext, type PluginHealth, type PluginInstance } from '../../src/sdk/index.js';
import type { McpServerConnection, RetryClock } from './server-connection.js';
import type { McpSettings } from './settings-schema.js';

export interface McpPluginOptions {
  /** First wait before reconnecting a server; it doubles with every failure. */
  retryBaseMs?: number;
  retryMaxMs?: number;
  /**
   * How long start() waits for the first connection attempts. Slower servers (an npx download,
   * a far-away endpoint) keep connecting afterwards and their tools appear when they are ready.
   */
  startWaitMs?: number;
  /** Time for the reconnect waits (tests drive a manual one). */
  clock?: RetryClock;
}

const RETRY_BASE_MS = 1000;
const RETRY_MAX_MS = 300_000;
const START_WAIT_MS = 10_000;

export class McpPlugin implements PluginInstance {
  readonly #ctx: PluginContext<McpSettings>;
  readonly #options: Required<Omit<McpPluginOptions, 'clock'>> & Pick<McpPluginOptions, 'clock'>;
  #connections: McpServerConnection[] = [];

  constructor(ctx: PluginContext<McpSettings>, options: McpPluginOptions = {}) {
    this.#ctx = ctx;
    this.#options = {
      retryBaseMs: options.retryBaseMs ?? RETRY_BASE_MS,
      retryMaxMs: options.retryMaxMs ?? RETRY_MAX_MS,
      startWaitMs: options.startWaitMs ?? START_WAIT_MS,
      ...(options.clock !== undefined && { clock: options.clock }),
    };
  }

  /** The connections, by server name (for tests and diagnostics). */
  get servers(): ReadonlyMap<string, McpServerConnection> {
    return new Map(this.#connections.map((connection) => [connection.name, connection]));
  }

  async start(signal: AbortSignal): Promise<void> {
    const servers = this.#ctx.settings.get('servers');
    if (!Object.values(servers).some((config) => config.enabled !== false)) return;
    // The MCP SDK costs about 10 MB of memory: it is loaded only when a server is configured.
    const { McpServerConnection } = await import('./server-connection.js');
    const names = new Set<string>();
    for (const [name, config] of Object.entries(servers)) {
      if (config.enabled === false) {
        this.#ctx.log.info({ server: name }, `MCP server ${name} is disabled`);
        continue;
      }
      this.#connections.push(
        new McpServerConnection(name, config, {
          ctx: this.#ctx,
          names,
          retryBaseMs: this.#options.retryBaseMs,
          retryMaxMs: this.#options.retryMaxMs,
          ...(this.#options.clock !== undefined && { clock: this.#options.clock }),
        }),
      );
    }
    await waitAtMost(Promise.all(this.#connections.map((connection) => connection.start())), this.#options.startWaitMs, signal);
  }

  async stop(): Promise<void> {
    const connections = this.#connections;
    this.#connections = [];
    await Promise.all(connections.map((connection) => connection.stop()));
  }

  health(): Required<PluginHealth> {
    if (this.#connections.length === 0) return { ok: true, detail: 'no MCP servers configured', detail_zh: '没有配置 MCP 服务器' };
    const answers = this.#connections.map((connection) => connection.health());
    const failing = answers.filter((answer) => !answer.ok);
    const shown = failing.length > 0 ? failing : answers;
    return {
      ok: failing.length === 0,
      detail: shown.map((answer) => answer.detail).join('; '),
      detail_zh: shown.map((answer) => answer.detail_zh).join('；'),
    };
  }
}

/** Resolves when `work` settles, `ms` passed or `signal` aborted, whichever comes first; never rejects. */
async function waitAtMost(work: Promise<unknown>, ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return;
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const deadline = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
    onAbort = resolve;
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    await Promise.race([
      work.then(
        () => undefined,
        () => undefined,
      ),
      deadline,
    ]);
  } finally {
    clearTimeout(timer);
    if (onAbort) signal.removeEventListener('abort', onAbort);
  }
}

export default definePlugin<McpSettings>((ctx) => new McpPlugin(ctx));

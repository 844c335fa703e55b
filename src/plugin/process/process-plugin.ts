/**
 * The runtime of out-of-process plugins (kind `process`): the plugin's JavaScript runs in a child
 * `node` process (child-runtime.ts) that the daemon talks to with JSON-RPC over stdio
 * (protocol.ts), with a heap limit, its data folder as working directory and home, an environment
 * built from nothing, and — unless core.plugins.process_permissions is off — Node's permission
 * model limiting its files to its own folders and the fs_paths its manifest declares. What Node 20
 * cannot enforce, and how that is made up for, is in docs/decisions/0002-process-plugins.md.
 *
 * A crash restarts the process after restart_backoff_ms · 2^(n-1); restart_max_crashes crashes
 * within restart_window_ms mark the plugin failed. While it is down its tools stay registered and
 * fail at once with HA_ERR_PLUGIN_DEAD saying when it comes back; its stage hooks, channels,
 * subscriptions and routes are removed and come back when the new process registers them again.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Value } from '@sinclair/typebox/value';
import type { PluginHealth, PluginInstance } from '../../sdk/plugin.js';
import { describeError, HomeAgentError, isHomeAgentError } from '../../shared/errors.js';
import type { ToolContext } from '../../shared/tool.js';
import type { PluginRuntime, RuntimeContext } from '../runtime.js';
import { childCommand } from './child-command.js';
import { CrashWindow } from './crash-window.js';
import { ForwardedTools } from './forwarded-tools.js';
import { findEscapingSymlinks, fsGrants } from './fs-grants.js';
import { HostBridge } from './host-bridge.js';
import { PluginChild } from './plugin-child.js';
import { HealthResultSchema, type InitParams, PROTOCOL_VERSION, ToolCallResultSchema } from './protocol.js';

type Phase = 'created' | 'starting' | 'running' | 'restarting' | 'failed' | 'stopping' | 'stopped';

/** Longest wait for a health answer (shorter when call_timeout_ms is). */
/** Longest wait for the plugin's own stop() before the process is terminated. */
const STOP_TIMEOUT_MS = 5000;
/** Between SIGTERM and SIGKILL. */
const KILL_GRACE_MS = 2000;

/** The runtime registered for kind `process`. */
export const createProcessPlugin: PluginRuntime = (context) => new ProcessPlugin(context);

export class ProcessPlugin implements PluginInstance {
  readonly #dc: RuntimeContext;
  readonly #name: string;
  readonly #tools: ForwardedTools;
  readonly #crashes = new CrashWindow();
  #phase: Phase = 'created';
  #child: PluginChild | undefined;
  #bridge: HostBridge | undefined;
  /** The process being started; its exit is the start's failure, not a crash. */
  #launching: PluginChild | undefined;
  #restartTimer: NodeJS.Timeout | undefined;
  #restartAt = 0;
  #lastCrash = '';
  #crashCount = 0;
  #unsubscribeSettings: (() => void) | undefined;
  #stopped: Promise<void> | undefined;

  constructor(context: RuntimeContext) {
    this.#dc = context;
    this.#name = context.manifest.name;
    this.#tools = new ForwardedTools(context.context, (name, args, toolContext) => this.#callTool(name, args, toolContext));
  }

  /** The running process's id (for diagnostics and the benchmark); undefined while it is down. */
  get pid(): number | undefined {
    return this.#child?.done === false ? this.#child.pid : undefined;
  }

  async start(signal: AbortSignal): Promise<void> {
    if (this.#phase !== 'created') throw new HomeAgentError('HA_ERR_PLUGIN_STATE', `plugin ${this.#name} was already started`);
    if (signal.aborted) throw new HomeAgentError('HA_ERR_ABORTED', `the start of plugin ${this.#name} was cancelled`);
    this.#phase = 'starting';
    this.#unsubscribeSettings = this.#dc.context.settings.onChange((key) => this.#settingChanged(key));
    try {
      await this.#launch(signal);
    } catch (error) {
      if (this.#phase === 'starting') this.#phase = 'stopped';
      this.#tools.clear();
      this.#unsubscribeSettings();
      throw error;
    }
    if (this.#phase === 'starting') this.#phase = 'running';
  }

  stop(): Promise<void> {
    this.#stopped ??= this.#stop();
    return this.#stopped;
  }

  async health(): Promise<PluginHealth> {
    const child = this.#child;
    if (this.#phase !== 'running' || !child) {
      const why = this.#deadError().message;
      return { ok: false, detail: why, detail_zh: why };
    }
    const timeoutMs = Math.min(this.#dc.limits().health_timeout_ms, this.#dc.limits().call_timeout_ms);
    let answer: unknown;
    try {
      answer = await child.call('plugin.health', {}, { timeoutMs, fallback: 'HA_ERR_PLUGIN_STATE' }).result;
    } catch (error) {
      const why = describeError(error);
      return { ok: false, detail: why, detail_zh: why };
    }
    if (!Value.Check(HealthResultSchema, answer)) {
      return { ok: false, detail: 'the health answer is not {ok, detail}', detail_zh: '健康应答不是 {ok, detail} 的形式' };
    }
    const memory = this.#checkMemory(child);
    if (memory) return { ok: false, detail: memory.en, detail_zh: memory.zh };
    return { ok: answer.ok, detail: answer.detail, ...(answer.detail_zh === undefined ? {} : { detail_zh: answer.detail_zh }) };
  }

  /** Spawns a process, loads and starts the plugin in it; on any failure the process is gone when this throws. */
  async #launch(signal?: AbortSignal): Promise<void> {
    const limits = this.#dc.limits();
    const command = childCommand(this.#dc, limits);
    if (limits.process_permissions) this.#checkSymlinks();
    const bridge = new HostBridge({
      context: this.#dc.context,
      tools: this.#tools,
      limits: this.#dc.limits,
      log: this.#dc.log,
      starting: () => this.#launching === child,
    });
    const child = PluginChild.spawn(command, this.#name, bridge, this.#dc.log, limits.process_heap_mb);
    bridge.attach(child);
    this.#child = child;
    this.#bridge = bridge;
    this.#launching = child;
    void child.exited.then((exit) => this.#onExit(child, bridge, exit.reason));
    const onAbort = () => child.kill('its start was cancelled');
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const timeoutMs = limits.call_timeout_ms;
      await child.call('plugin.init', this.#initParams(), { timeoutMs, fallback: 'HA_ERR_PLUGIN_LOAD' }).result;
      await child.call('plugin.start', {}, { timeoutMs, fallback: 'HA_ERR_PLUGIN_START' }).result;
      // Every registration the child sent before its answer has been handled: messages arrive in order.
      const refused = bridge.refused[0];
      if (refused) throw refused;
      this.#tools.retainOnly(bridge.toolNames);
    } catch (error) {
      child.kill(`its start failed: ${describeError(error)}`);
      await child.exited;
      bridge.dispose();
      if (this.#child === child) {
        this.#child = undefined;
        this.#bridge = undefined;
      }
      if (signal?.aborted) throw new HomeAgentError('HA_ERR_ABORTED', `the start of plugin ${this.#name} was cancelled`);
      throw error;
    } finally {
      this.#launching = undefined;
      signal?.removeEventListener('abort', onAbort);
    }
  }

  #initParams(): InitParams {
    const { context, manifest, dir } = this.#dc;
    const settings: Record<string, unknown> = {};
    for (const key of Object.keys(manifest.config ?? {})) {
      try {
        settings[key] = context.settings.get(key);
      } catch (error) {
        this.#dc.log.warn({ err: error, key }, `plugin ${this.#name}: setting ${key} could not be read`);
      }
    }
    let controlMethods: InitParams['control_methods'] = [];
    try {
      controlMethods = context.control.methods();
    } catch {
      // Restricted plugins have no control API; their methods() is empty.
    }
    return {
      protocol: PROTOCOL_VERSION,
      name: this.#name,
      trust: context.trust,
      entry: join(dir, manifest.entry),
      paths: { ...context.paths },
      settings,
      control_methods: controlMethods,
      knowledge_available: context.knowledge.available(),
      log_level: typeof context.log.level === 'string' ? context.log.level : 'info',
    };
  }

  /** Node's permission model follows symbolic links anywhere; a link out of the granted folders would open what it points to. */
  #checkSymlinks(): void {
    const grants = fsGrants(this.#dc);
    const scan = findEscapingSymlinks([this.#dc.dir, this.#dc.context.paths.data], grants.read);
    if (scan.truncated) this.#dc.log.warn(`plugin ${this.#name}: too many files to check them all for symbolic links`);
    if (scan.escapes.length > 0) {
      throw new HomeAgentError(
        'HA_ERR_PLUGIN_PERMISSION',
        `plugin ${this.#name} has symbolic links leading outside what it may read: ${scan.escapes.slice(0, 3).join(', ')}`,
      );
    }
  }

  #onExit(child: PluginChild, bridge: HostBridge, reason: string): void {
    bridge.dispose();
    if (child !== this.#child) return;
    this.#child = undefined;
    this.#bridge = undefined;
    // A start handles its own process's death; a stop asked for it.
    if (this.#launching === child || this.#phase !== 'running') return;
    this.#crashed(reason);
  }

  #crashed(reason: string): void {
    if (this.#phase === 'stopping' || this.#phase === 'stopped') return;
    this.#lastCrash = reason;
    const limits = this.#dc.limits();
    const decision = this.#crashes.record(Date.now(), limits);
    this.#crashCount = decision.crashes;
    if (decision.give_up) {
      this.#phase = 'failed';
      const detail = `crashed ${decision.crashes} times within ${formatMs(limits.restart_window_ms)} (last: ${reason}); not restarted`;
      this.#dc.log.error({ plugin: this.#name, crashes: decision.crashes }, `plugin ${this.#name} ${detail}`);
      this.#dc.reportState('failed', detail);
      return;
    }
    this.#phase = 'restarting';
    this.#restartAt = Date.now() + decision.delay_ms;
    this.#dc.log.warn(
      { plugin: this.#name, crashes: decision.crashes, delay_ms: decision.delay_ms },
      `plugin ${this.#name} crashed: ${reason}`,
    );
    this.#dc.reportState('restarting', `crashed (${reason}); restarting in ${formatMs(decision.delay_ms)}`);
    this.#restartTimer = setTimeout(() => void this.#restart(), decision.delay_ms);
  }

  async #restart(): Promise<void> {
    this.#restartTimer = undefined;
    if (this.#phase !== 'restarting') return;
    this.#restartAt = 0;
    try {
      await this.#launch();
    } catch (error) {
      if (this.#phase !== 'restarting') return;
      this.#crashed(`its restart failed: ${describeError(error)}`);
      return;
    }
    if (this.#phase !== 'restarting') return;
    this.#phase = 'running';
    this.#dc.log.info({ plugin: this.#name }, `plugin ${this.#name} is running again`);
    this.#dc.reportState('running');
  }

  async #stop(): Promise<void> {
    this.#phase = 'stopping';
    clearTimeout(this.#restartTimer);
    this.#unsubscribeSettings?.();
    const child = this.#child;
    if (child && !child.done) {
      try {
        const timeoutMs = Math.min(STOP_TIMEOUT_MS, this.#dc.limits().call_timeout_ms);
        await child.call('plugin.stop', {}, { timeoutMs, fallback: 'HA_ERR_PLUGIN_STATE' }).result;
      } catch (error) {
        this.#dc.log.warn({ err: error }, `plugin ${this.#name} did not stop cleanly: ${describeError(error)}`);
      }
      await child.terminate(KILL_GRACE_MS);
    }
    this.#bridge?.dispose();
    this.#child = undefined;
    this.#bridge = undefined;
    this.#tools.clear();
    this.#phase = 'stopped';
  }

  async #callTool(name: string, args: Record<string, unknown>, toolContext: ToolContext): Promise<unknown> {
    const child = this.#child;
    if (this.#phase !== 'running' || !child || child.done) throw this.#deadError();
    const { signal } = toolContext;
    if (signal.aborted) throw abortError(signal);
    const limits = this.#dc.limits();
    const { id, result } = child.call(
      'tool.call',
      {
        name,
        args,
        context: {
          task_id: toolContext.task_id,
          call_id: toolContext.call_id,
          source: toolContext.source,
          channel: toolContext.channel,
          trust: toolContext.trust,
        },
      },
      { timeoutMs: limits.call_timeout_ms, fallback: 'HA_ERR_TOOL_FAILED' },
    );
    const onAbort = () => {
      child.peer.notify('tool.cancel', { id });
      child.peer.cancel(id, abortError(signal));
    };
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      const answer = await result;
      if (!Value.Check(ToolCallResultSchema, answer))
        throw new HomeAgentError('HA_ERR_PLUGIN_PROTOCOL', `plugin ${this.#name}: malformed answer to ${name}`);
      return answer.value;
    } catch (error) {
      if (isHomeAgentError(error, 'HA_ERR_PLUGIN_TIMEOUT')) {
        child.peer.notify('tool.cancel', { id });
        void this.#probe(child);
      }
      throw error;
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }

  /** After a call timed out: a process that cannot even answer a ping has a stuck event loop and is killed (and restarted). */
  async #probe(child: PluginChild): Promise<void> {
    const timeoutMs = Math.min(this.#dc.limits().health_timeout_ms, this.#dc.limits().call_timeout_ms);
    try {
      await child.call('plugin.health', {}, { timeoutMs, fallback: 'HA_ERR_PLUGIN_STATE' }).result;
    } catch (error) {
      if (isHomeAgentError(error, 'HA_ERR_PLUGIN_TIMEOUT') && child === this.#child) {
        this.#dc.log.error(`plugin ${this.#name} stopped answering; killing it`);
        child.kill(`stopped answering (a call timed out and a ping got no answer within ${timeoutMs} ms)`);
      }
    }
  }

  /**
   * Memory outside the V8 heap (Buffers, ArrayBuffers) is not bounded by --max-old-space-size, so
   * the health check also looks at the process's resident size and kills a process far above its
   * heap limit (it then restarts like any crash).
   */
  #checkMemory(child: PluginChild): { en: string; zh: string } | undefined {
    const pid = child.pid;
    if (pid === undefined) return undefined;
    const rssMb = residentMb(pid);
    const limitMb = this.#dc.limits().process_heap_mb * 2 + 64;
    if (rssMb === undefined || rssMb <= limitMb) return undefined;
    const reason = `used ${Math.round(rssMb)} MB of memory, more than ${limitMb} MB (twice the heap limit plus 64 MB)`;
    this.#dc.log.error(`plugin ${this.#name} ${reason}; killing it`);
    child.kill(reason);
    return { en: reason, zh: `内存用了 ${Math.round(rssMb)} MB，超过 ${limitMb} MB（堆上限的两倍加 64 MB）` };
  }

  #settingChanged(key: string): void {
    const child = this.#child;
    if (!child || child.done) return;
    let value: unknown;
    try {
      value = this.#dc.context.settings.get(key);
    } catch {
      return;
    }
    child.peer.notify('settings.changed', { key, value });
  }

  #deadError(): HomeAgentError {
    const plugin = this.#name;
    let message: string;
    let restartInMs: number | undefined;
    switch (this.#phase) {
      case 'restarting': {
        restartInMs = Math.max(0, this.#restartAt - Date.now());
        message =
          this.#restartAt === 0 || restartInMs === 0
            ? `plugin ${plugin} is not running: it crashed (${this.#lastCrash}) and is restarting now`
            : `plugin ${plugin} is not running: it crashed (${this.#lastCrash}) and restarts in about ${formatMs(restartInMs)}`;
        break;
      }
      case 'failed':
        message = `plugin ${plugin} is not running: it crashed ${this.#crashCount} times (last: ${this.#lastCrash}) and will not restart until it is reloaded`;
        break;
      case 'created':
      case 'starting':
        message = `plugin ${plugin} is not running yet: it is starting`;
        break;
      default:
        message = `plugin ${plugin} is not running: it was stopped`;
    }
    return new HomeAgentError('HA_ERR_PLUGIN_DEAD', message, {
      details: { plugin, state: this.#phase, ...(restartInMs === undefined ? {} : { restart_in_ms: restartInMs }) },
    });
  }
}

function abortError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return reason instanceof HomeAgentError ? reason : new HomeAgentError('HA_ERR_ABORTED', 'the call was cancelled');
}

/** VmRSS of a process in MB, from /proc (undefined where there is no /proc). */
export function residentMb(pid: number): number | undefined {
  try {
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

function formatMs(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  if (ms < 120_000) return `${Math.round(ms / 100) / 10} s`;
  return `${Math.round(ms / 60_000)} min`;
}

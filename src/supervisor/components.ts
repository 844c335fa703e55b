/**
 * The supervisor's components: how each measurement becomes ok | degraded | failed, and the book
 * that remembers since when each component is in its status and how many checks in a row failed.
 * Kept free of timers and I/O so every rule can be tested with plain values.
 *
 * Failed means "HomeAgent is broken here and something must happen" (the watchdog stops, a change
 * on trial is rolled back); degraded means "works, with something off" (a model or a sensor is
 * unreachable: the house keeps working offline, so it never stops the watchdog).
 */

import type { ComponentHealth, ComponentStatus } from '../api/health.js';
import type { TrialState } from '../tracker/change-types.js';
import type { MemoryUsage } from './memory-usage.js';

export interface ComponentResult {
  name: string;
  kind: ComponentHealth['kind'];
  status: ComponentStatus;
  detail: string;
}

/** The kernel components, in the order they are shown. */
export const KERNEL_COMPONENTS = ['event_loop', 'state_db', 'memory', 'llm', 'devices', 'tracker'] as const;

/** Above this share of the limit the memory component is degraded. */
export const MEMORY_DEGRADED_SHARE = 0.8;

const MIB = 1024 * 1024;
/** How many devices or sources a detail names before it only counts the rest. */
const NAMED_IN_DETAIL = 5;

const STATUS_RANK: Record<ComponentStatus, number> = { ok: 0, degraded: 1, failed: 2 };

export function worstStatus(statuses: Iterable<ComponentStatus>): ComponentStatus {
  let worst: ComponentStatus = 'ok';
  for (const status of statuses) if (STATUS_RANK[status] > STATUS_RANK[worst]) worst = status;
  return worst;
}

export function pluginComponentName(plugin: string): string {
  return `plugin:${plugin}`;
}

/** How a component is named in a sentence (rollback announcements). */
export function describeComponent(name: string): string {
  if (name.startsWith('plugin:')) return `plugin ${name.slice('plugin:'.length)}`;
  const names: Record<string, string> = {
    event_loop: 'the event loop',
    state_db: 'the state database',
    memory: 'memory use',
    llm: 'the language models',
    devices: 'the devices',
    tracker: 'the change tracker',
  };
  return names[name] ?? name;
}

/** The longest stall of the event loop since the last look, against core.supervisor.max_loop_delay_ms. */
export function loopComponent(worstStallMs: number, limitMs: number): ComponentResult {
  const stall = Math.round(worstStallMs);
  return {
    name: 'event_loop',
    kind: 'kernel',
    status: worstStallMs > limitMs ? 'failed' : 'ok',
    detail: `longest event-loop stall ${stall} ms (limit ${limitMs} ms)`,
  };
}

/** `checkWritable` throws when the state database cannot take a write (disk full, read-only, corrupt). */
export function stateDbComponent(checkWritable: () => void): ComponentResult {
  try {
    checkWritable();
    return { name: 'state_db', kind: 'kernel', status: 'ok', detail: 'state database takes writes' };
  } catch (error) {
    return { name: 'state_db', kind: 'kernel', status: 'failed', detail: errorText(error) };
  }
}

/** The limit is core.supervisor.memory_limit_mb or the cgroup's memory.max, whichever is lower. */
export function memoryComponent(usage: MemoryUsage, limitMb: number): ComponentResult {
  const configured = limitMb * MIB;
  const fromCgroup = usage.cgroup_limit_bytes !== null && usage.cgroup_limit_bytes < configured;
  const limit = fromCgroup ? (usage.cgroup_limit_bytes as number) : configured;
  const status: ComponentStatus = usage.rss_bytes > limit ? 'failed' : usage.rss_bytes > MEMORY_DEGRADED_SHARE * limit ? 'degraded' : 'ok';
  const source = fromCgroup ? 'cgroup memory limit' : 'core.supervisor.memory_limit_mb';
  return {
    name: 'memory',
    kind: 'kernel',
    status,
    detail: `resident ${mb(usage.rss_bytes)} MB of ${mb(limit)} MB (${source}, ${Math.round((100 * usage.rss_bytes) / limit)} %)`,
  };
}

export interface SourceProbe {
  name: string;
  base_url: string;
  reachable: boolean;
  detail: string;
}

/** Unreachable sources degrade, never fail: the local intent engine and automations still run. */
export function llmComponent(probes: readonly SourceProbe[]): ComponentResult {
  if (probes.length === 0) return { name: 'llm', kind: 'kernel', status: 'ok', detail: 'no language model configured' };
  const down = probes.filter((p) => !p.reachable);
  if (down.length === 0) {
    const count = probes.length === 1 ? '1 source' : `${probes.length} sources`;
    return { name: 'llm', kind: 'kernel', status: 'ok', detail: `${count} reachable` };
  }
  // Named, not their URLs: a base URL may carry credentials, and this detail is shown everywhere.
  const named = down.map((p) => `${p.name} (${p.detail})`);
  return {
    name: 'llm',
    kind: 'kernel',
    status: 'degraded',
    detail: `unreachable: ${listSome(named)}${down.length < probes.length ? `; ${probes.length - down.length} reachable` : ''}`,
  };
}

export function devicesComponent(inError: ReadonlyArray<{ id: string; detail: string }>): ComponentResult {
  if (inError.length === 0) return { name: 'devices', kind: 'kernel', status: 'ok', detail: 'no device reports an error' };
  const named = inError.map((d) => `${d.id} (${d.detail})`);
  const count = inError.length === 1 ? '1 device' : `${inError.length} devices`;
  return { name: 'devices', kind: 'kernel', status: 'degraded', detail: `${count} in error: ${listSome(named)}` };
}

/** The tracker is healthy by itself; it shows what is on trial. */
export function trackerComponent(tracking: boolean, trial: TrialState | null): ComponentResult {
  const detail = !tracking
    ? 'change tracking is off'
    : trial === null
      ? 'no change on trial'
      : `trying change ${trial.change_set_ids.join(', ')}${trial.plugins.length > 0 ? ` on plugins ${trial.plugins.join(', ')}` : ''}`;
  return { name: 'tracker', kind: 'kernel', status: 'ok', detail };
}

/** PluginHost.health(): ok=false is failed (including a plugin restarting after a crash); disabled and stopped ones are ok. */
export function pluginComponent(health: { name: string; state: string; ok: boolean; detail: string }): ComponentResult {
  const detail = health.detail === '' || health.detail === health.state ? health.state : `${health.state}: ${health.detail}`;
  return { name: pluginComponentName(health.name), kind: 'plugin', status: health.ok ? 'ok' : 'failed', detail };
}

/** What changed when a result was recorded. */
export interface StatusChange {
  component: string;
  status: ComponentStatus;
  /** null the first time the component is seen. */
  previous: ComponentStatus | null;
  detail: string;
}

/** Each component's last result, since when it is in that status, and its failures in a row. */
export class ComponentBook {
  readonly #entries = new Map<string, ComponentHealth>();

  /** Records one check's result; answers the change, or undefined when the status stayed. */
  record(result: ComponentResult, at: string): StatusChange | undefined {
    const before = this.#entries.get(result.name);
    const same = before?.status === result.status;
    this.#entries.set(result.name, {
      name: result.name,
      kind: result.kind,
      status: result.status,
      detail: result.detail,
      since: same ? before.since : at,
      failures: result.status === 'failed' ? (same ? before.failures : 0) + 1 : 0,
    });
    if (same) return undefined;
    return { component: result.name, status: result.status, previous: before?.status ?? null, detail: result.detail };
  }

  /** Forgets the plugin components not in `present` (uninstalled plugins); answers their names. */
  forgetPluginsExcept(present: ReadonlySet<string>): string[] {
    const gone = [...this.#entries.values()].filter((e) => e.kind === 'plugin' && !present.has(e.name)).map((e) => e.name);
    for (const name of gone) this.#entries.delete(name);
    return gone;
  }

  get(name: string): ComponentHealth | undefined {
    return this.#entries.get(name);
  }

  /** Kernel components in their fixed order, then plugins by name. */
  list(): ComponentHealth[] {
    const order = (e: ComponentHealth) => {
      const index = (KERNEL_COMPONENTS as readonly string[]).indexOf(e.name);
      return index < 0 ? KERNEL_COMPONENTS.length : index;
    };
    return [...this.#entries.values()].sort((a, b) => order(a) - order(b) || a.name.localeCompare(b.name)).map((e) => ({ ...e }));
  }

  /** Failed kernel components (what the watchdog and a trial judge by). */
  failedKernel(): ComponentHealth[] {
    return this.list().filter((e) => e.kind === 'kernel' && e.status === 'failed');
  }
}

function mb(bytes: number): number {
  return Math.round(bytes / MIB);
}

function listSome(items: readonly string[]): string {
  const shown = items.slice(0, NAMED_IN_DETAIL).join(', ');
  return items.length > NAMED_IN_DETAIL ? `${shown} and ${items.length - NAMED_IN_DETAIL} more` : shown;
}

function errorText(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return typeof code === 'string' && !error.message.startsWith(code) ? `${code}: ${error.message}` : error.message;
  }
  return String(error);
}

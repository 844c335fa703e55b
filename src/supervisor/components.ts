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
  /** The same in Chinese: written beside the English one, so each message has one place. */
  detail_zh: string;
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
    detail_zh: `事件循环最长卡顿 ${stall} ms（上限 ${limitMs} ms）`,
  };
}

/** `checkWritable` throws when the state database cannot take a write (disk full, read-only, corrupt). */
export function stateDbComponent(checkWritable: () => void): ComponentResult {
  try {
    checkWritable();
    return { name: 'state_db', kind: 'kernel', status: 'ok', detail: 'state database takes writes', detail_zh: '状态数据库可以写入' };
  } catch (error) {
    const text = errorText(error);
    return { name: 'state_db', kind: 'kernel', status: 'failed', detail: text, detail_zh: `状态数据库无法写入：${text}` };
  }
}

/** The limit is core.supervisor.memory_limit_mb or the cgroup's memory.max, whichever is lower. */
export function memoryComponent(usage: MemoryUsage, limitMb: number): ComponentResult {
  const configured = limitMb * MIB;
  const fromCgroup = usage.cgroup_limit_bytes !== null && usage.cgroup_limit_bytes < configured;
  const limit = fromCgroup ? (usage.cgroup_limit_bytes as number) : configured;
  const status: ComponentStatus = usage.rss_bytes > limit ? 'failed' : usage.rss_bytes > MEMORY_DEGRADED_SHARE * limit ? 'degraded' : 'ok';
  const source = fromCgroup ? 'cgroup memory limit' : 'core.supervisor.memory_limit_mb';
  const sourceZh = fromCgroup ? 'cgroup 内存上限' : 'core.supervisor.memory_limit_mb';
  const share = Math.round((100 * usage.rss_bytes) / limit);
  return {
    name: 'memory',
    kind: 'kernel',
    status,
    detail: `resident ${mb(usage.rss_bytes)} MB of ${mb(limit)} MB (${source}, ${share} %)`,
    detail_zh: `常驻内存 ${mb(usage.rss_bytes)} MB，上限 ${mb(limit)} MB（${sourceZh}，${share} %）`,
  };
}

export interface SourceProbe {
  name: string;
  base_url: string;
  reachable: boolean;
  detail: string;
  detail_zh: string;
}

/** Unreachable sources degrade, never fail: the local intent engine and automations still run. */
export function llmComponent(probes: readonly SourceProbe[]): ComponentResult {
  if (probes.length === 0) {
    return { name: 'llm', kind: 'kernel', status: 'ok', detail: 'no language model configured', detail_zh: '没有配置语言模型' };
  }
  const down = probes.filter((p) => !p.reachable);
  if (down.length === 0) {
    const count = probes.length === 1 ? '1 source' : `${probes.length} sources`;
    return { name: 'llm', kind: 'kernel', status: 'ok', detail: `${count} reachable`, detail_zh: `${probes.length} 个来源可达` };
  }
  // Named, not their URLs: a base URL may carry credentials, and this detail is shown everywhere.
  const named = down.map((p) => `${p.name} (${p.detail})`);
  const namedZh = down.map((p) => `${p.name}（${p.detail_zh}）`);
  const up = probes.length - down.length;
  return {
    name: 'llm',
    kind: 'kernel',
    status: 'degraded',
    detail: `unreachable: ${listSome(named)}${up > 0 ? `; ${up} reachable` : ''}`,
    detail_zh: `不可达：${listSomeZh(namedZh)}${up > 0 ? `；${up} 个可达` : ''}`,
  };
}

export function devicesComponent(inError: ReadonlyArray<{ id: string; detail: string }>): ComponentResult {
  if (inError.length === 0) {
    return { name: 'devices', kind: 'kernel', status: 'ok', detail: 'no device reports an error', detail_zh: '没有设备报错' };
  }
  // A device's own detail (its error attribute) is the driver's text and stays as it is.
  const named = inError.map((d) => `${d.id} (${d.detail})`);
  const namedZh = inError.map((d) => `${d.id}（${d.detail === 'unavailable' ? '不可用' : d.detail}）`);
  const count = inError.length === 1 ? '1 device' : `${inError.length} devices`;
  return {
    name: 'devices',
    kind: 'kernel',
    status: 'degraded',
    detail: `${count} in error: ${listSome(named)}`,
    detail_zh: `${inError.length} 个设备出错：${listSomeZh(namedZh)}`,
  };
}

/** The tracker is healthy by itself; it shows what is on trial. */
export function trackerComponent(tracking: boolean, trial: TrialState | null): ComponentResult {
  if (!tracking) return { name: 'tracker', kind: 'kernel', status: 'ok', detail: 'change tracking is off', detail_zh: '改动跟踪已关闭' };
  if (trial === null)
    return { name: 'tracker', kind: 'kernel', status: 'ok', detail: 'no change on trial', detail_zh: '没有试运行中的改动' };
  const ids = trial.change_set_ids.join(', ');
  const plugins = trial.plugins.join(', ');
  return {
    name: 'tracker',
    kind: 'kernel',
    status: 'ok',
    detail: `trying change ${ids}${plugins === '' ? '' : ` on plugins ${plugins}`}`,
    detail_zh: `正在试运行改动 ${ids}${plugins === '' ? '' : `（插件 ${plugins}）`}`,
  };
}

/** A plugin's state in Chinese (PluginState; an unknown one stays as it is). */
const PLUGIN_STATE_ZH: Readonly<Record<string, string>> = {
  disabled: '已停用',
  starting: '启动中',
  running: '运行中',
  restarting: '重启中',
  stopping: '停止中',
  stopped: '已停止',
  quarantined: '已隔离',
};

export function pluginStateZh(state: string): string {
  return PLUGIN_STATE_ZH[state] ?? state;
}

/** PluginHost.health(): ok=false is failed (including a plugin restarting after a crash); disabled and stopped ones are ok. */
export function pluginComponent(health: { name: string; state: string; ok: boolean; detail: string; detail_zh?: string }): ComponentResult {
  const bare = health.detail === '' || health.detail === health.state;
  const detail = bare ? health.state : `${health.state}: ${health.detail}`;
  // An external plugin may answer in English only: its words are shown as they came.
  const stateZh = pluginStateZh(health.state);
  const detailZh = bare ? stateZh : `${stateZh}：${health.detail_zh ?? health.detail}`;
  return { name: pluginComponentName(health.name), kind: 'plugin', status: health.ok ? 'ok' : 'failed', detail, detail_zh: detailZh };
}

/** What changed when a result was recorded. */
export interface StatusChange {
  component: string;
  status: ComponentStatus;
  /** null the first time the component is seen. */
  previous: ComponentStatus | null;
  detail: string;
  detail_zh: string;
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
      detail_zh: result.detail_zh,
      since: same ? before.since : at,
      failures: result.status === 'failed' ? (same ? before.failures : 0) + 1 : 0,
    });
    if (same) return undefined;
    return {
      component: result.name,
      status: result.status,
      previous: before?.status ?? null,
      detail: result.detail,
      detail_zh: result.detail_zh,
    };
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

function listSomeZh(items: readonly string[]): string {
  const shown = items.slice(0, NAMED_IN_DETAIL).join('、');
  return items.length > NAMED_IN_DETAIL ? `${shown}，另有 ${items.length - NAMED_IN_DETAIL} 个` : shown;
}

function errorText(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return typeof code === 'string' && !error.message.startsWith(code) ? `${code}: ${error.message}` : error.message;
  }
  return String(error);
}

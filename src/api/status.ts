/**
 * The wire shape of the `status` control method: what the daemon is doing (its services, plugins,
 * databases, notices, language model sources and inputs), as `homeagentctl status` and the web
 * page read it.
 */
import type { Level } from './inputs.js';
import type { PluginStatus } from './plugins.js';

export type ServiceState = 'created' | 'starting' | 'running' | 'stopping' | 'stopped' | 'failed';

export interface ServiceStatus {
  name: string;
  state: ServiceState;
  error?: string;
}

/** What happened when a corrupt file was found at start. */
export interface Recovery {
  reason: string;
  movedTo: string;
}

export interface DatabaseSizes {
  file_bytes: number;
  wal_bytes: number;
}

export interface DatabaseStatus extends DatabaseSizes {
  name: string;
  file: string;
  synchronous: string;
  recovered_from_corruption: Recovery | null;
}

export interface Notice {
  level: 'error' | 'warning';
  /** Stable key so that the same problem replaces its earlier notice (`store.state`, `plugin.cli`). */
  key: string;
  message: string;
  at: string;
}

export type SourceState = 'ready' | 'cooling_down' | 'disabled' | 'busy';

/** What llm_list_sources and status pages show; never contains an API key. */
export interface SourceStatus {
  name: string;
  adapter: string;
  model: string;
  base_url: string;
  priority: number;
  /** Tried first (core.llm.current_source). */
  current: boolean;
  state: SourceState;
  /** cooling_down: when the source is tried again (epoch ms). */
  until?: number;
  /** Why the source is cooling down or disabled. */
  reason?: string;
  last_error?: string;
  /** Requests sent to this source since start, and how many of them failed. */
  requests: number;
  failures: number;
  in_flight: number;
  /** Requests waiting for a free slot (max_concurrent). */
  waiting: number;
}

export interface SchedulerStats {
  /** Level 0 inputs waiting in the ready FIFO. */
  queued: number;
  /** Interrupts waiting per level. */
  interrupts_by_level: { 1: number; 2: number; 3: number; 4: number };
  suspended: number;
  running: { task_id: string; input_id: string; level: Level; effective_level: Level } | null;
  /** Receipts given so far, by cause. `dropped` is part of `cancelled`, `refused` part of `failed`. */
  completed: number;
  skipped: number;
  failed: number;
  cancelled: number;
  dropped: number;
  refused: number;
}

/** The answer of `status`. */
export interface StatusReport {
  name: string;
  version: string;
  pid: number;
  state: string;
  status: string;
  started_at: string;
  uptime_s: number;
  data_dir: string;
  runtime_dir: string;
  services: ServiceStatus[];
  plugins: PluginStatus[];
  databases: DatabaseStatus[];
  notices: Notice[];
  restart_pending: string[];
  memory: { rss_bytes: number; heap_used_bytes: number };
  llm_sources: SourceStatus[];
  inputs: SchedulerStats;
}

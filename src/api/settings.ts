/**
 * The wire shapes of the settings' control methods (config.get, config.list, config.history):
 * what the daemon answers and `homeagentctl config` and the settings page read.
 */

export type SettingType = 'string' | 'integer' | 'number' | 'boolean' | 'enum' | 'object' | 'array';

/** What `config get`/`config list` show for one key. Secret values are masked. */
export interface SettingView {
  key: string;
  value: unknown;
  /** `default`, the configuration file's path, `env:<NAME>`, or `runtime` (set through `config set`). */
  source: string;
  default: unknown;
  type: SettingType;
  description: string;
  /** The description in Chinese; absent when the setting's schema has none (an external plugin's, say). */
  description_zh?: string;
  category: string;
  requires_restart: boolean;
  /** The change is stored but the running daemon still uses the value it started with. */
  restart_pending: boolean;
  secret: boolean;
  file_only: boolean;
  env: string;
  minimum?: number;
  maximum?: number;
  enum?: string[];
}

export interface HistoryEntry {
  id: number;
  key: string;
  action: 'set' | 'reset';
  /** JSON text of the new value; null for resets and secrets. */
  value: string | null;
  actor: string;
  at: string;
}

/**
 * The wire shapes of the homeassistant plugin's control methods (homeassistant.status and
 * homeassistant.sync, which answers the status after reading HA again), as
 * `homeagentctl homeassistant` reads them.
 */

export type HomeassistantConnectionState = 'stopped' | 'connecting' | 'authenticating' | 'ready' | 'waiting' | 'auth_failed';

export interface HomeassistantConnectionStatus {
  state: HomeassistantConnectionState;
  url: string;
  ha_version: string | null;
  /** ISO time the current connection became ready, or null. */
  since: string | null;
  connections: number;
  failed_attempts: number;
  next_attempt_in_ms: number | null;
  last_error: string | null;
}

export interface HomeassistantStatus extends HomeassistantConnectionStatus {
  configured: boolean;
  entities: number;
  /** HA entities that matched but did not come in, and why (the first ones; skipped_count counts them all). */
  skipped: Array<{ entity_id: string; reason: string }>;
  skipped_count: number;
  /** Whether HA told which entities are exposed to Assist (it tells administrators only). */
  assist_list: 'read' | 'refused' | 'not used' | 'not read yet';
  last_sync: string | null;
}

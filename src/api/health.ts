/**
 * What the supervisor reports about each component (issue 10): the `health` control method's
 * answer, shown by `homeagentctl health` and the web page's Health view.
 */
import type { TrialState } from './changes.js';

/** ok; degraded (works, but something is off: a model is unreachable, a sensor is offline); failed. */
export type ComponentStatus = 'ok' | 'degraded' | 'failed';

export interface ComponentHealth {
  /** event_loop, state_db, memory, llm, devices, tracker, or plugin:<name>. */
  name: string;
  kind: 'kernel' | 'plugin';
  status: ComponentStatus;
  detail: string;
  /**
   * The same detail in Chinese, for the health page and `homeagentctl health` in Chinese. What
   * comes from outside HomeAgent's own words (an error message, an external plugin's English-only
   * detail) stays as it came.
   */
  detail_zh: string;
  /** When it entered this status (ISO time). */
  since: string;
  /** Failed checks in a row (0 unless failed). */
  failures: number;
}

export interface HealthAnswer {
  /** The worst component status. */
  status: ComponentStatus;
  /** No kernel component failed: what the systemd watchdog is fed on. */
  healthy: boolean;
  /** When the components were last checked (ISO), null before the first check. */
  checked_at: string | null;
  components: ComponentHealth[];
  /** The plugin change on trial, if any. */
  trial: TrialState | null;
}

/**
 * The automation vocabulary: what the engine needs from the rest of the house (entities, IO), the
 * rules after checking, what fired a run, and the run records kept in the run log. Rules are
 * written in core.automations.rules (their format is fixed by src/config/schema.ts); the engine
 * runs them on the device without the LLM.
 */
import type { AutomationAction, AutomationCondition, Config } from '../config/schema.js';
import type { EntityContext, EntityInfo, EntityState } from '../home/types.js';
import type { CronSchedule } from './cron.js';

/** core.automations as the engine reads it, live (watching the file for rules is the composition's: automation-file-watch.ts). */
export type AutomationsSettings = Omit<Config['core']['automations'], 'watch_config_file' | 'watch_debounce_ms'>;

/** The entity registry as far as automations use it (EntityRegistry fits). */
export interface AutomationEntities {
  /** Throws HA_ERR_ENTITY_NOT_FOUND / HA_ERR_ENTITY_AMBIGUOUS. */
  resolve(reference: string): EntityInfo;
  find(reference: string): EntityInfo | undefined;
  call(reference: string, service: string, data: Record<string, unknown>, context: EntityContext): Promise<EntityInfo>;
}

/** Running a tool without the model (the `sequence` action runs seq_run); absent when the daemon offers none. */
export interface AutomationTools {
  /**
   * Runs the tool with `args` as an automation (household trust); throws HA_ERR_UNAVAILABLE when no
   * tool has the name and HA_ERR_CONFIRMATION_REQUIRED when this call would be dangerous.
   */
  run(
    tool: string,
    args: Record<string, unknown>,
    context: { automation_id: string; run_id: string; signal: AbortSignal },
  ): Promise<unknown>;
}

/** Inputs and outputs as far as automations use them. */
export interface AutomationIo {
  /** Sends a text through an output channel (IoManager.send underneath). */
  notify(channel: string, text: string, meta: Record<string, unknown>): Promise<void>;
  /** Hands a text input to the agent (InputScheduler.submit underneath); resolves when it is queued, not answered. */
  input(channel: string, text: string, level: 0 | 1 | 2 | 3, meta: Record<string, unknown>): void;
}

export type AutomationMode = 'restart' | 'single' | 'queued' | 'parallel';

/** A trigger after checking: defaults filled in, expressions compiled once (never per event). */
export type CheckedTrigger =
  | {
      type: 'state';
      index: number;
      entity_ref: string;
      from?: StateMatch;
      to?: StateMatch;
      /** 0: fire at once. */
      for_ms: number;
    }
  | { type: 'numeric'; index: number; entity_ref: string; above?: number; below?: number; hysteresis: number }
  | { type: 'edge'; index: number; pin: string; edge: 'rising' | 'falling' | 'both' }
  | { type: 'time'; index: number; schedule: CronSchedule; label: string }
  | { type: 'mqtt'; index: number; topic: string; filter: TopicFilter; payload?: string }
  | { type: 'input'; index: number; pattern: RegExp; match: string; channel?: string; reply?: string };

export type StateMatch = string | number | Array<string | number>;

/** An MQTT topic filter split into its levels (`+` one level, `#` the rest). */
export interface TopicFilter {
  readonly levels: readonly string[];
  /** No wildcard: compared as a whole. */
  readonly exact: boolean;
}

/** A rule after {@link checkRules}: every default filled in. */
export interface CheckedRule {
  id: string;
  name: string;
  /** As configured; a stored enable/disable overrides it. */
  enabled: boolean;
  mode: AutomationMode;
  triggers: CheckedTrigger[];
  conditions: AutomationCondition[];
  actions: AutomationAction[];
  /** The rule as configured, canonical JSON: a reload keeps the runs and trigger state of rules whose text did not change. */
  fingerprint: string;
}

/** What started a run; its fields fill the `{{trigger.*}}` placeholders. */
export interface TriggerData {
  type: CheckedTrigger['type'] | 'manual';
  /** Position of the trigger in the rule; null for a manual run. */
  index: number | null;
  /** Epoch ms of the event (a state trigger with for_s: of the change that started the wait). */
  at: number;
  entity_id?: string;
  from_state?: EntityState;
  to_state?: EntityState;
  pin?: string;
  edge?: 'rising' | 'falling';
  topic?: string;
  payload?: string;
  text?: string;
  channel?: string;
  /** Time triggers: `07:00` or the cron expression. */
  schedule?: string;
  /** Manual runs: who asked. */
  actor?: string;
}

export type RunStatus = 'done' | 'failed' | 'aborted';

/** One action of a run, as the run log keeps it. */
export interface RunStep {
  index: number;
  type: AutomationAction['type'];
  status: RunStatus;
  ms: number;
  /** service: the entities and service; delay: the seconds; notify and input: the channel and text sent. */
  detail: string;
  /** `CODE: message` of a failed step. */
  error?: string;
}

/** One finished run (the automation_runs table). */
export interface AutomationRunRecord {
  id: string;
  automation_id: string;
  trigger: TriggerData;
  started_at: number;
  finished_at: number;
  status: RunStatus;
  /** `CODE: message` when the run failed or was aborted. */
  error: string | null;
  steps: RunStep[];
}

/** The newest run of an automation, as `automations list` shows it. */
export interface LastRun {
  run_id: string;
  status: RunStatus;
  trigger: string;
  started_at: number;
  finished_at: number;
  error: string | null;
}

/**
 * The wire shape of the event bus: every event name with its payload (the vocabulary is closed),
 * as the daemon emits them and the web page's event stream and plugins read them.
 */
import type { ServiceState } from './status.js';
import type { InputSender, TurnTrust } from './trust.js';

export interface EventMap {
  /** A runtime setting changed (set or reset). The value is read through the registry, never carried here. */
  'settings.changed': { key: string; actor: string; requires_restart: boolean; reset: boolean };
  /** A kernel service or plugin changed lifecycle state. */
  'service.state': { name: string; kind: 'service' | 'plugin'; state: ServiceState; error?: string };
  /** One LLM round of a task: what the model said and asked for (for the web page and the logs). */
  'agent.llm_chain': {
    task_id: string;
    input_id: string;
    channel: string;
    turn: number;
    text: string;
    reasoning: string;
    tool_calls: Array<{ id: string; name: string; arguments: string }>;
    usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number; cache_read_tokens: number; reasoning_tokens: number };
    model: string;
    final: boolean;
  };
  /**
   * A piece of the answer text while the model is still writing it (round `turn` of a task). The
   * pieces of a round, joined, are its llm_chain text; a round that ends up calling tools may
   * stream text too. Pre-empted requests start over: `restart` true marks the first piece again.
   */
  'agent.text_delta': { task_id: string; input_id: string; channel: string; turn: number; delta: string; restart: boolean };
  /** A tool call of a task finished (content cut to 2,000 characters), for the web page's tool-call display. */
  'agent.tool_result': {
    task_id: string;
    input_id: string;
    channel: string;
    turn: number;
    call_id: string;
    name: string;
    ok: boolean;
    content: string;
  };
  /** A task's answer is final (after before_output); what the person is shown. */
  'agent.answer': {
    task_id: string;
    input_id: string;
    channel: string;
    text: string;
    usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
  };
  /** A dangerous tool call waits for the owner's approval (src/agent/confirmation-gate.ts); the owner's channels show it. */
  'confirmation.requested': ConfirmationRequest;
  /** A waiting call was approved (and runs), denied, or expired. */
  'confirmation.resolved': { code: string; tool: string; outcome: 'approved' | 'denied' | 'expired'; by: string };
  /** The daemon's one-line status changed (also sent to systemd as STATUS=). */
  'daemon.status': { state: DaemonState; text: string };
  /**
   * A built-in plugin raises (message set) or clears (message null) a notice of the daemon's status
   * (`homeagentctl status` lists them), under a key of its own that starts with `plugin.<name>.`.
   * An error notice makes the daemon degraded; a warning only informs.
   */
  'daemon.notice': { key: string; level: 'warning' | 'error'; message: string | null };
  /** An entity joined the registry (src/home). */
  'entity.registered': { entity_id: string; domain: string; owner: string };
  /** An entity left the registry (its owner stopped or removed it); its history stays. */
  'entity.removed': { entity_id: string; domain: string; owner: string };
  /**
   * An entity's state or attributes changed. `context` says who caused it when the change came from
   * a service call (`automation:<id>` with its run, `agent`, `cli`, ...); null for a device's own report.
   */
  'entity.state_changed': {
    entity_id: string;
    domain: string;
    old_state: string | number | null;
    new_state: string | number | null;
    /** False when only attributes changed. */
    state_changed: boolean;
    attributes: Record<string, unknown>;
    at: number;
    context: { actor: string; run_id?: string } | null;
  };
  /** A debounced edge on a GPIO input (devices/gpio). `value` is the logical level after the edge (active_low applied). */
  'gpio.edge': { pin: string; bcm: number; entity_id: string; edge: 'rising' | 'falling'; value: 0 | 1; at: number };
  /** An MQTT message arrived on a subscribed topic (plugins/mqtt); payload as text, cut at the plugin's limit. */
  'mqtt.message': { topic: string; payload: string; retained: boolean; at: number };
  /**
   * A change set of the plugins tree was recorded or decided (src/tracker): `trial` when recorded
   * and being tried, `committed`, or `rolled_back` (with the reason and who decided).
   */
  'change.state': {
    id: number;
    status: 'trial' | 'committed' | 'rolled_back';
    actor: string;
    tool: string;
    files: number;
    by: string;
    reason?: string;
  };
  /** A supervised component's status changed (src/supervisor). */
  'health.changed': {
    component: string;
    status: 'ok' | 'degraded' | 'failed';
    previous: 'ok' | 'degraded' | 'failed' | null;
    detail: string;
    /** The detail in Chinese (ComponentHealth.detail_zh). */
    detail_zh: string;
  };
  /** An automation run ended (src/automation). */
  'automation.run': {
    automation_id: string;
    run_id: string;
    trigger: string;
    status: 'done' | 'failed' | 'aborted' | 'skipped';
    error?: string;
    started_at: number;
    finished_at: number;
  };
}

/** A dangerous call waiting for the owner, as the owner's channels and `confirm.list` show it. */
export interface ConfirmationRequest {
  /** What the owner types or sends to decide (`/confirm CODE`); only owner inputs can. */
  code: string;
  tool: string;
  /** The call's arguments as JSON text, exactly as they would run. */
  arguments: string;
  /** The input that asked for it. */
  origin: { input_id: string; source: string; channel: string; sender: InputSender };
  /** The asking turn's trust and what had lowered it. */
  trust: TurnTrust;
  /** Also shown in the asking conversation (the owner asked there, and nobody else reads it). */
  inline: boolean;
  created_at: number;
  expires_at: number;
  /** The request as the owner reads it, in the language it was asked in. */
  text: string;
}

export type DaemonState = 'starting' | 'running' | 'degraded' | 'stopping';

export type EventName = keyof EventMap;

/**
 * The shapes the page reads from /api/v1. `result` of every answer is exactly what the kernel
 * control method of the same name returns: those shapes are the daemon's own (src/api, through
 * src/sdk/api.ts, type declarations only, so nothing of the daemon is bundled). What is left here
 * is the page's own: the HTTP routes' answers and the events the stream carries.
 */
export type {
  Area,
  ChangeDiff,
  ChangeFile,
  ChangeSet,
  ChangeStatus,
  ChangeSummary,
  ComponentHealth,
  ComponentStatus,
  EntitiesHistoryResult,
  EntityInfo,
  EntityListResult,
  EntityRelationView,
  EntityView,
  EventView,
  HealthAnswer,
  KbGetResult,
  KbSearchResult,
  KnowledgeTreeNode,
  MemorySearchResult,
  PluginStatus,
  PluginsListResult,
  Receipt,
  SettingView,
  StateHistoryRow,
  StatusReport,
  TrackerStatus,
  TrialState,
} from '../../../../src/sdk/api.js';

import type { Receipt } from '../../../../src/sdk/api.js';

/** logs.recent: pino records, newest last. */
export interface LogList {
  lines: Array<Record<string, unknown>>;
  dropped: number;
}

/** POST /chat */
export interface ChatResult {
  input_id: string;
  receipt?: Receipt;
}

/** GET /auth/session */
export interface SessionInfo {
  authenticated: boolean;
  method?: string | null;
  expires_at?: string | number | null;
}

/** src/events/event-bus.ts EventMap (the events /api/v1/events carries) */
export interface StreamEvents {
  'agent.llm_chain': {
    task_id: string;
    input_id: string;
    channel: string;
    turn: number;
    text: string;
    tool_calls: Array<{ id: string; name: string; arguments: string }>;
    final: boolean;
  };
  'agent.text_delta': { task_id: string; input_id: string; channel: string; turn: number; delta: string; restart: boolean };
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
  'agent.answer': { task_id: string; input_id: string; channel: string; text: string };
  'entity.state_changed': {
    entity_id: string;
    domain: string;
    old_state: string | number | null;
    new_state: string | number | null;
    state_changed: boolean;
    attributes: Record<string, unknown>;
    at: number;
  };
  'automation.run': { automation_id: string; run_id: string; status: string; error?: string };
  'daemon.status': { state: string; text: string };
  'webui.output': { channel?: string; type?: string; payload?: unknown; text?: string; input_id?: string; created_at?: number };
  'confirmation.requested': ConfirmationRequest;
  'confirmation.resolved': { code: string; tool: string; outcome: 'approved' | 'denied' | 'expired'; by: string };
  /** The stream lost events (the client was away longer than the buffer holds): refetch. */
  reset: Record<string, unknown>;
}

/** src/events/event-bus.ts ConfirmationRequest: a dangerous call waiting for the owner. */
export interface ConfirmationRequest {
  code: string;
  tool: string;
  arguments: string;
  origin: {
    input_id: string;
    source: string;
    channel: string;
    sender: { trust: 'owner' | 'household' | 'untrusted'; id: string; proof: string; shared?: boolean };
  };
  trust: { level: 'owner' | 'household' | 'untrusted'; lowered_by: string[] };
  inline: boolean;
  created_at: number;
  expires_at: number;
  text: string;
}

export type StreamEventName = keyof StreamEvents;

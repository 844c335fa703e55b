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
  ChildView,
  ComponentHealth,
  ComponentStatus,
  ConfirmationRequest,
  EntitiesHistoryResult,
  EntitiesStatisticsResult,
  EntityInfo,
  EntityListResult,
  EntityRelationView,
  EntityView,
  EventView,
  GraphNeighbourhoodResult,
  GraphTypesResult,
  GraphViewEdge,
  GraphViewNode,
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
  SubagentChildrenResult,
  TrackerStatus,
  TrialState,
  Zigbee2MqttDeviceDiagnostics,
  ZigbeeGroup,
  ZigbeeManagementStatus,
} from '../../../../src/sdk/api.js';

import type { EventMap, Receipt } from '../../../../src/sdk/api.js';

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

/** The events /api/v1/events carries: the kernel's own (src/api/events.ts), the page's output channel, and `reset`. */
export type StreamEvents = Pick<
  EventMap,
  | 'agent.llm_chain'
  | 'agent.text_delta'
  | 'agent.tool_result'
  | 'agent.answer'
  | 'entity.state_changed'
  | 'automation.run'
  | 'daemon.status'
  | 'confirmation.requested'
  | 'confirmation.resolved'
> & {
  'webui.output': {
    channel?: string;
    type?: string;
    payload?: unknown;
    meta?: Record<string, unknown>;
    text?: string;
    input_id?: string;
    created_at?: number;
  };
  /** The stream lost events (the client was away longer than the buffer holds): refetch. */
  reset: Record<string, unknown>;
};

export type StreamEventName = keyof StreamEvents;

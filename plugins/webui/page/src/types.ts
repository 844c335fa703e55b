/**
 * The shapes the page reads from /api/v1. `result` of every answer is exactly what the kernel
 * control method of the same name returns; these mirror the kernel's types (named next to each)
 * because the page is built apart from the daemon and must not import its Node modules.
 */

/** src/config/settings-registry.ts SettingView */
export interface SettingView {
  key: string;
  value: unknown;
  source: string;
  default: unknown;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'enum' | 'object' | 'array';
  description: string;
  category: string;
  requires_restart: boolean;
  restart_pending: boolean;
  secret: boolean;
  file_only: boolean;
  env: string;
  minimum?: number;
  maximum?: number;
  enum?: string[];
}

/** src/home/types.ts EntityInfo */
export interface EntityInfo {
  entity_id: string;
  domain: string;
  name: string;
  aliases: string[];
  area: string | null;
  device: string | null;
  state: string | number | null;
  attributes: Record<string, unknown>;
  unit: string | null;
  device_class: string | null;
  last_changed: number;
  last_updated: number;
  owner: string;
  critical: boolean;
  services: string[];
}

/** src/home/types.ts Area */
export interface Area {
  id: string;
  name: string;
  aliases: string[];
}

/** src/home/types.ts StateHistoryRow */
export interface StateHistoryRow {
  entity_id: string;
  at: number;
  state: string | number | null;
  period_ms: number;
  min?: number;
  mean?: number;
  max?: number;
}

/** src/home/entity-methods.ts EntitiesHistoryResult */
export interface EntitiesHistory {
  entity_id: string;
  from: number;
  to: number;
  rows: StateHistoryRow[];
}

/** src/sdk/plugin.ts KnowledgeTreeNode */
export interface KnowledgeTreeNode {
  name: string;
  path: string;
  item_count: number;
  total_count: number;
  items?: Array<{ name: string; path: string; preview: string; media: number }>;
  children: KnowledgeTreeNode[];
}

/** src/knowledge/knowledge-methods.ts KbSearchResult */
export interface KbSearchResult {
  query: string;
  category: string | null;
  hits: Array<{ name: string; category: string; score: number; snippet: string }>;
}

/** kb.get */
export interface KbEntry {
  name: string;
  category: string;
  content: string;
  media: Array<{ file: string; type: string; bytes: number }>;
}

/** memory.search */
export interface MemorySearchResult {
  abstain: boolean;
  items: Array<{
    kind: string;
    text: string;
    /** Who said it, when, and what: the line the prompt gets. */
    line?: string;
    speaker?: string;
    facts?: string[];
    superseded?: boolean;
    score: number;
    sources: string[];
    at: string | null;
  }>;
}

/** memory.entities */
export interface MemoryEntityList {
  entities: Array<{
    name: string;
    type: string;
    aliases: string[];
    relation_count: number;
    mention_count: number;
    updated_at: string | null;
  }>;
  total: number;
}

/** src/memory/memory-methods.ts EntityRelationView */
export interface RelationView {
  id: number;
  direction: 'out' | 'in';
  subject: string;
  relation: string;
  object: string;
  confidence: number;
  session: string;
  valid_from: string | null;
  valid_to: string | null;
  evidence_count: number;
  provenance: Array<{ sentence_id: number; text: string; source_event_id: string; document_id: number | null }>;
}

/** src/memory/memory-methods.ts EntityView (memory.entity) */
export interface MemoryEntityView {
  entity: {
    id: number;
    name: string;
    type: string;
    aliases: string[];
    mention_count: number;
    created_at: string | null;
    updated_at: string | null;
  };
  current: RelationView[];
  history: RelationView[];
  truncated: boolean;
}

/** memory.event: the stored input a fact came from. */
export interface MemoryEvent {
  id: string;
  text: string;
  channel?: string | null;
  source?: string | null;
  at: string | number | null;
  speaker?: string | null;
}

/** src/plugin/plugin-host.ts PluginStatus */
export interface PluginStatus {
  name: string;
  version: string;
  description: string;
  kind: string;
  origin: 'shipped' | 'installed';
  state: string;
  enabled: boolean;
  error?: string;
  tools: string[];
  dir: string;
}

/** plugins.list */
export interface PluginList {
  plugins: PluginStatus[];
  rejected: Array<{ dir?: string; name?: string; error?: string; reason?: string }>;
}

/** src/supervisor/health-types.ts ComponentStatus */
export type ComponentStatus = 'ok' | 'degraded' | 'failed';

/** src/supervisor/health-types.ts ComponentHealth */
export interface ComponentHealth {
  name: string;
  kind: 'kernel' | 'plugin';
  status: ComponentStatus;
  detail: string;
  since: string;
  failures: number;
}

/** src/supervisor/health-types.ts HealthAnswer (health) */
export interface HealthAnswer {
  status: ComponentStatus;
  healthy: boolean;
  checked_at: string | null;
  components: ComponentHealth[];
  trial: TrialState | null;
}

/** src/tracker/change-types.ts ChangeStatus */
export type ChangeStatus = 'trial' | 'committed' | 'rolled_back';

/** src/tracker/change-types.ts ChangeFile (with FileChange of src/tracker/types.ts) */
export interface ChangeFile {
  path: string;
  op: 'add' | 'modify' | 'delete';
  sha256_before: string | null;
  sha256_after: string | null;
  kept: boolean;
}

/** src/tracker/change-types.ts ChangeSet (changes.show; commit and rollback answer a list of them) */
export interface ChangeSet {
  id: number;
  actor: string;
  tool: string;
  channel: string | null;
  started_at: string;
  finished_at: string;
  status: ChangeStatus;
  plugins: string[];
  files: ChangeFile[];
  decided_at: string | null;
  decided_by: string | null;
  reason: string | null;
  reverts: number | null;
}

/** src/tracker/change-types.ts ChangeSummary (changes.list rows) */
export type ChangeSummary = Omit<ChangeSet, 'files'> & { file_count: number };

/** src/tracker/change-types.ts ChangeDiff (changes.diff) */
export interface ChangeDiff {
  id: number;
  files: Array<{ path: string; op: ChangeFile['op']; diff: string | null; note: string | null }>;
  text: string;
}

/** src/tracker/change-types.ts TrialState */
export interface TrialState {
  change_set_ids: number[];
  started_at: string;
  plugins: string[];
  activation_errors: Array<{ plugin: string; error: string }>;
}

/** src/tracker/change-types.ts TrackerStatus (changes.status) */
export interface TrackerStatus {
  backend: 'overlay' | 'userspace' | 'off';
  root: string;
  state_dir: string;
  pending_files: number;
  trial: TrialState | null;
}

/** src/supervisor/kernel-methods.ts StatusReport (the parts the page shows) */
export interface StatusReport {
  name: string;
  version: string;
  pid: number;
  state: string;
  status: string;
  started_at: string;
  uptime_s: number;
  services: Array<{ name: string; state: string; error?: string }>;
  plugins: PluginStatus[];
  notices: Array<{ level: 'error' | 'warning'; key: string; message: string; at: string }>;
  restart_pending: string[];
  memory: { rss_bytes: number; heap_used_bytes: number };
}

/** logs.recent: pino records, newest last. */
export interface LogList {
  lines: Array<Record<string, unknown>>;
  dropped: number;
}

/** src/io/types.ts Receipt */
export interface Receipt {
  input_id: string;
  status: string;
  text?: string;
  error?: { code: string; message: string };
  reason?: string;
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
  finished_at: number;
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

/**
 * The wire shapes of the subagents plugin (plugins/subagents, docs/subagents.md): a child
 * sub-agent as child_result and the owner's subagents.children control method answer it, and as
 * the web page's Agents view reads it (GET /api/v1/agents).
 */

/** How a child ended, as records and notices name it. */
export type ChildState = 'running' | 'done' | 'stopped' | 'failed' | 'cancelled';
/** Why a child that did not simply answer ended so. */
export type ChildEnd = 'answered' | 'max_turns' | 'tokens' | 'time' | 'model_error' | 'daemon_stop';

export interface ChildView {
  task_id: string;
  state: ChildState;
  task: string;
  ended_by?: ChildEnd;
  max_turns: number;
  tool_rounds: number;
  tool_calls: number;
  tokens: number;
  started_at: string;
  finished_at?: string;
  result?: string;
  error?: string;
  /** Tools of the child's that wait for the owner's approval. */
  awaiting_approval: string[];
  /** How the spawning conversation was told of the end (absent while it runs). */
  told?: string;
}

/** subagents.children: the running children and the finished ones still remembered, with the conversation of each. */
export interface SubagentChildrenResult {
  running: number;
  children: Array<ChildView & { channel: string }>;
}

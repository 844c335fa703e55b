/**
 * The Agents view: the sub-agents the assistant started (spawn_child, docs/subagents.md), newest
 * first, with their state, task, the conversation that started each, what they used (tool rounds,
 * tool calls, tokens), their result or error, and the tools of theirs waiting for the owner's
 * approval (those show in the approvals above every view too). While one runs the list is read
 * again every few seconds. Without the subagents plugin the view says how to turn it on.
 */

import { useEffect } from 'preact/hooks';
import { ApiError, api } from '../api';
import { dateTime, formatNumber, relativeTime, type StringKey, t } from '../i18n';
import type { ChildView, SubagentChildrenResult } from '../types';
import { Show, useLoad, useTick } from '../ui';

/** How often the list is read again while a child runs. */
const RUNNING_REFRESH_MS = 3000;

/** The children, or null where the daemon has no subagents plugin. */
function loadChildren(signal: AbortSignal): Promise<SubagentChildrenResult | null> {
  return api.get<SubagentChildrenResult>('/agents', undefined, signal).catch((error: unknown) => {
    if (error instanceof ApiError && error.code === 'HA_ERR_RPC_UNKNOWN_METHOD') return null;
    throw error;
  });
}

export function AgentsView() {
  const list = useLoad(loadChildren, []);
  const running = (list.data?.running ?? 0) > 0;
  useTick(30_000);
  useEffect(() => {
    if (!running) return;
    const timer = setInterval(list.reload, RUNNING_REFRESH_MS);
    return () => clearInterval(timer);
  }, [running, list.reload]);
  return (
    <section class="agents">
      <div class="row wrap">
        <p class="muted small grow">{t('agents.intro')}</p>
        <button type="button" onClick={list.reload} disabled={list.loading}>
          {t('common.refresh')}
        </button>
      </div>
      <Show loaded={list}>
        {(data) =>
          data === null ? (
            <p class="muted" data-testid="agents-off">
              {t('agents.off')}
            </p>
          ) : data.children.length === 0 ? (
            <p class="muted" data-testid="agents-empty">
              {t('agents.empty')}
            </p>
          ) : (
            <ul class="cards">
              {[...data.children]
                .sort((a, b) => b.started_at.localeCompare(a.started_at))
                .map((child) => (
                  <Child key={child.task_id} child={child} />
                ))}
            </ul>
          )
        }
      </Show>
    </section>
  );
}

function Child({ child }: { child: ChildView & { channel: string } }) {
  const started = Date.parse(child.started_at);
  return (
    <li class="card agent" data-task={child.task_id} data-state={child.state}>
      <div class="panel-head">
        <h2 class="small">
          <code>{child.task_id}</code>
        </h2>
        <span
          class={`badge ${child.state === 'running' ? 'state-running' : child.state === 'done' ? '' : 'warn'}`}
          data-testid="agent-state"
        >
          {t(`agents.state.${child.state}` as StringKey)}
        </span>
      </div>
      <p class="agent-task">{child.task}</p>
      <p class="muted small">
        {t('agents.started', { time: relativeTime(started), channel: child.channel })}
        {child.finished_at !== undefined && ` · ${t('agents.finished', { time: dateTime(child.finished_at) })}`}
        {child.ended_by !== undefined && ` · ${t(`agents.end.${child.ended_by}` as StringKey)}`}
      </p>
      <p class="muted small">
        {t('agents.used', {
          rounds: formatNumber(child.tool_rounds),
          max: formatNumber(child.max_turns),
          calls: formatNumber(child.tool_calls),
          tokens: formatNumber(child.tokens),
        })}
      </p>
      {child.awaiting_approval.length > 0 && (
        <p class="warn-text small" data-testid="agent-waiting">
          {t('agents.waiting', { tools: child.awaiting_approval.join(', ') })}
        </p>
      )}
      {child.error !== undefined && <p class="error-text small">{child.error}</p>}
      {child.result !== undefined && (
        <details open={child.result.length < 400}>
          <summary>{t('agents.result')}</summary>
          <pre class="args" data-testid="agent-result">
            {child.result}
          </pre>
        </details>
      )}
    </li>
  );
}

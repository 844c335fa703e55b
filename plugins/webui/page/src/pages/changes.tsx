/**
 * Changes to the plugins, as the change tracker recorded them (docs/changes.md): the trial under
 * way, the change sets newest first, and one opened (`#/changes/12`, so it can be linked) with its
 * files, its diff and the buttons to roll it back or commit it. Both actions ask first: rolling back
 * reloads plugins, committing makes a change the state HomeAgent falls back to. A tracker that is
 * off, or a daemon without one, is a notice with the server's reason rather than an error.
 */
import { useState } from 'preact/hooks';
import { ApiError, api } from '../api';
import { dateTime, type StringKey, t } from '../i18n';
import { href, navigate, useRoute } from '../router';
import type { ChangeDiff, ChangeSet, ChangeStatus, ChangeSummary, TrackerStatus, TrialState } from '../types';
import { ActionButton, Show, useLoad } from '../ui';

const STATUSES: readonly ChangeStatus[] = ['trial', 'committed', 'rolled_back'];
const BADGE: Record<ChangeStatus, string> = { trial: 'badge warn', committed: 'badge state-running', rolled_back: 'badge' };

/** The tracker's status, or why there is none to show (off, or not part of this daemon). */
type Tracker = { status: TrackerStatus } | { unavailable: string };

async function loadTracker(signal: AbortSignal): Promise<Tracker> {
  try {
    const status = await api.get<TrackerStatus>('/changes/status', {}, signal);
    return status.backend === 'off' ? { unavailable: t('ch.off') } : { status };
  } catch (error) {
    if (error instanceof ApiError && error.status === 503) return { unavailable: t('ch.unavailable', { message: error.message }) };
    throw error;
  }
}

/** `#/changes/12` → 12; anything else opens the list. */
function selectedId(arg: string): number | undefined {
  return /^[1-9]\d{0,15}$/.test(arg) ? Number(arg) : undefined;
}

const statusText = (status: ChangeStatus) => t(`ch.status.${status}` as StringKey);

export function ChangesView() {
  const route = useRoute();
  const [filter, setFilter] = useState<ChangeStatus | ''>('');
  // Shown while the view it was made for is open (the list, or the change a rollback opened).
  const [notice, setNotice] = useState<{ text: string; arg: string } | undefined>(undefined);
  const tracker = useLoad(loadTracker, []);
  const selected = selectedId(route.arg);
  return (
    <section class="changes">
      <div class="toolbar">
        <button type="button" onClick={tracker.reload} disabled={tracker.loading}>
          {t('common.refresh')}
        </button>
      </div>
      <Show loaded={tracker}>
        {(state) =>
          'unavailable' in state ? (
            <section class="card notice" data-testid="changes-unavailable">
              <p>{state.unavailable}</p>
            </section>
          ) : (
            <>
              <p class="muted small" data-testid="tracker-status">
                {t('ch.tracker', { backend: state.status.backend, root: state.status.root, count: state.status.pending_files })}
              </p>
              {state.status.trial && <TrialBanner trial={state.status.trial} />}
              {notice && notice.arg === route.arg && (
                <p class="ok" role="status" data-testid="change-notice">
                  {notice.text}
                </p>
              )}
              {selected === undefined ? (
                <ChangeList filter={filter} onFilter={setFilter} generation={state} />
              ) : (
                <ChangeDetail
                  // A new mount per change: the one shown before never stands in for it while it loads.
                  key={selected}
                  id={selected}
                  generation={state}
                  onDecided={(text, open) => {
                    setNotice({ text, arg: open === undefined ? route.arg : String(open) });
                    tracker.reload();
                    if (open !== undefined) navigate('changes', String(open));
                  }}
                />
              )}
            </>
          )
        }
      </Show>
    </section>
  );
}

/** The trial in progress: which changes, since when, and plugins that did not start with them. */
export function TrialBanner({ trial }: { trial: TrialState }) {
  const ids = trial.change_set_ids;
  return (
    <div class="card trial" data-testid="trial-banner">
      <h2 class="warn-text">{t('ch.trial_title')}</h2>
      <p>
        {t('ch.trial', {
          ids: ids.join(', '),
          plugins: trial.plugins.join(', ') || '—',
          time: dateTime(trial.started_at),
          count: ids.length,
        })}
      </p>
      {trial.activation_errors.length > 0 && (
        <ul class="plain">
          {trial.activation_errors.map((e) => (
            <li key={e.plugin} class="error-text">
              {t('ch.trial_error', { plugin: e.plugin, error: e.error })}
            </li>
          ))}
        </ul>
      )}
      <p class="buttons">
        {ids.map((id) => (
          <a key={id} href={href('changes', String(id))}>
            {t('ch.title', { id })}
          </a>
        ))}
      </p>
    </div>
  );
}

function ChangeList({
  filter,
  onFilter,
  generation,
}: {
  filter: ChangeStatus | '';
  onFilter: (status: ChangeStatus | '') => void;
  /** A new tracker status object after a refresh: the list is loaded again with it. */
  generation: object;
}) {
  const list = useLoad((signal) => api.get<ChangeSummary[]>('/changes', { status: filter }, signal), [filter, generation]);
  return (
    <>
      <label>
        {t('ch.filter')}{' '}
        <select value={filter} onChange={(e) => onFilter(e.currentTarget.value as ChangeStatus | '')} data-testid="changes-filter">
          <option value="">{t('ch.all')}</option>
          {STATUSES.map((s) => (
            <option key={s} value={s}>
              {statusText(s)}
            </option>
          ))}
        </select>
      </label>
      <Show loaded={list}>
        {(changes) =>
          changes.length === 0 ? (
            <p class="muted" data-testid="changes-empty">
              {filter === '' ? t('ch.empty') : t('ch.empty_status')}
            </p>
          ) : (
            <ul class="cards">
              {changes.map((change) => (
                <ChangeItem key={change.id} change={change} />
              ))}
            </ul>
          )
        }
      </Show>
    </>
  );
}

function ChangeItem({ change }: { change: ChangeSummary }) {
  return (
    <li class="card" data-change={change.id} data-status={change.status}>
      <div class="panel-head">
        <h2>
          <a href={href('changes', String(change.id))}>{t('ch.title', { id: change.id })}</a>
        </h2>
        <span class={BADGE[change.status]}>{statusText(change.status)}</span>
      </div>
      <Origin change={change} />
      <p class="muted small">
        {t('ch.files', { count: change.file_count })} · {dateTime(change.started_at)}
      </p>
    </li>
  );
}

/** Who made it and through what, and the plugins it touched. */
function Origin({ change }: { change: ChangeSummary | ChangeSet }) {
  return (
    <>
      <p class="small">
        {t('ch.by', { actor: change.actor, tool: change.tool })}
        {change.channel !== null && ` · ${t('ch.channel', { channel: change.channel })}`}
      </p>
      <p class="small">{t('ch.plugins', { names: change.plugins.join(', ') || '—' })}</p>
    </>
  );
}

/** What was decided about it, by whom and why. */
function Decision({ change }: { change: ChangeSet }) {
  if (change.status === 'trial' || change.decided_at === null) return null;
  return (
    <p class="small">
      {t(change.status === 'committed' ? 'ch.decided.committed' : 'ch.decided.rolled_back', {
        time: dateTime(change.decided_at),
        by: change.decided_by ?? '—',
      })}
      {change.reason !== null && (
        <>
          <br />
          {t('ch.reason', { reason: change.reason })}
        </>
      )}
    </p>
  );
}

function ChangeDetail({
  id,
  generation,
  onDecided,
}: {
  id: number;
  generation: object;
  /** After a rollback or commit: what to tell the person, and a change to open (the one made to revert). */
  onDecided: (message: string, open?: number) => void;
}) {
  const change = useLoad((signal) => api.get<ChangeSet>(`/changes/${id}`, {}, signal), [id, generation]);
  const diff = useLoad((signal) => api.get<ChangeDiff>(`/changes/${id}/diff`, {}, signal), [id, generation]);
  const rollback = async (c: ChangeSet) => {
    const sets = await api.post<ChangeSet[]>(`/changes/${c.id}/rollback`);
    const revert = sets.find((s) => s.reverts === c.id);
    if (revert) onDecided(t('ch.reverted', { id: revert.id, reverts: c.id }), revert.id);
    else onDecided(t('ch.rolled_back', { ids: sets.map((s) => s.id).join(', '), count: sets.length }));
  };
  const commit = async (c: ChangeSet) => {
    const sets = await api.post<ChangeSet[]>(`/changes/${c.id}/commit`);
    onDecided(t('ch.committed', { ids: sets.map((s) => s.id).join(', '), count: sets.length }));
  };
  return (
    <>
      <p>
        <a href={href('changes')}>← {t('ch.back')}</a>
      </p>
      <Show loaded={change}>
        {(c) => (
          <div class="card" data-testid="change-detail" data-status={c.status}>
            <div class="panel-head">
              <h2>{t('ch.title', { id: c.id })}</h2>
              <span class={BADGE[c.status]}>{statusText(c.status)}</span>
            </div>
            <Origin change={c} />
            <p class="muted small">{t('ch.started', { time: dateTime(c.started_at) })}</p>
            <Decision change={c} />
            {c.reverts !== null && (
              <p class="small">
                <a href={href('changes', String(c.reverts))}>{t('ch.reverts', { id: c.reverts })}</a>
              </p>
            )}
            <div class="buttons">
              {c.status !== 'rolled_back' && (
                <ActionButton
                  class="danger"
                  confirm={t(c.status === 'committed' ? 'ch.confirm_revert' : 'ch.confirm_rollback', { id: c.id })}
                  action={() => rollback(c)}
                >
                  {t('ch.rollback')}
                </ActionButton>
              )}
              {c.status === 'trial' && (
                <ActionButton class="primary" confirm={t('ch.confirm_commit', { id: c.id })} action={() => commit(c)}>
                  {t('ch.commit')}
                </ActionButton>
              )}
            </div>
            <h3>{t('ch.files', { count: c.files.length })}</h3>
            <ul class="plain" data-testid="change-files">
              {c.files.map((f) => (
                <li key={f.path} data-op={f.op}>
                  <span class="badge">{t(`ch.op.${f.op}` as StringKey)}</span> <code>{f.path}</code>
                  {!f.kept && <span class="muted small"> · {t('ch.not_kept')}</span>}
                </li>
              ))}
            </ul>
          </div>
        )}
      </Show>
      <div class="card">
        <h3>{t('ch.diff')}</h3>
        <Show loaded={diff}>{(d) => <DiffText diff={d} />}</Show>
      </div>
    </>
  );
}

function DiffText({ diff }: { diff: ChangeDiff }) {
  const notes = diff.files.filter((f) => f.note !== null);
  if (diff.text === '' && notes.length === 0) return <p class="muted">{t('ch.no_diff')}</p>;
  return (
    <>
      {diff.text !== '' && (
        <pre class="diff" data-testid="change-diff">
          {diff.text}
        </pre>
      )}
      {notes.length > 0 && (
        <ul class="plain small">
          {notes.map((f) => (
            <li key={f.path}>
              <code>{f.path}</code> <span class="muted">{f.note}</span>
            </li>
          ))}
        </ul>
      )}
    </>
  );
}

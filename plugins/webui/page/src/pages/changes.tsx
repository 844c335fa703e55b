/**
 * Changes the agent made to files and settings, from the change tracker: each with its diff and a
 * rollback. A daemon without the tracker answers 503 HA_ERR_UNAVAILABLE, which is shown as a
 * plain notice rather than an error.
 */
import { useState } from 'preact/hooks';
import { ApiError, api, errorText } from '../api';
import { dateTime, t } from '../i18n';
import { ActionButton, pretty, Show, useLoad } from '../ui';

type Change = Record<string, unknown> & { id: string | number };

/** The tracker's list, whether it answers an array or an object holding one. */
function changesOf(result: unknown): Change[] {
  const list = Array.isArray(result) ? result : ((result as { changes?: unknown[] } | null)?.changes ?? []);
  return list.filter((c): c is Change => typeof c === 'object' && c !== null && 'id' in c);
}

function text(change: Change, ...names: string[]): string {
  for (const name of names) {
    const value = change[name];
    if (typeof value === 'string' || typeof value === 'number') return String(value);
  }
  return '';
}

export function ChangesView() {
  const [unavailable, setUnavailable] = useState(false);
  const list = useLoad(async (signal) => {
    try {
      return changesOf(await api.get<unknown>('/changes', {}, signal));
    } catch (error) {
      if (error instanceof ApiError && (error.status === 503 || error.code === 'HA_ERR_UNAVAILABLE')) {
        setUnavailable(true);
        return [];
      }
      throw error;
    }
  }, []);
  if (unavailable) {
    return (
      <section class="card notice" data-testid="changes-unavailable">
        <p>{t('ch.unavailable')}</p>
      </section>
    );
  }
  return (
    <section class="changes">
      <Show loaded={list}>
        {(changes) =>
          changes.length === 0 ? (
            <p class="muted">{t('ch.empty')}</p>
          ) : (
            <ul class="cards">
              {changes.map((change) => (
                <ChangeItem key={change.id} change={change} onChanged={list.reload} />
              ))}
            </ul>
          )
        }
      </Show>
    </section>
  );
}

function ChangeItem({ change, onChanged }: { change: Change; onChanged: () => void }) {
  const [diff, setDiff] = useState<string | undefined>(undefined);
  const [diffError, setDiffError] = useState<string | undefined>(undefined);
  const id = encodeURIComponent(String(change.id));
  const showDiff = async () => {
    if (diff !== undefined) return setDiff(undefined);
    try {
      const result = await api.get<unknown>(`/changes/${id}/diff`);
      const body = typeof result === 'object' && result !== null && 'diff' in result ? (result as { diff: unknown }).diff : result;
      setDiff(typeof body === 'string' ? body : pretty(body));
      setDiffError(undefined);
    } catch (error) {
      setDiffError(errorText(error));
    }
  };
  return (
    <li class="card">
      <div class="panel-head">
        <h2>
          <code>{String(change.id)}</code> {text(change, 'summary', 'description', 'message', 'title')}
        </h2>
        <span class="badge">{text(change, 'status', 'state')}</span>
      </div>
      <p class="muted small">
        {dateTime(text(change, 'at', 'created_at', 'time'))} {text(change, 'actor', 'by')}
      </p>
      <div class="buttons">
        <ActionButton action={showDiff}>{t('ch.diff')}</ActionButton>
        <ActionButton
          class="danger"
          confirm={t('ch.confirm_rollback', { id: String(change.id) })}
          action={async () => {
            await api.post(`/changes/${id}/rollback`);
            onChanged();
          }}
        >
          {t('ch.rollback')}
        </ActionButton>
      </div>
      {diffError && <p class="error">{diffError}</p>}
      {diff !== undefined && <pre class="diff">{diff}</pre>}
    </li>
  );
}

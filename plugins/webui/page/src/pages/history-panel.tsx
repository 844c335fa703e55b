/**
 * The history panel the home page opens for a sensor: its recent states as a line chart when they
 * are numbers, else as a list. Kept apart from home.tsx so the entity cards and the chart evolve
 * separately.
 */
import { useMemo } from 'preact/hooks';
import { api } from '../api';
import { LineChart, type Series } from '../chart';
import { t } from '../i18n';
import type { EntitiesHistoryResult, EntityInfo } from '../types';
import { Show, useLoad } from '../ui';

/** entities.history's own maximum: fewer would cut the newest end of a busy day off. */
const HISTORY_ROWS = 10_000;

export function HistoryPanel({ entity, onClose }: { entity: EntityInfo; onClose: () => void }) {
  const history = useLoad(
    // The last 24 hours (the kernel's default range), as many rows as it gives: rows come oldest first.
    (signal) =>
      api.get<EntitiesHistoryResult>(`/entities/${encodeURIComponent(entity.entity_id)}/history`, { limit: HISTORY_ROWS }, signal),
    [entity.entity_id],
  );
  return (
    <div class="panel card" role="dialog" aria-label={t('home.history', { name: entity.name })}>
      <div class="panel-head">
        <h2>{t('home.history', { name: entity.name })}</h2>
        <button type="button" onClick={onClose}>
          {t('common.close')}
        </button>
      </div>
      <Show loaded={history}>{(data) => <HistoryBody entity={entity} data={data} />}</Show>
    </div>
  );
}

function HistoryBody({ entity, data }: { entity: EntityInfo; data: EntitiesHistoryResult }) {
  const series = useMemo<Series | undefined>(() => numericSeries(entity, data), [entity, data]);
  if (data.rows.length === 0) return <p class="muted">{t('home.history_empty')}</p>;
  if (series) return <LineChart series={series} />;
  return (
    <>
      <p class="muted">{t('home.history_text')}</p>
      <ul class="plain">
        {data.rows
          .slice(-20)
          .reverse()
          .map((row) => (
            <li key={row.at}>
              {new Date(row.at).toLocaleString()} — {String(row.state)}
            </li>
          ))}
      </ul>
    </>
  );
}

/** Numbers over time (a downsampled row gives its mean); undefined when the states are not numbers. */
function numericSeries(entity: EntityInfo, data: EntitiesHistoryResult): Series | undefined {
  const x: number[] = [];
  const y: number[] = [];
  for (const row of data.rows) {
    const value = row.mean ?? (typeof row.state === 'number' ? row.state : Number(row.state));
    if (row.state === null || !Number.isFinite(value)) continue;
    x.push(row.at / 1000);
    y.push(value);
  }
  if (x.length === 0) return undefined;
  return { x, y, label: entity.unit ? `${entity.name} (${entity.unit})` : entity.name };
}

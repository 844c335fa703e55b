/**
 * The history panel the home page opens for a sensor: a chart over 24 hours, 7 or 30 days when its
 * states are numbers, else its last states as a list. The last day reads every stored report; longer
 * spans (or a day with more reports than one answer holds) read the per-period statistics, drawn as
 * the mean within its min–max band. history-series.ts decides what is drawn; this file fetches.
 * Kept apart from home.tsx so the entity cards and the chart evolve separately.
 */
import { useMemo, useState } from 'preact/hooks';
import { api } from '../api';
import { LineChart } from '../chart';
import { type ChartSeries, rawIsCut, rawSeries, SPAN_MS, SPANS, type Span, sourceFor, statisticsSeries } from '../history-series';
import { dateTime, duration, type StringKey, t } from '../i18n';
import type { EntitiesHistoryResult, EntitiesStatisticsResult, EntityInfo, StateHistoryRow } from '../types';
import { PanelHead, Show, useLoad } from '../ui';

/** entities.history's own maximum: an answer this long was cut, and statistics are read instead. */
const HISTORY_ROWS = 10_000;
/** Text states listed when they cannot be drawn. */
const TEXT_ROWS = 20;

interface Loaded {
  rows: StateHistoryRow[];
  series: ChartSeries | undefined;
  periodMs: number | undefined;
}

export function HistoryPanel({ entity, onClose }: { entity: EntityInfo; onClose: () => void }) {
  const [span, setSpan] = useState<Span>('day');
  const title = t('home.history', { name: entity.name });
  return (
    <div class="panel card" role="dialog" aria-label={title}>
      <PanelHead title={title} onClose={onClose} />
      <fieldset class="segmented" aria-label={t('chart.span')}>
        {SPANS.map((s) => (
          <button key={s} type="button" aria-pressed={s === span} data-span={s} onClick={() => setSpan(s)}>
            {t(`chart.span.${s}` as StringKey)}
          </button>
        ))}
      </fieldset>
      <HistorySpan entity={entity} span={span} />
    </div>
  );
}

function HistorySpan({ entity, span }: { entity: EntityInfo; span: Span }) {
  const history = useLoad<Loaded>((signal) => load(entity, span, signal), [entity.entity_id, span]);
  return <Show loaded={history}>{(data) => <HistoryBody entity={entity} data={data} />}</Show>;
}

async function load(entity: EntityInfo, span: Span, signal: AbortSignal): Promise<Loaded> {
  const now = Date.now();
  const range = { from: now - SPAN_MS[span], now };
  const path = `/entities/${encodeURIComponent(entity.entity_id)}`;
  if (sourceFor(SPAN_MS[span]) === 'raw') {
    const raw = await api.get<EntitiesHistoryResult>(`${path}/history`, { from: range.from, to: now, limit: HISTORY_ROWS }, signal);
    if (!rawIsCut(raw.rows, HISTORY_ROWS)) return { rows: raw.rows, series: rawSeries(raw.rows, entity, range), periodMs: undefined };
  }
  const stats = await api.get<EntitiesStatisticsResult>(`${path}/statistics`, { from: range.from, to: now }, signal);
  return { rows: stats.rows, series: statisticsSeries(stats.rows, stats.period_ms, entity, range), periodMs: stats.period_ms };
}

function HistoryBody({ entity, data }: { entity: EntityInfo; data: Loaded }) {
  const text = useMemo(() => data.rows.slice(-TEXT_ROWS).reverse(), [data]);
  if (data.series) {
    return (
      <>
        <LineChart series={data.series} name={entity.name} unit={entity.unit} />
        <p class="muted small" data-testid="chart-note">
          {data.periodMs === undefined ? t('chart.raw_note') : t('chart.statistics_note', { period: duration(data.periodMs / 1000) })}
        </p>
      </>
    );
  }
  if (data.rows.length === 0) return <p class="muted">{t('chart.empty')}</p>;
  return (
    <>
      <p class="muted">{t('chart.text')}</p>
      <ul class="plain">
        {text.map((row) => (
          <li key={row.at}>
            {dateTime(row.at)} — {String(row.state)}
          </li>
        ))}
      </ul>
    </>
  );
}

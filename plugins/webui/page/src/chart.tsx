/**
 * A chart of one sensor over time, drawn by uPlot: steps (a stored state held until the next one),
 * breaks where the series has nulls (gaps), and for statistics the mean with a min–max band. Axis
 * ticks, the legend's time and numbers are written by format.ts in the page's locale, axis names
 * by i18n.ts. uPlot (and its CSS) is loaded the first time a chart opens, so the page's first load
 * does not carry it.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import type uPlot from 'uplot';
import { errorText } from './api';
import type { ChartSeries } from './history-series';
import { dateTime, formatNumber, t, timeTick } from './i18n';
import { ErrorLine } from './ui';

const HEIGHT = 220;

export function LineChart({ series, name, unit }: { series: ChartSeries; name: string; unit: string | null }) {
  const box = useRef<HTMLDivElement>(null);
  const [error, setError] = useState<string | undefined>(undefined);

  useEffect(() => {
    const element = box.current;
    if (!element) return;
    let plot: uPlot | undefined;
    let cancelled = false;
    const observer = new ResizeObserver(() => plot?.setSize({ width: element.clientWidth, height: HEIGHT }));
    Promise.all([import('uplot'), import('uplot/dist/uPlot.min.css')])
      .then(([module]) => {
        if (cancelled) return;
        const UPlot = module.default;
        plot = new UPlot(chartOptions(UPlot, element, series, name, unit), chartData(series), element);
        observer.observe(element);
      })
      .catch((e: unknown) => setError(errorText(e)));
    return () => {
      cancelled = true;
      observer.disconnect();
      plot?.destroy();
    };
  }, [series, name, unit]);

  return (
    <>
      <div class="chart" ref={box} data-testid="history-chart" data-source={series.source} />
      <ErrorLine error={error} />
    </>
  );
}

function chartData(series: ChartSeries): uPlot.AlignedData {
  return series.source === 'statistics' ? [series.x, series.y, series.min ?? [], series.max ?? []] : [series.x, series.y];
}

function chartOptions(UPlot: typeof uPlot, element: HTMLElement, series: ChartSeries, name: string, unit: string | null): uPlot.Options {
  const style = getComputedStyle(element);
  const stroke = style.getPropertyValue('--accent').trim() || '#2a6df4';
  const steps = UPlot.paths.stepped?.({ align: 1 });
  const axis = { stroke: style.color, grid: { stroke: 'rgba(128,128,128,0.2)' }, ticks: { stroke: 'rgba(128,128,128,0.3)' } };
  const spanMs = ((series.x.at(-1) ?? 0) - (series.x[0] ?? 0)) * 1000;
  const number = (_: uPlot, value: number | null) => (value === null ? '–' : formatNumber(value));
  const line: uPlot.Series = {
    label: series.source === 'statistics' ? t('chart.mean') : t('chart.value'),
    stroke,
    width: 2,
    spanGaps: false,
    value: number,
    ...(steps && { paths: steps }),
  };
  const edge = (label: string): uPlot.Series => ({
    label,
    stroke: 'rgba(128,128,128,0.5)',
    width: 1,
    spanGaps: false,
    value: number,
    points: { show: false },
    ...(steps && { paths: steps }),
  });
  return {
    width: element.clientWidth,
    height: HEIGHT,
    series: [
      { label: t('chart.time'), value: (_, seconds) => (seconds === null ? '–' : dateTime(seconds * 1000)) },
      line,
      ...(series.source === 'statistics' ? [edge(t('chart.min')), edge(t('chart.max'))] : []),
    ],
    bands: series.source === 'statistics' ? [{ series: [3, 2], fill: `${stroke}33` }] : [],
    axes: [
      {
        ...axis,
        label: t('chart.time'),
        labelSize: 20,
        values: (_, splits) =>
          splits.map((seconds, i) => timeTick(seconds * 1000, spanMs, i > 0 ? (splits[i - 1] as number) * 1000 : undefined)),
      },
      {
        ...axis,
        label: unit ? t('chart.axis_unit', { name, unit }) : name,
        labelSize: 20,
        size: 56,
        values: (_, splits) => splits.map((value) => formatNumber(value)),
      },
    ],
    legend: { show: true },
    cursor: { drag: { x: false, y: false } },
  };
}

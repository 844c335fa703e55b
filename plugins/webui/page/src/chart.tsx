/**
 * A line chart of numbers over time, drawn by uPlot. uPlot (and its CSS) is loaded the first time
 * a chart opens, so the page's first load does not carry it.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { errorText } from './api';
import { ErrorLine } from './ui';

export interface Series {
  /** Seconds since the epoch (uPlot's unit). */
  x: number[];
  y: number[];
  label: string;
}

const HEIGHT = 220;

export function LineChart({ series }: { series: Series }) {
  const box = useRef<HTMLDivElement>(null);
  const [error, setError] = useState<string | undefined>(undefined);

  useEffect(() => {
    const element = box.current;
    if (!element) return;
    let plot: { destroy(): void; setSize(size: { width: number; height: number }): void } | undefined;
    let cancelled = false;
    const observer = new ResizeObserver(() => plot?.setSize({ width: element.clientWidth, height: HEIGHT }));
    Promise.all([import('uplot'), import('uplot/dist/uPlot.min.css')])
      .then(([module]) => {
        if (cancelled) return;
        const UPlot = module.default;
        const style = getComputedStyle(element);
        const stroke = style.getPropertyValue('--accent').trim() || '#2a6df4';
        const axis = { stroke: style.color, grid: { stroke: 'rgba(128,128,128,0.2)' }, ticks: { stroke: 'rgba(128,128,128,0.3)' } };
        plot = new UPlot(
          {
            width: element.clientWidth,
            height: HEIGHT,
            series: [{}, { label: series.label, stroke, width: 2, spanGaps: true }],
            axes: [axis, { ...axis, size: 56 }],
            legend: { show: true },
            cursor: { drag: { x: false, y: false } },
          },
          [series.x, series.y],
          element,
        );
        observer.observe(element);
      })
      .catch((e: unknown) => setError(errorText(e)));
    return () => {
      cancelled = true;
      observer.disconnect();
      plot?.destroy();
    };
  }, [series]);

  return (
    <>
      <div class="chart" ref={box} data-testid="history-chart" />
      <ErrorLine error={error} />
    </>
  );
}

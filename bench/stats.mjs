/** Latency statistics shared by the benches: percentiles of ms lists and the GC pauses behind their tails. */
import { PerformanceObserver } from 'node:perf_hooks';

export const round = (ms) => Math.round(ms * 1000) / 1000;
export const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

/** The given percentiles (keys p50, p95, p99, p999 for 99.9) and max of a list of ms, rounded. */
export function spread(times, percentiles) {
  const sorted = [...times].sort((a, b) => a - b);
  const out = {};
  for (const p of percentiles) out[`p${String(p).replace('.', '')}`] = round(percentile(sorted, p));
  out.max = round(sorted.at(-1));
  return out;
}

/**
 * Garbage-collection pauses while a measurement runs: the paths measured are synchronous, so their
 * tails are GC pauses and the machine's other load, which these fields let a reader see.
 */
export function watchGc() {
  const pauses = [];
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) pauses.push(entry.duration);
  });
  observer.observe({ entryTypes: ['gc'] });
  return () => {
    observer.disconnect();
    return { gc_pauses_over_1ms: pauses.filter((ms) => ms > 1).length, gc_max_ms: round(Math.max(0, ...pauses)) };
  };
}

/**
 * `homeagentctl health`: what the supervisor found at its last check, one line per component, the
 * worst first, and the plugin change on trial. The exit code lets scripts and monitoring tell a
 * failure (1) from a degraded but working HomeAgent (0): an unreachable model is not an outage.
 */

import type { ComponentHealth, ComponentStatus, HealthAnswer } from '../api/health.js';
import { EXIT_CODES } from '../shared/exit-codes.js';
import { localTime } from './automations.js';

const SEVERITY: Record<ComponentStatus, number> = { failed: 0, degraded: 1, ok: 2 };
const LABEL: Record<ComponentStatus, string> = { failed: 'FAILED', degraded: 'degraded', ok: 'ok' };

const when = (iso: string): string => {
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? iso : localTime(ms);
};

/** 1 when a component failed (or the kernel is unhealthy, which stops the watchdog); 0 for ok or only degraded. */
export function healthExitCode(h: HealthAnswer): number {
  return h.healthy && h.status !== 'failed' ? EXIT_CODES.OK : EXIT_CODES.FAILURE;
}

function headline(h: HealthAnswer): string {
  const checked = h.checked_at === null ? 'not checked yet' : `checked ${when(h.checked_at)}`;
  const watchdog = h.healthy ? '' : '; a kernel component failed, the systemd watchdog is no longer fed';
  return `${LABEL[h.status]} (${checked})${watchdog}`;
}

function detail(c: ComponentHealth): string {
  return c.failures > 1 ? `${c.detail} (${c.failures} failed checks in a row)` : c.detail;
}

export function formatHealthAnswer(h: HealthAnswer): string {
  // Stable: components of one status keep the daemon's order (kernel first, then plugins).
  const components = [...h.components].sort((a, b) => SEVERITY[a.status] - SEVERITY[b.status]);
  // The detail goes last, unpadded: one long detail must not widen every line.
  const rows = components.map((c) => [LABEL[c.status], c.name, `${detail(c)}; since ${when(c.since)}`]);
  const widths = rows.reduce<number[]>((w, row) => row.map((cell, i) => Math.max(w[i] ?? 0, cell.length)), []);
  const lines = [headline(h), ...rows.map((row) => `  ${row.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join('  ')}`.trimEnd())];
  if (h.components.length === 0) lines.push('  (no components reported yet)');
  if (h.trial !== null) {
    const t = h.trial;
    lines.push(
      `trial: ${t.change_set_ids.length === 1 ? 'change' : 'changes'} ${t.change_set_ids.join(', ')} since ${when(t.started_at)}, plugins ${t.plugins.join(', ') || '(none)'} (homeagentctl changes)`,
    );
    for (const e of t.activation_errors) lines.push(`  ${e.plugin} failed to start: ${e.error}`);
  }
  return lines.join('\n');
}

/**
 * `homeagentctl health`: what the supervisor found at its last check, one line per component, the
 * worst first, and the plugin change on trial, in the terminal's language (cli-language.ts; each
 * component's detail comes from the daemon in both). The exit code lets scripts and monitoring
 * tell a failure (1) from a degraded but working HomeAgent (0): an unreachable model is not an
 * outage.
 */

import type { ComponentHealth, ComponentStatus, HealthAnswer } from '../api/health.js';
import { EXIT_CODES } from '../shared/exit-codes.js';
import type { Language } from '../shared/language.js';
import { localTime } from './automations.js';
import { cliLanguage } from './cli-language.js';

const SEVERITY: Record<ComponentStatus, number> = { failed: 0, degraded: 1, ok: 2 };

/** Every word the command prints around the daemon's details, in both languages. */
const WORDS = {
  en: {
    status: { failed: 'FAILED', degraded: 'degraded', ok: 'ok' } as Record<ComponentStatus, string>,
    notChecked: 'not checked yet',
    checked: (time: string) => `checked ${time}`,
    watchdog: '; a kernel component failed, the systemd watchdog is no longer fed',
    headline: (status: string, checked: string, watchdog: string) => `${status} (${checked})${watchdog}`,
    inARow: (detail: string, failures: number) => `${detail} (${failures} failed checks in a row)`,
    since: (detail: string, time: string) => `${detail}; since ${time}`,
    none: '  (no components reported yet)',
    trial: (ids: number[], time: string, plugins: string[]) =>
      `trial: ${ids.length === 1 ? 'change' : 'changes'} ${ids.join(', ')} since ${time}, plugins ${plugins.join(', ') || '(none)'} (homeagentctl changes)`,
    failedToStart: (plugin: string, error: string) => `  ${plugin} failed to start: ${error}`,
  },
  zh: {
    status: { failed: '失败', degraded: '降级', ok: '正常' } as Record<ComponentStatus, string>,
    notChecked: '尚未检查',
    checked: (time: string) => `检查于 ${time}`,
    watchdog: '；有内核组件失败，systemd 看门狗已不再喂',
    headline: (status: string, checked: string, watchdog: string) => `${status}（${checked}）${watchdog}`,
    inARow: (detail: string, failures: number) => `${detail}（连续 ${failures} 次检查失败）`,
    since: (detail: string, time: string) => `${detail}；自 ${time} 起`,
    none: '  （还没有组件报告）',
    trial: (ids: number[], time: string, plugins: string[]) =>
      `试运行：改动 ${ids.join(', ')}，自 ${time} 起，插件 ${plugins.join(', ') || '（无）'}（homeagentctl changes）`,
    failedToStart: (plugin: string, error: string) => `  ${plugin} 启动失败：${error}`,
  },
} as const;

const when = (iso: string): string => {
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? iso : localTime(ms);
};

/** 1 when a component failed (or the kernel is unhealthy, which stops the watchdog); 0 for ok or only degraded. */
export function healthExitCode(h: HealthAnswer): number {
  return h.healthy && h.status !== 'failed' ? EXIT_CODES.OK : EXIT_CODES.FAILURE;
}

/** The component's detail in `language`; a daemon older than detail_zh sends English only. */
function detail(c: ComponentHealth, language: Language): string {
  const words = WORDS[language];
  const text = language === 'zh' && typeof c.detail_zh === 'string' && c.detail_zh !== '' ? c.detail_zh : c.detail;
  return c.failures > 1 ? words.inARow(text, c.failures) : text;
}

export function formatHealthAnswer(h: HealthAnswer, language: Language = cliLanguage()): string {
  const words = WORDS[language];
  // Stable: components of one status keep the daemon's order (kernel first, then plugins).
  const components = [...h.components].sort((a, b) => SEVERITY[a.status] - SEVERITY[b.status]);
  // The detail goes last, unpadded: one long detail must not widen every line.
  const rows = components.map((c) => [words.status[c.status], c.name, words.since(detail(c, language), when(c.since))]);
  const widths = rows.reduce<number[]>((w, row) => row.map((cell, i) => Math.max(w[i] ?? 0, cell.length)), []);
  const checked = h.checked_at === null ? words.notChecked : words.checked(when(h.checked_at));
  const lines = [
    words.headline(words.status[h.status], checked, h.healthy ? '' : words.watchdog),
    ...rows.map((row) => `  ${row.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join('  ')}`.trimEnd()),
  ];
  if (h.components.length === 0) lines.push(words.none);
  if (h.trial !== null) {
    const t = h.trial;
    lines.push(words.trial(t.change_set_ids, when(t.started_at), t.plugins));
    for (const e of t.activation_errors) lines.push(words.failedToStart(e.plugin, e.error));
  }
  return lines.join('\n');
}

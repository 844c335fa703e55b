/** Readable text for homeagentctl's answers (`--json` prints the raw results instead). */
import type { PluginStatus } from '../api/plugins.js';
import type { HistoryEntry, SettingView } from '../api/settings.js';
import type { StatusReport } from '../api/status.js';

export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

export function duration(seconds: number): string {
  const d = Math.floor(seconds / 86400);
  const h = Math.floor((seconds % 86400) / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  return [d && `${d}d`, h && `${h}h`, m && `${m}m`, `${s}s`].filter(Boolean).join(' ');
}

/** Columns padded to their widest cell; `indent` before each row. */
export function table(rows: string[][], indent = '  '): string {
  const widths = rows.reduce<number[]>((w, row) => row.map((cell, i) => Math.max(w[i] ?? 0, cell.length)), []);
  return rows.map((row) => (indent + row.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join('  ')).trimEnd()).join('\n');
}

export function formatStatus(s: StatusReport): string {
  const lines = [
    `${s.name} ${s.version}: ${s.status}`,
    `  state ${s.state}, up ${duration(s.uptime_s)}, pid ${s.pid}, memory ${bytes(s.memory.rss_bytes)}`,
    `  data ${s.data_dir}`,
    `  runtime ${s.runtime_dir}`,
    'services:',
    table(s.services.map((x) => [x.name, x.state, x.error ?? ''])),
    'plugins:',
    s.plugins.length ? table(s.plugins.map((x) => [x.name, x.version, x.kind, x.state, x.error ?? ''])) : '  (none)',
    'databases:',
    table(s.databases.map((d) => [d.name, bytes(d.file_bytes), `wal ${bytes(d.wal_bytes)}`, `synchronous=${d.synchronous}`, d.file])),
  ];
  lines.push(
    'language models:',
    s.llm_sources.length
      ? table(s.llm_sources.map((x) => [x.name, x.adapter, x.model, x.state, x.reason ?? '']))
      : '  (none configured: the agent answers that it is offline)',
    `inputs: ${s.inputs.queued} queued, ${s.inputs.suspended} suspended, ${s.inputs.completed} done, ${s.inputs.failed} failed, ${s.inputs.skipped} skipped`,
  );
  if (s.notices.length) lines.push('notices:', ...s.notices.map((n) => `  ${n.level === 'error' ? '!' : '-'} ${n.message}`));
  if (s.restart_pending.length) lines.push(`restart needed for: ${s.restart_pending.join(', ')}`);
  return lines.join('\n');
}

function show(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

export function formatSetting(v: SettingView): string {
  const bounds =
    v.enum !== undefined
      ? `one of ${v.enum.join(', ')}`
      : v.minimum !== undefined || v.maximum !== undefined
        ? `${v.minimum ?? ''}..${v.maximum ?? ''}`
        : '';
  const flags = [v.secret && 'secret', v.requires_restart && 'needs restart', v.file_only && 'file/env only'].filter(Boolean).join(', ');
  return [
    `${v.key} = ${show(v.value)}${v.restart_pending ? '   (changed; takes effect after a restart)' : ''}`,
    `  ${v.description}`,
    `  type ${v.type}${bounds ? ` (${bounds})` : ''}, default ${show(v.default)}, source ${v.source}, env ${v.env}${flags ? `; ${flags}` : ''}`,
  ].join('\n');
}

export function formatSettingList(list: SettingView[]): string {
  if (list.length === 0) return '(no settings match)';
  return table(
    list.map((v) => [v.key, show(v.value), v.source === 'default' ? '' : `(${v.source})`]),
    '',
  );
}

export function formatHistory(list: HistoryEntry[]): string {
  if (list.length === 0) return '(no changes recorded)';
  return table(
    list.map((h) => [h.at, h.actor, h.action, h.key, h.action === 'set' ? (h.value ?? '(secret)') : '']),
    '',
  );
}

export function formatPluginList(r: { plugins: PluginStatus[]; rejected: Array<{ dir: string; error: string }> }): string {
  const lines = [
    r.plugins.length
      ? table(
          [
            ['NAME', 'VERSION', 'KIND', 'ORIGIN', 'STATE', 'TOOLS', 'PROBLEM'],
            ...r.plugins.map((p) => [p.name, p.version, p.kind, p.origin, p.state, String(p.tools.length), p.error ?? '']),
          ],
          '',
        )
      : '(no plugins)',
  ];
  if (r.rejected.length) lines.push('refused before loading:', ...r.rejected.map((x) => `  ${x.dir}: ${x.error}`));
  return lines.join('\n');
}

export function formatPlugin(p: PluginStatus): string {
  const tools = p.tools.length ? `; tools: ${p.tools.join(', ')}` : '';
  return `${p.name} ${p.version} (${p.kind}, ${p.origin}): ${p.state}${p.error ? ` — ${p.error}` : ''}${tools}`;
}

export function formatPluginHealth(r: { plugins: Array<{ name: string; state: string; ok: boolean; detail: string }> }): string {
  return table(
    r.plugins.map((p) => [p.ok ? 'ok' : 'FAIL', p.name, p.state, p.detail]),
    '',
  );
}

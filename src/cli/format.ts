/**
 * Readable text for homeagentctl's answers (`--json` prints the raw results instead), in the
 * terminal's language (cli-language.ts) unless the caller names one.
 */
import type { PluginStatus } from '../api/plugins.js';
import type { HistoryEntry, SettingView } from '../api/settings.js';
import type { StatusReport } from '../api/status.js';
import type { Language } from '../shared/language.js';
import { cliLanguage } from './cli-language.js';
import { durationIn, stateWord } from './cli-words.js';

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

/** Han characters and full-width forms take two columns of a terminal. */
const WIDE =
  /[\u1100-\u115f\u2e80-\u303e\u3041-\u33ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6]/u;

/** How many terminal columns `text` takes: a Chinese character two, anything else one. */
export function displayWidth(text: string): number {
  let width = 0;
  for (const char of text) width += WIDE.test(char) ? 2 : 1;
  return width;
}

/** Columns padded to their widest cell (in terminal columns, so Chinese cells line up too); `indent` before each row. */
export function table(rows: string[][], indent = '  '): string {
  const widths = rows.reduce<number[]>((w, row) => row.map((cell, i) => Math.max(w[i] ?? 0, displayWidth(cell))), []);
  const pad = (cell: string, width: number) => cell + ' '.repeat(Math.max(0, width - displayWidth(cell)));
  return rows.map((row) => (indent + row.map((cell, i) => pad(cell, widths[i] ?? 0)).join('  ')).trimEnd()).join('\n');
}

/** Every word the status, config and plugins answers print around the daemon's values, in both languages. */
const WORDS = {
  en: {
    headline: (name: string, version: string, status: string) => `${name} ${version}: ${status}`,
    process: (state: string, up: string, pid: number, memory: string) => `  state ${state}, up ${up}, pid ${pid}, memory ${memory}`,
    data: (dir: string) => `  data ${dir}`,
    runtime: (dir: string) => `  runtime ${dir}`,
    services: 'services:',
    plugins: 'plugins:',
    none: '  (none)',
    databases: 'databases:',
    wal: (size: string) => `wal ${size}`,
    models: 'language models:',
    noModels: '  (none configured: the agent answers that it is offline)',
    inputs: (i: StatusReport['inputs']) =>
      `inputs: ${i.queued} queued, ${i.suspended} suspended, ${i.completed} done, ${i.failed} failed, ${i.skipped} skipped`,
    notices: 'notices:',
    restart: (keys: string[]) => `restart needed for: ${keys.join(', ')}`,
    oneOf: (values: string[]) => `one of ${values.join(', ')}`,
    secret: 'secret',
    needsRestart: 'needs restart',
    fileOnly: 'file/env only',
    pending: '   (changed; takes effect after a restart)',
    facts: (type: string, bounds: string, fallback: string, source: string, env: string, flags: string) =>
      `  type ${type}${bounds ? ` (${bounds})` : ''}, default ${fallback}, source ${source}, env ${env}${flags ? `; ${flags}` : ''}`,
    source: (source: string) => source,
    noSettings: '(no settings match)',
    noChanges: '(no changes recorded)',
    secretValue: '(secret)',
    action: { set: 'set', reset: 'reset' } as Record<HistoryEntry['action'], string>,
    pluginHeader: ['NAME', 'VERSION', 'KIND', 'ORIGIN', 'STATE', 'TOOLS', 'PROBLEM'],
    noPlugins: '(no plugins)',
    refused: 'refused before loading:',
    tools: (tools: string[]) => `; tools: ${tools.join(', ')}`,
    pluginLine: (p: PluginStatus, kind: string, origin: string, state: string) => `${p.name} ${p.version} (${kind}, ${origin}): ${state}`,
    healthOk: 'ok',
    healthFail: 'FAIL',
  },
  zh: {
    headline: (name: string, version: string, status: string) => `${name} ${version}：${status}`,
    process: (state: string, up: string, pid: number, memory: string) => `  状态 ${state}，已运行 ${up}，进程号 ${pid}，内存 ${memory}`,
    data: (dir: string) => `  数据目录 ${dir}`,
    runtime: (dir: string) => `  运行目录 ${dir}`,
    services: '服务：',
    plugins: '插件：',
    none: '  （无）',
    databases: '数据库：',
    wal: (size: string) => `预写日志 ${size}`,
    models: '语言模型：',
    noModels: '  （未配置：助手会回答它处于离线状态）',
    inputs: (i: StatusReport['inputs']) =>
      `输入：排队 ${i.queued}，挂起 ${i.suspended}，完成 ${i.completed}，失败 ${i.failed}，跳过 ${i.skipped}`,
    notices: '提示：',
    restart: (keys: string[]) => `需要重启才生效：${keys.join('、')}`,
    oneOf: (values: string[]) => `可选 ${values.join('、')}`,
    secret: '机密',
    needsRestart: '需重启',
    fileOnly: '仅限配置文件/环境变量',
    pending: '   （已更改；重启后生效）',
    facts: (type: string, bounds: string, fallback: string, source: string, env: string, flags: string) =>
      `  类型 ${type}${bounds ? `（${bounds}）` : ''}，默认 ${fallback}，来源 ${source}，环境变量 ${env}${flags ? `；${flags}` : ''}`,
    source: (source: string) =>
      source === 'default'
        ? '默认'
        : source === 'runtime'
          ? '运行时设置'
          : source.startsWith('env:')
            ? `环境变量 ${source.slice(4)}`
            : source,
    noSettings: '（没有匹配的设置）',
    noChanges: '（没有记录到更改）',
    secretValue: '（机密）',
    action: { set: '设置', reset: '重置' } as Record<HistoryEntry['action'], string>,
    pluginHeader: ['名称', '版本', '类型', '来源', '状态', '工具', '问题'],
    noPlugins: '（没有插件）',
    refused: '加载前被拒绝：',
    tools: (tools: string[]) => `；工具：${tools.join(', ')}`,
    pluginLine: (p: PluginStatus, kind: string, origin: string, state: string) => `${p.name} ${p.version}（${kind}，${origin}）：${state}`,
    healthOk: '正常',
    healthFail: '失败',
  },
} as const;

export function formatStatus(s: StatusReport, language: Language = cliLanguage()): string {
  const w = WORDS[language];
  const state = (word: string) => stateWord(word, language);
  const lines = [
    w.headline(s.name, s.version, state(s.status)),
    w.process(state(s.state), durationIn(s.uptime_s, language), s.pid, bytes(s.memory.rss_bytes)),
    w.data(s.data_dir),
    w.runtime(s.runtime_dir),
    w.services,
    table(s.services.map((x) => [x.name, state(x.state), x.error ?? ''])),
    w.plugins,
    s.plugins.length ? table(s.plugins.map((x) => [x.name, x.version, state(x.kind), state(x.state), x.error ?? ''])) : w.none,
    w.databases,
    table(s.databases.map((d) => [d.name, bytes(d.file_bytes), w.wal(bytes(d.wal_bytes)), `synchronous=${d.synchronous}`, d.file])),
  ];
  lines.push(
    w.models,
    s.llm_sources.length ? table(s.llm_sources.map((x) => [x.name, x.adapter, x.model, state(x.state), x.reason ?? ''])) : w.noModels,
    w.inputs(s.inputs),
  );
  if (s.notices.length) lines.push(w.notices, ...s.notices.map((n) => `  ${n.level === 'error' ? '!' : '-'} ${n.message}`));
  if (s.restart_pending.length) lines.push(w.restart(s.restart_pending));
  return lines.join('\n');
}

function show(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** One setting: its value, its description in `language` (English when the schema has no Chinese one), and its facts. */
export function formatSetting(v: SettingView, language: Language = cliLanguage()): string {
  const w = WORDS[language];
  const bounds =
    v.enum !== undefined
      ? w.oneOf(v.enum)
      : v.minimum !== undefined || v.maximum !== undefined
        ? `${v.minimum ?? ''}..${v.maximum ?? ''}`
        : '';
  const flags = [v.secret && w.secret, v.requires_restart && w.needsRestart, v.file_only && w.fileOnly]
    .filter(Boolean)
    .join(language === 'zh' ? '，' : ', ');
  const description = language === 'zh' && v.description_zh !== undefined && v.description_zh !== '' ? v.description_zh : v.description;
  return [
    `${v.key} = ${show(v.value)}${v.restart_pending ? w.pending : ''}`,
    `  ${description}`,
    w.facts(v.type, bounds, show(v.default), w.source(v.source), v.env, flags),
  ].join('\n');
}

export function formatSettingList(list: SettingView[], language: Language = cliLanguage()): string {
  const w = WORDS[language];
  if (list.length === 0) return w.noSettings;
  return table(
    list.map((v) => [v.key, show(v.value), v.source === 'default' ? '' : `(${w.source(v.source)})`]),
    '',
  );
}

export function formatHistory(list: HistoryEntry[], language: Language = cliLanguage()): string {
  const w = WORDS[language];
  if (list.length === 0) return w.noChanges;
  return table(
    list.map((h) => [h.at, h.actor, w.action[h.action] ?? h.action, h.key, h.action === 'set' ? (h.value ?? w.secretValue) : '']),
    '',
  );
}

export function formatPluginList(
  r: { plugins: PluginStatus[]; rejected: Array<{ dir: string; error: string }> },
  language: Language = cliLanguage(),
): string {
  const w = WORDS[language];
  const state = (word: string) => stateWord(word, language);
  const lines = [
    r.plugins.length
      ? table(
          [
            [...w.pluginHeader],
            ...r.plugins.map((p) => [
              p.name,
              p.version,
              state(p.kind),
              state(p.origin),
              state(p.state),
              String(p.tools.length),
              p.error ?? '',
            ]),
          ],
          '',
        )
      : w.noPlugins,
  ];
  if (r.rejected.length) lines.push(w.refused, ...r.rejected.map((x) => `  ${x.dir}: ${x.error}`));
  return lines.join('\n');
}

export function formatPlugin(p: PluginStatus, language: Language = cliLanguage()): string {
  const w = WORDS[language];
  const state = (word: string) => stateWord(word, language);
  const tools = p.tools.length ? w.tools(p.tools) : '';
  return `${w.pluginLine(p, state(p.kind), state(p.origin), state(p.state))}${p.error ? ` — ${p.error}` : ''}${tools}`;
}

export function formatPluginHealth(
  r: { plugins: Array<{ name: string; state: string; ok: boolean; detail: string }> },
  language: Language = cliLanguage(),
): string {
  const w = WORDS[language];
  return table(
    r.plugins.map((p) => [p.ok ? w.healthOk : w.healthFail, p.name, stateWord(p.state, language), p.detail]),
    '',
  );
}

/**
 * `homeagentctl changes [list]|show|diff|rollback|commit`: the change sets of the plugins tree that
 * the change tracker recorded (the `changes.*` control methods). A person reads here what the
 * agent, the web page or an install did to the plugins, and undoes or keeps it by hand; the
 * supervisor does the same on its own when HomeAgent turns unhealthy during a trial.
 */
import type { ChangeDiff, ChangeSet, ChangeStatus, ChangeSummary, TrackerStatus } from '../api/changes.js';
import type { Language } from '../shared/language.js';
import { localTime } from './automations.js';
import { cliLanguage } from './cli-language.js';
import { runLanguage } from './cli-words.js';
import { type CommandRunOptions, withDaemon } from './command-client.js';
import { CommandUsageError, defineCommand } from './command-module.js';
import { table } from './format.js';

/** homeagentctl's option table entries for changes (merged into its parseArgs options; --limit is shared). */
export const CHANGES_OPTIONS = {
  status: { type: 'string' },
  limit: { type: 'string' },
} as const;

export type ChangesFlags = { [K in keyof typeof CHANGES_OPTIONS]?: string | undefined };

export type ChangesCommand =
  | { command: 'list'; status?: ChangeStatus; limit?: number }
  | { command: 'show' | 'diff' | 'rollback' | 'commit'; id: number };

export class ChangesUsageError extends CommandUsageError {}

/** `homeagentctl changes` for the command catalogue (src/cli/commands.ts): its flags, help and parser. */
export const changesCommand = defineCommand<ChangesFlags>({
  name: 'changes',
  options: CHANGES_OPTIONS,
  usage: [
    {
      synopsis: 'changes [list] [--status trial|committed|rolled_back] [--limit N]',
      about: 'plugin change sets recorded by the change tracker, newest first',
      zh: '变更跟踪器记录的插件变更集，最新的在前',
    },
    {
      synopsis: 'changes show|diff ID',
      about: "one change set's files, or their unified diff",
      zh: '一个变更集的文件，或它们的统一格式差异',
    },
    {
      synopsis: 'changes rollback|commit ID',
      about: 'undo a change set (a committed one gets a new change that reverts it),\nor keep one on trial as the last good state',
      zh: '回滚一个变更集（已提交的会生成一个撤销它的新变更），\n或把试用中的变更集保留为最后的正常状态',
    },
  ],
  parse: (args, flags) => {
    const command = parseChangesCommand(args, flags);
    return (context) => runChanges(command, context);
  },
});

const COMMANDS = 'list, show, diff, rollback or commit';
const COMMANDS_ZH = 'list、show、diff、rollback 或 commit';
const STATUSES: readonly ChangeStatus[] = ['trial', 'committed', 'rolled_back'];
/** The most rows changes.list answers (MAX_LIST_LIMIT of src/tracker/change-tracker.ts). */
const MAX_LIMIT = 1000;

const ALLOWED: Record<ChangesCommand['command'], ReadonlyArray<keyof ChangesFlags>> = {
  list: ['status', 'limit'],
  show: [],
  diff: [],
  rollback: [],
  commit: [],
};

/** The changes flags given on the command line (the parser refuses those its subcommand does not take). */
export function changesFlagsUsed(flags: ChangesFlags): Array<keyof ChangesFlags> {
  return (Object.keys(CHANGES_OPTIONS) as Array<keyof ChangesFlags>).filter((k) => flags[k] !== undefined);
}

/** Reads `changes <sub> …` (positionals after `changes`); no sub-command means list. Throws ChangesUsageError. */
export function parseChangesCommand(positionals: readonly string[], flags: ChangesFlags): ChangesCommand {
  const [sub = 'list', ...rest] = positionals;
  if (!Object.hasOwn(ALLOWED, sub))
    throw new ChangesUsageError(`unknown changes command ${sub}; use ${COMMANDS}`, `未知的 changes 子命令 ${sub}；可用 ${COMMANDS_ZH}`);
  const command = sub as ChangesCommand['command'];
  const stray = changesFlagsUsed(flags).filter((f) => !ALLOWED[command].includes(f));
  if (stray.length > 0)
    throw new ChangesUsageError(`--${stray[0]} does not belong to changes ${command}`, `--${stray[0]} 不属于 changes ${command}`);
  if (command === 'list') {
    if (rest.length > 0)
      throw new ChangesUsageError(
        'changes list takes no arguments (--status S, --limit N)',
        'changes list 不接受参数（用 --status S、--limit N）',
      );
    if (flags.status !== undefined && !(STATUSES as readonly string[]).includes(flags.status)) {
      throw new ChangesUsageError(
        `--status must be ${STATUSES.join(', ')}, not ${JSON.stringify(flags.status)}`,
        `--status 须为 ${STATUSES.join('、')} 之一，而不是 ${JSON.stringify(flags.status)}`,
      );
    }
    return {
      command,
      ...(flags.status !== undefined && { status: flags.status as ChangeStatus }),
      ...(flags.limit !== undefined && { limit: wholeNumber(flags.limit, ['--limit', '--limit'], MAX_LIMIT) }),
    };
  }
  if (rest.length !== 1)
    throw new ChangesUsageError(
      `changes ${command} needs exactly one change ID (homeagentctl changes lists them)`,
      `changes ${command} 需要恰好一个变更 ID（homeagentctl changes 会列出）`,
    );
  return { command, id: wholeNumber(rest[0] as string, ['the change ID', '变更 ID'], Number.MAX_SAFE_INTEGER) };
}

/** `what` names the number in English and in Chinese. */
function wholeNumber(text: string, [what, whatZh]: readonly [string, string], max: number): number {
  const n = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(n) || n < 1 || n > max) {
    const range = max === MAX_LIMIT ? ` up to ${max}` : '';
    const rangeZh = max === MAX_LIMIT ? `（最大 ${max}）` : '';
    throw new ChangesUsageError(
      `${what} must be a positive whole number${range}, not ${JSON.stringify(text)}`,
      `${whatZh} 须为正整数${rangeZh}，而不是 ${JSON.stringify(text)}`,
    );
  }
  return n;
}

/** Runs a parsed command; resolves with the exit code. Daemon errors are thrown (homeagentctl reports them, exit 1). */
export async function runChanges(command: ChangesCommand, options: CommandRunOptions): Promise<number> {
  const language = runLanguage(options);
  return withDaemon(options, undefined, async ({ call, print }) => {
    switch (command.command) {
      case 'list': {
        const params = {
          ...(command.status !== undefined && { status: command.status }),
          ...(command.limit !== undefined && { limit: command.limit }),
        };
        const status = (await call('changes.status', {})) as TrackerStatus;
        const changes = (await call('changes.list', params)) as ChangeSummary[];
        return print({ status, changes }, (r) => formatChangeList(r.status, r.changes, command.status, language));
      }
      case 'show':
        return print((await call('changes.show', { id: command.id })) as ChangeSet, (c) => formatChangeSet(c, language));
      case 'diff':
        return print((await call('changes.diff', { id: command.id })) as ChangeDiff, (d) => formatChangeDiff(d, language));
      case 'rollback':
        return print((await call('changes.rollback', { id: command.id })) as ChangeSet[], (sets) =>
          formatRollback(command.id, sets, language),
        );
      case 'commit':
        return print((await call('changes.commit', { id: command.id })) as ChangeSet[], (sets) => formatCommit(command.id, sets, language));
    }
  });
}

// ---- readable output ----

const when = (iso: string | null): string => {
  if (iso === null) return '';
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? iso : localTime(ms);
};

const ids = (sets: ReadonlyArray<{ id: number }>): string => sets.map((s) => s.id).join(', ');
const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

/** Every sentence the changes command prints around the tracker's records, in both languages. */
const WORDS = {
  en: {
    none: '(none)',
    list: (names: readonly string[]) => names.join(', '),
    off: 'change tracker: off (core.tracker.backend: off); plugin changes are neither recorded nor rolled back',
    tracker: (s: TrackerStatus) =>
      `change tracker: ${s.backend} on ${s.root}, ${plural(s.pending_files, 'file')} differing from the last good state`,
    noTrial: 'no trial under way',
    trial: (since: string, ids: number[], plugins: string) =>
      `trial since ${since}: ${ids.length === 1 ? 'change' : 'changes'} ${ids.join(', ')}; plugins ${plugins}`,
    failedToStart: (plugin: string, error: string) => `  ${plugin} failed to start: ${error}`,
    noSets: 'no change sets recorded',
    noSetsWith: (status: string) => `no change sets with status ${status}`,
    header: ['ID', 'STATUS', 'WHEN', 'ACTOR', 'TOOL', 'PLUGINS', 'FILES'],
    status: (status: string) => status,
    onTrial: 'on trial: not yet part of the last good state',
    committed: 'committed',
    rolledBack: 'rolled back',
    by: (who: string) => `by ${who}`,
    reason: (reason: string) => `: ${reason}`,
    change: (id: number, status: string) => `change ${id}: ${status}`,
    through: (actor: string, tool: string, channel: string | null) =>
      `  by ${actor} through ${tool}${channel === null ? '' : ` (channel ${channel})`}`,
    times: (started: string, finished: string) => `  started ${started}, finished ${finished}`,
    plugins: (plugins: string) => `  plugins ${plugins}`,
    reverts: (id: number) => `  reverts change ${id}`,
    noFiles: 'no files',
    files: (n: number) => `${plural(n, 'file')}:`,
    kept: (kept: boolean) => (kept ? 'kept' : 'not kept'),
    noDiff: (id: number) => `change ${id} has no differences to show`,
    nothingRolledBack: (id: number) => `change ${id}: nothing was rolled back`,
    reverted: (id: number, first: ChangeSet, plugins: string) =>
      `change ${id} was already committed, so change ${first.id} was made to revert it (${plural(first.files.length, 'file')}, plugins ${plugins}); it is on trial like any change.`,
    rolledBackTogether: (id: number, others: readonly ChangeSet[], files: number, plugins: string) =>
      [
        `rolled back change ${id}${others.length === 0 ? '' : ` together with ${others.length === 1 ? 'change' : 'changes'} ${ids(others)} on trial with it`}: ${plural(files, 'file')} restored to the last good state.`,
        `Plugins reloaded: ${plugins}.`,
      ].join(' '),
    nothingCommitted: (id: number) => `change ${id}: nothing was committed`,
    committedSets: (sets: readonly ChangeSet[], plugins: string) =>
      `committed ${sets.length === 1 ? 'change' : 'changes'} ${ids(sets)}: plugins ${plugins} are now part of the last good state.`,
  },
  zh: {
    none: '（无）',
    list: (names: readonly string[]) => names.join('、'),
    off: '改动追踪：关闭（core.tracker.backend: off）；插件的改动既不记录也不能回滚',
    tracker: (s: TrackerStatus) => `改动追踪：${s.backend}，位于 ${s.root}，${s.pending_files} 个文件与上一个正常状态不同`,
    noTrial: '没有正在试运行的改动',
    trial: (since: string, ids: number[], plugins: string) => `试运行自 ${since} 起：改动 ${ids.join(', ')}；插件 ${plugins}`,
    failedToStart: (plugin: string, error: string) => `  ${plugin} 启动失败：${error}`,
    noSets: '没有记录到改动',
    noSetsWith: (status: string) => `没有状态为 ${status} 的改动`,
    header: ['编号', '状态', '时间', '操作者', '工具', '插件', '文件'],
    status: (status: string) => CHANGE_STATUS_ZH[status] ?? status,
    onTrial: '试运行中：尚未成为正常状态的一部分',
    committed: '已确认',
    rolledBack: '已回滚',
    by: (who: string) => `由 ${who}`,
    reason: (reason: string) => `：${reason}`,
    change: (id: number, status: string) => `改动 ${id}：${status}`,
    through: (actor: string, tool: string, channel: string | null) =>
      `  由 ${actor} 通过 ${tool}${channel === null ? '' : `（渠道 ${channel}）`}`,
    times: (started: string, finished: string) => `  开始 ${started}，结束 ${finished}`,
    plugins: (plugins: string) => `  插件 ${plugins}`,
    reverts: (id: number) => `  撤销改动 ${id}`,
    noFiles: '没有文件',
    files: (n: number) => `${n} 个文件：`,
    kept: (kept: boolean) => (kept ? '已保留' : '未保留'),
    noDiff: (id: number) => `改动 ${id} 没有可显示的差异`,
    nothingRolledBack: (id: number) => `改动 ${id}：没有回滚任何内容`,
    reverted: (id: number, first: ChangeSet, plugins: string) =>
      `改动 ${id} 已经确认，所以生成了改动 ${first.id} 来撤销它（${first.files.length} 个文件，插件 ${plugins}）；它和其他改动一样先试运行。`,
    rolledBackTogether: (id: number, others: readonly ChangeSet[], files: number, plugins: string) =>
      `已回滚改动 ${id}${others.length === 0 ? '' : `，连同一起试运行的改动 ${ids(others)}`}：${files} 个文件恢复到上一个正常状态。已重新加载插件：${plugins}。`,
    nothingCommitted: (id: number) => `改动 ${id}：没有确认任何内容`,
    committedSets: (sets: readonly ChangeSet[], plugins: string) => `已确认改动 ${ids(sets)}：插件 ${plugins} 现在属于正常状态。`,
  },
} as const;

const CHANGE_STATUS_ZH: Record<string, string> = { trial: '试运行', committed: '已确认', rolled_back: '已回滚' };

/** The names, or "(none)". */
const listOf = (names: readonly string[], language: Language): string =>
  names.length === 0 ? WORDS[language].none : WORDS[language].list(names);

/** The tracker line on top of `changes list`, and the trial under way if any. */
export function formatTrackerStatus(s: TrackerStatus, language: Language = cliLanguage()): string {
  const w = WORDS[language];
  if (s.backend === 'off') return w.off;
  const lines = [w.tracker(s)];
  if (s.trial === null) lines.push(w.noTrial);
  else {
    lines.push(w.trial(when(s.trial.started_at), s.trial.change_set_ids, listOf(s.trial.plugins, language)));
    for (const e of s.trial.activation_errors) lines.push(w.failedToStart(e.plugin, e.error));
  }
  return lines.join('\n');
}

export function formatChangeList(
  status: TrackerStatus,
  changes: readonly ChangeSummary[],
  filter?: ChangeStatus,
  language: Language = cliLanguage(),
): string {
  const w = WORDS[language];
  const head = formatTrackerStatus(status, language);
  if (changes.length === 0) return `${head}\n${filter === undefined ? w.noSets : w.noSetsWith(filter)}`;
  const rows = changes.map((c) => [
    String(c.id),
    w.status(c.status),
    when(c.started_at),
    c.actor,
    c.tool,
    listOf(c.plugins, language),
    String(c.file_count),
  ]);
  return `${head}\n${table([[...w.header], ...rows], '')}`;
}

/** `3f2a1b0c` of a hex sha256, `-` for no content (added or deleted). */
const shortSha = (sha: string | null): string => (sha === null ? '-' : sha.slice(0, 8));

/** What happened to a change set after it was recorded, in words. */
function decision(c: ChangeSet, language: Language): string {
  const w = WORDS[language];
  if (c.status === 'trial') return w.onTrial;
  const parts = [c.status === 'committed' ? w.committed : w.rolledBack, when(c.decided_at), c.decided_by && w.by(c.decided_by)];
  return `${parts.filter(Boolean).join(' ')}${c.reason === null ? '' : w.reason(c.reason)}`;
}

export function formatChangeSet(c: ChangeSet, language: Language = cliLanguage()): string {
  const w = WORDS[language];
  const lines = [
    w.change(c.id, w.status(c.status)),
    w.through(c.actor, c.tool, c.channel),
    w.times(when(c.started_at), when(c.finished_at)),
    w.plugins(listOf(c.plugins, language)),
    `  ${decision(c, language)}`,
  ];
  if (c.reverts !== null) lines.push(w.reverts(c.reverts));
  if (c.files.length === 0) lines.push(w.noFiles);
  else {
    lines.push(w.files(c.files.length));
    const rows = c.files.map((f) => [f.op, f.path, `${shortSha(f.sha256_before).padEnd(8)} → ${shortSha(f.sha256_after)}`, w.kept(f.kept)]);
    lines.push(
      table(rows, '')
        .split('\n')
        .map((line) => `  ${line}`)
        .join('\n'),
    );
  }
  return lines.join('\n');
}

/** The unified diff, then a note for each file whose contents could not be shown. */
export function formatChangeDiff(d: ChangeDiff, language: Language = cliLanguage()): string {
  const notes = d.files.filter((f) => f.note !== null).map((f) => `# ${f.op} ${f.path}: ${f.note}`);
  const text = d.text.replace(/\n$/, '');
  if (text === '' && notes.length === 0) return WORDS[language].noDiff(d.id);
  return [text, ...notes].filter((part) => part !== '').join('\n');
}

export function formatRollback(id: number, sets: readonly ChangeSet[], language: Language = cliLanguage()): string {
  const w = WORDS[language];
  const [first] = sets;
  if (first === undefined) return w.nothingRolledBack(id);
  if (first.reverts === id) return w.reverted(id, first, listOf(first.plugins, language));
  const others = sets.filter((s) => s.id !== id);
  const files = sets.reduce((n, s) => n + s.files.length, 0);
  const plugins = [...new Set(sets.flatMap((s) => s.plugins))].sort();
  return w.rolledBackTogether(id, others, files, listOf(plugins, language));
}

export function formatCommit(id: number, sets: readonly ChangeSet[], language: Language = cliLanguage()): string {
  const w = WORDS[language];
  if (sets.length === 0) return w.nothingCommitted(id);
  const plugins = [...new Set(sets.flatMap((s) => s.plugins))].sort();
  return w.committedSets(sets, listOf(plugins, language));
}

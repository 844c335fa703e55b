/**
 * `homeagentctl changes [list]|show|diff|rollback|commit`: the change sets of the plugins tree that
 * the change tracker recorded (the `changes.*` control methods). A person reads here what the
 * agent, the web page or an install did to the plugins, and undoes or keeps it by hand; the
 * supervisor does the same on its own when HomeAgent turns unhealthy during a trial.
 */
import type { ChangeDiff, ChangeSet, ChangeStatus, ChangeSummary, TrackerStatus } from '../api/changes.js';
import { localTime } from './automations.js';
import { type CommandRunOptions, withDaemon } from './command-client.js';
import { defineCommand } from './command-module.js';
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

export class ChangesUsageError extends Error {}

/** `homeagentctl changes` for the command catalogue (src/cli/commands.ts): its flags, help and parser. */
export const changesCommand = defineCommand<ChangesFlags>({
  name: 'changes',
  options: CHANGES_OPTIONS,
  usage: [
    {
      synopsis: 'changes [list] [--status trial|committed|rolled_back] [--limit N]',
      about: 'plugin change sets recorded by the change tracker, newest first',
    },
    { synopsis: 'changes show|diff ID', about: "one change set's files, or their unified diff" },
    {
      synopsis: 'changes rollback|commit ID',
      about: 'undo a change set (a committed one gets a new change that reverts it),\nor keep one on trial as the last good state',
    },
  ],
  parse: (args, flags) => {
    const command = parseChangesCommand(args, flags);
    return (context) => runChanges(command, context);
  },
});

const COMMANDS = 'list, show, diff, rollback or commit';
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
  if (!Object.hasOwn(ALLOWED, sub)) throw new ChangesUsageError(`unknown changes command ${sub}; use ${COMMANDS}`);
  const command = sub as ChangesCommand['command'];
  const stray = changesFlagsUsed(flags).filter((f) => !ALLOWED[command].includes(f));
  if (stray.length > 0) throw new ChangesUsageError(`--${stray[0]} does not belong to changes ${command}`);
  if (command === 'list') {
    if (rest.length > 0) throw new ChangesUsageError('changes list takes no arguments (--status S, --limit N)');
    if (flags.status !== undefined && !(STATUSES as readonly string[]).includes(flags.status)) {
      throw new ChangesUsageError(`--status must be ${STATUSES.join(', ')}, not ${JSON.stringify(flags.status)}`);
    }
    return {
      command,
      ...(flags.status !== undefined && { status: flags.status as ChangeStatus }),
      ...(flags.limit !== undefined && { limit: wholeNumber(flags.limit, '--limit', MAX_LIMIT) }),
    };
  }
  if (rest.length !== 1) throw new ChangesUsageError(`changes ${command} needs exactly one change ID (homeagentctl changes lists them)`);
  return { command, id: wholeNumber(rest[0] as string, 'the change ID', Number.MAX_SAFE_INTEGER) };
}

function wholeNumber(text: string, what: string, max: number): number {
  const n = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(n) || n < 1 || n > max) {
    const range = max === MAX_LIMIT ? ` up to ${max}` : '';
    throw new ChangesUsageError(`${what} must be a positive whole number${range}, not ${JSON.stringify(text)}`);
  }
  return n;
}

/** Runs a parsed command; resolves with the exit code. Daemon errors are thrown (homeagentctl reports them, exit 1). */
export async function runChanges(command: ChangesCommand, options: CommandRunOptions): Promise<number> {
  return withDaemon(options, undefined, async ({ call, print }) => {
    switch (command.command) {
      case 'list': {
        const params = {
          ...(command.status !== undefined && { status: command.status }),
          ...(command.limit !== undefined && { limit: command.limit }),
        };
        const status = (await call('changes.status', {})) as TrackerStatus;
        const changes = (await call('changes.list', params)) as ChangeSummary[];
        return print({ status, changes }, (r) => formatChangeList(r.status, r.changes, command.status));
      }
      case 'show':
        return print((await call('changes.show', { id: command.id })) as ChangeSet, formatChangeSet);
      case 'diff':
        return print((await call('changes.diff', { id: command.id })) as ChangeDiff, formatChangeDiff);
      case 'rollback':
        return print((await call('changes.rollback', { id: command.id })) as ChangeSet[], (sets) => formatRollback(command.id, sets));
      case 'commit':
        return print((await call('changes.commit', { id: command.id })) as ChangeSet[], (sets) => formatCommit(command.id, sets));
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
const listOf = (names: readonly string[]): string => (names.length === 0 ? '(none)' : names.join(', '));

/** The tracker line on top of `changes list`, and the trial under way if any. */
export function formatTrackerStatus(s: TrackerStatus): string {
  if (s.backend === 'off') {
    return 'change tracker: off (core.tracker.backend: off); plugin changes are neither recorded nor rolled back';
  }
  const lines = [`change tracker: ${s.backend} on ${s.root}, ${plural(s.pending_files, 'file')} differing from the last good state`];
  if (s.trial === null) lines.push('no trial under way');
  else {
    lines.push(
      `trial since ${when(s.trial.started_at)}: ${s.trial.change_set_ids.length === 1 ? 'change' : 'changes'} ${s.trial.change_set_ids.join(', ')}; plugins ${listOf(s.trial.plugins)}`,
    );
    for (const e of s.trial.activation_errors) lines.push(`  ${e.plugin} failed to start: ${e.error}`);
  }
  return lines.join('\n');
}

export function formatChangeList(status: TrackerStatus, changes: readonly ChangeSummary[], filter?: ChangeStatus): string {
  const head = formatTrackerStatus(status);
  if (changes.length === 0) {
    return `${head}\n${filter === undefined ? 'no change sets recorded' : `no change sets with status ${filter}`}`;
  }
  const rows = changes.map((c) => [String(c.id), c.status, when(c.started_at), c.actor, c.tool, listOf(c.plugins), String(c.file_count)]);
  return `${head}\n${table([['ID', 'STATUS', 'WHEN', 'ACTOR', 'TOOL', 'PLUGINS', 'FILES'], ...rows], '')}`;
}

/** `3f2a1b0c` of a hex sha256, `-` for no content (added or deleted). */
const shortSha = (sha: string | null): string => (sha === null ? '-' : sha.slice(0, 8));

/** What happened to a change set after it was recorded, in words. */
function decision(c: ChangeSet): string {
  if (c.status === 'trial') return 'on trial: not yet part of the last good state';
  const parts = [c.status === 'committed' ? 'committed' : 'rolled back', when(c.decided_at), c.decided_by && `by ${c.decided_by}`];
  return `${parts.filter(Boolean).join(' ')}${c.reason === null ? '' : `: ${c.reason}`}`;
}

export function formatChangeSet(c: ChangeSet): string {
  const lines = [
    `change ${c.id}: ${c.status}`,
    `  by ${c.actor} through ${c.tool}${c.channel === null ? '' : ` (channel ${c.channel})`}`,
    `  started ${when(c.started_at)}, finished ${when(c.finished_at)}`,
    `  plugins ${listOf(c.plugins)}`,
    `  ${decision(c)}`,
  ];
  if (c.reverts !== null) lines.push(`  reverts change ${c.reverts}`);
  if (c.files.length === 0) lines.push('no files');
  else {
    lines.push(`${plural(c.files.length, 'file')}:`);
    const rows = c.files.map((f) => [
      f.op,
      f.path,
      `${shortSha(f.sha256_before).padEnd(8)} → ${shortSha(f.sha256_after)}`,
      f.kept ? 'kept' : 'not kept',
    ]);
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
export function formatChangeDiff(d: ChangeDiff): string {
  const notes = d.files.filter((f) => f.note !== null).map((f) => `# ${f.op} ${f.path}: ${f.note}`);
  const text = d.text.replace(/\n$/, '');
  if (text === '' && notes.length === 0) return `change ${d.id} has no differences to show`;
  return [text, ...notes].filter((part) => part !== '').join('\n');
}

export function formatRollback(id: number, sets: readonly ChangeSet[]): string {
  const [first] = sets;
  if (first === undefined) return `change ${id}: nothing was rolled back`;
  if (first.reverts === id) {
    return `change ${id} was already committed, so change ${first.id} was made to revert it (${plural(first.files.length, 'file')}, plugins ${listOf(first.plugins)}); it is on trial like any change.`;
  }
  const others = sets.filter((s) => s.id !== id);
  const files = sets.reduce((n, s) => n + s.files.length, 0);
  const plugins = [...new Set(sets.flatMap((s) => s.plugins))].sort();
  return [
    `rolled back change ${id}${others.length === 0 ? '' : ` together with ${others.length === 1 ? 'change' : 'changes'} ${ids(others)} on trial with it`}: ${plural(files, 'file')} restored to the last good state.`,
    `Plugins reloaded: ${listOf(plugins)}.`,
  ].join(' ');
}

export function formatCommit(id: number, sets: readonly ChangeSet[]): string {
  if (sets.length === 0) return `change ${id}: nothing was committed`;
  const plugins = [...new Set(sets.flatMap((s) => s.plugins))].sort();
  return `committed ${sets.length === 1 ? 'change' : 'changes'} ${ids(sets)}: plugins ${listOf(plugins)} are now part of the last good state.`;
}

/**
 * Control methods of the change tracker, used by `homeagentctl changes` and the web page's Changes
 * view: list, show and diff change sets, commit the trial, roll a change back, and the tracker's
 * status. Ids arrive as numbers from the CLI and as strings from the web page's forms, so both
 * are accepted and checked here with errors that say what was wrong. Commit and rollback are
 * audited with the caller as actor (the tracker audits what they did to the files as well).
 */
import { Type } from '@sinclair/typebox';
import type { AuditRecord } from '../log/logger.js';
import type { ControlMethodRegistrar } from '../shared/control-method.js';
import { HomeAgentError } from '../shared/errors.js';
import { type ChangeTracker, DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT } from './change-tracker.js';
import type { ChangeDiff, ChangeSet, ChangeStatus, ChangeSummary, TrackerStatus } from './change-types.js';

/** The tracker as the methods use it (ChangeTracker fits). */
export type ChangeControl = Pick<ChangeTracker, 'list' | 'show' | 'diff' | 'commit' | 'rollback' | 'status'>;

export interface ChangeMethodOptions {
  /** The LogManager: commits and rollbacks write an audit record. */
  logs: { audit(record: AuditRecord): void };
}

const STATUSES: readonly ChangeStatus[] = ['trial', 'committed', 'rolled_back'];

// Checked by hand (see idOf) so a wrong id is answered with what is expected, not "expected union".
const IdParams = Type.Object({
  id: Type.Unknown({ description: 'Change set id: a whole number from 1, as a number or a string of digits.' }),
});

export function registerChangeMethods(control: ControlMethodRegistrar, tracker: ChangeControl, options: ChangeMethodOptions): void {
  control.register({
    name: 'changes.list',
    description: `Change sets of the plugins tree, newest first (without their files): id, status (trial, committed, rolled_back), actor, tool, plugins, file count, times and who decided; limit 1–${MAX_LIST_LIMIT}, default ${DEFAULT_LIST_LIMIT}; status filters.`,
    params: Type.Object({ limit: Type.Optional(Type.Unknown()), status: Type.Optional(Type.Unknown()) }),
    handler: ({ limit, status }): ChangeSummary[] => {
      const count = limit === undefined ? DEFAULT_LIST_LIMIT : wholeNumber('changes.list', 'limit', limit, MAX_LIST_LIMIT);
      if (status !== undefined && !STATUSES.includes(status as ChangeStatus)) {
        throw invalid(`changes.list: params.status must be one of ${STATUSES.join(', ')}; got ${shown(status)}`);
      }
      return tracker.list({ limit: count, ...(status !== undefined && { status: status as ChangeStatus }) });
    },
  });

  control.register({
    name: 'changes.show',
    description:
      'One change set with its files: path, op (add, modify, delete), SHA-256 before and after, and whether the contents were kept.',
    params: IdParams,
    handler: ({ id }): ChangeSet => tracker.show(idOf('changes.show', id)),
  });

  control.register({
    name: 'changes.diff',
    description:
      'The unified diff of a change set, per file and as one text; binary files and contents that were not kept are described instead.',
    params: IdParams,
    handler: ({ id }): Promise<ChangeDiff> => tracker.diff(idOf('changes.diff', id)),
  });

  control.register({
    name: 'changes.commit',
    description:
      'Commit the change on trial that this change set belongs to (with every change set of that trial) as the last good state of the plugins, without waiting for the supervisor. Answers the committed change sets.',
    params: IdParams,
    handler: async ({ id }, caller): Promise<ChangeSet[]> => {
      const changeId = idOf('changes.commit', id);
      const sets = await tracker.commit(changeId, caller.actor);
      options.logs.audit({ actor: caller.actor, action: 'changes.commit', id: changeId, change_sets: sets.map((s) => s.id) });
      return sets;
    },
  });

  control.register({
    name: 'changes.rollback',
    description:
      'Roll a change set back. On trial: the whole trial is undone and the plugins reloaded; answers the rolled back change sets. Committed: its files are put back as they were before it (refused when a later change touched them or their contents were not kept), recorded as a new change on trial; answers that new change set.',
    params: IdParams,
    handler: async ({ id }, caller): Promise<ChangeSet[]> => {
      const changeId = idOf('changes.rollback', id);
      const sets = await tracker.rollback(changeId, caller.actor);
      options.logs.audit({ actor: caller.actor, action: 'changes.rollback', id: changeId, change_sets: sets.map((s) => s.id) });
      return sets;
    },
  });

  control.register({
    name: 'changes.status',
    description:
      'The change tracker: back end (overlay, userspace or off), the plugins tree it tracks, its state folder, how many files differ from the last good state, and the trial in progress.',
    params: Type.Object({}),
    handler: (): Promise<TrackerStatus> => tracker.status(),
  });
}

function idOf(method: string, value: unknown): number {
  return wholeNumber(method, 'id', value, Number.MAX_SAFE_INTEGER);
}

/** A whole number from 1 to max, given as a number or a string of digits. */
function wholeNumber(method: string, name: string, value: unknown, max: number): number {
  const number =
    typeof value === 'number' ? value : typeof value === 'string' && /^[0-9]{1,16}$/.test(value.trim()) ? Number(value.trim()) : Number.NaN;
  if (!Number.isSafeInteger(number) || number < 1 || number > max) {
    throw invalid(
      `${method}: params.${name} must be a whole number from 1 to ${max}, as a number or a string of digits; got ${shown(value)}`,
    );
  }
  return number;
}

function shown(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 60)}…` : text;
}

function invalid(message: string): HomeAgentError {
  return new HomeAgentError('HA_ERR_RPC_INVALID_PARAMS', message);
}

/**
 * A stand-in for the change tracker's control methods (`changes.*`, issue 10) and the supervisor's
 * `health`, answering the shapes of src/api/changes.ts and src/api/health.ts
 * from memory. The CLI, web API and page tests drive their code against it: those only show and
 * forward what the methods answer, and the real tracker has its own tests. It keeps the tracker's
 * rules that the callers must handle: a trial set is committed or rolled back together with the
 * rest of its trial, a committed set is undone by a new set that reverts it, a decided set refuses
 * both (HA_ERR_CHANGE_STATE), an unknown id is HA_ERR_CHANGE_NOT_FOUND, and `off` refuses all but
 * `changes.status` with HA_ERR_TRACKER_OFF.
 */
import { type Static, type TSchema, Type } from '@sinclair/typebox';
import type { ComponentHealth, HealthAnswer } from '../../src/api/health.js';
import type { Caller } from '../../src/sdk/control.js';
import { HomeAgentError } from '../../src/shared/errors.js';
import type { ChangeDiff, ChangeSet, ChangeSummary, TrackerStatus, TrialState } from '../../src/tracker/change-types.js';

/** Registers one control method (ControlRegistry.register, or the web API harness's method). */
export type DefineMethod = <P extends TSchema>(name: string, params: P, handler: (params: Static<P>, caller: Caller) => unknown) => void;

const Id = Type.Object({ id: Type.Integer({ minimum: 1 }) }, { additionalProperties: false });
const ListParams = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
    status: Type.Optional(Type.Union([Type.Literal('trial'), Type.Literal('committed'), Type.Literal('rolled_back')])),
  },
  { additionalProperties: false },
);

const SHA = (c: string) => c.repeat(64);

/** Three change sets: 1 committed, 2 rolled back by the supervisor, 3 on trial with three files. */
export function sampleChangeSets(): ChangeSet[] {
  return [
    {
      id: 1,
      actor: 'agent',
      tool: 'files_write',
      channel: 'webui',
      started_at: '2026-01-05T07:00:00.000Z',
      finished_at: '2026-01-05T07:00:01.000Z',
      status: 'committed',
      plugins: ['weather'],
      files: [{ path: 'weather/index.js', op: 'modify', sha256_before: SHA('a'), sha256_after: SHA('b'), kept: true }],
      decided_at: '2026-01-05T07:00:31.000Z',
      decided_by: 'supervisor',
      reason: null,
      reverts: null,
    },
    {
      id: 2,
      actor: 'webui:admin',
      tool: 'plugins.install',
      channel: null,
      started_at: '2026-01-05T08:00:00.000Z',
      finished_at: '2026-01-05T08:00:02.000Z',
      status: 'rolled_back',
      plugins: ['clock'],
      files: [{ path: 'clock/plugin.json', op: 'add', sha256_before: null, sha256_after: SHA('c'), kept: true }],
      decided_at: '2026-01-05T08:00:32.000Z',
      decided_by: 'supervisor',
      reason: 'plugin:clock failed its health ping 3 times in a row',
      reverts: null,
    },
    {
      id: 3,
      actor: 'agent',
      tool: 'cmd_run',
      channel: 'webui',
      started_at: '2026-01-05T09:00:00.000Z',
      finished_at: '2026-01-05T09:00:04.000Z',
      status: 'trial',
      plugins: ['weather'],
      files: [
        { path: 'weather/extra.js', op: 'add', sha256_before: null, sha256_after: SHA('d'), kept: true },
        { path: 'weather/index.js', op: 'modify', sha256_before: SHA('b'), sha256_after: SHA('e'), kept: true },
        { path: 'weather/radar.png', op: 'delete', sha256_before: SHA('f'), sha256_after: null, kept: false },
      ],
      decided_at: null,
      decided_by: null,
      reason: null,
      reverts: null,
    },
  ];
}

/** The diff of a set: unified text for kept text files, a note for the others. */
function diffOf(set: ChangeSet): ChangeDiff {
  const files = set.files.map((f) => {
    if (!f.kept) return { path: f.path, op: f.op, diff: null, note: 'contents not kept (binary or larger than max_kept_file_bytes)' };
    const diff =
      f.op === 'add'
        ? `--- /dev/null\n+++ b/${f.path}\n@@ -0,0 +1 @@\n+export const extra = 1;\n`
        : `--- a/${f.path}\n+++ b/${f.path}\n@@ -1 +1 @@\n-export const version = 1;\n+export const version = ${set.id};\n`;
    return { path: f.path, op: f.op, diff, note: null };
  });
  return { id: set.id, files, text: files.map((f) => f.diff ?? '').join('') };
}

export interface FakeTrackerOptions {
  /** core.tracker.backend: off — every method but changes.status refuses with HA_ERR_TRACKER_OFF. */
  off?: boolean;
  sets?: ChangeSet[];
  /** Components `health` answers (default: every kernel component ok). */
  components?: ComponentHealth[];
}

export interface FakeTracker {
  sets: ChangeSet[];
  trial(): TrialState | null;
  status(): TrackerStatus;
  health(): HealthAnswer;
  /** Sets the components `health` answers. */
  setComponents(components: ComponentHealth[]): void;
}

export const TRACKER_ROOT = '/var/lib/homeagent/plugins';
const NOW = '2026-01-05T09:30:00.000Z';

export function okComponent(name: string, detail = 'fine'): ComponentHealth {
  return {
    name,
    kind: name.startsWith('plugin:') ? 'plugin' : 'kernel',
    status: 'ok',
    detail,
    detail_zh: detail,
    since: '2026-01-05T06:00:00.000Z',
    failures: 0,
  };
}

/** Registers changes.list|show|diff|commit|rollback|status and health through `define`. */
export function fakeChangeTracker(define: DefineMethod, options: FakeTrackerOptions = {}): FakeTracker {
  const sets = options.sets ?? sampleChangeSets();
  let components = options.components ?? ['event_loop', 'state_db', 'memory', 'llm', 'tracker'].map((n) => okComponent(n));
  const trialSets = () => sets.filter((s) => s.status === 'trial');
  const trial = (): TrialState | null => {
    const on = trialSets();
    if (on.length === 0) return null;
    return {
      change_set_ids: on.map((s) => s.id),
      started_at: on[0]?.finished_at ?? NOW,
      plugins: [...new Set(on.flatMap((s) => s.plugins))].sort(),
      activation_errors: [],
    };
  };
  const status = (): TrackerStatus => ({
    backend: options.off ? 'off' : 'userspace',
    root: TRACKER_ROOT,
    state_dir: '/var/lib/homeagent/tracker',
    pending_files: trialSets().reduce((n, s) => n + s.files.length, 0),
    trial: options.off ? null : trial(),
  });
  const find = (id: number): ChangeSet => {
    const set = sets.find((s) => s.id === id);
    if (!set) throw new HomeAgentError('HA_ERR_CHANGE_NOT_FOUND', `no change set ${id} (homeagentctl changes lists them)`);
    return set;
  };
  const guard = () => {
    if (options.off) throw new HomeAgentError('HA_ERR_TRACKER_OFF', 'the change tracker is off (core.tracker.backend: off)');
  };
  const decide = (list: ChangeSet[], status: ChangeSet['status'], by: string, reason: string | null) => {
    for (const s of list) Object.assign(s, { status, decided_at: NOW, decided_by: by, reason });
    return list.map((s) => structuredClone(s));
  };

  define('changes.status', Type.Object({}), () => status());
  define('changes.list', ListParams, ({ limit, status }) => {
    guard();
    const rows: ChangeSummary[] = [...sets]
      .reverse()
      .filter((s) => status === undefined || s.status === status)
      .map(({ files, ...rest }) => ({ ...rest, file_count: files.length }));
    return rows.slice(0, limit ?? 50);
  });
  define('changes.show', Id, ({ id }) => {
    guard();
    return structuredClone(find(id));
  });
  define('changes.diff', Id, ({ id }) => {
    guard();
    return diffOf(find(id));
  });
  define('changes.commit', Id, ({ id }, caller) => {
    guard();
    const set = find(id);
    if (set.status !== 'trial') throw new HomeAgentError('HA_ERR_CHANGE_STATE', `change set ${id} is ${set.status}, not on trial`);
    return decide(trialSets(), 'committed', caller.actor, null);
  });
  define('changes.rollback', Id, ({ id }, caller) => {
    guard();
    const set = find(id);
    if (set.status === 'rolled_back') throw new HomeAgentError('HA_ERR_CHANGE_STATE', `change set ${id} is already rolled back`);
    if (set.status === 'trial') return decide(trialSets(), 'rolled_back', caller.actor, `rolled back by ${caller.actor}`);
    const revert: ChangeSet = {
      ...structuredClone(set),
      id: Math.max(...sets.map((s) => s.id)) + 1,
      actor: caller.actor,
      tool: 'changes.rollback',
      channel: null,
      started_at: NOW,
      finished_at: NOW,
      status: 'trial',
      files: set.files.map((f) => ({ ...f, sha256_before: f.sha256_after, sha256_after: f.sha256_before })),
      decided_at: null,
      decided_by: null,
      reverts: set.id,
    };
    sets.push(revert);
    return [structuredClone(revert)];
  });
  define('health', Type.Object({}), () => health());

  const health = (): HealthAnswer => {
    const rank = { ok: 0, degraded: 1, failed: 2 } as const;
    const worst = components.reduce<ComponentHealth['status']>((w, c) => (rank[c.status] > rank[w] ? c.status : w), 'ok');
    return {
      status: worst,
      healthy: !components.some((c) => c.kind === 'kernel' && c.status === 'failed'),
      checked_at: NOW,
      components: structuredClone(components),
      trial: options.off ? null : trial(),
    };
  };
  return {
    sets,
    trial,
    status,
    health,
    setComponents: (next) => {
      components = next;
    },
  };
}

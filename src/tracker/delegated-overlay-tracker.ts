/**
 * The overlay back end as the production daemon runs it: hardened, as an unprivileged user, unable
 * to mount. systemd mounts <data>/plugins (var-lib-homeagent-plugins.mount) before the daemon
 * starts; the daemon reads the layers directly for pending() and readGood(), and hands commit and
 * rollback — unmount, change the layers, remount — to the root oneshot homeagent-tracker-apply
 * (tracker-helper.ts) through two files in <stateDir>: it writes request.json, which the path unit
 * homeagent-tracker-apply.path turns into a run of the helper, and waits for result.json with the
 * same id. A request is only valid for the instance that waits for it: one that times out, or one
 * left by an earlier run, is withdrawn, so a late helper never acts behind a caller's back.
 */
import { randomUUID } from 'node:crypto';
import { type FSWatcher, watch } from 'node:fs';
import { chown, lstat, open, readdir, readFile, realpath, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Logger } from '../log/logger.js';
import { HomeAgentError } from '../shared/errors.js';
import { mergedViewOpaqueProbe, pendingFromUpper, readLayerFile } from './overlay-apply.js';
import { type OverlayLayout, overlayLayout } from './overlay-layout.js';
import { treePathParts } from './tree-manifest.js';
import type { FileChange, TrackerBackend } from './types.js';

/** The request the daemon leaves for the helper, and the names of the exchange files in <stateDir>. */
export interface TrackerRequest {
  id: string;
  op: 'commit' | 'rollback';
  requested_at: string;
}

/** The helper's answer. id is null when the request was too damaged to read one. */
export interface TrackerResult {
  id: string | null;
  ok: boolean;
  error?: string;
  /** rollback: what it undid. */
  undone?: FileChange[];
}

export const REQUEST_FILE = 'request.json';
export const RESULT_FILE = 'result.json';
/** The helper renames request.json to this before acting, so a withdrawal can never race its work. */
export const CLAIMED_REQUEST_FILE = 'request.claimed.json';

/** Requests are a few dozen bytes; anything much larger is not one. */
const MAX_REQUEST_BYTES = 4096;
/** fs.watch can miss events (and is not available everywhere), so the answer is also polled. */
const RESULT_POLL_MS = 200;
const APPLY_PATH_UNIT = 'homeagent-tracker-apply.path';
const RECOVER_UNIT = 'homeagent-tracker-recover.service';

export interface DelegatedOverlayTrackerOptions {
  /** The merged mount point: where plugins are loaded from and written to. */
  root: string;
  /** Holds overlay/{lower,upper,work}, the journal and the exchange files; outside root. */
  stateDir: string;
  /** core.tracker.apply_timeout_ms: how long to wait for the helper to answer a request. */
  applyTimeoutMs: number;
  log?: Logger;
  /** The mount table to check; /proc/self/mountinfo by default (tests pass their own). */
  readMountinfo?: () => Promise<string>;
  now?: () => Date;
}

export class DelegatedOverlayTracker implements TrackerBackend {
  readonly kind = 'overlay' as const;
  readonly root: string;
  private readonly layout: OverlayLayout;
  private readonly stateDir: string;
  /** Every operation runs alone: a pending() during a commit would read layers being merged. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: DelegatedOverlayTrackerOptions) {
    if (!Number.isInteger(options.applyTimeoutMs) || options.applyTimeoutMs <= 0) {
      throw new HomeAgentError('HA_ERR_CONFIG_INVALID', `tracker applyTimeoutMs must be a positive integer, got ${options.applyTimeoutMs}`);
    }
    this.layout = overlayLayout(options.root, options.stateDir);
    this.root = this.layout.merged;
    this.stateDir = dirname(this.layout.base);
  }

  start(): Promise<void> {
    return this.serial(async () => {
      await this.requireOverlayMount();
      if (await exists(this.layout.journal)) {
        throw new HomeAgentError(
          'HA_ERR_TRACKER_STATE',
          `a commit or rollback of the plugins overlay was interrupted (${this.layout.journal} is left) and is finished only before the mount: ` +
            `stop homeagent and ${mountUnitName(this.root)}, restart ${RECOVER_UNIT}, then start homeagent (or reboot)`,
        );
      }
      // Whoever wrote these is gone; a helper acting on them now would change the tree unasked.
      for (const name of [REQUEST_FILE, RESULT_FILE]) {
        const path = join(this.stateDir, name);
        if (await exists(path)) {
          this.options.log?.warn({ file: path }, 'removing a plugins overlay request or answer an earlier run left behind');
          await rm(path, { force: true });
        }
      }
    });
  }

  /** The mount belongs to systemd: nothing to undo. */
  async stop(): Promise<void> {}

  pending(): Promise<FileChange[]> {
    return this.serial(() => this.pendingNow());
  }

  readGood(path: string): Promise<Buffer | null> {
    return this.serial(() => readLayerFile(this.layout.lower, path));
  }

  commit(): Promise<void> {
    return this.serial(async () => {
      await this.requireOverlayMount();
      if (await this.upperIsEmpty()) return;
      await this.delegate('commit');
      this.options.log?.info('the tracker helper committed the pending plugin changes');
    });
  }

  rollback(): Promise<FileChange[]> {
    return this.serial(async () => {
      const undone = await this.pendingNow();
      // A chmod-only copy-up lists no content change but still has to go, hence the upper check.
      if (await this.upperIsEmpty()) return undone;
      const result = await this.delegate('rollback');
      this.options.log?.info({ files: undone.length }, 'the tracker helper rolled back the pending plugin changes');
      return result.undone ?? undone;
    });
  }

  private async pendingNow(): Promise<FileChange[]> {
    await this.requireOverlayMount();
    const { upper, lower, merged } = this.layout;
    // The daemon cannot read trusted.* xattrs, so opacity is told from the live merged view.
    return pendingFromUpper(upper, lower, mergedViewOpaqueProbe(upper, lower, merged));
  }

  /** Writes a request, waits for its answer, and fails with the helper's reason when it did not succeed. */
  private async delegate(op: TrackerRequest['op']): Promise<TrackerResult> {
    const requestPath = join(this.stateDir, REQUEST_FILE);
    const resultPath = join(this.stateDir, RESULT_FILE);
    const request: TrackerRequest = { id: randomUUID(), op, requested_at: (this.options.now?.() ?? new Date()).toISOString() };
    await rm(resultPath, { force: true });
    await writeFileDurably(requestPath, JSON.stringify(request));
    let result: TrackerResult;
    try {
      result = await this.awaitResult(request.id, op);
    } finally {
      // Withdrawn when unanswered; already claimed (and so gone) when answered.
      await rm(requestPath, { force: true });
    }
    await rm(resultPath, { force: true });
    if (!result.ok) {
      throw new HomeAgentError(
        'HA_ERR_TRACKER_APPLY',
        `homeagent-tracker-apply could not ${op} the plugins overlay: ${result.error ?? 'no reason given'}`,
      );
    }
    // Plugins are reloaded from the tree next; make sure it is the overlay again, not the empty folder under it.
    await this.requireOverlayMount();
    return result;
  }

  private awaitResult(id: string, op: string): Promise<TrackerResult> {
    const resultPath = join(this.stateDir, RESULT_FILE);
    const timeoutMs = this.options.applyTimeoutMs;
    return new Promise<TrackerResult>((resolve, reject) => {
      let settled = false;
      let watcher: FSWatcher | undefined;
      const settle = (finish: () => void): void => {
        if (settled) return;
        settled = true;
        clearInterval(poll);
        clearTimeout(timer);
        watcher?.close();
        finish();
      };
      const check = (): void => {
        readAnswer(resultPath).then(
          (result) => {
            if (result?.id === id) settle(() => resolve(result));
          },
          (error: unknown) =>
            settle(() =>
              reject(new HomeAgentError('HA_ERR_TRACKER_APPLY', `cannot read the tracker helper's answer ${resultPath}`, { cause: error })),
            ),
        );
      };
      const poll = setInterval(check, RESULT_POLL_MS);
      const timer = setTimeout(
        () =>
          settle(() =>
            reject(
              new HomeAgentError(
                'HA_ERR_TRACKER_APPLY',
                `homeagent-tracker-apply did not answer the ${op} request within ${timeoutMs} ms (core.tracker.apply_timeout_ms); ` +
                  `check systemctl status ${APPLY_PATH_UNIT} homeagent-tracker-apply.service`,
              ),
            ),
          ),
        timeoutMs,
      );
      try {
        watcher = watch(this.stateDir, (_event, name) => {
          if (name === RESULT_FILE) check();
        });
        watcher.on('error', () => watcher?.close());
      } catch {
        // No inotify left (or no fs.watch here): the poll alone finds the answer.
      }
      check();
    });
  }

  /** Throws unless root is the overlay whose upper layer is ours. */
  private async requireOverlayMount(): Promise<void> {
    const mountinfo = await (this.options.readMountinfo ?? (() => readFile('/proc/self/mountinfo', 'utf8')))();
    const point = await realpath(this.root).catch(() => this.root);
    const mount = findMount(mountinfo, point);
    const unit = mountUnitName(this.root);
    if (mount?.fstype !== 'overlay') {
      throw new HomeAgentError(
        'HA_ERR_TRACKER_MOUNT',
        `${this.root} is not mounted as the plugins overlay (${mount ? `it is a ${mount.fstype} mount` : 'nothing is mounted there'}): ` +
          `start ${unit} (systemctl start ${unit}), or set core.tracker.backend to userspace`,
      );
    }
    const upperdir = mount.options.get('upperdir');
    if (upperdir === undefined || !(await samePath(upperdir, this.layout.upper))) {
      throw new HomeAgentError(
        'HA_ERR_TRACKER_MOUNT',
        `${this.root} is an overlay whose upper layer is ${upperdir ?? 'missing'}, not ${this.layout.upper}: ` +
          `${unit} and core.tracker.state_dir disagree`,
      );
    }
  }

  private async upperIsEmpty(): Promise<boolean> {
    return (await readdir(this.layout.upper)).length === 0;
  }

  private serial<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work, work);
    this.queue = run.catch(() => {});
    return run;
  }
}

/** The helper's answer in result.json, or null when there is none (yet) or it is not one. */
async function readAnswer(path: string): Promise<TrackerResult | null> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  return parseResult(text);
}

export function parseResult(text: string): TrackerResult | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (!isRecord(value) || (typeof value.id !== 'string' && value.id !== null) || typeof value.ok !== 'boolean') return null;
  const result: TrackerResult = { id: value.id, ok: value.ok };
  if (typeof value.error === 'string') result.error = value.error;
  if (value.undone !== undefined) {
    if (!Array.isArray(value.undone) || !value.undone.every(isFileChange)) return null;
    result.undone = value.undone;
  }
  return result;
}

/** Reads a request; a damaged one answers why, with its id when one could be read. */
export function parseRequest(text: string): { ok: true; request: TrackerRequest } | { ok: false; id: string | null; error: string } {
  const bytes = Buffer.byteLength(text);
  if (bytes > MAX_REQUEST_BYTES) return { ok: false, id: null, error: `the request is ${bytes} bytes, more than ${MAX_REQUEST_BYTES}` };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, id: null, error: 'the request is not JSON' };
  }
  if (!isRecord(value)) return { ok: false, id: null, error: 'the request is not a JSON object' };
  const id = typeof value.id === 'string' && value.id !== '' && value.id.length <= 200 ? value.id : null;
  if (id === null) return { ok: false, id: null, error: 'the request has no id (a non-empty string)' };
  if (value.op !== 'commit' && value.op !== 'rollback')
    return { ok: false, id, error: `the request op is ${JSON.stringify(value.op)}, not commit or rollback` };
  if (typeof value.requested_at !== 'string') return { ok: false, id, error: 'the request has no requested_at' };
  return { ok: true, request: { id, op: value.op, requested_at: value.requested_at } };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isFileChange(value: unknown): value is FileChange {
  if (!isRecord(value) || typeof value.path !== 'string') return false;
  try {
    treePathParts(value.path);
  } catch {
    return false;
  }
  const hash = (h: unknown) => h === null || (typeof h === 'string' && /^[0-9a-f]{64}$/.test(h));
  return (value.op === 'add' || value.op === 'modify' || value.op === 'delete') && hash(value.sha256_before) && hash(value.sha256_after);
}

/**
 * Writes a file so that after a crash it is either absent or complete (temp, fsync, rename, fsync
 * of the folder), owned by `owner` when given: the helper runs as root but answers the daemon user.
 */
export async function writeFileDurably(path: string, text: string, owner?: { uid: number; gid: number }): Promise<void> {
  const temp = `${path}.tmp`;
  await writeFile(temp, text, { mode: 0o644 });
  const file = await open(temp, 'r+');
  try {
    await file.sync();
  } finally {
    await file.close();
  }
  if (owner !== undefined) await chown(temp, owner.uid, owner.gid);
  await rename(temp, path);
  const dir = await open(dirname(path), 'r');
  try {
    await dir.sync();
  } finally {
    await dir.close();
  }
}

export interface MountEntry {
  fstype: string;
  source: string;
  /** Filesystem-specific options (overlay: lowerdir, upperdir, workdir, ...), unescaped. */
  options: Map<string, string>;
}

/**
 * The mount at `mountPoint` in /proc/self/mountinfo text, the top one when several are stacked;
 * null when there is none. Paths there carry space, tab, newline and backslash (and, in option
 * values, ',' and '=') as octal escapes.
 */
export function findMount(mountinfo: string, mountPoint: string): MountEntry | null {
  let found: MountEntry | null = null;
  for (const line of mountinfo.split('\n')) {
    const fields = line.split(' ');
    const separator = fields.indexOf('-', 6);
    if (separator < 0 || fields[4] === undefined || unescapeOctal(fields[4]) !== mountPoint) continue;
    const options = new Map<string, string>();
    for (const option of (fields[separator + 3] ?? '').split(',')) {
      const equals = option.indexOf('=');
      if (equals > 0) options.set(option.slice(0, equals), unescapeOctal(option.slice(equals + 1)));
      else if (option !== '') options.set(option, '');
    }
    found = { fstype: fields[separator + 1] ?? '', source: unescapeOctal(fields[separator + 2] ?? ''), options };
  }
  return found;
}

function unescapeOctal(text: string): string {
  return text.replace(/\\([0-7]{3})/g, (_, oct: string) => String.fromCharCode(Number.parseInt(oct, 8)));
}

/** The systemd mount unit for a path, escaped as `systemd-escape --path --suffix=mount` does. */
export function mountUnitName(path: string): string {
  const trimmed = path.split('/').filter((part) => part !== '');
  if (trimmed.length === 0) return '-.mount';
  const escaped = [...Buffer.from(trimmed.join('/'))]
    .map((byte, index) => {
      const char = String.fromCharCode(byte);
      if (char === '/') return '-';
      if (/[A-Za-z0-9:_]/.test(char) || (char === '.' && index > 0)) return char;
      return `\\x${byte.toString(16).padStart(2, '0')}`;
    })
    .join('');
  return `${escaped}.mount`;
}

async function samePath(a: string, b: string): Promise<boolean> {
  if (a === b) return true;
  const [realA, realB] = await Promise.all([realpath(a).catch(() => a), realpath(b).catch(() => b)]);
  return realA === realB;
}

async function exists(path: string): Promise<boolean> {
  return lstat(path).then(
    () => true,
    () => false,
  );
}

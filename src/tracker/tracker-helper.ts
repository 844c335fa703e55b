/**
 * The privileged half of the production overlay back end: `homeagent tracker-apply` and
 * `homeagent tracker-recover`, run as root by systemd units the hardened daemon cannot replace
 * (it has no mount privilege). tracker-recover runs once per boot before the plugins overlay is
 * mounted: it finishes what a crash interrupted, throws away a trial the machine did not survive,
 * and hands the layers to the daemon user. tracker-apply runs whenever the daemon leaves a request
 * (homeagent-tracker-apply.path): unmount, merge or discard the upper layer, remount, answer.
 * Both are OverlayTracker underneath, so the journal and crash handling are the tested ones.
 */
import { lchown, lstat, mkdir, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { type Logger, LogManager } from '../log/logger.js';
import { describeError } from '../shared/errors.js';
import { EXIT_CODES } from '../shared/exit-codes.js';
import {
  CLAIMED_REQUEST_FILE,
  parseRequest,
  REQUEST_FILE,
  RESULT_FILE,
  type TrackerRequest,
  type TrackerResult,
  writeFileDurably,
} from './delegated-overlay-tracker.js';
import type { FaultHook } from './overlay-apply.js';
import { overlayLayout } from './overlay-layout.js';
import { type OverlayMounter, OverlayTracker, SystemOverlayMounter } from './overlay-tracker.js';
import { trialMarkerPath } from './trial-marker.js';

export const TRACKER_HELPER_USAGE = `usage: homeagent tracker-apply --root DIR --state-dir DIR
       homeagent tracker-recover --root DIR --state-dir DIR`;

export interface TrackerHelperDeps {
  log?: Logger;
  /** The real mount(8)/umount(8) by default. */
  mounter?: OverlayMounter;
  /**
   * Tests: called after each durable step of commit and rollback. A throw from it acts as the
   * helper being killed there: nothing more is done (no answer, no remount) and it is rethrown.
   */
  faultAfter?: FaultHook;
}

interface HelperPaths {
  root: string;
  stateDir: string;
}

/** Runs `tracker-apply` or `tracker-recover` (argv[0]) and answers the process exit code. */
export async function runTrackerHelper(argv: string[], deps: TrackerHelperDeps = {}): Promise<number> {
  const [command, ...rest] = argv;
  let paths: HelperPaths;
  try {
    if (command !== 'tracker-apply' && command !== 'tracker-recover') throw new Error(`unknown tracker command ${command ?? '(none)'}`);
    paths = parsePaths(rest);
  } catch (error) {
    process.stderr.write(`homeagent ${command ?? ''}: ${describeError(error)}\n${TRACKER_HELPER_USAGE}\n`);
    return EXIT_CODES.USAGE;
  }
  const log = deps.log ?? new LogManager({ level: 'info', levels: {} }).child('tracker');
  try {
    return await (command === 'tracker-apply' ? apply(paths, deps, log) : recover(paths, deps, log));
  } catch (error) {
    if (killedBy.has(error as object)) throw error;
    log.error({ err: error, error: describeError(error) }, `homeagent ${command} failed`);
    return EXIT_CODES.FAILURE;
  }
}

/** Errors thrown by deps.faultAfter: a simulated kill, which must leave everything as it is. */
const killedBy = new WeakSet<object>();

function parsePaths(argv: string[]): HelperPaths {
  const { values } = parseArgs({
    args: argv,
    options: { root: { type: 'string' }, 'state-dir': { type: 'string' } },
    allowPositionals: false,
  });
  if (!values.root || !values['state-dir']) throw new Error('--root DIR and --state-dir DIR are both required');
  return { root: resolve(values.root), stateDir: resolve(values['state-dir']) };
}

/**
 * Takes the waiting request (a rename, so the daemon withdrawing it cannot race the work), runs
 * it, and answers in result.json, owned by the daemon user. Without a request it does nothing: a
 * path unit can fire for a request the daemon has just withdrawn.
 */
async function apply({ root, stateDir }: HelperPaths, deps: TrackerHelperDeps, log: Logger): Promise<number> {
  const claimed = join(stateDir, CLAIMED_REQUEST_FILE);
  try {
    await rename(join(stateDir, REQUEST_FILE), claimed);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    log.info('no plugins overlay request is waiting');
    return EXIT_CODES.OK;
  }
  const parsed = parseRequest(await readFile(claimed, 'utf8'));
  let result: TrackerResult;
  if (parsed.ok) {
    log.info({ id: parsed.request.id, op: parsed.request.op }, 'applying a plugins overlay request');
    result = await runRequest(parsed.request, { root, stateDir }, deps, log);
  } else {
    result = { id: parsed.id, ok: false, error: `malformed request ${join(stateDir, REQUEST_FILE)}: ${parsed.error}` };
  }
  await writeFileDurably(join(stateDir, RESULT_FILE), JSON.stringify(result), await ownerOf(stateDir));
  await rm(claimed, { force: true });
  if (result.ok) {
    log.info({ id: result.id, files: result.undone?.length }, 'plugins overlay request done');
    return EXIT_CODES.OK;
  }
  log.error({ id: result.id, error: result.error }, 'plugins overlay request failed');
  return parsed.ok ? EXIT_CODES.FAILURE : EXIT_CODES.DATA_ERROR;
}

async function runRequest(request: TrackerRequest, paths: HelperPaths, deps: TrackerHelperDeps, log: Logger): Promise<TrackerResult> {
  let killed = false;
  const faultAfter = deps.faultAfter;
  const tracker = new OverlayTracker({
    ...paths,
    mounter: deps.mounter ?? new SystemOverlayMounter(),
    log,
    // The mount belongs to the systemd mount unit; this helper only borrows it.
    leaveMountedOnStop: true,
    ...(faultAfter
      ? {
          faultAfter: (step: string) => {
            try {
              faultAfter(step);
            } catch (error) {
              killed = true;
              if (typeof error === 'object' && error !== null) killedBy.add(error);
              throw error;
            }
          },
        }
      : {}),
  });
  try {
    // Finishes a journal an earlier, killed run left, and mounts if that run could not.
    await tracker.start();
    if (request.op === 'commit') {
      await tracker.commit();
      return { id: request.id, ok: true };
    }
    return { id: request.id, ok: true, undone: await tracker.rollback() };
  } catch (error) {
    if (killed) throw error;
    let message = describeError(error);
    // A failure part-way may have left the overlay unmounted, or a journal to finish: start()
    // repairs both, so the daemon is never left looking at the empty folder under the mount.
    try {
      await tracker.start();
      // Both operations end with an empty upper layer (and the daemon asks only when it is not
      // empty): then the operation went through, e.g. only the remount failed, or start()
      // finished it from its journal, and that is what the answer must say.
      if ((await readdir(overlayLayout(paths.root, paths.stateDir).upper)).length === 0) {
        log.warn(
          { id: request.id, op: request.op, err: error },
          'a plugins overlay operation failed part-way but is complete after the repair',
        );
        return { id: request.id, ok: true };
      }
    } catch (again) {
      message += `; the overlay could not be mounted again: ${describeError(again)}`;
    }
    return { id: request.id, ok: false, error: message };
  }
}

/**
 * Before the mount unit: finish an interrupted commit or rollback, discard the pending changes if
 * a trial was still running when the machine went down (the daemon then finds the marker, nothing
 * pending, and records the rollback), drop requests whose sender is gone, and give the layers to
 * the owner of the state folder (the daemon user), who must own the upper layer's root to write
 * through the mount.
 */
async function recover({ root, stateDir }: HelperPaths, deps: TrackerHelperDeps, log: Logger): Promise<number> {
  const owner = await ensureStateDir(stateDir);
  // Any phase, 'committing' too: the change tracker tells a commit that went through from one that
  // did not by the files, and a discarded upper layer simply reads as "did not".
  const trial = await exists(trialMarkerPath(stateDir));
  const tracker = new OverlayTracker({
    root,
    stateDir,
    mounter: deps.mounter ?? new SystemOverlayMounter(),
    log,
    leaveMountedOnStop: true,
  });
  const outcome = await tracker.recoverUnmounted({ discardPending: trial });
  for (const name of [REQUEST_FILE, CLAIMED_REQUEST_FILE, RESULT_FILE]) await rm(join(stateDir, name), { force: true });
  const layout = overlayLayout(root, stateDir);
  for (const dir of [layout.base, layout.lower, layout.upper, layout.work, layout.merged]) await lchown(dir, owner.uid, owner.gid);
  log.info(
    { finished: outcome.finished, discarded_trial: outcome.discarded, trial_marker: trial, owner },
    'plugins overlay layers are ready to mount',
  );
  return EXIT_CODES.OK;
}

/**
 * The state folder's owner, creating the folder first when missing (the first boot, before the
 * daemon ever ran), owned like the data folder that holds it.
 */
async function ensureStateDir(stateDir: string): Promise<{ uid: number; gid: number }> {
  if (!(await exists(stateDir))) {
    const parent = await stat(dirname(stateDir));
    await mkdir(stateDir, { recursive: true, mode: 0o750 });
    await lchown(stateDir, parent.uid, parent.gid);
  }
  return ownerOf(stateDir);
}

async function ownerOf(path: string): Promise<{ uid: number; gid: number }> {
  const stats = await stat(path);
  return { uid: stats.uid, gid: stats.gid };
}

async function exists(path: string): Promise<boolean> {
  return lstat(path).then(
    () => true,
    () => false,
  );
}

/**
 * The change tracker back end that needs no mount privilege (development machines, unprivileged
 * tests): the last good state is a full copy of the plugins tree under `<stateDir>/good`, made with
 * copy-on-write clones where the filesystem has reflinks so unchanged files share blocks.
 *
 * commit builds `good.new` from the tree, then swaps: good → good.old, good.new → good, remove
 * good.old. Which of the three folders exist tells start() how far a crashed swap got, so it can
 * finish or undo it. rollback first writes a journal of the steps that make the tree equal to
 * `good` (each step is safe to repeat), then runs them; start() replays a journal left by a crash.
 * Everything uses lstat and removes a path before writing it, so a symlink inside the tree (even
 * one pointing out of it) is handled as a link and never written through. Copies, the journal and
 * the folders holding renamed entries are fsynced before the step that relies on them, so power
 * loss (SD cards) also leaves the old or the new state.
 */
import { constants } from 'node:fs';
import {
  chmod,
  copyFile,
  type FileHandle,
  lstat,
  mkdir,
  open,
  readdir,
  readFile,
  readlink,
  rename,
  rm,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import type { Logger } from '../log/logger.js';
import { HomeAgentError } from '../shared/errors.js';
import { diffManifests, FileHashCache, manifestOf, treePathParts } from './tree-manifest.js';
import type { FileChange, TrackerBackend, TreeManifest } from './types.js';

export interface UserspaceTrackerOptions {
  /** The plugins tree (what plugins see and write). */
  root: string;
  /** Where the good copy and the rollback journal live; must not be inside `root`. */
  stateDir: string;
  log?: Logger;
  /** Test hook: called after each durable step of commit and rollback; throwing there acts as a crash. */
  faultAfter?: (step: string) => void;
}

/** One repeatable step that brings the tree closer to the good copy. */
type RestoreStep =
  | { do: 'remove'; path: string }
  | { do: 'mkdir'; path: string }
  | { do: 'copy'; path: string }
  | { do: 'link'; path: string; target: string }
  | { do: 'chmod'; path: string; mode: number };

interface RollbackJournal {
  changes: FileChange[];
  steps: RestoreStep[];
}

type EntryKind = 'dir' | 'file' | 'link' | 'other';

export class UserspaceTracker implements TrackerBackend {
  readonly kind = 'userspace';
  readonly root: string;
  private readonly stateDir: string;
  private readonly good: string;
  private readonly goodNew: string;
  private readonly goodOld: string;
  private readonly journal: string;
  private readonly log: Logger | undefined;
  private readonly faultAfter: (step: string) => void;
  /** pending() runs on every status request and supervisor round: unchanged files are not read again. */
  private readonly goodHashes = new FileHashCache();
  private readonly rootHashes = new FileHashCache();
  /** commit, rollback and start run one at a time: each assumes the folders stay as it left them. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(options: UserspaceTrackerOptions) {
    this.root = options.root;
    this.stateDir = options.stateDir;
    this.good = join(options.stateDir, 'good');
    this.goodNew = join(options.stateDir, 'good.new');
    this.goodOld = join(options.stateDir, 'good.old');
    this.journal = join(options.stateDir, 'rollback.json');
    this.log = options.log;
    this.faultAfter = options.faultAfter ?? (() => {});
  }

  start(): Promise<void> {
    return this.serial(async () => {
      const inside = relative(resolve(this.root), resolve(this.stateDir));
      if (inside === '' || (!inside.startsWith('..') && !isAbsolute(inside)))
        // The good copy would be part of the tree it tracks: every commit would copy itself.
        throw new HomeAgentError('HA_ERR_TRACKER_STATE', `tracker state folder ${this.stateDir} is inside the plugins tree ${this.root}`);
      await mkdir(this.root, { recursive: true });
      await mkdir(this.stateDir, { recursive: true });
      await this.recoverSwap();
      if (!(await exists(this.good))) {
        // First start: the tree as found is the first good state. Built aside so a crash here
        // leaves no `good` and the next start simply begins again.
        await rm(this.goodNew, { recursive: true, force: true });
        await copyTree(this.root, this.goodNew);
        await rename(this.goodNew, this.good);
        await flush(this.stateDir);
        this.log?.info({ root: this.root }, 'tracker: first good state copied from the plugins tree');
      }
      await this.replayJournal();
    });
  }

  async stop(): Promise<void> {
    // Nothing is held open; waiting for a running commit or rollback is all stop() owes.
    await this.queue.catch(() => {});
  }

  async pending(): Promise<FileChange[]> {
    const [good, now] = await Promise.all([manifestOf(this.good, this.goodHashes), manifestOf(this.root, this.rootHashes)]);
    return diffManifests(good, now);
  }

  async readGood(path: string): Promise<Buffer | null> {
    const parts = treePathParts(path);
    // Every part is checked with lstat: a link in the good copy must not lead the read outside it.
    let full = this.good;
    for (const part of parts) {
      full = join(full, part);
      const kind = await kindOf(full);
      if (kind === undefined || kind === 'link' || kind === 'other') return null;
    }
    return (await kindOf(full)) === 'file' ? readFile(full) : null;
  }

  commit(): Promise<void> {
    return this.serial(async () => {
      await rm(this.goodNew, { recursive: true, force: true });
      await copyTree(this.root, this.goodNew);
      this.faultAfter('commit:copied');
      await rename(this.good, this.goodOld);
      this.faultAfter('commit:old-moved');
      await rename(this.goodNew, this.good);
      this.faultAfter('commit:swapped');
      await flush(this.stateDir);
      await rm(this.goodOld, { recursive: true, force: true });
      this.log?.info({ root: this.root }, 'tracker: committed the plugins tree as the good state');
    });
  }

  rollback(): Promise<FileChange[]> {
    return this.serial(async () => {
      const [goodFiles, rootFiles] = await Promise.all([manifestOf(this.good, this.goodHashes), manifestOf(this.root, this.rootHashes)]);
      const changes = diffManifests(goodFiles, rootFiles);
      const steps: RestoreStep[] = [];
      const chmods: RestoreStep[] = [];
      await planRestore({ good: this.good, root: this.root, goodFiles, rootFiles, steps, chmods }, '', true);
      const plan: RollbackJournal = { changes, steps: [...steps, ...chmods.reverse()] };
      if (plan.steps.length === 0) return [];
      // Written aside and renamed: start() sees either no journal or a whole one.
      await writeFile(`${this.journal}.tmp`, JSON.stringify(plan));
      await flush(`${this.journal}.tmp`);
      await rename(`${this.journal}.tmp`, this.journal);
      await flush(this.stateDir);
      this.faultAfter('rollback:journaled');
      await this.runSteps(plan.steps);
      await this.dropJournal();
      this.log?.info({ root: this.root, undone: changes.length }, 'tracker: rolled the plugins tree back to the good state');
      return changes;
    });
  }

  /** Finishes or undoes a swap that a crash interrupted (see the header for the order). */
  private async recoverSwap(): Promise<void> {
    const [hasGood, hasNew, hasOld] = await Promise.all([exists(this.good), exists(this.goodNew), exists(this.goodOld)]);
    if (hasOld && !hasGood && hasNew) {
      // good.new was complete before the first rename, so the swap can be finished.
      await rename(this.goodNew, this.good);
      this.log?.warn('tracker: finished a commit interrupted by a crash');
    } else if (hasOld && !hasGood) {
      await rename(this.goodOld, this.good);
      this.log?.warn('tracker: restored the good state from an interrupted commit');
    }
    if (hasGood && hasNew && !hasOld) this.log?.warn('tracker: discarded a commit interrupted by a crash');
    // Only leftovers remain now: a half-built good.new (commit not swapped) or good.old (already swapped).
    await rm(this.goodNew, { recursive: true, force: true });
    await rm(this.goodOld, { recursive: true, force: true });
  }

  private async replayJournal(): Promise<void> {
    await rm(`${this.journal}.tmp`, { force: true });
    let text: string;
    try {
      text = await readFile(this.journal, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw error;
    }
    let plan: RollbackJournal;
    try {
      plan = JSON.parse(text) as RollbackJournal;
    } catch (cause) {
      throw new HomeAgentError('HA_ERR_TRACKER_STATE', `tracker rollback journal ${this.journal} is unreadable`, { cause });
    }
    await this.runSteps(plan.steps);
    await this.dropJournal();
    this.log?.warn({ undone: plan.changes.length }, 'tracker: finished a rollback interrupted by a crash');
  }

  /** The restored tree reaches the disk before the journal that would redo it goes away (power loss). */
  private async runSteps(steps: RestoreStep[]): Promise<void> {
    const touched = new Set<string>([this.root]);
    for (const step of steps) {
      const parts = treePathParts(step.path); // a journal is data: never trust it to stay in the tree
      const target = join(this.root, ...parts);
      switch (step.do) {
        case 'remove':
          await rm(target, { recursive: true, force: true });
          break;
        case 'mkdir':
          // Kept when already a folder: a replayed journal must not wipe what later steps restored.
          if ((await kindOf(target)) !== 'dir') {
            await rm(target, { recursive: true, force: true });
            await mkdir(target);
          }
          break;
        case 'copy':
          await rm(target, { recursive: true, force: true });
          // EXCL: if something raced a link into place, fail rather than write through it.
          await copyFile(join(this.good, ...parts), target, constants.COPYFILE_FICLONE | constants.COPYFILE_EXCL);
          touched.add(target);
          break;
        case 'link':
          await rm(target, { recursive: true, force: true });
          await symlink(step.target, target);
          break;
        case 'chmod':
          if ((await kindOf(target)) !== 'link') await chmod(target, step.mode);
          break;
      }
      touched.add(dirname(target));
      this.faultAfter(`rollback:${step.do}`);
    }
    for (const path of touched) {
      const kind = await kindOf(path);
      if (kind === 'file' || kind === 'dir') await flush(path);
    }
  }

  private async dropJournal(): Promise<void> {
    await rm(this.journal, { force: true });
    await flush(this.stateDir);
  }

  private serial<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work, work);
    this.queue = run.catch(() => {});
    return run;
  }
}

interface RestorePlan {
  good: string;
  root: string;
  goodFiles: TreeManifest;
  rootFiles: TreeManifest;
  steps: RestoreStep[];
  chmods: RestoreStep[];
}

/**
 * The steps that turn `root/rel` into `good/rel`: wrong or extra entries removed first, then folders
 * made, files copied and links set; folder modes go last (in `chmods`) so a read-only folder is
 * filled before it is locked.
 * `rootIsDir`: root/rel is a real folder now; otherwise it is about to be made and is not looked
 * into (it may be a link out of the tree).
 */
async function planRestore(plan: RestorePlan, rel: string, rootIsDir: boolean): Promise<void> {
  const { good, root, goodFiles, rootFiles, steps, chmods } = plan;
  const goodNames = await readdir(join(good, rel));
  const rootNames = rootIsDir ? await readdir(join(root, rel)) : [];
  const wanted = new Set(goodNames);
  for (const name of rootNames.sort()) if (!wanted.has(name)) steps.push({ do: 'remove', path: joinRel(rel, name) });
  for (const name of goodNames.sort()) {
    const path = joinRel(rel, name);
    const goodStat = await lstat(join(good, path));
    const want = kindOfStat(goodStat);
    let have = rootIsDir ? await kindOf(join(root, path)) : undefined;
    const mode = goodStat.mode & 0o7777;
    if (have !== undefined && have !== want) {
      steps.push({ do: 'remove', path });
      have = undefined;
    }
    if (want === 'dir') {
      if (have === undefined) steps.push({ do: 'mkdir', path });
      await planRestore(plan, path, have === 'dir');
      if (have === undefined || (await modeOf(join(root, path))) !== mode) chmods.push({ do: 'chmod', path, mode });
    } else if (want === 'file') {
      if (have === undefined || goodFiles.files.get(path) !== rootFiles.files.get(path)) steps.push({ do: 'copy', path });
      else if ((await modeOf(join(root, path))) !== mode) steps.push({ do: 'chmod', path, mode });
    } else if (want === 'link') {
      const target = await readlink(join(good, path));
      if (have === undefined || (await readlink(join(root, path))) !== target) steps.push({ do: 'link', path, target });
    }
  }
}

/** Copies a tree entry by entry: files as reflink clones where possible (mode kept, synced), links as links. */
async function copyTree(from: string, to: string): Promise<void> {
  const stat = await lstat(from);
  await mkdir(to);
  for (const entry of await readdir(from, { withFileTypes: true })) {
    const source = join(from, entry.name);
    const dest = join(to, entry.name);
    if (entry.isDirectory()) await copyTree(source, dest);
    else if (entry.isSymbolicLink()) await symlink(await readlink(source), dest);
    else if (entry.isFile()) {
      await copyFile(source, dest, constants.COPYFILE_FICLONE);
      await flush(dest);
    }
  }
  await chmod(to, stat.mode & 0o7777);
  await flush(to);
}

/**
 * fsync of a file's data or a folder's entries: a rename is only as durable as what it points at,
 * and an SD card losing power must find either the old or the new state, not empty files.
 */
async function flush(path: string): Promise<void> {
  let handle: FileHandle;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    // A file its mode makes unreadable (to a non-root service) cannot be opened to sync; it is rare
    // in a plugins tree and skipping it only weakens power-loss safety for that one file.
    if ((error as NodeJS.ErrnoException).code === 'EACCES') return;
    throw error;
  }
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

function joinRel(rel: string, name: string): string {
  return rel === '' ? name : `${rel}/${name}`;
}

async function kindOf(path: string): Promise<EntryKind | undefined> {
  try {
    return kindOfStat(await lstat(path));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ENOTDIR') return undefined;
    throw error;
  }
}

function kindOfStat(stat: { isDirectory(): boolean; isFile(): boolean; isSymbolicLink(): boolean }): EntryKind {
  if (stat.isSymbolicLink()) return 'link';
  if (stat.isDirectory()) return 'dir';
  return stat.isFile() ? 'file' : 'other';
}

async function modeOf(path: string): Promise<number | undefined> {
  try {
    return (await lstat(path)).mode & 0o7777;
  } catch {
    return undefined;
  }
}

async function exists(path: string): Promise<boolean> {
  return (await kindOf(path)) !== undefined;
}

/**
 * The overlayfs back end of the change tracker: the lower layer is the last good plugins tree, the
 * upper layer holds every change since, and the merged mount is the tree plugins see. Commit and
 * rollback work on the layers themselves, which is only defined while they are not mounted, so
 * both go unmount → change the layers → remount, with a journal so a crash part-way is finished by
 * the next start. Mounting is behind OverlayMounter: in production a privileged helper owns it (the
 * hardened service has no mount privilege); tests run the real mounter in a private namespace.
 */
import { execFile } from 'node:child_process';
import { cp, lstat, mkdir, open, readdir, readFile, realpath, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import type { Logger } from '../log/logger.js';
import { HomeAgentError } from '../shared/errors.js';
import {
  discardUpper,
  type FaultHook,
  findOpaqueDirs,
  mergedViewOpaqueProbe,
  mergeUpperIntoLower,
  type OpaqueProbe,
  pendingFromUpper,
  readLayerFile,
  xattrOpaqueProbe,
} from './overlay-apply.js';
import { type OverlayJournal, type OverlayLayout, overlayLayout } from './overlay-layout.js';
import { treePathParts } from './tree-manifest.js';
import type { FileChange, TrackerBackend } from './types.js';

const execFileAsync = promisify(execFile);

/** The privileged part: whoever may mount. Never change a layer while it is mounted. */
export interface OverlayMounter {
  mount(lower: string, upper: string, work: string, merged: string): Promise<void>;
  unmount(merged: string): Promise<void>;
  isMounted(merged: string): Promise<boolean>;
}

/**
 * Mounts with mount(8)/umount(8), no shell. redirect_dir and metacopy are forced off so the upper
 * layer only ever holds full files, whiteouts and opaque dirs — what overlay-apply can merge — and
 * index off so a layer changed while unmounted is accepted on the next mount.
 */
export class SystemOverlayMounter implements OverlayMounter {
  async mount(lower: string, upper: string, work: string, merged: string): Promise<void> {
    const options = `lowerdir=${lower},upperdir=${upper},workdir=${work},redirect_dir=off,metacopy=off,index=off`;
    await run('mount', ['-t', 'overlay', 'overlay', '-o', options, merged]);
  }

  async unmount(merged: string): Promise<void> {
    await run('umount', [merged]);
  }

  async isMounted(merged: string): Promise<boolean> {
    const target = await realpath(merged).catch(() => merged);
    const mountinfo = await readFile('/proc/self/mountinfo', 'utf8');
    // Field 5 is the mount point, with space, tab, newline and backslash written as octal escapes.
    return mountinfo.split('\n').some((line) => {
      const point = line.split(' ')[4];
      return (
        point !== undefined && point.replace(/\\([0-7]{3})/g, (_, oct: string) => String.fromCharCode(Number.parseInt(oct, 8))) === target
      );
    });
  }
}

async function run(command: string, args: string[]): Promise<void> {
  try {
    await execFileAsync(command, args);
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr?.trim();
    throw new HomeAgentError('HA_ERR_TRACKER_MOUNT', `${command} ${args.join(' ')} failed${stderr ? `: ${stderr}` : ''}`, { cause: error });
  }
}

export interface OverlayTrackerOptions {
  /** The merged mount point: where plugins are loaded from and written to. */
  root: string;
  /** Holds overlay/{lower,upper,work} and the journal; must be on one filesystem, outside root. */
  stateDir: string;
  mounter: OverlayMounter;
  log?: Logger;
  /** Tests throw from this to simulate a crash after the named step. */
  faultAfter?: FaultHook;
  /**
   * Production: the mount belongs to a systemd mount unit (the hardened service cannot unmount),
   * so stop() leaves it. Default false: stop() undoes the mount start() made.
   */
  leaveMountedOnStop?: boolean;
}

export class OverlayTracker implements TrackerBackend {
  readonly kind = 'overlay' as const;
  readonly root: string;
  private readonly layout: OverlayLayout;

  constructor(private readonly options: OverlayTrackerOptions) {
    this.layout = overlayLayout(options.root, options.stateDir);
    this.root = this.layout.merged;
  }

  async start(): Promise<void> {
    const { lower, upper, work, merged } = this.layout;
    for (const dir of [lower, upper, work, merged]) await mkdir(dir, { recursive: true });
    const journal = await this.readJournal();
    if (journal !== null) {
      this.options.log?.warn({ op: journal.op }, 'finishing an overlay tracker operation a crash interrupted');
      await this.unmountIfMounted();
      await this.finish(journal);
    }
    await this.adoptExistingTree();
    if (!(await this.options.mounter.isMounted(merged))) await this.mount();
  }

  async stop(): Promise<void> {
    if (this.options.leaveMountedOnStop !== true) await this.unmountIfMounted();
  }

  async pending(): Promise<FileChange[]> {
    await this.requireMounted('pending');
    return pendingFromUpper(this.layout.upper, this.layout.lower, this.opaqueProbe());
  }

  readGood(path: string): Promise<Buffer | null> {
    return readLayerFile(this.layout.lower, path);
  }

  async commit(): Promise<void> {
    await this.requireMounted('commit');
    if (await this.upperIsEmpty()) return;
    // Opacity is decided while mounted (the merged-view probe needs the mount) and written to the
    // journal, so a merge resumed after a crash makes the same decisions.
    const opaque = await findOpaqueDirs(this.layout.upper, this.layout.lower, this.opaqueProbe());
    // Unmount before the journal: if the mount is busy (a plugin still has files open) the commit
    // fails here with nothing scheduled, instead of being finished behind the caller's back.
    await this.options.mounter.unmount(this.layout.merged);
    this.fault('commit:unmounted');
    await this.writeJournal({ op: 'commit', opaque });
    this.fault('commit:journal');
    await this.finish({ op: 'commit', opaque });
    await this.mount();
    this.options.log?.info({ opaque_dirs: opaque.length }, 'overlay tracker committed the pending plugin changes');
  }

  async rollback(): Promise<FileChange[]> {
    const undone = await this.pending();
    // A chmod-only copy-up lists no content change but still has to go, hence the upper check.
    if (await this.upperIsEmpty()) return undone;
    await this.options.mounter.unmount(this.layout.merged);
    this.fault('rollback:unmounted');
    await this.writeJournal({ op: 'rollback' });
    this.fault('rollback:journal');
    await this.finish({ op: 'rollback' });
    await this.mount();
    this.options.log?.info({ files: undone.length }, 'overlay tracker rolled back the pending plugin changes');
    return undone;
  }

  /**
   * start() without the mount, for the privileged helper that runs before the systemd mount unit
   * (homeagent-tracker-recover): finishes a commit or rollback a crash interrupted, throws the
   * pending changes away when asked (a trial the machine did not survive), and takes the tree as
   * found as the first good state. Refuses while mounted: the layers may only change unmounted.
   */
  async recoverUnmounted(options: { discardPending: boolean }): Promise<{ finished: OverlayJournal['op'] | null; discarded: boolean }> {
    const { lower, upper, work, merged } = this.layout;
    if (await this.options.mounter.isMounted(merged)) {
      throw new HomeAgentError('HA_ERR_TRACKER_MOUNT', `overlay tracker recovery runs before the mount, but ${merged} is mounted`);
    }
    for (const dir of [lower, upper, work, merged]) await mkdir(dir, { recursive: true });
    const journal = await this.readJournal();
    if (journal !== null) await this.finish(journal);
    // Through the rollback journal, so a crash part-way is finished by the next start either way.
    const discard = options.discardPending && !(await this.upperIsEmpty());
    if (discard) {
      await this.writeJournal({ op: 'rollback' });
      await this.finish({ op: 'rollback' });
    }
    await this.adoptExistingTree();
    return { finished: journal?.op ?? null, discarded: discard };
  }

  /** The unmounted half of commit or rollback; idempotent, so start() can simply run it again. */
  private async finish(journal: OverlayJournal): Promise<void> {
    const { lower, upper, work } = this.layout;
    if (journal.op === 'commit') {
      const opaque = new Set(journal.opaque);
      const hook = this.options.faultAfter;
      await mergeUpperIntoLower(upper, lower, { isOpaque: async (rel) => opaque.has(rel), ...(hook ? { faultAfter: hook } : {}) });
      await this.flushToDisk(lower);
      this.fault('commit:merged');
    }
    await discardUpper(upper, work);
    this.fault(`${journal.op}:discarded`);
    await rm(this.layout.journal, { force: true });
  }

  /**
   * The first start takes the tree as found as the first good state: its contents move into the
   * lower layer (the mount would only hide them otherwise). Done once, marked by a file.
   */
  private async adoptExistingTree(): Promise<void> {
    const { lower, merged, initialised } = this.layout;
    if (await exists(initialised)) return;
    if (!(await this.options.mounter.isMounted(merged))) {
      for (const name of await readdir(merged)) {
        const from = join(merged, name);
        const to = join(lower, name);
        try {
          await rename(from, to);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
          await cp(from, to, { recursive: true, preserveTimestamps: true, verbatimSymlinks: true, errorOnExist: true, force: false });
          await rm(from, { recursive: true, force: true });
        }
      }
    }
    await writeDurably(initialised, '');
  }

  /**
   * The journal may go only once the merged lower layer is on disk, not just in the page cache
   * (a power cut would otherwise leave empty files). node has no syncfs, so sync(1) -f does it;
   * where that fails the kernel's periodic writeback still runs, so it is a warning, not an error.
   */
  private async flushToDisk(dir: string): Promise<void> {
    try {
      await run('sync', ['-f', dir]);
    } catch (error) {
      this.options.log?.warn({ err: error }, 'could not flush the merged lower layer to disk');
    }
  }

  private async mount(): Promise<void> {
    const { lower, upper, work, merged } = this.layout;
    await this.options.mounter.mount(lower, upper, work, merged);
  }

  private async upperIsEmpty(): Promise<boolean> {
    return (await readdir(this.layout.upper)).length === 0;
  }

  private opaqueProbe(): OpaqueProbe {
    const { upper, lower, merged } = this.layout;
    return xattrOpaqueProbe(upper) ?? mergedViewOpaqueProbe(upper, lower, merged);
  }

  private async requireMounted(what: string): Promise<void> {
    if (!(await this.options.mounter.isMounted(this.layout.merged))) {
      throw new HomeAgentError('HA_ERR_UNAVAILABLE', `overlay tracker ${what}: ${this.layout.merged} is not mounted (start() first)`);
    }
  }

  private async unmountIfMounted(): Promise<void> {
    if (await this.options.mounter.isMounted(this.layout.merged)) await this.options.mounter.unmount(this.layout.merged);
  }

  private async readJournal(): Promise<OverlayJournal | null> {
    let text: string;
    try {
      text = await readFile(this.layout.journal, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
    try {
      const journal = JSON.parse(text) as OverlayJournal;
      if (journal.op === 'rollback') return journal;
      if (journal.op === 'commit' && Array.isArray(journal.opaque) && journal.opaque.every((p) => typeof p === 'string')) {
        for (const path of journal.opaque) treePathParts(path);
        return journal;
      }
    } catch {
      // fall through: writeDurably renames a complete file into place, so this is outside tampering
    }
    throw new HomeAgentError(
      'HA_ERR_TRACKER_STATE',
      `overlay tracker journal ${this.layout.journal} is unreadable; inspect the layers by hand`,
    );
  }

  private async writeJournal(journal: OverlayJournal): Promise<void> {
    await writeDurably(this.layout.journal, JSON.stringify(journal));
  }

  private fault(step: string): void {
    this.options.faultAfter?.(step);
  }
}

async function exists(path: string): Promise<boolean> {
  return lstat(path).then(
    () => true,
    () => false,
  );
}

/** Writes a file so that after a crash it is either absent or complete: temp, fsync, rename, fsync dir. */
async function writeDurably(path: string, text: string): Promise<void> {
  const temp = `${path}.tmp`;
  await writeFile(temp, text);
  const file = await open(temp, 'r+');
  try {
    await file.sync();
  } finally {
    await file.close();
  }
  await rename(temp, path);
  const dir = await open(dirname(path), 'r');
  try {
    await dir.sync();
  } finally {
    await dir.close();
  }
}

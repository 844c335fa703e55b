/**
 * A real full disk for the tests of what HomeAgent does when writes fail with ENOSPC: a small
 * tmpfs mounted inside a private mount namespace (the test file runs itself again under
 * `unshare -m` as root, so no mount reaches the host), filled with a filler file until the kernel
 * refuses more, and freed again by removing it. Where that is not possible the reason says why.
 */
import { execFile, execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, unlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { Test } from 'tap';
import { findOnPath } from '../../src/shared/find-on-path.js';

const execFileAsync = promisify(execFile);

/** Set in the re-run child: the test file is inside its private mount namespace. */
const IN_NAMESPACE = 'HOMEAGENT_TEST_SMALL_DISK_NAMESPACE';

export function inSmallDiskNamespace(): boolean {
  return process.env[IN_NAMESPACE] === '1';
}

/** Runs the test file at `fileUrl` again inside a private mount namespace, as a subtest named `name`. */
export async function rerunInSmallDiskNamespace(t: Test, fileUrl: string, name: string): Promise<void> {
  await t.spawn(
    'unshare',
    ['-m', '--propagation', 'private', process.execPath, ...process.execArgv, fileURLToPath(fileUrl)],
    { env: { ...process.env, [IN_NAMESPACE]: '1' } },
    name,
  );
}

/** Why a small tmpfs cannot be mounted here, or null when a trial mount in a private namespace worked. */
export async function smallDiskUnavailable(): Promise<string | null> {
  if (process.platform !== 'linux') return `tmpfs needs Linux (this is ${process.platform})`;
  if (process.getuid?.() !== 0) return 'mounting a tmpfs needs root (run the tests as root to include them)';
  if (findOnPath('unshare') === undefined) return 'unshare(1) from util-linux is not installed';
  const dir = mkdtempSync(join(tmpdir(), 'ha-tmpfs-probe-'));
  try {
    await execFileAsync('unshare', ['-m', '--propagation', 'private', 'mount', '-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', dir]);
    return null;
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr?.trim();
    return `a trial tmpfs mount in a private namespace failed: ${stderr || String(error)}`;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Mounts a tmpfs of `sizeBytes` on a new folder (inside the private namespace the caller runs
 * in) and unmounts it at teardown; answers the folder.
 */
export function mountSmallDisk(t: Test, sizeBytes: number): string {
  const parent = mkdtempSync(join(tmpdir(), 'ha-small-disk-'));
  const dir = join(parent, 'disk');
  mkdirSync(dir);
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeBytes},mode=0755`, 'tmpfs', dir]);
  t.teardown(() => {
    execFileSync('umount', ['-l', dir]);
    rmSync(parent, { recursive: true, force: true });
  });
  return dir;
}

export interface Filler {
  /** Bytes the filler took before the disk refused more. */
  bytes: number;
  /** Removes the filler: the disk has room again. */
  free(): void;
}

/** Writes `<dir>/.filler` until the file system answers ENOSPC (in pages, then byte by byte). */
export function fillDisk(dir: string): Filler {
  const file = join(dir, '.filler');
  const fd = openSync(file, 'wx', 0o600);
  let bytes = 0;
  try {
    for (const size of [1 << 20, 1 << 16, 4096, 1]) {
      const chunk = Buffer.alloc(size, 0x5a);
      for (;;) {
        try {
          bytes += writeSync(fd, chunk);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
          break;
        }
      }
    }
  } finally {
    closeSync(fd);
  }
  return { bytes, free: () => unlinkSync(file) };
}

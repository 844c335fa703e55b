/**
 * Shared by the overlay tracker tests: a mounter that only records calls, and running a test file
 * again inside a private mount namespace (`unshare -m` as root) so its real overlay mounts never
 * reach the host's mount table, or saying why that is not possible here.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { Test } from 'tap';
import { findOnPath } from '../../src/shared/find-on-path.js';
import type { OverlayMounter } from '../../src/tracker/overlay-tracker.js';

const execFileAsync = promisify(execFile);

/** Set in the re-run child: the test file is inside its private mount namespace. */
const IN_NAMESPACE = 'HOMEAGENT_TEST_OVERLAY_NAMESPACE';

export function inPrivateMountNamespace(): boolean {
  return process.env[IN_NAMESPACE] === '1';
}

export class RecordingMounter implements OverlayMounter {
  readonly calls: string[] = [];
  constructor(public mounted = false) {}
  async mount(): Promise<void> {
    this.calls.push('mount');
    this.mounted = true;
  }
  async unmount(): Promise<void> {
    this.calls.push('unmount');
    this.mounted = false;
  }
  async isMounted(): Promise<boolean> {
    return this.mounted;
  }
}

/** Why real overlay mounts cannot be tested here, or null when a tiny trial mount worked. */
export async function overlayUnavailable(): Promise<string | null> {
  if (process.platform !== 'linux') return `overlayfs needs Linux (this is ${process.platform})`;
  if (process.getuid?.() !== 0) return 'mounting overlayfs needs root (run the tests as root to include them)';
  if (findOnPath('unshare') === undefined) return 'unshare(1) from util-linux is not installed';
  const dir = mkdtempSync(join(tmpdir(), 'ha-overlay-probe-'));
  try {
    for (const name of ['lower', 'upper', 'work', 'merged']) mkdirSync(join(dir, name));
    const options = `lowerdir=${dir}/lower,upperdir=${dir}/upper,workdir=${dir}/work`;
    await execFileAsync('unshare', ['-m', '--propagation', 'private', 'mount', '-t', 'overlay', 'overlay', '-o', options, `${dir}/merged`]);
    return null;
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr?.trim();
    return `a trial overlay mount in a private namespace failed: ${stderr || String(error)}`;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Runs the test file at `fileUrl` again inside a private mount namespace, as a subtest named
 * `name`. The child keeps its folders (TAP_SAVE_FIXTURE): tap would remove them in a teardown that
 * runs before the trackers' stop() and so hits live mounts (EBUSY). Once the child has exited its
 * namespace, and every mount with it, is gone, and this removes them.
 */
export async function rerunInPrivateMountNamespace(t: Test, fileUrl: string, name: string): Promise<void> {
  const fixtures = dirname(t.testdirName);
  const prefix = basename(t.testdirName);
  t.teardown(() => {
    for (const entry of readdirSync(fixtures))
      if (entry.startsWith(prefix)) rmSync(join(fixtures, entry), { recursive: true, force: true });
  });
  await t.spawn(
    'unshare',
    ['-m', '--propagation', 'private', process.execPath, ...process.execArgv, fileURLToPath(fileUrl)],
    { env: { ...process.env, [IN_NAMESPACE]: '1', TAP_SAVE_FIXTURE: '1' } },
    name,
  );
}

/**
 * The trial marker: `<stateDir>/trial.json` exists from just before a tracked operation runs until
 * its change is committed or rolled back. Found at start, it means HomeAgent stopped (crash, power
 * cut, SIGKILL) during an operation or a trial, and the untried change must be rolled back: the
 * "uncommitted trial at boot means roll back" rule of A/B updaters (RAUC, Mender, tryboot). So it is
 * written durably (temporary file, fsync, rename, fsync of the folder) before the operation may
 * touch a file, and its removal is made durable too.
 *
 * `phase: 'committing'` is written just before the back end commits: if HomeAgent stops between the
 * back end's commit and the database saying so, the next start checks which state the files are in
 * instead of announcing a rollback of a change that was in fact committed.
 */
import { randomBytes } from 'node:crypto';
import { type FileHandle, open, readFile, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

export interface TrialMarker {
  phase: 'trial' | 'committing';
  /** When the marker was written (ISO). */
  written_at: string;
  /** The change sets being committed (phase committing) and who decided it. */
  change_set_ids: number[];
  by: string | null;
}

export const TRIAL_MARKER_FILE = 'trial.json';

export function trialMarkerPath(stateDir: string): string {
  return join(stateDir, TRIAL_MARKER_FILE);
}

export async function writeTrialMarker(stateDir: string, marker: TrialMarker): Promise<void> {
  await writeDurably(trialMarkerPath(stateDir), `${JSON.stringify(marker)}\n`);
}

/**
 * The marker, if one exists. An unreadable one (cut short by a crash of an older version, edited by
 * hand) still counts as a trial: rolling back an unneeded time is safe, keeping an untried change is not.
 */
export async function readTrialMarker(stateDir: string): Promise<TrialMarker | undefined> {
  let text: string;
  try {
    text = await readFile(trialMarkerPath(stateDir), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    const parsed = JSON.parse(text) as Partial<TrialMarker>;
    const ids = Array.isArray(parsed.change_set_ids) ? parsed.change_set_ids.filter((id) => Number.isSafeInteger(id)) : [];
    return {
      phase: parsed.phase === 'committing' ? 'committing' : 'trial',
      written_at: typeof parsed.written_at === 'string' ? parsed.written_at : '',
      change_set_ids: ids,
      by: typeof parsed.by === 'string' ? parsed.by : null,
    };
  } catch {
    return { phase: 'trial', written_at: '', change_set_ids: [], by: null };
  }
}

export async function removeTrialMarker(stateDir: string): Promise<void> {
  await rm(trialMarkerPath(stateDir), { force: true });
  await syncFolder(stateDir);
}

/**
 * Writes `file` so that after a crash or power cut it holds either its old content or all of the
 * new one: a temporary name in the same folder, fsync, rename, fsync of the folder.
 */
export async function writeDurably(file: string, data: string | Uint8Array): Promise<void> {
  const tmp = join(dirname(file), `.${basename(file)}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`);
  try {
    const handle = await open(tmp, 'wx', 0o640);
    try {
      await handle.writeFile(data);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(tmp, file);
  } catch (error) {
    await rm(tmp, { force: true });
    throw error;
  }
  await syncFolder(dirname(file));
}

/** fsync of a folder, which makes a rename or removal in it durable. */
export async function syncFolder(dir: string): Promise<void> {
  let handle: FileHandle;
  try {
    handle = await open(dir, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  try {
    await handle.sync();
  } catch (error) {
    // Some filesystems refuse fsync on a folder; there is nothing more to do on them.
    if ((error as NodeJS.ErrnoException).code !== 'EINVAL') throw error;
  } finally {
    await handle.close();
  }
}

/**
 * Which change tracker back end runs, from core.tracker.backend and the machine as found: the
 * overlay one where systemd mounts <data>/plugins as an overlay (production), the copying one
 * elsewhere (development, tests). `auto` also picks the overlay when its layers exist but the
 * mount is missing: the plugins then live in the lower layer and the folder under the mount point
 * is empty, so a copying tracker would take that emptiness as the good state. The overlay back end
 * instead refuses to start and names the mount unit to start.
 */
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Logger } from '../log/logger.js';
import { HomeAgentError } from '../shared/errors.js';
import { DelegatedOverlayTracker, findMount } from './delegated-overlay-tracker.js';
import { overlayLayout } from './overlay-layout.js';
import type { TrackerBackend } from './types.js';
import { UserspaceTracker } from './userspace-tracker.js';

export type TrackerBackendSetting = 'auto' | 'overlay' | 'userspace' | 'off';

export interface TrackerBackendChoice {
  /** core.tracker.backend */
  setting: TrackerBackendSetting;
  /** <data>/plugins: the tracked tree. */
  root: string;
  /** core.tracker.state_dir (resolved). */
  stateDir: string;
  /** core.tracker.apply_timeout_ms (overlay back end). */
  applyTimeoutMs: number;
  log?: Logger;
  /** The mount table text `auto` decides by; /proc/self/mountinfo when omitted (tests pass their own). */
  mountinfo?: string;
}

/** The back end to run, or undefined when tracking is off. Nothing is started or created here. */
export function selectTrackerBackend(choice: TrackerBackendChoice): TrackerBackend | undefined {
  if (choice.setting === 'off') return undefined;
  const root = realOrResolved(choice.root);
  const stateDir = realOrResolved(choice.stateDir);
  if (stateDir === root || stateDir.startsWith(`${root}/`)) {
    // Userspace: every commit would copy the copies; overlay: a layer inside its own mount.
    throw new HomeAgentError(
      'HA_ERR_TRACKER_STATE',
      `core.tracker.state_dir ${choice.stateDir} lies inside the plugins tree ${choice.root}; put it beside the tree (the default is <data_dir>/tracker)`,
    );
  }
  const log = choice.log === undefined ? {} : { log: choice.log };
  const overlay = (): TrackerBackend =>
    new DelegatedOverlayTracker({ root: choice.root, stateDir: choice.stateDir, applyTimeoutMs: choice.applyTimeoutMs, ...log });
  const userspace = (): TrackerBackend => new UserspaceTracker({ root: choice.root, stateDir: choice.stateDir, ...log });
  switch (choice.setting) {
    case 'overlay':
      return overlay();
    case 'userspace':
      return userspace();
    case 'auto': {
      const mountinfo = choice.mountinfo ?? readMountinfo();
      if (findMount(mountinfo, root)?.fstype === 'overlay' || overlayLayersExist(choice.root, choice.stateDir)) return overlay();
      return userspace();
    }
  }
}

function overlayLayersExist(root: string, stateDir: string): boolean {
  try {
    return existsSync(overlayLayout(root, stateDir).initialised);
  } catch {
    // Paths overlayfs cannot take (',' or ':' in them): there can be no overlay layers.
    return false;
  }
}

function readMountinfo(): string {
  try {
    return readFileSync('/proc/self/mountinfo', 'utf8');
  } catch {
    // Not Linux: no mounts to find, so no overlay.
    return '';
  }
}

/** The path with symlinks resolved, as the mount table and the kernel see it; as given when it does not exist yet. */
function realOrResolved(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}

/**
 * What systemd does around DelegatedOverlayTracker in production, played in-process for the tests
 * of tracker-delegated.test.ts: a boot runs tracker-recover, then mounts the overlay as the mount
 * unit does, then watches for request.json as homeagent-tracker-apply.path does and runs
 * tracker-apply for each (one at a time, again while a request is waiting, as PathExists= would).
 * A helper run killed by the fault hook takes the simulated machine down: nothing more is done, as
 * after a power cut, until the next boot.
 */

import { type FSWatcher, watch } from 'node:fs';
import { lstat, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { LogManager } from '../../src/log/logger.js';
import { CLAIMED_REQUEST_FILE, REQUEST_FILE, RESULT_FILE, writeFileDurably } from '../../src/tracker/delegated-overlay-tracker.js';
import { overlayLayout } from '../../src/tracker/overlay-layout.js';
import { type OverlayMounter, SystemOverlayMounter } from '../../src/tracker/overlay-tracker.js';
import { runTrackerHelper } from '../../src/tracker/tracker-helper.js';

export const silentLog = () => new LogManager({ level: 'silent', levels: {} }).child('tracker');

export class SimulatedOverlaySystem {
  readonly mounter = new SystemOverlayMounter();
  /** The mounter tracker-apply runs use (the real one unless a test injects failures). */
  helperMounter: OverlayMounter | undefined;
  /** Passed to the next tracker-apply runs; a throw from it is a kill of the helper. */
  faultAfter: ((step: string) => void) | undefined;
  /** Helper runs so far, by exit code (a killed run counts as 'killed'). */
  readonly runs: Array<number | 'killed'> = [];
  /** When set, a killed helper still answers failure, standing in for the daemon's timeout without waiting for it. */
  answerWhenKilled = true;
  #up = false;
  #watcher: FSWatcher | undefined;
  #poll: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;

  constructor(
    readonly root: string,
    readonly stateDir: string,
  ) {}

  get up(): boolean {
    return this.#up;
  }

  /** A power cut drops the mount; then recover before the mount unit, the mount, the path unit. */
  async boot(): Promise<void> {
    this.#stopWatching();
    if (await this.mounter.isMounted(this.root)) await this.mounter.unmount(this.root);
    const code = await runTrackerHelper(['tracker-recover', '--root', this.root, '--state-dir', this.stateDir], { log: silentLog() });
    if (code !== 0) throw new Error(`tracker-recover exited with ${code}`);
    const { lower, upper, work, merged } = overlayLayout(this.root, this.stateDir);
    await this.mounter.mount(lower, upper, work, merged);
    this.#watch();
    this.#up = true;
  }

  /** Stops watching (the end of the test file; mounts go with the private namespace). */
  shutdown(): void {
    this.#stopWatching();
    this.#up = false;
  }

  /** Resolves once no helper run is going on. */
  async idle(): Promise<void> {
    while (this.#running) await this.#running;
  }

  #watch(): void {
    this.#watcher = watch(this.stateDir, (_event, name) => {
      if (name === REQUEST_FILE) this.#trigger();
    });
    this.#watcher.unref();
    this.#poll = setInterval(() => this.#trigger(), 50);
    this.#poll.unref();
    this.#trigger();
  }

  #stopWatching(): void {
    this.#watcher?.close();
    this.#watcher = undefined;
    clearInterval(this.#poll);
    this.#poll = undefined;
  }

  #trigger(): void {
    if (this.#running || this.#watcher === undefined) return;
    this.#running = this.#runWhileRequested().finally(() => {
      this.#running = undefined;
    });
  }

  async #runWhileRequested(): Promise<void> {
    while (this.#watcher !== undefined && (await exists(join(this.stateDir, REQUEST_FILE)))) {
      const faultAfter = this.faultAfter;
      try {
        this.runs.push(
          await runTrackerHelper(['tracker-apply', '--root', this.root, '--state-dir', this.stateDir], {
            log: silentLog(),
            ...(faultAfter ? { faultAfter } : {}),
            ...(this.helperMounter ? { mounter: this.helperMounter } : {}),
          }),
        );
      } catch (error) {
        this.runs.push('killed');
        this.shutdown();
        if (this.answerWhenKilled) await this.#answerKilled(String(error));
        return;
      }
    }
  }

  async #answerKilled(reason: string): Promise<void> {
    const claimed = JSON.parse(await readFile(join(this.stateDir, CLAIMED_REQUEST_FILE), 'utf8')) as { id: string };
    await writeFileDurably(join(this.stateDir, RESULT_FILE), JSON.stringify({ id: claimed.id, ok: false, error: `killed: ${reason}` }));
  }
}

async function exists(path: string): Promise<boolean> {
  return lstat(path).then(
    () => true,
    () => false,
  );
}

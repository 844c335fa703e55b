/**
 * Keeps <data>/media from filling the SD card: a sweep soon after start and then every few hours
 * removes the pictures and sounds no knowledge entry refers to (camera snapshots, pictures plugins
 * stored) once older than core.knowledge.media_keep_days, and the oldest of them sooner while the
 * store is over media_max_total_mb. What entries refer to is never removed. While the knowledge
 * index is not known to match the files (starting, reindexing, failed) nothing is removed.
 */
import type { Logger } from '../log/logger.js';
import type { Clock } from '../shared/clock.js';
import type { Service } from '../shared/service.js';
import type { MediaStore, MediaSweepResult } from '../store/media-store.js';

const DAY_MS = 86_400_000;
const MIB = 1024 * 1024;
/** After start: the knowledge index is usually ready by then, and start-up is not slowed. */
const FIRST_SWEEP_DELAY_MS = 5 * 60_000;
const SWEEP_INTERVAL_MS = 6 * 3_600_000;

export interface MediaUpkeepOptions {
  media: MediaStore;
  /** Digests entries refer to, or undefined while that is not known (then nothing is swept). */
  referenced: () => ReadonlySet<string> | undefined;
  settings: () => { media_keep_days: number; media_max_total_mb: number };
  clock: Clock;
  log: Logger;
}

export class MediaUpkeep implements Service {
  readonly name = 'media';
  readonly #o: MediaUpkeepOptions;
  #timer: NodeJS.Timeout | undefined;

  constructor(options: MediaUpkeepOptions) {
    this.#o = options;
  }

  async start(): Promise<void> {
    this.#schedule(FIRST_SWEEP_DELAY_MS);
  }

  async stop(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /** One sweep now; undefined when it was skipped because the references are not known. */
  sweep(): MediaSweepResult | undefined {
    const keep = this.#o.referenced();
    if (keep === undefined) {
      this.#o.log.debug('media sweep skipped: the knowledge index is not ready');
      return undefined;
    }
    const settings = this.#o.settings();
    const now = this.#o.clock.now();
    const result = this.#o.media.sweep(
      { keep, removeBefore: now - settings.media_keep_days * DAY_MS, maxTotalBytes: settings.media_max_total_mb * MIB },
      now,
    );
    if (result.removed > 0) this.#o.log.info(result, `removed ${result.removed} media file(s) nothing refers to`);
    if (result.kept_bytes > settings.media_max_total_mb * MIB) {
      this.#o.log.warn(
        result,
        'the media knowledge entries refer to alone exceed core.knowledge.media_max_total_mb; remove attachments or raise the limit',
      );
    }
    return result;
  }

  #schedule(delayMs: number): void {
    this.#timer = setTimeout(() => {
      try {
        this.sweep();
      } catch (error) {
        // A read-only or damaged media folder: the daemon goes on, the next sweep tries again.
        this.#o.log.warn({ err: error }, 'media sweep failed');
      }
      this.#schedule(SWEEP_INTERVAL_MS);
    }, delayMs).unref();
  }
}

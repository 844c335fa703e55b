/**
 * Taking pictures with one camera: capture with the settings of the moment, store the JPEG in the
 * media store, report what was stored. One fswebcam at a time per device: a request that arrives
 * while a capture runs joins it and gets the same picture (taken after both were asked for, near
 * enough for a still), instead of queueing a second capture of the same scene or opening the
 * device twice, which V4L2 refuses with "device busy".
 */

import type { PluginMedia } from '../../src/sdk/index.js';
import { type CameraSettingsSource, readCameraSettings } from './camera-settings.js';
import { type CaptureRuntime, captureJpeg } from './fswebcam-capture.js';

/** What the camera needs of the media store (ctx.media). */
export type SnapshotStore = Pick<PluginMedia, 'put'>;

export interface Snapshot {
  /** sha256 of the JPEG, its name in the media store. */
  digest: string;
  mime: string;
  width: number;
  height: number;
  bytes: number;
  /** ISO time the capture finished. */
  taken_at: string;
  /** fswebcam's run time in ms. */
  ms: number;
}

export interface CameraSnapshotsOptions {
  settings: CameraSettingsSource;
  store: SnapshotStore;
  /** The fswebcam child's environment (PATH decides which fswebcam runs). Default: process.env. */
  env?: NodeJS.ProcessEnv;
  /** Wall clock for taken_at, epoch ms. */
  now: () => number;
}

export class CameraSnapshots {
  readonly #o: CameraSnapshotsOptions;
  #inFlight: Promise<Snapshot> | undefined;

  constructor(options: CameraSnapshotsOptions) {
    this.#o = options;
  }

  /** A new picture, or the one being taken now. Rejects with the capture's or the store's HomeAgentError. */
  take(): Promise<Snapshot> {
    if (this.#inFlight) return this.#inFlight;
    const running = this.#takeOne().finally(() => {
      if (this.#inFlight === running) this.#inFlight = undefined;
    });
    this.#inFlight = running;
    return running;
  }

  /** Resolves when no capture runs (stop() waits for it so no fswebcam outlives the plugin). */
  async idle(): Promise<void> {
    await this.#inFlight?.catch(() => undefined);
  }

  async #takeOne(): Promise<Snapshot> {
    const settings = readCameraSettings(this.#o.settings);
    const runtime: CaptureRuntime = { maxBytes: settings.maxBytes, ...(this.#o.env && { env: this.#o.env }) };
    const picture = await captureJpeg(settings, runtime);
    const stored = this.#o.store.put(picture.jpeg);
    return {
      digest: stored.digest,
      mime: stored.mime,
      width: picture.width,
      height: picture.height,
      bytes: stored.bytes,
      taken_at: new Date(this.#o.now()).toISOString(),
      ms: picture.ms,
    };
  }
}

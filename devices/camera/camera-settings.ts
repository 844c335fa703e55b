/**
 * plugin.camera.* turned into capture options, and the start-up check of the device. The capture
 * module names its own option (`resolution`); a person edits `plugin.camera.resolution`, so errors
 * here name the configuration key. Settings are read again at every capture, so a changed
 * resolution or quality applies to the next picture without a restart.
 */
import { statSync } from 'node:fs';
import { findOnPath, HomeAgentError, isHomeAgentError, slugify, type TypedPluginSettings } from '../../src/sdk/index.js';
import { type CaptureOptions, checkCaptureOptions } from './fswebcam-capture.js';
import type { CameraSettings } from './settings-schema.js';

/** The slice of ctx.settings this module reads. */
export type CameraSettingsSource = Pick<TypedPluginSettings<CameraSettings>, 'get'>;

/** What one capture is made with: the capture options and the size limit. */
export interface CaptureSettings extends CaptureOptions {
  /** Largest picture accepted from fswebcam, in bytes. */
  maxBytes: number;
}

/** Capture option → its configuration key, for messages a person can act on. */
const SETTING_KEYS: Readonly<Record<string, string>> = {
  device: 'device',
  resolution: 'resolution',
  jpegQuality: 'jpeg_quality',
  skipFrames: 'skip_frames',
  timeoutMs: 'timeout_ms',
};

/** The capture settings as configured now; HA_ERR_CAMERA_OPTION naming `plugin.camera.<key>` when one is unusable. */
export function readCameraSettings(settings: CameraSettingsSource): CaptureSettings {
  const options: CaptureSettings = {
    device: settings.get('device'),
    resolution: settings.get('resolution'),
    jpegQuality: settings.get('jpeg_quality'),
    skipFrames: settings.get('skip_frames'),
    timeoutMs: settings.get('timeout_ms'),
    maxBytes: settings.get('max_bytes'),
  };
  try {
    checkCaptureOptions(options);
  } catch (error) {
    if (!isHomeAgentError(error) || error.code !== 'HA_ERR_CAMERA_OPTION') throw error;
    const option = String(error.details?.option ?? '');
    const key = `plugin.camera.${SETTING_KEYS[option] ?? option}`;
    const problem = error.message.replace(/^camera option \S+: /, '');
    throw new HomeAgentError('HA_ERR_CAMERA_OPTION', `${key}: ${problem}`, { details: { key }, cause: error });
  }
  if (!Number.isInteger(options.maxBytes) || options.maxBytes < 1) {
    throw new HomeAgentError('HA_ERR_CAMERA_OPTION', `plugin.camera.max_bytes: must be a positive integer, got ${options.maxBytes}`, {
      details: { key: 'plugin.camera.max_bytes' },
    });
  }
  return options;
}

/**
 * Why no picture can be taken on this machine, or undefined when one can: the device node is
 * missing (or is not a character device) or fswebcam is not installed. A home without a camera is
 * normal, so this is a status line, not a failure.
 */
export function cameraAbsence(device: string, path: string): { en: string; zh: string } | undefined {
  if (device !== 'TEST') {
    let isDevice = false;
    try {
      // stat follows /dev/v4l/by-id links to the video node they name.
      isDevice = statSync(device).isCharacterDevice();
    } catch {
      isDevice = false;
    }
    if (!isDevice) return { en: `no camera at ${device} (plugin.camera.device)`, zh: `${device} 没有摄像头（plugin.camera.device）` };
  }
  if (findOnPath('fswebcam', path) === undefined) {
    return { en: 'fswebcam is not installed (apt install fswebcam)', zh: '没有安装 fswebcam（apt install fswebcam）' };
  }
  return undefined;
}

/** `Front door` → `front_door`; a name without Latin letters or digits gives `camera`. */
export function cameraObjectId(name: string): string {
  return slugify(name) || 'camera';
}

/**
 * The camera device plugin: one camera (plugin.camera.device) as the entity `camera.<slug of
 * name>`, whose service `snapshot` takes a picture (from the CLI, the web page or an automation
 * action), and the tool `camera_snapshot`, which also shows the picture to the model. Pictures go
 * to the content-addressed media store; the entity's attributes name the last one.
 *
 * A missing device node or a missing fswebcam is not a failure: a home without a camera is normal,
 * so the plugin stays healthy, says why in its health detail and the log, and offers nothing. An
 * unusable setting (a resolution fswebcam cannot be asked for) is a failure naming the key.
 */
import {
  definePlugin,
  type EntityContext,
  type EntityHandle,
  HomeAgentError,
  isHomeAgentError,
  type PluginContext,
  type PluginFactory,
  type PluginHealth,
  type PluginInstance,
  type ToolContext,
  ToolError,
  type ToolErrorReason,
} from '../../src/sdk/index.js';
import { cameraAbsence, cameraObjectId, readCameraSettings } from './camera-settings.js';
import { CameraSnapshots, type Snapshot } from './camera-snapshots.js';
import type { CameraSettings } from './settings-schema.js';

export const SNAPSHOT_TOOL = 'camera_snapshot';
/** Home Assistant's state for a camera that is not streaming; pictures change attributes, not the state. */
export const CAMERA_IDLE = 'idle';
/** Above the longest capture plus storing, so the capture's own timeout (timeout_ms) is what the model reads. */
const TOOL_TIMEOUT_MS = 130_000;

export interface CameraPluginOptions {
  /** The fswebcam child's environment, and the PATH fswebcam is looked for on. Default: process.env. */
  env?: NodeJS.ProcessEnv;
  /** Wall clock, epoch ms. Default Date.now. */
  now?: () => number;
}

export class CameraPlugin implements PluginInstance {
  readonly #ctx: PluginContext<CameraSettings>;
  readonly #options: CameraPluginOptions;
  #snapshots: CameraSnapshots | undefined;
  #entity: EntityHandle | undefined;
  #removeTool: (() => void) | undefined;
  /** Why there is no camera, in both languages (health shows it). */
  #absent: { en: string; zh: string } | undefined;
  #last: Snapshot | undefined;

  constructor(ctx: PluginContext<CameraSettings>, options: CameraPluginOptions = {}) {
    this.#ctx = ctx;
    this.#options = options;
  }

  async start(): Promise<void> {
    // Refuses a bad setting before anything is registered, naming the key.
    const settings = readCameraSettings(this.#ctx.settings);
    const env = this.#options.env ?? process.env;
    this.#absent = cameraAbsence(settings.device, env.PATH ?? '');
    if (this.#absent !== undefined) {
      this.#ctx.log.warn({ device: settings.device }, `camera not offered: ${this.#absent.en}`);
      return;
    }
    this.#snapshots = new CameraSnapshots({
      settings: this.#ctx.settings,
      store: this.#ctx.media,
      now: this.#options.now ?? Date.now,
      ...(this.#options.env && { env: this.#options.env }),
    });
    const name = this.#ctx.settings.get('name');
    const area = this.#ctx.settings.get('area');
    this.#entity = this.#ctx.entities.register({
      domain: 'camera',
      object_id: cameraObjectId(name),
      name,
      area: area === '' ? null : area,
      device: settings.device,
      initial_state: CAMERA_IDLE,
      call: async (service, _data, context) => {
        if (service === 'snapshot') await this.snapshot(context.actor, context);
      },
    });
    this.#removeTool = this.#ctx.tools.register({
      name: SNAPSHOT_TOOL,
      description:
        `Takes a picture with the home's camera "${name}" and shows it to you. ` +
        'A picture inside a home is private: take one only when the person asks for it or it is clearly needed for what they asked.',
      parameters: { type: 'object', properties: {}, additionalProperties: false },
      tier: 'act',
      no_memory: true,
      timeout_ms: TOOL_TIMEOUT_MS,
      execute: (_args, context) => this.#toolSnapshot(context),
    });
    this.#ctx.log.info(
      { device: settings.device, entity_id: this.#entity.entity_id },
      `camera ${this.#entity.entity_id} on ${settings.device}`,
    );
  }

  async stop(): Promise<void> {
    this.#removeTool?.();
    this.#removeTool = undefined;
    await this.#snapshots?.idle();
    this.#snapshots = undefined;
    this.#entity?.remove();
    this.#entity = undefined;
  }

  /** Healthy with or without a camera; the detail says which, and why not. */
  health(): Required<PluginHealth> {
    if (this.#absent !== undefined) return { ok: true, detail: this.#absent.en, detail_zh: this.#absent.zh };
    const entity = this.#entity?.entity_id ?? 'camera';
    const device = this.#ctx.settings.get('device');
    const last = this.#last ? `last picture ${this.#last.taken_at}` : 'no picture yet';
    const lastZh = this.#last ? `最近一张照片 ${this.#last.taken_at}` : '还没有照片';
    return { ok: true, detail: `${entity} on ${device}, ${last}`, detail_zh: `${entity} 在 ${device} 上，${lastZh}` };
  }

  /**
   * Takes (or joins) a picture, stores it and names it in the entity's attributes; audited with the
   * digest. `askedBy` is who asked (`agent`, `cli`, `automation:<id>`); the audit record's actor is
   * the plugin, which ran fswebcam.
   */
  async snapshot(askedBy: string, context?: EntityContext): Promise<Snapshot> {
    const snapshots = this.#snapshots;
    if (!snapshots) throw new HomeAgentError('HA_ERR_CAMERA_UNAVAILABLE', this.#absent?.en ?? 'the camera plugin is not running');
    const picture = await snapshots.take();
    this.#last = picture;
    this.#entity?.update(CAMERA_IDLE, {
      last_picture_digest: picture.digest,
      last_picture_at: picture.taken_at,
      width: picture.width,
      height: picture.height,
      bytes: picture.bytes,
    });
    this.#ctx.audit('camera.snapshot', {
      asked_by: askedBy,
      ...(context?.run_id !== undefined && { run_id: context.run_id }),
      digest: picture.digest,
      width: picture.width,
      height: picture.height,
      bytes: picture.bytes,
    });
    return picture;
  }

  async #toolSnapshot(context: ToolContext): Promise<unknown> {
    let picture: Snapshot;
    try {
      picture = await this.snapshot('agent');
    } catch (error) {
      throw toToolError(error);
    }
    context.attachImage?.({ digest: picture.digest, mime: picture.mime });
    const { digest, mime, width, height, bytes, taken_at } = picture;
    return { ok: true, digest, mime, width, height, bytes, taken_at };
  }
}

const REASONS: Readonly<Record<string, ToolErrorReason>> = {
  HA_ERR_CAMERA_UNAVAILABLE: 'unavailable',
  HA_ERR_CAMERA_TIMEOUT: 'timeout',
  // No media store in this daemon.
  HA_ERR_UNAVAILABLE: 'unavailable',
};

/** A capture or store failure as the model reads it. */
function toToolError(error: unknown): ToolError {
  if (error instanceof ToolError) return error;
  if (isHomeAgentError(error)) return new ToolError({ reason: REASONS[error.code] ?? 'failed', detail: error.message });
  return new ToolError({ reason: 'failed', detail: error instanceof Error ? error.message : String(error) });
}

export function createCameraPlugin(options: CameraPluginOptions = {}): PluginFactory<CameraSettings> {
  return (ctx) => new CameraPlugin(ctx, options);
}

export default definePlugin<CameraSettings>(createCameraPlugin());

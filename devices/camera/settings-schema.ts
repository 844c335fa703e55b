/**
 * The settings of the camera device driver, `plugin.camera.*`: defaults, bounds, descriptions and
 * `requires_restart` for each. The configuration schema composes it (src/config/plugin-sections.ts);
 * the plugin reads its values through `PluginSettings<CameraSettings>`.
 */
import { type Static, Type } from '@sinclair/typebox';
import { pluginEnabled, pluginMeta, type SettingMeta } from '../../src/sdk/settings.js';

const cameraMeta = (description: string, extra: Partial<SettingMeta> = {}) => pluginMeta('camera', description, extra);

export const settingsSchema = Type.Object(
  {
    enabled: pluginEnabled('camera'),
    device: Type.String({
      default: '/dev/video0',
      minLength: 1,
      maxLength: 256,
      pattern: '^(/dev/[A-Za-z0-9_./-]+|TEST)$',
      ...cameraMeta('V4L2 device (/dev/video0), or TEST for fswebcam’s colour bars. A missing device is a status line.', {
        description_zh: 'V4L2 设备（/dev/video0），或 TEST 使用 fswebcam 的彩条测试图。设备不存在只会显示为一条状态。',
        requires_restart: true,
      }),
    }),
    name: Type.String({
      default: 'Camera',
      minLength: 1,
      maxLength: 64,
      ...cameraMeta('Name of the camera entity.', { description_zh: '摄像头实体的名字。', requires_restart: true }),
    }),
    area: Type.String({
      default: '',
      maxLength: 64,
      ...cameraMeta('Area the camera is in.', { description_zh: '摄像头所在的区域。', requires_restart: true }),
    }),
    resolution: Type.String({
      default: '640x480',
      pattern: '^[1-9][0-9]{1,4}x[1-9][0-9]{1,4}$',
      ...cameraMeta('Width x height asked of the camera.', { description_zh: '向摄像头请求的宽 x 高。' }),
    }),
    jpeg_quality: Type.Integer({
      default: 85,
      minimum: 1,
      maximum: 100,
      ...cameraMeta('JPEG quality.', { description_zh: 'JPEG 质量。' }),
    }),
    skip_frames: Type.Integer({
      default: 5,
      minimum: 0,
      maximum: 100,
      ...cameraMeta('Frames dropped first, while exposure settles.', { description_zh: '先丢掉几帧，等曝光稳定。' }),
    }),
    timeout_ms: Type.Integer({
      default: 10000,
      minimum: 1000,
      maximum: 120000,
      ...cameraMeta('A capture that takes longer is given up.', { description_zh: '拍摄超过这个时间就放弃。' }),
    }),
    max_bytes: Type.Integer({
      default: 8388608,
      minimum: 65536,
      maximum: 67108864,
      ...cameraMeta('Largest picture accepted.', { description_zh: '接受的图片最大多少字节。' }),
    }),
  },
  { additionalProperties: false, default: {} },
);

export type CameraSettings = Static<typeof settingsSchema>;

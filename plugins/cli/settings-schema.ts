/**
 * The settings of the cli plugin, `plugin.cli.*`: defaults, bounds, descriptions and
 * `requires_restart` for each. The configuration schema composes it (src/config/plugin-sections.ts);
 * the plugin reads its values through `PluginSettings<CliSettings>`.
 */
import { type Static, Type } from '@sinclair/typebox';
import { pluginEnabled, settingMeta } from '../../src/sdk/settings.js';

export const settingsSchema = Type.Object(
  {
    enabled: pluginEnabled('cli'),
    socket_path: Type.String({
      default: '',
      maxLength: 107,
      ...settingMeta({
        description: 'Path of the CLI Unix socket. Empty means <runtime_dir>/homeagent.sock.',
        description_zh: 'CLI Unix socket 的路径。留空表示 <runtime_dir>/homeagent.sock。',
        requires_restart: true,
        category: 'plugin.cli',
      }),
    }),
    socket_mode: Type.String({
      default: '0660',
      pattern: '^0?[0-7]{3}$',
      ...settingMeta({
        description:
          'File mode of the CLI socket (octal). Members of the service group may use the CLI; whoever can use it is the owner, so nothing wider than 0660 is accepted.',
        description_zh: 'CLI socket 的文件权限（八进制）。服务组的成员可以使用 CLI；能用 CLI 的人就是主人，所以不接受比 0660 更宽的权限。',
        requires_restart: true,
        category: 'plugin.cli',
        max_mode: '0660',
      }),
    }),
    max_frame_bytes: Type.Integer({
      default: 1048576,
      minimum: 1024,
      maximum: 16777216,
      ...settingMeta({
        description: 'Largest request line accepted on the CLI socket; larger frames get an error and are skipped.',
        description_zh: 'CLI socket 上接受的最长请求行；更长的帧返回错误并被跳过。',
        requires_restart: false,
        category: 'plugin.cli',
      }),
    }),
    max_connections: Type.Integer({
      default: 16,
      minimum: 1,
      maximum: 256,
      ...settingMeta({
        description: 'Concurrent CLI connections.',
        description_zh: '同时最多几个 CLI 连接。',
        requires_restart: false,
        category: 'plugin.cli',
      }),
    }),
    idle_timeout_ms: Type.Integer({
      default: 3600000,
      minimum: 1000,
      maximum: 86400000,
      ...settingMeta({
        description: 'A CLI connection with no traffic for this long is closed.',
        description_zh: 'CLI 连接这么久没有数据往来就关闭。',
        requires_restart: false,
        category: 'plugin.cli',
      }),
    }),
  },
  { additionalProperties: false, default: {} },
);

export type CliSettings = Static<typeof settingsSchema>;

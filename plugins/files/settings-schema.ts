/**
 * The settings of the files plugin, `plugin.files.*`: defaults, bounds, descriptions and
 * `requires_restart` for each. The configuration schema composes it (src/config/plugin-sections.ts);
 * the plugin reads its values through `PluginSettings<FilesSettings>`.
 */
import { type Static, Type } from '@sinclair/typebox';
import { pluginEnabled, pluginMeta } from '../../src/sdk/settings.js';

const FilesRootSchema = Type.Object(
  {
    path: Type.String({ minLength: 1, maxLength: 4096, description: 'An absolute directory.' }),
    mode: Type.Union([Type.Literal('ro'), Type.Literal('rw')], { description: 'ro: read and list only; rw: also write.' }),
  },
  { additionalProperties: false },
);

export const settingsSchema = Type.Object(
  {
    enabled: pluginEnabled('files'),
    roots: Type.Array(FilesRootSchema, {
      default: [],
      maxItems: 64,
      ...pluginMeta(
        'files',
        'Directories the files tools may use, each {path, mode: ro|rw}. The plugin data directory (rw) is always one. Paths outside them, `..` and symlinks leading out are refused.',
        {
          description_zh:
            'files 工具可以使用的目录，每个为 {path, mode: ro|rw}。插件数据目录（rw）总在其中。目录之外的路径、`..` 和指向外面的符号链接都被拒绝。',
        },
      ),
    }),
    max_read_bytes: Type.Integer({
      default: 1048576,
      minimum: 1024,
      maximum: 104857600,
      ...pluginMeta('files', 'Largest file files_read returns.', { description_zh: 'files_read 返回的文件最大多少字节。' }),
    }),
    max_write_bytes: Type.Integer({
      default: 1048576,
      minimum: 1024,
      maximum: 104857600,
      ...pluginMeta('files', 'Largest content files_write accepts.', { description_zh: 'files_write 接受的内容最大多少字节。' }),
    }),
  },
  { additionalProperties: false, default: {} },
);

export type FilesSettings = Static<typeof settingsSchema>;

/**
 * The settings of the cfgmgr plugin, `plugin.cfgmgr.*`: how much config_list and config_get show,
 * and keys the owner wants treated as protected besides the built-in rules (setting-tier.ts).
 * Changing any of them is itself protected (an act-tier change must not widen what act may do).
 */
import { type Static, Type } from '@sinclair/typebox';
import { pluginEnabled, pluginMeta } from '../../src/sdk/settings.js';

export const settingsSchema = Type.Object(
  {
    enabled: pluginEnabled('cfgmgr'),
    max_list_items: Type.Integer({
      default: 100,
      minimum: 1,
      maximum: 1000,
      ...pluginMeta('cfgmgr', 'Settings one config_list answer shows at most (a narrower prefix shows the rest).', {
        description_zh: '一次 config_list 最多列出几项设置（更窄的前缀可看其余的）。',
      }),
    }),
    max_value_chars: Type.Integer({
      default: 400,
      minimum: 40,
      maximum: 20000,
      ...pluginMeta('cfgmgr', 'Characters of a value config_list shows before cutting it (config_get shows up to 10 times as many).', {
        description_zh: 'config_list 显示一个值时最多显示的字符数，超出则截断（config_get 最多显示 10 倍）。',
      }),
    }),
    dangerous_keys: Type.Array(Type.String({ minLength: 1, maxLength: 256 }), {
      default: [],
      maxItems: 200,
      ...pluginMeta(
        'cfgmgr',
        "More setting keys (`*` matches any characters: plugin.voice.*) whose changes need the owner's approval, besides secrets, security settings, network addresses, files and settings that need a restart.",
        {
          description_zh:
            '除密钥、安全设置、网络地址、文件和需要重启的设置以外，还有哪些设置键（`*` 匹配任意字符，如 plugin.voice.*）的修改需要主人批准。',
        },
      ),
    }),
  },
  { additionalProperties: false, default: {} },
);

export type CfgmgrSettings = Static<typeof settingsSchema>;

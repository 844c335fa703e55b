/**
 * The vocabulary of a setting schema: the keywords every setting leaf carries and the helpers the
 * kernel's sections (src/config/schema.ts) and the plugins' own sections
 * (plugins/<name>/settings-schema.ts, devices/<name>/settings-schema.ts, through src/sdk/settings.ts)
 * are both written with, so that one loader, one registry and one generator read them all.
 */
import { type TSchema, Type } from '@sinclair/typebox';

/** Extra keywords carried by every setting leaf (they survive into schema.json). */
export interface SettingMeta {
  description: string;
  /**
   * The description in Chinese, shown where the page or the CLI speaks Chinese (English is the
   * fallback). Optional in the type so that external plugins may leave it out; every built-in
   * setting has one (test/unit/config/descriptions-zh.test.ts).
   */
  description_zh?: string;
  /** A change takes effect only after the daemon restarts. */
  requires_restart: boolean;
  /** Groups settings on the settings page and in `homeagentctl config list`. */
  category: string;
  /** Never printed, logged or returned in clear. */
  secret?: boolean;
  /** Only the configuration file or the environment may set it (it is needed before the settings database opens). */
  file_only?: boolean;
  /**
   * For an octal file mode (a socket, a file holding secrets): the widest mode allowed, e.g.
   * `0660`. A value with any bit outside it (anything for others, say) is refused.
   */
  max_mode?: string;
}

/** Checks the keywords at compile time; spread into a leaf's options. */
export const settingMeta = (m: SettingMeta) => m;

/** The keywords of a setting of plugin `name` (category `plugin.<name>`, no restart unless `extra` says so). */
export const pluginMeta = (name: string, description: string, extra: Partial<SettingMeta> = {}) =>
  settingMeta({ description, requires_restart: false, category: `plugin.${name}`, ...extra });

/** `plugin.<name>.enabled`: whether the plugin loads at start (on by default). */
export const pluginEnabled = (name: string) =>
  Type.Boolean({
    default: true,
    ...settingMeta({
      description: `Load the ${name} plugin at start.`,
      description_zh: `启动时加载 ${name} 插件。`,
      requires_restart: true,
      category: `plugin.${name}`,
    }),
  });

/**
 * For a mapping whose keys follow a pattern (Type.Record with a key pattern): a key outside the
 * pattern is refused. Without it JSON Schema lets such a key through unchecked, value and all (a
 * list given for the mapping became keys "0", "1", ... that nothing checked or used).
 */
export const NAMED_ONLY = { additionalProperties: false } as const;

/** Ids that become parts of entity ids and topics: lower-case letters, digits and underscores. */
export const SLUG = '^[a-z0-9_]{1,64}$';

/** True for schemas that are setting leaves (they carry a description and requires_restart). */
export function isSettingLeaf(schema: TSchema): schema is TSchema & SettingMeta {
  return typeof (schema as { requires_restart?: unknown }).requires_restart === 'boolean';
}

/**
 * What a plugin writes its settings schema with (plugins/<name>/settings-schema.ts) and reads its
 * values through. The schema is TypeBox; its `Static<>` type is the one declaration of the
 * section's shape, so `PluginSettings<MySettings>.get('vad.threshold')` is typed by it and no
 * plugin restates its settings as an interface or casts a value.
 *
 * Kept apart from src/sdk/index.ts and importing only the settings vocabulary: the configuration
 * schema composes the built-in plugins' sections (src/config/plugin-sections.ts), and loading it
 * must not load the rest of the SDK.
 */
export { NAMED_ONLY, pluginEnabled, pluginMeta, type SettingMeta, SLUG, settingMeta } from '../config/setting-schema.js';

type SettingLeaf = string | number | boolean | null | undefined | readonly unknown[];

/**
 * The dotted keys of a section's settings: `port`, `vad.threshold`. A nested section is walked
 * into; a list or a mapping with free keys (Type.Record) is one setting.
 */
export type SettingKey<T> = {
  [K in keyof T & string]: T[K] extends SettingLeaf ? K : string extends keyof T[K] ? K : `${K}.${SettingKey<T[K]>}`;
}[keyof T & string];

/** The type of the setting at dotted key `K` of a section of type `T`. */
export type SettingValue<T, K extends string> = K extends keyof T
  ? T[K]
  : K extends `${infer Head}.${infer Rest}`
    ? Head extends keyof T
      ? SettingValue<T[Head], Rest>
      : never
    : never;

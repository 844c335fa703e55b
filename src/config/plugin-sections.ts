/**
 * The built-in plugins' and device drivers' settings sections, one line each: every section is
 * written beside its plugin (plugins/<name>/settings-schema.ts, devices/<name>/settings-schema.ts)
 * and exported here under the plugin's name, which is its key `plugin.<name>`. Adding a plugin or
 * device adds its line; scripts/check-boundaries.mjs fails when a settings-schema.ts is missing
 * here, and lets such files import only TypeBox and src/sdk/settings.ts, so that loading the
 * configuration loads no plugin code.
 */
export { settingsSchema as camera } from '../../devices/camera/settings-schema.js';
export { settingsSchema as gpio } from '../../devices/gpio/settings-schema.js';
export { settingsSchema as i2c } from '../../devices/i2c/settings-schema.js';
export { settingsSchema as cli } from '../../plugins/cli/settings-schema.js';
export { settingsSchema as cmd } from '../../plugins/cmd/settings-schema.js';
export { settingsSchema as files } from '../../plugins/files/settings-schema.js';
export { settingsSchema as homeassistant } from '../../plugins/homeassistant/settings-schema.js';
export { settingsSchema as kbtree } from '../../plugins/kbtree/settings-schema.js';
export { settingsSchema as mcp } from '../../plugins/mcp/settings-schema.js';
export { settingsSchema as mqtt } from '../../plugins/mqtt/settings-schema.js';
export { settingsSchema as onebot } from '../../plugins/onebot/settings-schema.js';
export { settingsSchema as pluginmgr } from '../../plugins/pluginmgr/settings-schema.js';
export { settingsSchema as timer } from '../../plugins/timer/settings-schema.js';
export { settingsSchema as voice } from '../../plugins/voice/settings-schema.js';
export { settingsSchema as webui } from '../../plugins/webui/settings-schema.js';

/**
 * The wire types: every control method's result shape, defined once in src/api and used by the
 * daemon that answers, the CLI and the web page that read, and plugins. Kept apart from
 * src/sdk/index.ts and importing only src/api, which is type declarations and plain data, so the
 * web page (built apart from the daemon, without Node) can import it.
 */
export type * from '../api/changes.js';
export type * from '../api/errors.js';
export type * from '../api/events.js';
export type * from '../api/gpio.js';
export type * from '../api/health.js';
export type * from '../api/home.js';
export { isPrimaryEntity } from '../api/home.js';
export type * from '../api/homeassistant.js';
export type * from '../api/i2c.js';
export type * from '../api/inputs.js';
export type * from '../api/knowledge.js';
export type * from '../api/memory.js';
export type * from '../api/memory-graph.js';
export type * from '../api/mqtt.js';
export type * from '../api/plugins.js';
export type * from '../api/settings.js';
// Plain data and pure functions (no imports): the page shows states in the words the CLI and the replies use.
export * from '../api/state-words.js';
export type * from '../api/status.js';
export type * from '../api/subagents.js';
export type * from '../api/trust.js';
export type * from '../api/voice.js';
export type * from '../api/webui.js';
export type * from '../api/zigbee.js';

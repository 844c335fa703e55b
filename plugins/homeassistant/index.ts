/**
 * Entry of the homeassistant plugin (Home Assistant's entities over its WebSocket API); the work
 * is in homeassistant-plugin.ts.
 */
import { definePlugin } from '../../src/sdk/index.js';
import { HomeassistantPlugin } from './homeassistant-plugin.js';
import type { HomeassistantSettings } from './settings-schema.js';

export { HomeassistantPlugin } from './homeassistant-plugin.js';

export default definePlugin<HomeassistantSettings>((ctx) => new HomeassistantPlugin(ctx));

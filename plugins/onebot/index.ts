/**
 * Entry of the onebot plugin (QQ through OneBot v11); the work is in onebot-plugin.ts.
 */
import { definePlugin } from '../../src/sdk/index.js';
import { OnebotPlugin } from './onebot-plugin.js';
import type { OnebotSettings } from './settings-schema.js';

export { OnebotPlugin } from './onebot-plugin.js';

export default definePlugin<OnebotSettings>((ctx) => new OnebotPlugin(ctx));

/**
 * The webui plugin: the daemon's one web server, with the web page, the HTTP API (/api/v1), the
 * OpenAI-compatible endpoint (/v1) and the routes other plugins serve (/plugins/<name>/...).
 * The server and its security are in webui-plugin.ts; the route groups in their own modules.
 */
import { definePlugin } from '../../src/sdk/index.js';
import { apiRoutes } from './api-routes.js';
import { openaiRoutes } from './openai-routes.js';
import type { WebuiSettings } from './settings-schema.js';
import { WebuiPlugin } from './webui-plugin.js';

export { WebuiPlugin, type WebuiPluginOptions } from './webui-plugin.js';

export default definePlugin<WebuiSettings>((ctx) => new WebuiPlugin(ctx, { routeModules: [apiRoutes, openaiRoutes] }));

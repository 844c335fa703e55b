/**
 * The files the OpenClaw converter (openclaw-package.ts) writes into a converted plugin, as text:
 * they run in the plugin's own child process under Node's permission model, which lets it read
 * only its folder, so they must be plain JavaScript files of that folder that import nothing of the
 * daemon. Kept as text rather than built modules so that the same bytes are written whether the
 * daemon runs from dist/ or from the sources under the tests' loader.
 *
 * The runtime (homeagent-openclaw.mjs) default-exports a process-plugin factory. At start it imports
 * the OpenClaw entry, takes its `register` (definePluginEntry's object, or a bare register
 * function), and calls it with an `api` that maps `registerTool` onto ctx.tools.register:
 * - only the names of contracts.tools, each with the tier the converter gave it;
 * - a tool factory (`registerTool((ctx) => tool | tool[] | null)`) is called once with an empty context;
 * - `execute(toolCallId, params, signal)`'s `{ content: [{ type: 'text', text }], details }` becomes
 *   `{ text, details }` (images and other parts are named, not passed on).
 * Anything else an OpenClaw plugin may register (channels, providers, hooks, services, commands,
 * routes) fails the start with HA_ERR_OPENCLAW_UNSUPPORTED naming the call, rather than being
 * dropped silently. `api.pluginConfig` holds the plugin's HomeAgent settings under OpenClaw's names.
 */

export const OPENCLAW_SDK_PACKAGE = `${JSON.stringify(
  {
    name: 'openclaw',
    version: '0.0.0-homeagent',
    description: "HomeAgent's stand-in for the OpenClaw plugin SDK entry points an installed plugin imports",
    type: 'module',
    exports: { './plugin-sdk/plugin-entry': './plugin-sdk/plugin-entry.js', './plugin-sdk': './plugin-sdk/plugin-entry.js' },
  },
  null,
  2,
)}\n`;

export const OPENCLAW_SDK_PLUGIN_ENTRY = `// Written by HomeAgent: definePluginEntry as OpenClaw's plugin SDK shapes it (the runtime calls register).
export const emptyPluginConfigSchema = { type: 'object', additionalProperties: false, properties: {} };
export function definePluginEntry(options) {
  return { configSchema: emptyPluginConfigSchema, ...options };
}
`;

export const OPENCLAW_RUNTIME_SOURCE = `// Written by HomeAgent: hosts this OpenClaw plugin as a HomeAgent process plugin (docs/openclaw.md).
import { readFileSync } from 'node:fs';

const spec = JSON.parse(readFileSync(new URL('./homeagent-openclaw.json', import.meta.url), 'utf8'));

function coded(code, message) {
  const error = new Error(code + ': ' + message);
  error.code = code;
  return error;
}

function textOf(result) {
  if (typeof result === 'string') return { text: result };
  if (result === null || typeof result !== 'object') return { text: String(result ?? '') };
  const parts = Array.isArray(result.content) ? result.content : [];
  const text = parts
    .map((part) => (part && part.type === 'text' ? String(part.text ?? '') : '[' + String(part && part.type) + ' part not shown]'))
    .join('\\n');
  return result.details === undefined ? { text } : { text, details: result.details };
}

export default function openClawPlugin(ctx) {
  const config = () =>
    Object.fromEntries(Object.entries(spec.settings).map(([openclawKey, key]) => [openclawKey, ctx.settings.get(key)]));

  function registerOne(tool) {
    if (tool === null || tool === undefined) return;
    if (typeof tool !== 'object') throw coded('HA_ERR_OPENCLAW_UNSUPPORTED', 'registerTool got ' + typeof tool + ', not a tool');
    const name = tool.name;
    if (typeof name !== 'string' || !(name in spec.tools)) {
      throw coded('HA_ERR_OPENCLAW_UNSUPPORTED', 'registerTool(' + JSON.stringify(name) + '): the tool is not in contracts.tools of openclaw.plugin.json (' + Object.keys(spec.tools).join(', ') + ')');
    }
    if (typeof tool.execute !== 'function') throw coded('HA_ERR_OPENCLAW_UNSUPPORTED', 'registerTool(' + name + '): execute is not a function');
    if (tool.parameters === null || typeof tool.parameters !== 'object') throw coded('HA_ERR_OPENCLAW_UNSUPPORTED', 'registerTool(' + name + '): parameters is not a JSON schema object');
    ctx.tools.register({
      name,
      description: String(tool.description ?? tool.label ?? name).slice(0, 1000),
      parameters: JSON.parse(JSON.stringify(tool.parameters)),
      tier: spec.tools[name],
      execute: async (args, context) => textOf(await tool.execute(context.call_id, args, context.signal)),
    });
  }

  const logger = {
    debug: (message) => ctx.log.debug(String(message)),
    info: (message) => ctx.log.info(String(message)),
    warn: (message) => ctx.log.warn(String(message)),
    error: (message) => ctx.log.error(String(message)),
  };
  const members = {
    id: spec.id,
    name: spec.id,
    source: 'homeagent',
    config: {},
    get pluginConfig() {
      return config();
    },
    logger,
    registerTool(toolOrFactory) {
      const made = typeof toolOrFactory === 'function' ? toolOrFactory({ pluginId: spec.id, config: {} }) : toolOrFactory;
      for (const tool of Array.isArray(made) ? made : [made]) registerOne(tool);
    },
  };
  const api = new Proxy(members, {
    get(target, property) {
      if (property in target) return target[property];
      if (typeof property === 'string' && /^(register|on)[A-Z]?/.test(property)) {
        return () => {
          throw coded('HA_ERR_OPENCLAW_UNSUPPORTED', 'api.' + property + '(...): HomeAgent hosts the agent tools of OpenClaw plugins only');
        };
      }
      return undefined;
    },
  });

  return {
    async start() {
      const module = await import(new URL(spec.entry, import.meta.url).href);
      const definition = module.default ?? module;
      const register =
        typeof definition === 'function' ? definition : definition && typeof definition.register === 'function' ? definition.register.bind(definition) : undefined;
      if (!register) throw coded('HA_ERR_OPENCLAW_UNSUPPORTED', spec.entry + ' exports neither definePluginEntry({ register }) nor a register(api) function');
      await register(api);
    },
    async stop() {},
  };
}
`;

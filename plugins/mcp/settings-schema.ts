/**
 * The settings of the mcp plugin, `plugin.mcp.*`: defaults, bounds, descriptions and
 * `requires_restart` for each. The configuration schema composes it (src/config/plugin-sections.ts);
 * the plugin reads its values through `PluginSettings<McpSettings>`.
 */
import { type Static, Type } from '@sinclair/typebox';
import { NAMED_ONLY, pluginEnabled, pluginMeta } from '../../src/sdk/settings.js';

const McpServerSchema = Type.Object(
  {
    transport: Type.Union([Type.Literal('stdio'), Type.Literal('http')], {
      description: 'stdio: a local program; http: a streamable HTTP server.',
    }),
    command: Type.Optional(Type.String({ maxLength: 4096, description: 'stdio: the program to start (no shell).' })),
    args: Type.Optional(Type.Array(Type.String({ maxLength: 4096 }), { maxItems: 64 })),
    env: Type.Optional(Type.Record(Type.String(), Type.String({ maxLength: 4096 }))),
    cwd: Type.Optional(Type.String({ maxLength: 4096 })),
    url: Type.Optional(Type.String({ maxLength: 2048, description: 'http: the server URL.' })),
    headers: Type.Optional(Type.Record(Type.String(), Type.String({ maxLength: 4096 }), { description: 'http: extra headers (secret).' })),
    tier: Type.Optional(
      Type.Union([Type.Literal('read'), Type.Literal('act'), Type.Literal('dangerous')], {
        description: "Tier of this server's tools (default act).",
      }),
    ),
    timeout_ms: Type.Optional(Type.Integer({ minimum: 100, maximum: 600000, description: 'Per call (default 60000).' })),
    enabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

export const settingsSchema = Type.Object(
  {
    enabled: pluginEnabled('mcp'),
    servers: Type.Record(Type.String({ pattern: '^[a-z][a-z0-9_]{0,31}$' }), McpServerSchema, {
      default: {},
      ...NAMED_ONLY,
      ...pluginMeta(
        'mcp',
        'MCP servers by name, each {transport: stdio|http, command, args, env, cwd, url, headers, tier, timeout_ms, enabled}; their tools appear as mcp_<name>_<tool>.',
        {
          description_zh:
            '按名字配置的 MCP 服务器，每个为 {transport: stdio|http, command, args, env, cwd, url, headers, tier, timeout_ms, enabled}；它们的工具以 mcp_<name>_<tool> 的名字出现。',
          requires_restart: true,
        },
      ),
    }),
  },
  { additionalProperties: false, default: {} },
);

export type McpSettings = Static<typeof settingsSchema>;
/** One entry of plugin.mcp.servers. */
export type McpServerConfig = Static<typeof McpServerSchema>;

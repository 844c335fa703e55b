/**
 * One entry of plugin.mcp.servers and the transport it describes. The settings schema already
 * checks types and bounds; what it cannot say (a stdio server needs a command, an http one a
 * URL) is checked here so that a bad entry is reported for that server alone.
 */
import { StdioClientTransport, type StdioServerParameters } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

import type { McpServerConfig } from './settings-schema.js';

export type { McpServerConfig };
export type McpTier = NonNullable<McpServerConfig['tier']>;

export const DEFAULT_TIMEOUT_MS = 60_000;
export const DEFAULT_TIER: McpTier = 'act';

/** What is wrong with `config` for its transport, or undefined when it can be used. */
export function configProblem(config: McpServerConfig): string | undefined {
  if (config.transport === 'stdio') {
    if (typeof config.command !== 'string' || config.command.trim() === '') return 'a stdio server needs a command';
    return undefined;
  }
  if (config.transport === 'http') {
    if (typeof config.url !== 'string' || config.url === '') return 'an http server needs a url';
    let url: URL;
    try {
      url = new URL(config.url);
    } catch {
      return `url ${JSON.stringify(config.url)} is not a valid URL`;
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return `url must be http:// or https://, not ${url.protocol}//`;
    return undefined;
  }
  return `transport must be stdio or http, not ${JSON.stringify((config as { transport?: unknown }).transport)}`;
}

export type McpTransport = StdioClientTransport | StreamableHTTPClientTransport;

/**
 * A transport for a checked config. A stdio server is started without a shell, with its stderr
 * piped to us (not mixed into the daemon's own output) and only the SDK's short list of safe
 * environment variables plus the configured ones: the daemon's secrets stay out of its reach.
 */
export function createTransport(config: McpServerConfig): McpTransport {
  if (config.transport === 'stdio') {
    const parameters: StdioServerParameters = { command: config.command ?? '', args: config.args ?? [], stderr: 'pipe' };
    if (config.env) parameters.env = config.env;
    if (config.cwd) parameters.cwd = config.cwd;
    return new StdioClientTransport(parameters);
  }
  return new StreamableHTTPClientTransport(new URL(config.url ?? ''), config.headers ? { requestInit: { headers: config.headers } } : {});
}

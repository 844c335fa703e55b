/**
 * `homeagentctl webui credentials [--reset password|api_key]`: the web page's address, admin
 * password and API key (the webui plugin's `webui.credentials`; only this socket's admin may ask).
 * They are printed once at the first start; this shows them again, or replaces one that leaked.
 */
import type { WebuiCredentials } from '../api/webui.js';
import { type CommandRunOptions, withDaemon } from './command-client.js';
import { defineCommand } from './command-module.js';

/** homeagentctl's option table entries for webui (merged into its parseArgs options). */
export const WEBUI_OPTIONS = {
  reset: { type: 'string' },
} as const;

export type WebuiFlags = { reset?: string | undefined };

export type WebuiCommand = { command: 'credentials'; reset?: 'password' | 'api_key' };

export class WebuiUsageError extends Error {}

/** `homeagentctl webui` for the command catalogue (src/cli/commands.ts): its flags, help and parser. */
export const webuiCommand = defineCommand<WebuiFlags>({
  name: 'webui',
  options: WEBUI_OPTIONS,
  usage: [
    {
      synopsis: 'webui credentials [--reset password|api_key]',
      about: "the web page's address, admin password and API key (or make a new one)",
    },
  ],
  parse: (args, flags) => {
    const command = parseWebuiCommand(args, flags);
    return (context) => runWebui(command, context);
  },
});

/** Reads `webui credentials [--reset WHAT]` (positionals after `webui`). Throws WebuiUsageError. */
export function parseWebuiCommand(positionals: readonly string[], flags: WebuiFlags): WebuiCommand {
  const [sub, ...rest] = positionals;
  if (sub === undefined) throw new WebuiUsageError('webui needs a command: webui credentials');
  if (sub !== 'credentials') throw new WebuiUsageError(`unknown webui command ${sub}; use webui credentials`);
  if (rest.length > 0) throw new WebuiUsageError('webui credentials takes no arguments (--reset password|api_key makes a new one)');
  if (flags.reset === undefined) return { command: 'credentials' };
  if (flags.reset !== 'password' && flags.reset !== 'api_key') {
    throw new WebuiUsageError(`--reset must be password or api_key, not ${JSON.stringify(flags.reset)}`);
  }
  return { command: 'credentials', reset: flags.reset };
}

export async function runWebui(command: WebuiCommand, options: CommandRunOptions): Promise<number> {
  return withDaemon(options, { plugin: 'webui' }, async ({ call, print }) => {
    const params = command.reset === undefined ? {} : { reset: command.reset };
    return print((await call('webui.credentials', params)) as WebuiCredentials, (a) => formatCredentials(a, command.reset));
  });
}

export function formatCredentials(a: WebuiCredentials, reset?: string): string {
  return [
    ...(reset === undefined ? [] : [`new ${reset === 'api_key' ? 'API key' : 'admin password'} made; the old one no longer works`]),
    `web page: ${a.url}`,
    `password: ${a.password}`,
    `API key:  ${a.api_key}   (X-API-Key or Authorization: Bearer; also the OpenAI endpoint ${a.url.replace(/\/$/, '')}/v1)`,
    `created:  ${a.created_at}`,
  ].join('\n');
}

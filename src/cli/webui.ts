/**
 * `homeagentctl webui credentials [--reset password|api_key]`: the web page's address, admin
 * password and API key (the webui plugin's `webui.credentials`; only this socket's admin may ask).
 * They are printed once at the first start; this shows them again, or replaces one that leaked.
 */
import type { WebuiCredentials } from '../api/webui.js';
import type { Language } from '../shared/language.js';
import { cliLanguage } from './cli-language.js';
import { runLanguage } from './cli-words.js';
import { type CommandRunOptions, withDaemon } from './command-client.js';
import { CommandUsageError, defineCommand } from './command-module.js';

/** homeagentctl's option table entries for webui (merged into its parseArgs options). */
export const WEBUI_OPTIONS = {
  reset: { type: 'string' },
} as const;

export type WebuiFlags = { reset?: string | undefined };

export type WebuiCommand = { command: 'credentials'; reset?: 'password' | 'api_key' };

export class WebuiUsageError extends CommandUsageError {}

/** `homeagentctl webui` for the command catalogue (src/cli/commands.ts): its flags, help and parser. */
export const webuiCommand = defineCommand<WebuiFlags>({
  name: 'webui',
  options: WEBUI_OPTIONS,
  usage: [
    {
      synopsis: 'webui credentials [--reset password|api_key]',
      about: "the web page's address, admin password and API key (or make a new one)",
      zh: '网页的地址、管理员密码和 API 密钥（或生成新的）',
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
  if (sub === undefined) throw new WebuiUsageError('webui needs a command: webui credentials', 'webui 需要一个子命令：webui credentials');
  if (sub !== 'credentials')
    throw new WebuiUsageError(`unknown webui command ${sub}; use webui credentials`, `未知的 webui 子命令 ${sub}；可用 webui credentials`);
  if (rest.length > 0)
    throw new WebuiUsageError(
      'webui credentials takes no arguments (--reset password|api_key makes a new one)',
      'webui credentials 不接受参数（--reset password|api_key 生成新的）',
    );
  if (flags.reset === undefined) return { command: 'credentials' };
  if (flags.reset !== 'password' && flags.reset !== 'api_key') {
    throw new WebuiUsageError(
      `--reset must be password or api_key, not ${JSON.stringify(flags.reset)}`,
      `--reset 须为 password 或 api_key，而不是 ${JSON.stringify(flags.reset)}`,
    );
  }
  return { command: 'credentials', reset: flags.reset };
}

export async function runWebui(command: WebuiCommand, options: CommandRunOptions): Promise<number> {
  const language = runLanguage(options);
  return withDaemon(options, { plugin: 'webui' }, async ({ call, print }) => {
    const params = command.reset === undefined ? {} : { reset: command.reset };
    return print((await call('webui.credentials', params)) as WebuiCredentials, (a) => formatCredentials(a, command.reset, language));
  });
}

/** Every label the webui command prints around the login, in both languages. */
const WORDS = {
  en: {
    made: (reset: string) => `new ${reset === 'api_key' ? 'API key' : 'admin password'} made; the old one no longer works`,
    page: (url: string) => `web page: ${url}`,
    password: (p: string) => `password: ${p}`,
    apiKey: (key: string, base: string) => `API key:  ${key}   (X-API-Key or Authorization: Bearer; also the OpenAI endpoint ${base}/v1)`,
    created: (at: string) => `created:  ${at}`,
  },
  zh: {
    made: (reset: string) => `已生成新的${reset === 'api_key' ? ' API 密钥' : '管理员密码'}；旧的不再可用`,
    page: (url: string) => `网页：    ${url}`,
    password: (p: string) => `密码：    ${p}`,
    apiKey: (key: string, base: string) => `API 密钥：${key}   （X-API-Key 或 Authorization: Bearer；也用于 OpenAI 接口 ${base}/v1）`,
    created: (at: string) => `创建于：  ${at}`,
  },
} as const;

export function formatCredentials(a: WebuiCredentials, reset?: string, language: Language = cliLanguage()): string {
  const w = WORDS[language];
  return [
    ...(reset === undefined ? [] : [w.made(reset)]),
    w.page(a.url),
    w.password(a.password),
    w.apiKey(a.api_key, a.url.replace(/\/$/, '')),
    w.created(a.created_at),
  ].join('\n');
}

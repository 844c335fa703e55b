/**
 * `homeagentctl homeassistant [status] | sync`: the Home Assistant connection of a running daemon
 * (the homeassistant plugin's control methods). `status` says whether HA is connected and, when
 * not, why and when the next attempt is; `sync` reads HA's registries and states again now (after
 * exposing entities in HA). In the terminal's language (cli-language.ts).
 */
import type { HomeassistantStatus } from '../api/homeassistant.js';
import type { Language } from '../shared/language.js';
import { cliLanguage } from './cli-language.js';
import { runLanguage } from './cli-words.js';
import { type CommandRunOptions, withDaemon } from './command-client.js';
import { CommandUsageError, defineCommand, type NoFlags } from './command-module.js';

export type HomeassistantCommand = { command: 'status' } | { command: 'sync' };

export class HomeassistantUsageError extends CommandUsageError {}

/** `homeagentctl homeassistant` for the command catalogue (src/cli/commands.ts): its flags, help and parser. */
export const homeassistantCommand = defineCommand<NoFlags>({
  name: 'homeassistant',
  options: {},
  usage: [
    {
      synopsis: 'homeassistant [status]',
      about: 'the Home Assistant connection: connected or why not, entities brought in and skipped',
      zh: 'Home Assistant 连接：是否已连接（或为何未连接）、已导入和已跳过的实体',
    },
    {
      synopsis: 'homeassistant sync',
      about: "read Home Assistant's registries and states again now",
      zh: '立即重新读取 Home Assistant 的注册表和状态',
    },
  ],
  parse: (args) => {
    const command = parseHomeassistantCommand(args);
    return (context) => runHomeassistant(command, context);
  },
});

export function parseHomeassistantCommand(positionals: readonly string[]): HomeassistantCommand {
  const [sub = 'status', ...rest] = positionals;
  if (sub !== 'status' && sub !== 'sync')
    throw new HomeassistantUsageError(
      `unknown homeassistant command ${sub}; use status or sync`,
      `未知的 homeassistant 子命令 ${sub}；可用 status 或 sync`,
    );
  if (rest.length > 0) throw new HomeassistantUsageError(`homeassistant ${sub} takes no arguments`, `homeassistant ${sub} 不接受参数`);
  return { command: sub };
}

export async function runHomeassistant(command: HomeassistantCommand, options: CommandRunOptions): Promise<number> {
  const language = runLanguage(options);
  return withDaemon(options, { plugin: 'homeassistant', also: 'a plugin.homeassistant.token' }, async ({ call, print }) => {
    const method = command.command === 'sync' ? 'homeassistant.sync' : 'homeassistant.status';
    return print((await call(method, {})) as HomeassistantStatus, (r) => formatHomeassistantStatus(r, language));
  });
}

/** Every sentence the homeassistant command prints around the connection's values, in both languages. */
const WORDS = {
  en: {
    notConfigured: (error: string | null) => `NOT connected: ${error ?? 'not configured'}`,
    connected: (version: string, url: string, since: string | null) =>
      `connected to Home Assistant ${version} at ${url}${since === null ? '' : ` since ${since}`}`,
    refused: (error: string) => `Home Assistant REFUSED the token (${error}): set a new one with`,
    setToken: '  homeagentctl config set plugin.homeassistant.token <TOKEN>',
    nextAttempt: (s: number) => `; next attempt in ${s} s`,
    notConnected: (url: string, state: string, error: string | null, next: string) =>
      `NOT connected to ${url} (${state}): ${error ?? 'connecting'}${next}`,
    assistRefused:
      " (HA would not list what is exposed to Assist: the token's user is not an administrator; only plugin.homeassistant.include counts)",
    entities: (n: number, assist: string) => `${n} entities from Home Assistant${assist}`,
    skipped: (n: number) => `${n} skipped:`,
    more: (n: number) => `  ... and ${n} more`,
    connections: (n: number, lastSync: string | null) => `${n} connection(s)${lastSync === null ? '' : `, last read ${lastSync}`}`,
  },
  zh: {
    notConfigured: (error: string | null) => `未连接：${error ?? '未配置'}`,
    connected: (version: string, url: string, since: string | null) =>
      `已连接到 Home Assistant ${version}（${url}）${since === null ? '' : `，自 ${since} 起`}`,
    refused: (error: string) => `Home Assistant 拒绝了令牌（${error}）：请用下面的命令设置新令牌`,
    setToken: '  homeagentctl config set plugin.homeassistant.token <TOKEN>',
    nextAttempt: (s: number) => `；${s} 秒后再试`,
    notConnected: (url: string, state: string, error: string | null, next: string) =>
      `未连接到 ${url}（${state}）：${error ?? '正在连接'}${next}`,
    assistRefused: '（HA 不肯列出对 Assist 公开的实体：令牌的用户不是管理员；只有 plugin.homeassistant.include 生效）',
    entities: (n: number, assist: string) => `来自 Home Assistant 的实体 ${n} 个${assist}`,
    skipped: (n: number) => `跳过 ${n} 个：`,
    more: (n: number) => `  ……还有 ${n} 个`,
    connections: (n: number, lastSync: string | null) => `连接 ${n} 次${lastSync === null ? '' : `，上次读取 ${lastSync}`}`,
  },
} as const;

export function formatHomeassistantStatus(s: HomeassistantStatus, language: Language = cliLanguage()): string {
  const w = WORDS[language];
  const lines: string[] = [];
  if (!s.configured) {
    lines.push(w.notConfigured(s.last_error));
  } else if (s.state === 'ready') {
    lines.push(w.connected(s.ha_version ?? '', s.url, s.since));
  } else if (s.state === 'auth_failed') {
    lines.push(w.refused(s.last_error ?? ''), w.setToken);
  } else {
    const next = s.next_attempt_in_ms === null ? '' : w.nextAttempt(Math.ceil(s.next_attempt_in_ms / 1000));
    lines.push(w.notConnected(s.url, s.state, s.last_error, next));
  }
  lines.push(w.entities(s.entities, s.assist_list === 'refused' ? w.assistRefused : ''));
  if (s.skipped_count > 0) {
    lines.push(w.skipped(s.skipped_count));
    for (const skip of s.skipped) lines.push(`  ${skip.entity_id}: ${skip.reason}`);
    if (s.skipped_count > s.skipped.length) lines.push(w.more(s.skipped_count - s.skipped.length));
  }
  lines.push(w.connections(s.connections, s.last_sync));
  return lines.join('\n');
}

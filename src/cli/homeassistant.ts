/**
 * `homeagentctl homeassistant [status] | sync`: the Home Assistant connection of a running daemon
 * (the homeassistant plugin's control methods). `status` says whether HA is connected and, when
 * not, why and when the next attempt is; `sync` reads HA's registries and states again now (after
 * exposing entities in HA). English lines with the Chinese after a slash.
 */
import type { HomeassistantStatus } from '../api/homeassistant.js';
import { type CommandRunOptions, withDaemon } from './command-client.js';
import { defineCommand, type NoFlags } from './command-module.js';

export type HomeassistantCommand = { command: 'status' } | { command: 'sync' };

export class HomeassistantUsageError extends Error {}

/** `homeagentctl homeassistant` for the command catalogue (src/cli/commands.ts): its flags, help and parser. */
export const homeassistantCommand = defineCommand<NoFlags>({
  name: 'homeassistant',
  options: {},
  usage: [
    { synopsis: 'homeassistant [status]', about: 'the Home Assistant connection: connected or why not, entities brought in and skipped' },
    { synopsis: 'homeassistant sync', about: "read Home Assistant's registries and states again now" },
  ],
  parse: (args) => {
    const command = parseHomeassistantCommand(args);
    return (context) => runHomeassistant(command, context);
  },
});

export function parseHomeassistantCommand(positionals: readonly string[]): HomeassistantCommand {
  const [sub = 'status', ...rest] = positionals;
  if (sub !== 'status' && sub !== 'sync') throw new HomeassistantUsageError(`unknown homeassistant command ${sub}; use status or sync`);
  if (rest.length > 0) throw new HomeassistantUsageError(`homeassistant ${sub} takes no arguments`);
  return { command: sub };
}

export async function runHomeassistant(command: HomeassistantCommand, options: CommandRunOptions): Promise<number> {
  return withDaemon(options, { plugin: 'homeassistant', also: 'a plugin.homeassistant.token' }, async ({ call, print }) => {
    const method = command.command === 'sync' ? 'homeassistant.sync' : 'homeassistant.status';
    return print((await call(method, {})) as HomeassistantStatus, formatHomeassistantStatus);
  });
}

export function formatHomeassistantStatus(s: HomeassistantStatus): string {
  const lines: string[] = [];
  if (!s.configured) {
    lines.push(`NOT connected: ${s.last_error ?? 'not configured'} / 未配置`);
  } else if (s.state === 'ready') {
    lines.push(`connected to Home Assistant ${s.ha_version ?? ''} at ${s.url}${s.since === null ? '' : ` since ${s.since}`} / 已连接`);
  } else if (s.state === 'auth_failed') {
    lines.push(`Home Assistant REFUSED the token (${s.last_error ?? ''}): set a new one with`);
    lines.push('  homeagentctl config set plugin.homeassistant.token <TOKEN>  / 令牌被拒绝，请设置新的令牌');
  } else {
    const next = s.next_attempt_in_ms === null ? '' : `; next attempt in ${Math.ceil(s.next_attempt_in_ms / 1000)} s`;
    lines.push(`NOT connected to ${s.url} (${s.state}): ${s.last_error ?? 'connecting'}${next} / 未连接`);
  }
  const assist =
    s.assist_list === 'refused'
      ? " (HA would not list what is exposed to Assist: the token's user is not an administrator; only plugin.homeassistant.include counts)"
      : '';
  lines.push(`${s.entities} entities from Home Assistant / 来自 Home Assistant 的实体 ${s.entities} 个${assist}`);
  if (s.skipped_count > 0) {
    lines.push(`${s.skipped_count} skipped / 跳过 ${s.skipped_count} 个:`);
    for (const skip of s.skipped) lines.push(`  ${skip.entity_id}: ${skip.reason}`);
    if (s.skipped_count > s.skipped.length) lines.push(`  ... and ${s.skipped_count - s.skipped.length} more`);
  }
  lines.push(`${s.connections} connection(s)${s.last_sync === null ? '' : `, last read ${s.last_sync}`}`);
  return lines.join('\n');
}

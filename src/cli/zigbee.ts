/**
 * `homeagentctl zigbee …`: the Zigbee2MQTT network of a running daemon, through the mqtt plugin's
 * `mqtt.zigbee_*` control methods (plugin.mqtt.zigbee2mqtt must be on). `status` shows the bridge,
 * whether joining is open and every device's availability and link quality; permit-join, rename,
 * remove and group change the network and are the owner's (the CLI socket proves that), each one
 * audited by the daemon. The answers are in the terminal's language (cli-language.ts).
 */
import type { PermitJoinState, ZigbeeManagementStatus } from '../api/zigbee.js';
import type { Language } from '../shared/language.js';
import { cliLanguage } from './cli-language.js';
import { runLanguage } from './cli-words.js';
import { type CommandRunOptions, type DaemonCall, withDaemon } from './command-client.js';
import { CommandUsageError, defineCommand } from './command-module.js';
import { displayWidth } from './format.js';
import { RemoteError } from './rpc-client.js';

/** homeagentctl's option table entries for zigbee (merged into its parseArgs options). */
export const ZIGBEE_OPTIONS = {
  force: { type: 'boolean' },
  id: { type: 'string' },
  endpoint: { type: 'string' },
} as const;

export type ZigbeeFlags = { force?: boolean | undefined; id?: string | undefined; endpoint?: string | undefined };

export type ZigbeeCommand =
  | { command: 'status' }
  | { command: 'permit-join'; seconds: number }
  | { command: 'rename'; from: string; to: string }
  | { command: 'remove'; device: string; force: boolean }
  | { command: 'group'; action: 'add'; group: string; id?: number }
  | { command: 'group'; action: 'remove'; group: string; force: boolean }
  | { command: 'group'; action: 'members_add' | 'members_remove'; group: string; device: string; endpoint?: string | number };

export class ZigbeeUsageError extends CommandUsageError {}

/** `homeagentctl zigbee` for the command catalogue (src/cli/commands.ts): its flags, help and parser. */
export const zigbeeCommand = defineCommand<ZigbeeFlags>({
  name: 'zigbee',
  options: ZIGBEE_OPTIONS,
  usage: [
    {
      synopsis: 'zigbee [status]',
      about: "Zigbee2MQTT: bridge, whether joining is open, each device's availability and link quality, groups",
      zh: 'Zigbee2MQTT：网桥、是否开放入网、各设备的可用性和链路质量、组',
    },
    {
      synopsis: 'zigbee permit-join [SECONDS]',
      about: 'let new Zigbee devices pair for SECONDS (default 120, at most 254; 0 closes)',
      zh: '允许新的 Zigbee 设备配对 SECONDS 秒（默认 120，最多 254；0 关闭）',
    },
    {
      synopsis: 'zigbee rename FROM TO',
      about: 'rename a device (friendly name or IEEE address); its entity ids follow',
      zh: '重命名设备（友好名称或 IEEE 地址）；其实体 ID 随之改名',
    },
    {
      synopsis: 'zigbee remove DEVICE [--force]',
      about: 'remove a device from the network (--force: even if it does not answer)',
      zh: '把设备移出网络（--force：即使它不应答）',
    },
    {
      synopsis: 'zigbee group add NAME [--id N] | remove GROUP [--force] | members add|remove GROUP DEVICE [--endpoint E]',
      about: 'Zigbee groups (one command switches every member)',
      zh: 'Zigbee 组（一条命令控制所有成员）',
    },
  ],
  parse: (args, flags) => {
    const command = parseZigbeeCommand(args, flags);
    return (context) => runZigbee(command, context);
  },
});

/** Seconds joining stays open when none are given: enough to reset a bulb or press a pairing button. */
export const DEFAULT_PERMIT_JOIN_S = 120;
const COMMANDS = 'status, permit-join, rename, remove or group';
const COMMANDS_ZH = 'status、permit-join、rename、remove 或 group';

/** The zigbee flags given on the command line (the parser refuses those its subcommand does not take). */
export function zigbeeFlagsUsed(flags: ZigbeeFlags): Array<keyof ZigbeeFlags> {
  return (Object.keys(ZIGBEE_OPTIONS) as Array<keyof ZigbeeFlags>).filter((k) => flags[k] !== undefined);
}

/** Reads `zigbee <sub> …` (positionals after `zigbee`); no sub-command means status. Throws ZigbeeUsageError. */
export function parseZigbeeCommand(positionals: readonly string[], flags: ZigbeeFlags): ZigbeeCommand {
  const [sub = 'status', ...rest] = positionals;
  const allowed = (...names: Array<keyof ZigbeeFlags>) => {
    const stray = zigbeeFlagsUsed(flags).find((f) => !names.includes(f));
    if (stray !== undefined)
      throw new ZigbeeUsageError(
        `--${stray} does not belong to zigbee ${[sub, ...rest.slice(0, 1)].join(' ')}`,
        `--${stray} 不属于 zigbee ${[sub, ...rest.slice(0, 1)].join(' ')}`,
      );
  };
  switch (sub) {
    case 'status':
    case 'devices':
      allowed();
      if (rest.length > 0) throw new ZigbeeUsageError(`zigbee ${sub} takes no arguments`, `zigbee ${sub} 不接受参数`);
      return { command: 'status' };
    case 'permit-join': {
      allowed();
      if (rest.length > 1)
        throw new ZigbeeUsageError(
          'zigbee permit-join takes at most SECONDS (0 closes joining)',
          'zigbee permit-join 最多接受一个 SECONDS（0 关闭入网）',
        );
      const seconds = rest[0] === undefined ? DEFAULT_PERMIT_JOIN_S : integer(rest[0], 'SECONDS', 0, 254);
      return { command: 'permit-join', seconds };
    }
    case 'rename': {
      allowed();
      const [from, to] = rest;
      if (rest.length !== 2 || from === undefined || to === undefined || from.trim() === '' || to.trim() === '') {
        throw new ZigbeeUsageError(
          'zigbee rename needs FROM (friendly name or IEEE address) and TO (quote names with spaces)',
          'zigbee rename 需要 FROM（友好名称或 IEEE 地址）和 TO（含空格的名称加引号）',
        );
      }
      return { command: 'rename', from, to };
    }
    case 'remove': {
      allowed('force');
      const [device] = rest;
      if (rest.length !== 1 || device === undefined || device.trim() === '') {
        throw new ZigbeeUsageError(
          'zigbee remove needs exactly one DEVICE (friendly name or IEEE address)',
          'zigbee remove 需要恰好一个 DEVICE（友好名称或 IEEE 地址）',
        );
      }
      return { command: 'remove', device, force: flags.force === true };
    }
    case 'group':
      return parseGroup(rest, flags, allowed);
    default:
      throw new ZigbeeUsageError(`unknown zigbee command ${sub}; use ${COMMANDS}`, `未知的 zigbee 子命令 ${sub}；可用 ${COMMANDS_ZH}`);
  }
}

function parseGroup(rest: string[], flags: ZigbeeFlags, allowed: (...names: Array<keyof ZigbeeFlags>) => void): ZigbeeCommand {
  const [action, ...args] = rest;
  switch (action) {
    case 'add': {
      allowed('id');
      if (args.length !== 1 || args[0] === undefined)
        throw new ZigbeeUsageError('zigbee group add needs exactly one NAME [--id N]', 'zigbee group add 需要恰好一个 NAME [--id N]');
      return flags.id === undefined
        ? { command: 'group', action: 'add', group: args[0] }
        : { command: 'group', action: 'add', group: args[0], id: integer(flags.id, '--id', 1, 65535) };
    }
    case 'remove':
      allowed('force');
      if (args.length !== 1 || args[0] === undefined)
        throw new ZigbeeUsageError(
          'zigbee group remove needs exactly one GROUP [--force]',
          'zigbee group remove 需要恰好一个 GROUP [--force]',
        );
      return { command: 'group', action: 'remove', group: args[0], force: flags.force === true };
    case 'members': {
      allowed('endpoint');
      const [verb, group, device] = args;
      if ((verb !== 'add' && verb !== 'remove') || args.length !== 3 || group === undefined || device === undefined) {
        throw new ZigbeeUsageError(
          'zigbee group members add|remove GROUP DEVICE [--endpoint E]',
          '用法：zigbee group members add|remove GROUP DEVICE [--endpoint E]',
        );
      }
      const command: ZigbeeCommand = { command: 'group', action: verb === 'add' ? 'members_add' : 'members_remove', group, device };
      if (flags.endpoint !== undefined) command.endpoint = /^\d+$/.test(flags.endpoint) ? Number(flags.endpoint) : flags.endpoint;
      return command;
    }
    default:
      throw new ZigbeeUsageError(
        'zigbee group add NAME [--id N] | remove GROUP [--force] | members add|remove GROUP DEVICE [--endpoint E]',
        '用法：zigbee group add NAME [--id N] | remove GROUP [--force] | members add|remove GROUP DEVICE [--endpoint E]',
      );
  }
}

function integer(text: string, what: string, min: number, max: number): number {
  if (!/^\d+$/.test(text) || Number(text) < min || Number(text) > max) {
    throw new ZigbeeUsageError(
      `${what} must be a whole number from ${min} to ${max}, not ${JSON.stringify(text)}`,
      `${what} 须为 ${min} 到 ${max} 之间的整数，而不是 ${JSON.stringify(text)}`,
    );
  }
  return Number(text);
}

/** The methods exist only while the mqtt plugin runs with its Zigbee2MQTT feature on. */
export const ZIGBEE_OFF =
  'Zigbee2MQTT management is off: set plugin.mqtt.zigbee2mqtt: true and a broker (plugin.mqtt.url or plugin.mqtt.broker_enabled), then restart HomeAgent / Zigbee2MQTT 管理未开启';

function explained(call: DaemonCall): DaemonCall {
  return async (method, params) => {
    try {
      return await call(method, params);
    } catch (error) {
      if (error instanceof RemoteError && error.code === 'HA_ERR_RPC_UNKNOWN_METHOD')
        throw new RemoteError({ code: error.code, message: ZIGBEE_OFF });
      throw error;
    }
  };
}

/** Runs a parsed zigbee command; resolves with the exit code. Daemon errors are thrown (homeagentctl reports them). */
export async function runZigbee(command: ZigbeeCommand, options: CommandRunOptions): Promise<number> {
  const language = runLanguage(options);
  const w = WORDS[language];
  return withDaemon(options, undefined, async ({ call: daemonCall, print }) => {
    const call = explained(daemonCall);
    switch (command.command) {
      case 'status':
        return print((await call('mqtt.zigbee_status', {})) as ZigbeeManagementStatus, (r) => formatZigbeeStatus(r, language));
      case 'permit-join':
        return print((await call('mqtt.zigbee_permit_join', { seconds: command.seconds })) as PermitJoinState, (r) =>
          formatPermitJoin(r, language),
        );
      case 'rename': {
        const answer = await call('mqtt.zigbee_rename', { from: command.from, to: command.to });
        return print(answer, () => w.renamed(command.from, command.to));
      }
      case 'remove': {
        const answer = await call('mqtt.zigbee_remove', { device: command.device, force: command.force });
        return print(answer, () => w.removed(command.device));
      }
      case 'group': {
        const { command: _, ...params } = command;
        const answer = await call('mqtt.zigbee_group', params);
        return print(answer, () => formatGroupDone(command, language));
      }
    }
  });
}

/** Every sentence the zigbee command prints around the network's values, in both languages. */
const WORDS = {
  en: {
    renamed: (from: string, to: string) => `renamed ${from} to ${to}; its entity ids follow the new name`,
    removed: (device: string) => `removed ${device} from the Zigbee network; pair it again to bring it back`,
    groupAdded: (group: string) => `group ${group} created`,
    groupRemoved: (group: string) => `group ${group} removed`,
    memberAdded: (device: string, group: string) => `${device} added to group ${group}`,
    memberRemoved: (device: string, group: string) => `${device} taken out of group ${group}`,
    closed: 'joining closed: no new Zigbee devices can pair',
    open: (seconds: number | null, until: string | null) =>
      `joining open${seconds === null ? '' : ` for ${seconds} s`}${until === null ? '' : ` (until ${until} UTC)`}: put the new device in pairing mode now`,
    bridge: (state: string) => `Zigbee2MQTT bridge: ${state}`,
    bridgeState: (state: string) => state,
    devices: (n: number) => `${n} device(s):`,
    weak: ' (weak)',
    lastSeen: (at: string) => `, last seen ${at}`,
    offline: 'OFFLINE',
    online: 'online',
    notReported: 'availability not reported',
    groups: (n: number) => `${n} group(s)${n === 0 ? '' : ':'}`,
    group: (name: string, id: number, members: number) => `  ${name} (id ${id}): ${members} member(s)`,
  },
  zh: {
    renamed: (from: string, to: string) => `已将 ${from} 重命名为 ${to}；它的实体 id 随新名字改变`,
    removed: (device: string) => `已从 Zigbee 网络移除 ${device}；重新配对即可找回`,
    groupAdded: (group: string) => `已创建分组 ${group}`,
    groupRemoved: (group: string) => `已删除分组 ${group}`,
    memberAdded: (device: string, group: string) => `已将 ${device} 加入分组 ${group}`,
    memberRemoved: (device: string, group: string) => `已将 ${device} 移出分组 ${group}`,
    closed: '已关闭入网：新设备无法配对',
    open: (seconds: number | null, until: string | null) =>
      `已允许入网${seconds === null ? '' : ` ${seconds} 秒`}${until === null ? '' : `（到 UTC ${until}）`}：请让新设备进入配对模式`,
    bridge: (state: string) => `Zigbee2MQTT 网关：${state}`,
    bridgeState: (state: string) => (state === 'online' ? '在线' : state === 'offline' ? '离线' : '未知'),
    devices: (n: number) => `${n} 个设备：`,
    weak: '（信号弱）',
    lastSeen: (at: string) => `，上次出现 ${at}`,
    offline: '离线',
    online: '在线',
    notReported: '未报告在线状态',
    groups: (n: number) => `${n} 个分组${n === 0 ? '' : '：'}`,
    group: (name: string, id: number, members: number) => `  ${name}（id ${id}）：${members} 个成员`,
  },
} as const;

function formatGroupDone(command: Extract<ZigbeeCommand, { command: 'group' }>, language: Language): string {
  const w = WORDS[language];
  switch (command.action) {
    case 'add':
      return w.groupAdded(command.group);
    case 'remove':
      return w.groupRemoved(command.group);
    case 'members_add':
      return w.memberAdded(command.device, command.group);
    case 'members_remove':
      return w.memberRemoved(command.device, command.group);
  }
}

// ---- readable output ----

export function formatPermitJoin(p: PermitJoinState, language: Language = cliLanguage()): string {
  const w = WORDS[language];
  if (!p.open) return w.closed;
  return w.open(p.remaining_s, p.until === null ? null : p.until.slice(11, 19));
}

/** The bridge, joining, then one line per device (weakest link first is not the order: names are). */
export function formatZigbeeStatus(s: ZigbeeManagementStatus, language: Language = cliLanguage()): string {
  const w = WORDS[language];
  const comma = language === 'zh' ? '，' : ', ';
  const lines = [w.bridge(w.bridgeState(s.bridge)), formatPermitJoin(s.permit_join, language), w.devices(s.devices.length)];
  const width = Math.min(32, Math.max(6, ...s.devices.map((d) => displayWidth(d.friendly_name))));
  for (const d of s.devices) {
    const link = d.linkquality === null ? 'lqi -' : `lqi ${d.linkquality}${d.linkquality < 30 ? w.weak : ''}`;
    const seen =
      d.last_seen === null ? '' : w.lastSeen(typeof d.last_seen === 'number' ? new Date(d.last_seen).toISOString() : d.last_seen);
    const availability = d.availability === 'offline' ? w.offline : d.availability === 'online' ? w.online : w.notReported;
    const name = d.friendly_name + ' '.repeat(Math.max(0, width - displayWidth(d.friendly_name)));
    lines.push(`  ${name}  ${availability}${comma}${link}${seen}  [${d.ieee_address}${d.model ? `, ${d.model}` : ''}]`);
  }
  lines.push(w.groups(s.groups.length));
  for (const g of s.groups) lines.push(w.group(g.friendly_name, g.id, g.members.length));
  return lines.join('\n');
}

/**
 * `homeagentctl devices [list]|add|rotate|revoke`: the companion devices of a running daemon (the
 * remotedevice plugin's `remotedevice.*` control methods, docs/remote-devices.md). Whoever can open
 * the CLI socket is the owner, so add, rotate and revoke work here; their token is printed this
 * once, with the companion command line that uses it, and never again (the daemon keeps a hash).
 * The CLI may not import plugins: the answers' shapes are restated here as far as it prints them.
 */
import type { Language } from '../shared/language.js';
import { cliLanguage } from './cli-language.js';
import { runLanguage } from './cli-words.js';
import { type CommandRunOptions, withDaemon } from './command-client.js';
import { CommandUsageError, defineCommand } from './command-module.js';
import { table } from './format.js';

export const DEVICES_OPTIONS = { name: { type: 'string' }, grant: { type: 'string' } } as const;

export type DevicesFlags = { name?: string | undefined; grant?: string | undefined };

/** What a device may be granted; the plugin checks them again (plugins/remotedevice/protocol.ts). */
export const DEVICE_GRANTS = ['cmdrun', 'screenshot', 'clipboard_read', 'clipboard_write', 'sound', 'notify'] as const;

export type DevicesCommand =
  | { command: 'list' }
  | { command: 'add'; id: string; name?: string; capabilities?: string[] }
  | { command: 'rotate' | 'revoke'; id: string };

export class DevicesUsageError extends CommandUsageError {}

/** One device as `remotedevice.list` answers it, as far as the CLI prints it. */
export interface DeviceListingEntry {
  id: string;
  name: string;
  online: boolean;
  granted: string[];
  capabilities: string[];
  client?: string;
  platform?: string;
  last_seen?: string;
  last_offline?: { code: string; message: string; at: string };
}

export interface DeviceListing {
  gateway: { url: string; listening: boolean };
  devices: DeviceListingEntry[];
}

/** What add and rotate answer: the device, its new token (shown this once) and the gateway's address. */
export interface DeviceCredentialsAnswer {
  device: DeviceListingEntry;
  token: string;
  url: string;
}

/** The same rule as the plugin's: devices are named in the companion's command line and in channel names. */
const DEVICE_ID = /^[a-z][a-z0-9_]{0,24}$/;

/** `homeagentctl devices` for the command catalogue (src/cli/commands.ts): its flags, help and parser. */
export const devicesCommand = defineCommand<DevicesFlags>({
  name: 'devices',
  options: DEVICES_OPTIONS,
  usage: [
    {
      synopsis: 'devices [list]',
      about: 'the companion devices (PCs, phones, boards): online or not, what they offer, the gateway address',
      zh: '伴侣设备（电脑、手机、开发板）：是否在线、提供什么、网关地址',
    },
    {
      synopsis: 'devices add ID [--name NAME] [--grant cmdrun,notify,...]',
      about: 'register a device and print its token (shown once) and the companion command to run there',
      zh: '登记一台设备，打印它的令牌（只显示这一次）和要在那台设备上运行的伴侣程序命令',
    },
    { synopsis: 'devices rotate ID', about: 'replace its token (the old one stops at once)', zh: '更换令牌（旧令牌立即失效）' },
    { synopsis: 'devices revoke ID', about: 'remove the device; a connected one is disconnected', zh: '删除设备；已连接的会被断开' },
  ],
  parse: (args, flags) => {
    const command = parseDevicesCommand(args, flags);
    return (context) => runDevices(command, context);
  },
});

/** Reads `devices [<sub> …]` (positionals after `devices`); throws DevicesUsageError. No sub-command means list. */
export function parseDevicesCommand(positionals: readonly string[], flags: DevicesFlags): DevicesCommand {
  const [sub = 'list', ...rest] = positionals;
  if (sub !== 'add' && (flags.name !== undefined || flags.grant !== undefined))
    throw new DevicesUsageError(
      `--name and --grant belong to devices add, not devices ${sub}`,
      `--name 和 --grant 是 devices add 的选项，不属于 devices ${sub}`,
    );
  switch (sub) {
    case 'list':
      if (rest.length > 0) throw new DevicesUsageError('devices list takes no arguments', 'devices list 不接受参数');
      return { command: 'list' };
    case 'add':
    case 'rotate':
    case 'revoke': {
      const id = deviceId(sub, rest);
      if (sub !== 'add') return { command: sub, id };
      const name = flags.name?.trim();
      if (flags.name !== undefined && (name === '' || (name?.length ?? 0) > 64))
        throw new DevicesUsageError('--name must be 1 to 64 characters', '--name 须为 1 到 64 个字符');
      return {
        command: 'add',
        id,
        ...(name !== undefined && { name }),
        ...(flags.grant !== undefined && { capabilities: grants(flags.grant) }),
      };
    }
    default:
      throw new DevicesUsageError(
        `unknown devices command ${sub}; use list, add, rotate or revoke`,
        `未知的 devices 子命令 ${sub}；可用 list、add、rotate 或 revoke`,
      );
  }
}

function deviceId(sub: string, rest: readonly string[]): string {
  const [id, ...extra] = rest;
  if (id === undefined)
    throw new DevicesUsageError(
      `devices ${sub} needs an ID, e.g. devices ${sub} laptop`,
      `devices ${sub} 需要一个 ID，例如 devices ${sub} laptop`,
    );
  if (extra.length > 0)
    throw new DevicesUsageError(
      `devices ${sub} takes one ID, got ${rest.join(' ')} (a display name goes in --name)`,
      `devices ${sub} 只接受一个 ID，收到的是 ${rest.join(' ')}（显示名称用 --name）`,
    );
  if (!DEVICE_ID.test(id))
    throw new DevicesUsageError(
      `the device ID ${id} must be a lower-case letter followed by up to 24 lower-case letters, digits or _ (e.g. laptop, kitchen_tablet)`,
      `设备 ID ${id} 须以小写字母开头，后接最多 24 个小写字母、数字或 _（例如 laptop、kitchen_tablet）`,
    );
  return id;
}

/** `--grant a,b`: each one of DEVICE_GRANTS; `--grant ''` grants nothing (the device is only an entity and a channel). */
function grants(text: string): string[] {
  const names = [...new Set(text.split(',').map((item) => item.trim()))].filter((item) => item !== '');
  const unknown = names.filter((name) => !(DEVICE_GRANTS as readonly string[]).includes(name));
  if (unknown.length > 0)
    throw new DevicesUsageError(
      `--grant: unknown capability ${unknown.join(', ')}; choose from ${DEVICE_GRANTS.join(', ')}`,
      `--grant：未知的能力 ${unknown.join('、')}；可选 ${DEVICE_GRANTS.join('、')}`,
    );
  return names;
}

export async function runDevices(command: DevicesCommand, options: CommandRunOptions): Promise<number> {
  const language = runLanguage(options);
  return withDaemon(options, { plugin: 'remotedevice' }, async ({ call, print }) => {
    switch (command.command) {
      case 'list':
        return print((await call('remotedevice.list', {})) as DeviceListing, (r) => formatDevices(r, language));
      case 'add': {
        const { command: _, ...params } = command;
        return print((await call('remotedevice.add', params)) as DeviceCredentialsAnswer, (r) => formatCredentials(r, language));
      }
      case 'rotate':
        return print((await call('remotedevice.rotate', { id: command.id })) as DeviceCredentialsAnswer, (r) =>
          formatCredentials(r, language),
        );
      case 'revoke':
        return print((await call('remotedevice.revoke', { id: command.id })) as { revoked: string; was_online: boolean }, (r) =>
          WORDS[language].revoked(r.revoked, r.was_online),
        );
    }
  });
}

const WORDS = {
  en: {
    gateway: (url: string, listening: boolean) =>
      listening ? `device gateway: ${url}` : `device gateway: not listening (${url || 'not started'})`,
    header: ['ID', 'NAME', 'STATE', 'CAN DO NOW', 'GRANTED', 'SEEN'],
    online: 'online',
    offline: 'offline',
    none: 'no devices yet: homeagentctl devices add laptop',
    nothing: '-',
    registered: (id: string) => `${id} is registered. Its token is shown this once; keep it on that device only.`,
    token: 'token:',
    run: 'On the device (Node 20 or newer, the folder tools/companion of HomeAgent copied there):',
    revoked: (id: string, wasOnline: boolean) => `revoked ${id}${wasOnline ? ' (it was connected and has been disconnected)' : ''}`,
  },
  zh: {
    gateway: (url: string, listening: boolean) => (listening ? `设备网关：${url}` : `设备网关：未在监听（${url || '未启动'}）`),
    header: ['ID', '名称', '状态', '现在可做', '已授权', '最近'],
    online: '在线',
    offline: '离线',
    none: '还没有设备：homeagentctl devices add laptop',
    nothing: '-',
    registered: (id: string) => `已登记 ${id}。令牌只显示这一次，只保存在那台设备上。`,
    token: '令牌：',
    run: '在那台设备上（Node 20 或更新，把 HomeAgent 的 tools/companion 文件夹复制过去）运行：',
    revoked: (id: string, wasOnline: boolean) => `已撤销 ${id}${wasOnline ? '（它当时在线，已被断开）' : ''}`,
  },
} as const;

export function formatDevices(listing: DeviceListing, language: Language = cliLanguage()): string {
  const w = WORDS[language];
  const head = w.gateway(listing.gateway.url, listing.gateway.listening);
  if (listing.devices.length === 0) return `${head}\n${w.none}`;
  const list = (items: string[]) => items.join(',') || w.nothing;
  const rows = listing.devices.map((d) => [
    d.id,
    d.name,
    d.online ? `${w.online}${d.platform ? ` (${d.platform})` : ''}` : d.last_offline ? `${w.offline}: ${d.last_offline.code}` : w.offline,
    list(d.capabilities),
    list(d.granted),
    d.last_seen ?? d.last_offline?.at ?? w.nothing,
  ]);
  return `${head}\n${table([[...w.header], ...rows], '')}`;
}

export function formatCredentials(answer: DeviceCredentialsAnswer, language: Language = cliLanguage()): string {
  const w = WORDS[language];
  const url = answer.url || 'ws://HOST:9890/device';
  return [
    w.registered(answer.device.id),
    `${w.token} ${answer.token}`,
    w.run,
    `  node companion/companion.mjs --url ${url} --id ${answer.device.id} --token ${answer.token}`,
  ].join('\n');
}

/**
 * The IO manager's tables (devices, output channels, and the tools derived from them) as one
 * immutable value. Every change builds a new value from the old one and the manager swaps it in
 * with one assignment, so a reader holding a snapshot always sees a consistent set, never one
 * half way through a plugin reload.
 */
import { HomeAgentError } from '../shared/errors.js';
import type { ToolDefinition } from '../shared/tool.js';
import { ALL_CAPABILITIES } from './capabilities.js';
import type { Device, OutputChannel } from './types.js';

/** Device and channel names: short, lower case, usable inside tool names. */
export const IO_NAME = /^[a-z][a-z0-9_]{0,31}$/;
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
/** The IO manager's own tools all start with this; device tools may not. */
export const IO_TOOL_PREFIX = 'output_';

export interface IoTables {
  readonly devices: ReadonlyMap<string, Device>;
  readonly channels: ReadonlyMap<string, OutputChannel>;
  /** The tools devices offer, checked for unique names. */
  readonly deviceTools: readonly ToolDefinition[];
}

export const EMPTY_TABLES: IoTables = Object.freeze({ devices: new Map(), channels: new Map(), deviceTools: Object.freeze([]) });

export interface TableChange {
  /** Owner whose devices and channels are all removed first (a plugin reload). */
  removeOwner?: string;
  removeDevices?: readonly string[];
  removeChannels?: readonly string[];
  addDevices?: readonly Device[];
  addChannels?: readonly OutputChannel[];
}

/** The tables after `change`, or a HA_ERR_IO_DEFINITION error; `tables` itself is never modified. */
export function applyChange(tables: IoTables, change: TableChange): IoTables {
  const devices = new Map<string, Device>();
  for (const [name, device] of tables.devices) {
    if (device.owner !== change.removeOwner && !change.removeDevices?.includes(name)) devices.set(name, device);
  }
  const channels = new Map<string, OutputChannel>();
  for (const [name, channel] of tables.channels) {
    if (channel.owner !== change.removeOwner && !change.removeChannels?.includes(name)) channels.set(name, channel);
  }
  for (const device of change.addDevices ?? []) {
    checkDevice(device);
    if (devices.has(device.name)) throw definitionError(`a device named ${device.name} is already registered`);
    devices.set(device.name, device);
  }
  for (const channel of change.addChannels ?? []) {
    checkChannel(channel);
    if (channels.has(channel.name)) throw definitionError(`an output channel named ${channel.name} is already registered`);
    channels.set(channel.name, channel);
  }
  return Object.freeze({ devices, channels, deviceTools: Object.freeze(collectDeviceTools(devices)) });
}

function collectDeviceTools(devices: ReadonlyMap<string, Device>): ToolDefinition[] {
  const seen = new Map<string, string>();
  const tools: ToolDefinition[] = [];
  for (const device of devices.values()) {
    for (const tool of device.tools ?? []) {
      const other = seen.get(tool.name);
      if (other !== undefined) throw definitionError(`device ${device.name}: tool ${tool.name} is already offered by device ${other}`);
      seen.set(tool.name, device.name);
      tools.push(tool);
    }
  }
  return tools;
}

function checkName(kind: string, name: unknown): void {
  if (typeof name !== 'string' || !IO_NAME.test(name)) {
    throw definitionError(`${kind} name ${JSON.stringify(name)} must match ${IO_NAME.source}`);
  }
}

function checkOwner(kind: string, name: string, owner: unknown): void {
  if (typeof owner !== 'string' || owner === '') throw definitionError(`${kind} ${name}: owner must be a non-empty string`);
}

function checkDevice(device: Device): void {
  checkName('device', device?.name);
  checkOwner('device', device.name, device.owner);
  if (typeof device.type !== 'string' || device.type === '')
    throw definitionError(`device ${device.name}: type must be a non-empty string`);
  if (typeof device.description !== 'string') throw definitionError(`device ${device.name}: description must be a string`);
  if (device.capabilities !== undefined && !isCapabilityMask(device.capabilities, 0)) {
    throw definitionError(`device ${device.name}: capabilities must be an integer from 0 to ${ALL_CAPABILITIES}`);
  }
  for (const tool of device.tools ?? []) {
    if (typeof tool?.name !== 'string' || !TOOL_NAME.test(tool.name)) {
      throw definitionError(`device ${device.name}: tool name ${JSON.stringify(tool?.name)} must match ${TOOL_NAME.source}`);
    }
    if (tool.name.startsWith(IO_TOOL_PREFIX))
      throw definitionError(`device ${device.name}: tool names starting with ${IO_TOOL_PREFIX} are reserved`);
    if (typeof tool.execute !== 'function') throw definitionError(`device ${device.name}: tool ${tool.name} has no execute function`);
  }
}

function checkChannel(channel: OutputChannel): void {
  checkName('output channel', channel?.name);
  checkOwner('output channel', channel.name, channel.owner);
  if (typeof channel.description !== 'string') throw definitionError(`output channel ${channel.name}: description must be a string`);
  // A channel that can carry nothing would only produce capability errors.
  if (!isCapabilityMask(channel.capabilities, 1)) {
    throw definitionError(`output channel ${channel.name}: capabilities must be an integer from 1 to ${ALL_CAPABILITIES}`);
  }
  if (typeof channel.synchronous !== 'boolean') throw definitionError(`output channel ${channel.name}: synchronous must be a boolean`);
  if (typeof channel.send !== 'function') throw definitionError(`output channel ${channel.name}: send must be a function`);
  if (channel.answers !== undefined) {
    if (!Array.isArray(channel.answers) || channel.answers.some((c) => typeof c !== 'string' || c === '')) {
      throw definitionError(`output channel ${channel.name}: answers must be a list of conversation names`);
    }
  }
}

function isCapabilityMask(value: unknown, minimum: number): boolean {
  return Number.isInteger(value) && (value as number) >= minimum && ((value as number) & ~ALL_CAPABILITIES) === 0;
}

function definitionError(message: string): HomeAgentError {
  return new HomeAgentError('HA_ERR_IO_DEFINITION', message);
}

/**
 * The IO manager's output channels as one immutable value. Every change builds a new value from
 * the old one and the manager swaps it in with one assignment, so a reader holding a snapshot
 * always sees a consistent set, never one half way through a plugin reload.
 */
import { HomeAgentError } from '../shared/errors.js';
import { ALL_CAPABILITIES } from './capabilities.js';
import type { OutputChannel } from './types.js';

/** Channel names: short, lower case, usable inside tool names. */
export const IO_NAME = /^[a-z][a-z0-9_]{0,31}$/;

export interface IoTables {
  readonly channels: ReadonlyMap<string, OutputChannel>;
}

export const EMPTY_TABLES: IoTables = Object.freeze({ channels: new Map() });

export interface TableChange {
  /** Owner whose channels are all removed first (a plugin reload). */
  removeOwner?: string;
  removeChannels?: readonly string[];
  addChannels?: readonly OutputChannel[];
}

/** The tables after `change`, or a HA_ERR_IO_DEFINITION error; `tables` itself is never modified. */
export function applyChange(tables: IoTables, change: TableChange): IoTables {
  const channels = new Map<string, OutputChannel>();
  for (const [name, channel] of tables.channels) {
    if (channel.owner !== change.removeOwner && !change.removeChannels?.includes(name)) channels.set(name, channel);
  }
  for (const channel of change.addChannels ?? []) {
    checkChannel(channel);
    if (channels.has(channel.name)) throw definitionError(`an output channel named ${channel.name} is already registered`);
    channels.set(channel.name, channel);
  }
  return Object.freeze({ channels });
}

function checkChannel(channel: OutputChannel): void {
  if (typeof channel?.name !== 'string' || !IO_NAME.test(channel.name)) {
    throw definitionError(`output channel name ${JSON.stringify(channel?.name)} must match ${IO_NAME.source}`);
  }
  if (typeof channel.owner !== 'string' || channel.owner === '')
    throw definitionError(`output channel ${channel.name}: owner must be a non-empty string`);
  if (typeof channel.description !== 'string') throw definitionError(`output channel ${channel.name}: description must be a string`);
  // A channel that can carry nothing would only produce capability errors.
  if (!isCapabilityMask(channel.capabilities)) {
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

function isCapabilityMask(value: unknown): boolean {
  return Number.isInteger(value) && (value as number) >= 1 && ((value as number) & ~ALL_CAPABILITIES) === 0;
}

function definitionError(message: string): HomeAgentError {
  return new HomeAgentError('HA_ERR_IO_DEFINITION', message);
}

/**
 * The tools the model uses to reach output channels: `output_send__<name>`, its
 * `output_send__<name>_help`, and `output_list_channels`.
 *
 * A successful send answers exactly "ok". The original echoed rich receipts ("sent via [qq]:
 * map[status:sent]"), which the model took as a prompt to send again: one turn made 80+ sends.
 */
import { randomUUID } from 'node:crypto';
import type { Clock } from '../shared/clock.js';
import { describeError, isHomeAgentError } from '../shared/errors.js';
import { type JsonSchema, type ToolDefinition, ToolError, type ToolErrorInfo } from '../shared/tool.js';
import { canCarry, isOutputType, typesOf } from './capabilities.js';
import type { OutputChannel, OutputEvent, OutputType } from './types.js';

export const IO_OWNER = 'io';
export const SEND_PREFIX = 'output_send__';
export const LIST_TOOL = 'output_list_channels';
/** The receipt the model sees for a successful send. Nothing else: see the module comment. */
export const SEND_RECEIPT = 'ok';

export interface OutputToolDeps {
  /** The channel as registered now (not when the tool was built): reloads may replace it. */
  channel(name: string): OutputChannel | undefined;
  channels(): Iterable<OutputChannel>;
  send(event: OutputEvent): Promise<void>;
  clock: Clock;
}

export interface ChannelInfo {
  name: string;
  description: string;
  capabilities: OutputType[];
  synchronous: boolean;
}

export interface SendArgs {
  payload?: unknown;
  type?: unknown;
  meta?: unknown;
}

export function channelInfo(channel: OutputChannel): ChannelInfo {
  return {
    name: channel.name,
    description: channel.description,
    capabilities: typesOf(channel.capabilities),
    synchronous: channel.synchronous,
  };
}

/** Text when the channel carries it (the usual case), else the first type it does carry. */
export function defaultType(channel: OutputChannel): OutputType {
  const types = typesOf(channel.capabilities);
  return types.includes('text') ? 'text' : (types[0] ?? 'text');
}

/** The two tools of one channel. */
export function channelTools(channel: OutputChannel, deps: OutputToolDeps): ToolDefinition[] {
  return [sendTool(channel, deps), helpTool(channel, deps)];
}

export function listTool(deps: OutputToolDeps): ToolDefinition {
  return {
    name: LIST_TOOL,
    owner: IO_OWNER,
    description: 'List the output channels: name, description, what each can carry, and whether it is synchronous.',
    parameters: { type: 'object', properties: {}, additionalProperties: false },
    tier: 'read',
    parallel_safe: true,
    execute: () => ({ channels: [...deps.channels()].map(channelInfo) }),
  };
}

function sendTool(channel: OutputChannel, deps: OutputToolDeps): ToolDefinition<SendArgs> {
  const name = channel.name;
  const types = typesOf(channel.capabilities);
  const parameters: JsonSchema = {
    type: 'object',
    properties: {
      payload: {
        description:
          'The content: the text for type text; a file path, URL or media reference for file, image and audio; any JSON value for structured.',
      },
      type: { type: 'string', enum: types, default: defaultType(channel), description: 'What kind of content the payload is.' },
      meta: { type: 'object', description: 'Channel-specific options (file name, caption, ...).' },
    },
    required: ['payload'],
    additionalProperties: false,
  };
  const sync = channel.synchronous ? ' Synchronous channel: normally just answer in text instead.' : '';
  return {
    name: `${SEND_PREFIX}${name}`,
    owner: IO_OWNER,
    description: `Send ${types.join('/')} to the ${name} channel (${channel.description}). Returns "ok".${sync}`,
    parameters,
    tier: channel.critical ? 'dangerous' : 'act',
    // Sends to one channel must keep their order, so the loop runs them one after another.
    parallel_safe: false,
    execute: async (args, context) => {
      const current = requireChannel(deps, name);
      const type = args.type ?? defaultType(current);
      if (!isOutputType(type)) {
        throw new ToolError({ reason: 'enum', field: 'type', detail: `unknown type ${JSON.stringify(type)}`, hint: carriesHint(current) });
      }
      if (!canCarry(current.capabilities, type)) {
        throw new ToolError({
          reason: 'capability',
          field: 'type',
          detail: `channel ${name} cannot carry ${type}`,
          hint: carriesHint(current),
        });
      }
      checkPayload(type, args.payload);
      if (args.meta !== undefined && (typeof args.meta !== 'object' || args.meta === null || Array.isArray(args.meta))) {
        throw new ToolError({ reason: 'type', field: 'meta', detail: 'meta must be an object' });
      }
      const event: OutputEvent = {
        id: randomUUID(),
        channel: name,
        type,
        payload: args.payload,
        // The channel needs to know which conversation the send answers; the model cannot override that.
        meta: {
          ...(args.meta as Record<string, unknown> | undefined),
          task_id: context.task_id,
          input_source: context.source,
          input_channel: context.channel,
        },
        created_at: deps.clock.now(),
      };
      try {
        await deps.send(event);
      } catch (error) {
        throw asToolError(error, current);
      }
      return SEND_RECEIPT;
    },
  };
}

function helpTool(channel: OutputChannel, deps: OutputToolDeps): ToolDefinition {
  const name = channel.name;
  return {
    name: `${SEND_PREFIX}${name}_help`,
    owner: IO_OWNER,
    description: `Describe the ${name} output channel: what it is, what it can carry, whether it is synchronous.`,
    parameters: { type: 'object', properties: {}, additionalProperties: false },
    tier: 'read',
    parallel_safe: true,
    execute: () => channelInfo(requireChannel(deps, name)),
  };
}

function requireChannel(deps: OutputToolDeps, name: string): OutputChannel {
  const channel = deps.channel(name);
  if (!channel) {
    throw new ToolError({ reason: 'not_found', detail: `output channel ${name} is gone`, hint: `call ${LIST_TOOL} to see the channels` });
  }
  return channel;
}

function carriesHint(channel: OutputChannel): string {
  return `channel ${channel.name} carries: ${typesOf(channel.capabilities).join(', ')}; send one of those, or call ${LIST_TOOL} for another channel`;
}

function checkPayload(type: OutputType, payload: unknown): void {
  if (payload === undefined || payload === null)
    throw new ToolError({ reason: 'required', field: 'payload', detail: 'payload is required' });
  // Everything but structured content is text on the wire (the message, or a path/URL/reference).
  if (type !== 'structured' && typeof payload !== 'string') {
    throw new ToolError({ reason: 'type', field: 'payload', detail: `payload must be a string for type ${type}` });
  }
  if (typeof payload === 'string' && payload.trim() === '') {
    throw new ToolError({ reason: 'required', field: 'payload', detail: 'payload is empty' });
  }
}

function asToolError(error: unknown, channel: OutputChannel): ToolError {
  if (error instanceof ToolError) return error;
  let info: ToolErrorInfo;
  if (isHomeAgentError(error, 'HA_ERR_IO_CAPABILITY'))
    info = { reason: 'capability', field: 'type', detail: error.message, hint: carriesHint(channel) };
  else if (isHomeAgentError(error, 'HA_ERR_IO_CHANNEL_UNKNOWN'))
    info = { reason: 'not_found', detail: error.message, hint: `call ${LIST_TOOL} to see the channels` };
  else info = { reason: 'failed', detail: `sending to ${channel.name} failed: ${describeError(error)}` };
  return new ToolError(info);
}

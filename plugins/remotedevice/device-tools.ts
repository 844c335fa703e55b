/**
 * The model's tools for companion devices: list_devices and device_ctl_status (read),
 * device_ctl_cmdrun (dangerous: it runs a program on another machine, so the owner approves every
 * call unless pre-authorised), device_ctl_cmdresult (read: the result of a command already run),
 * screensee (act: a screenshot is private, and it is shown to the model in the turn like the
 * camera's pictures) and device_clipboard (act: the clipboard may hold anything). Failures are
 * tool errors with the gateway's code, which the model can read and explain.
 */
import {
  type ErrorCode,
  HomeAgentError,
  isHomeAgentError,
  type PluginMedia,
  type ToolContext,
  type ToolDefinition,
  ToolError,
  type ToolErrorReason,
} from '../../src/sdk/index.js';
import type { CommandJob, CommandJobs } from './command-jobs.js';
import { clipboardText, commandOutcome, screenshot } from './device-results.js';
import type { DeviceSession } from './device-session.js';
import type { DeviceView } from './device-view.js';
import type { DeviceCapability } from './protocol.js';
import type { RemotedeviceSettings } from './settings-schema.js';

export interface DeviceToolHost {
  views(): DeviceView[];
  /** One device's view; throws HA_ERR_REMOTEDEVICE_UNKNOWN. */
  view(id: string): DeviceView;
  /** The device's session when it is online and may be asked for `capability`; throws the coded reason otherwise. */
  session(id: string, capability: DeviceCapability): DeviceSession;
  settings(): RemotedeviceSettings;
  jobs: CommandJobs;
  media: PluginMedia;
  audit(action: string, details: Record<string, unknown>): void;
}

type Tool<A> = Omit<ToolDefinition<A>, 'owner'>;

/** The tool's own timeout is the gateway's wait plus this, so the gateway's clearer answer comes first. */
const MARGIN_MS = 5000;
const MAX_RESULT_WAIT_S = 60;

const DEVICE = { type: 'string', pattern: '^[a-z][a-z0-9_]{0,24}$', description: 'The device id (list_devices shows them).' };

const REASON: Record<string, ToolErrorReason> = {
  HA_ERR_REMOTEDEVICE_UNKNOWN: 'not_found',
  HA_ERR_REMOTEDEVICE_NO_JOB: 'not_found',
  HA_ERR_REMOTEDEVICE_OFFLINE: 'unavailable',
  HA_ERR_REMOTEDEVICE_REVOKED: 'unavailable',
  HA_ERR_REMOTEDEVICE_CAPABILITY: 'capability',
  HA_ERR_REMOTEDEVICE_BUSY: 'rejected',
  HA_ERR_REMOTEDEVICE_REFUSED: 'rejected',
  HA_ERR_REMOTEDEVICE_TOO_LARGE: 'rejected',
  HA_ERR_REMOTEDEVICE_TIMEOUT: 'timeout',
  HA_ERR_REMOTEDEVICE_BAD_RESULT: 'failed',
  HA_ERR_MEDIA_TOO_LARGE: 'rejected',
};

export function toToolError(error: unknown): ToolError {
  if (error instanceof ToolError) return error;
  if (isHomeAgentError(error)) {
    return new ToolError({
      reason: REASON[error.code] ?? 'failed',
      detail: `${error.code}: ${error.message}`,
      ...(error.code === 'HA_ERR_REMOTEDEVICE_OFFLINE' && {
        hint: 'the device has to be switched on and its companion running; list_devices shows which are online',
      }),
      ...(error.code === 'HA_ERR_REMOTEDEVICE_CAPABILITY' && { hint: 'device_ctl_status shows what the device offers' }),
    });
  }
  return new ToolError({ reason: 'failed', detail: error instanceof Error ? error.message : String(error) });
}

async function guarded<T>(work: () => Promise<T> | T): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw toToolError(error);
  }
}

/** A job as the model reads it. */
function jobAnswer(job: CommandJob): Record<string, unknown> {
  const base = { job_id: job.job_id, device: job.device, command: [job.command, ...job.args].join(' '), status: job.status };
  if (job.status === 'running') return { ...base, hint: 'still running: call device_ctl_cmdresult with this job_id later' };
  if (job.status === 'failed') return { ...base, error: job.error };
  return { ...base, ...job.outcome };
}

export function deviceTools(host: DeviceToolHost): Array<Tool<never>> {
  const tools = [
    {
      name: 'list_devices',
      tier: 'read',
      parallel_safe: true,
      description:
        'Lists the companion devices (PCs, phones, boards running the HomeAgent companion): id, name, online, and what each can do now (cmdrun, screenshot, clipboard_read, clipboard_write, sound, notify). Notifications and sounds go to output_send__device_<id>.',
      parameters: { type: 'object', properties: {}, additionalProperties: false },
      execute: () => ({ devices: host.views().map(brief) }),
    } satisfies Tool<Record<string, never>>,
    {
      name: 'device_ctl_status',
      tier: 'read',
      parallel_safe: true,
      description:
        "One companion device's status: online since, last seen, what it offers and is granted, pending requests, recent commands.",
      parameters: { type: 'object', properties: { device: DEVICE }, required: ['device'], additionalProperties: false },
      execute: (args: { device: string }) =>
        guarded(() => ({ ...host.view(args.device), recent_commands: host.jobs.recent(args.device, 10).map(jobAnswer) })),
    } satisfies Tool<{ device: string }>,
    {
      name: 'device_ctl_cmdrun',
      tier: 'dangerous',
      timeout_ms: host.settings().cmd_wait_ms + MARGIN_MS,
      description:
        "Runs a program on a companion device (no shell: the program's name and its arguments). The device runs only programs on its own allowlist. Waits a little for the result; a longer command answers a job_id for device_ctl_cmdresult.",
      parameters: {
        type: 'object',
        properties: {
          device: DEVICE,
          command: {
            type: 'string',
            pattern: '^[A-Za-z0-9._+-]{1,64}$',
            description: 'The program name, without a path (uptime, df, ls).',
          },
          args: { type: 'array', items: { type: 'string', maxLength: 1000 }, maxItems: 64, description: 'Its arguments, one per item.' },
        },
        required: ['device', 'command'],
        additionalProperties: false,
      },
      confirmation_detail: (args: { device: string; command: string; args?: string[] }) => [
        `on ${args.device}: ${[args.command, ...(args.args ?? [])].join(' ')}`,
      ],
      execute: (args: { device: string; command: string; args?: string[] }, context: ToolContext) =>
        guarded(() => cmdrun(host, args, context)),
    } satisfies Tool<{ device: string; command: string; args?: string[] }>,
    {
      name: 'device_ctl_cmdresult',
      tier: 'read',
      timeout_ms: MAX_RESULT_WAIT_S * 1000 + MARGIN_MS,
      description:
        'The result of a command started with device_ctl_cmdrun (exit_code, stdout, stderr), waiting up to wait_s seconds while it still runs.',
      parameters: {
        type: 'object',
        properties: {
          job_id: { type: 'string', pattern: '^job_[0-9a-f]{12}$', description: 'The job_id device_ctl_cmdrun answered.' },
          wait_s: {
            type: 'integer',
            minimum: 0,
            maximum: MAX_RESULT_WAIT_S,
            description: 'Seconds to wait for a running command; default 10.',
          },
        },
        required: ['job_id'],
        additionalProperties: false,
      },
      execute: (args: { job_id: string; wait_s?: number }) =>
        guarded(async () => jobAnswer(await host.jobs.wait(args.job_id, (args.wait_s ?? 10) * 1000))),
    } satisfies Tool<{ job_id: string; wait_s?: number }>,
    {
      name: 'screensee',
      tier: 'act',
      no_memory: true,
      timeout_ms: host.settings().request_timeout_ms + MARGIN_MS,
      description:
        "Takes a screenshot of a companion device's screen and shows it to you. A screen is private: take one only when the person asks for it or it is clearly needed for what they asked.",
      parameters: { type: 'object', properties: { device: DEVICE }, required: ['device'], additionalProperties: false },
      execute: (args: { device: string }, context: ToolContext) => guarded(() => screensee(host, args.device, context)),
    } satisfies Tool<{ device: string }>,
    {
      name: 'device_clipboard',
      tier: 'act',
      no_memory: true,
      timeout_ms: host.settings().request_timeout_ms + MARGIN_MS,
      description:
        'Reads (action read) or sets (action write, with text) the clipboard of a companion device. A clipboard may hold passwords: read it only when asked to.',
      parameters: {
        type: 'object',
        properties: {
          device: DEVICE,
          action: { type: 'string', enum: ['read', 'write'] },
          text: { type: 'string', maxLength: host.settings().max_clipboard_chars, description: 'For write: the new clipboard text.' },
        },
        required: ['device', 'action'],
        additionalProperties: false,
      },
      execute: (args: { device: string; action: 'read' | 'write'; text?: string }, context: ToolContext) =>
        guarded(() => clipboard(host, args, context)),
    } satisfies Tool<{ device: string; action: 'read' | 'write'; text?: string }>,
  ];
  return tools as unknown as Array<Tool<never>>;
}

function brief(view: DeviceView): Record<string, unknown> {
  return {
    id: view.id,
    name: view.name,
    online: view.online,
    capabilities: view.capabilities,
    ...(view.platform && { platform: view.platform }),
    ...(view.online ? { channel: `output_send__${view.channel}` } : view.last_offline ? { offline_since: view.last_offline.at } : {}),
  };
}

async function cmdrun(
  host: DeviceToolHost,
  args: { device: string; command: string; args?: string[] },
  context: ToolContext,
): Promise<unknown> {
  const settings = host.settings();
  const session = host.session(args.device, 'cmdrun');
  const argv = args.args ?? [];
  host.audit('remotedevice.cmdrun', { device: args.device, command: args.command, args: argv, task_id: context.task_id });
  const run = session
    .request(
      'cmdrun',
      { command: args.command, args: argv, timeout_ms: settings.cmd_timeout_ms, max_output_bytes: settings.max_output_chars * 4 },
      settings.cmd_timeout_ms + MARGIN_MS,
    )
    .then((data) => commandOutcome(args.device, data, settings.max_output_chars));
  const job = await host.jobs.wait(host.jobs.start(args.device, args.command, argv, run).job_id, settings.cmd_wait_ms);
  // A refusal or failure within the wait is the call's error; one after it is in device_ctl_cmdresult's answer.
  if (job.status === 'failed' && job.error) throw toToolError(new HomeAgentError(job.error.code as ErrorCode, job.error.message));
  return jobAnswer(job);
}

async function screensee(host: DeviceToolHost, device: string, context: ToolContext): Promise<unknown> {
  const session = host.session(device, 'screenshot');
  const shot = screenshot(device, await session.request('screenshot', {}, host.settings().request_timeout_ms));
  const stored = host.media.put(shot.bytes);
  host.audit('remotedevice.screenshot', { device, digest: stored.digest, bytes: stored.bytes, task_id: context.task_id });
  context.attachImage?.({ digest: stored.digest, mime: stored.mime });
  return {
    device,
    media_id: stored.digest,
    mime: stored.mime,
    bytes: stored.bytes,
    ...(shot.width !== undefined && { width: shot.width, height: shot.height }),
    shown: context.attachImage ? 'the screenshot follows as a picture' : 'stored, not shown (this conversation takes no pictures)',
  };
}

async function clipboard(
  host: DeviceToolHost,
  args: { device: string; action: 'read' | 'write'; text?: string },
  context: ToolContext,
): Promise<unknown> {
  const settings = host.settings();
  if (args.action === 'read') {
    const session = host.session(args.device, 'clipboard_read');
    const read = clipboardText(
      args.device,
      await session.request('clipboard_read', {}, settings.request_timeout_ms),
      settings.max_clipboard_chars,
    );
    host.audit('remotedevice.clipboard_read', { device: args.device, chars: read.text.length, task_id: context.task_id });
    return { device: args.device, ...read };
  }
  if (args.text === undefined)
    throw new ToolError({ reason: 'required', field: 'text', detail: 'write needs the text to put on the clipboard' });
  const session = host.session(args.device, 'clipboard_write');
  await session.request('clipboard_write', { text: args.text }, settings.request_timeout_ms);
  host.audit('remotedevice.clipboard_write', { device: args.device, chars: args.text.length, task_id: context.task_id });
  return { device: args.device, written: args.text.length };
}

/**
 * The companion device protocol, version 1 (docs/remote-devices.md): one JSON object per WebSocket
 * text frame, each with a `type`. A device says `hello` (protocol, client, platform, the
 * capabilities it offers), the gateway answers `welcome` (its limits), the device sends `bind`
 * (device id and token) and gets `bound` (the capabilities granted); then the gateway pings, sends
 * `request`s and reads `result`s. Everything a device sends is untrusted: this module turns a frame
 * into a checked value or a coded refusal, and never throws anything else. Pure: no sockets here.
 */

export const PROTOCOL_VERSION = 1;

/** What a device can offer, and the bit each has in a device's capability mask. */
export const DEVICE_CAPABILITY = {
  cmdrun: 1,
  screenshot: 2,
  clipboard_read: 4,
  clipboard_write: 8,
  sound: 16,
  notify: 32,
} as const;

export type DeviceCapability = keyof typeof DEVICE_CAPABILITY;
export const DEVICE_CAPABILITIES = Object.keys(DEVICE_CAPABILITY) as DeviceCapability[];
export const ALL_DEVICE_CAPABILITIES = DEVICE_CAPABILITIES.reduce((mask, name) => mask | DEVICE_CAPABILITY[name], 0);

export function isDeviceCapability(value: unknown): value is DeviceCapability {
  return typeof value === 'string' && Object.hasOwn(DEVICE_CAPABILITY, value);
}

export function capabilityMask(names: readonly DeviceCapability[]): number {
  return names.reduce((mask, name) => mask | DEVICE_CAPABILITY[name], 0);
}

export function capabilityNames(mask: number): DeviceCapability[] {
  return DEVICE_CAPABILITIES.filter((name) => (mask & DEVICE_CAPABILITY[name]) !== 0);
}

/** A device id: it becomes the entity binary_sensor.device_<id> and the output channel device_<id> (32 characters at most). */
export const DEVICE_ID = /^[a-z][a-z0-9_]{0,24}$/;

/** Close codes the gateway uses (4000-4999 are the application's). */
export const CLOSE = {
  PROTOCOL: 4400,
  AUTH: 4401,
  REVOKED: 4403,
  TIMEOUT: 4408,
  REPLACED: 4409,
  TOO_LARGE: 4413,
  SHUTDOWN: 1001,
} as const;

export interface HelloFrame {
  type: 'hello';
  protocol: number;
  client: string;
  platform: string;
  capabilities: DeviceCapability[];
}
export interface BindFrame {
  type: 'bind';
  device_id: string;
  token: string;
}
export interface PingFrame {
  type: 'ping' | 'pong';
  id: number;
}
export interface ResultFrame {
  type: 'result';
  id: string;
  ok: boolean;
  data: Record<string, unknown>;
  error: { code: string; message: string } | undefined;
}
export type DeviceFrame = HelloFrame | BindFrame | PingFrame | ResultFrame;

/** Why a frame is refused: the code the device is told, and the words. */
export interface FrameProblem {
  code: 'HA_ERR_REMOTEDEVICE_FRAME' | 'HA_ERR_REMOTEDEVICE_PROTOCOL';
  message: string;
  /** The request id the frame answered, when it could be read. */
  id?: string;
}

const TEXT_LIMIT = 128;

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what is removed
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;

/** A short text from the device, with control characters and surrounding space removed, cut at `limit`. */
export function cleanText(value: unknown, limit = TEXT_LIMIT): string {
  if (typeof value !== 'string') return '';
  return value.replace(CONTROL, ' ').trim().slice(0, limit);
}

const problem = (message: string, id?: string): FrameProblem => ({
  code: 'HA_ERR_REMOTEDEVICE_FRAME',
  message,
  ...(id !== undefined && { id }),
});

/** Reads one text frame from a device. */
export function parseDeviceFrame(text: string): DeviceFrame | FrameProblem {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return problem('the frame is not JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return problem('the frame is not a JSON object');
  const frame = value as Record<string, unknown>;
  switch (frame.type) {
    case 'hello':
      return parseHello(frame);
    case 'bind':
      if (typeof frame.device_id !== 'string' || typeof frame.token !== 'string' || frame.token.length > 512)
        return problem('bind needs device_id and token (strings)');
      return { type: 'bind', device_id: frame.device_id, token: frame.token };
    case 'ping':
    case 'pong':
      if (!Number.isSafeInteger(frame.id)) return problem(`${frame.type} needs an integer id`);
      return { type: frame.type, id: frame.id as number };
    case 'result':
      return parseResult(frame);
    default:
      return problem(
        typeof frame.type === 'string'
          ? `unknown frame type ${JSON.stringify(cleanText(frame.type, 40))}; a device sends hello, bind, ping, pong and result`
          : 'the frame has no type',
      );
  }
}

function parseHello(frame: Record<string, unknown>): HelloFrame | FrameProblem {
  if (frame.protocol !== PROTOCOL_VERSION) {
    return {
      code: 'HA_ERR_REMOTEDEVICE_PROTOCOL',
      message: `this gateway speaks protocol ${PROTOCOL_VERSION}, the device ${JSON.stringify(frame.protocol ?? null)}`,
    };
  }
  if (!Array.isArray(frame.capabilities) || frame.capabilities.length > 32) return problem('hello needs a list of capabilities');
  // Unknown names (a newer client's) are left out rather than refused.
  const capabilities = [...new Set(frame.capabilities.filter(isDeviceCapability))];
  return { type: 'hello', protocol: PROTOCOL_VERSION, client: cleanText(frame.client), platform: cleanText(frame.platform), capabilities };
}

function parseResult(frame: Record<string, unknown>): ResultFrame | FrameProblem {
  if (typeof frame.id !== 'string' || frame.id.length > 64) return problem('result needs the id of the request it answers');
  const id = frame.id;
  if (typeof frame.ok !== 'boolean') return problem('result needs ok (true or false)', id);
  const data = frame.data ?? {};
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return problem('result data must be an object', id);
  let error: ResultFrame['error'];
  if (!frame.ok) {
    const e = frame.error as Record<string, unknown> | undefined;
    error = { code: cleanText(e?.code, 40) || 'failed', message: cleanText(e?.message, 500) || 'the device gave no reason' };
  }
  return { type: 'result', id, ok: frame.ok, data: data as Record<string, unknown>, error };
}

export function isFrameProblem(value: DeviceFrame | FrameProblem): value is FrameProblem {
  return 'code' in value && !('type' in value);
}

/**
 * What a device answers, checked before anyone uses it: a device is another machine, and its
 * results are untrusted input. Each capability's result has one shape; anything else is
 * HA_ERR_REMOTEDEVICE_BAD_RESULT. Texts are cut to the configured sizes (the result says so), and
 * a screenshot must be a picture by its bytes, whatever the device calls it.
 */
import { HomeAgentError, pictureMime } from '../../src/sdk/index.js';
import type { CommandOutcome } from './command-jobs.js';

const bad = (device: string, what: string) => new HomeAgentError('HA_ERR_REMOTEDEVICE_BAD_RESULT', `${device} answered ${what}`);

function cut(text: string, max: number): { text: string; cut: boolean } {
  return text.length <= max ? { text, cut: false } : { text: text.slice(0, max), cut: true };
}

export function commandOutcome(device: string, data: Record<string, unknown>, maxChars: number): CommandOutcome {
  const { exit_code, signal, stdout, stderr, truncated } = data;
  if (exit_code !== null && !Number.isSafeInteger(exit_code)) throw bad(device, 'a command result without an integer exit_code');
  if (signal !== undefined && signal !== null && typeof signal !== 'string')
    throw bad(device, 'a command result whose signal is not a name');
  if (typeof stdout !== 'string' || typeof stderr !== 'string') throw bad(device, 'a command result without stdout and stderr texts');
  const out = cut(stdout, maxChars);
  const err = cut(stderr, maxChars);
  return {
    exit_code: exit_code as number | null,
    signal: typeof signal === 'string' ? signal.slice(0, 16) : null,
    stdout: out.text,
    stderr: err.text,
    truncated: truncated === true || out.cut || err.cut,
  };
}

export interface Screenshot {
  bytes: Buffer;
  mime: string;
  width?: number;
  height?: number;
}

export function screenshot(device: string, data: Record<string, unknown>): Screenshot {
  if (typeof data.data !== 'string' || data.data.length === 0) throw bad(device, 'a screenshot without base64 data');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(data.data)) throw bad(device, 'a screenshot whose data is not base64');
  const bytes = Buffer.from(data.data, 'base64');
  const mime = pictureMime(bytes);
  if (mime === undefined) throw bad(device, `a screenshot of ${bytes.length} bytes that are not a png, jpeg, gif or webp picture`);
  return { bytes, mime, ...pngSize(bytes) };
}

/** Width and height from a PNG's IHDR chunk (the other formats are left without). */
function pngSize(bytes: Buffer): { width?: number; height?: number } {
  if (bytes.length < 24 || bytes.toString('latin1', 12, 16) !== 'IHDR') return {};
  return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
}

export function clipboardText(device: string, data: Record<string, unknown>, maxChars: number): { text: string; truncated: boolean } {
  if (typeof data.text !== 'string') throw bad(device, 'a clipboard read without text');
  const { text, cut: truncated } = cut(data.text, maxChars);
  return { text, truncated };
}

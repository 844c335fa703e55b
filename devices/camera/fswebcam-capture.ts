/**
 * One JPEG snapshot through the fswebcam program. fswebcam is started with an argument array and
 * never through a shell (node-webcam builds a shell string from its options, which is why it is
 * not used), and every option is checked against a strict pattern before anything runs, so a
 * device name or resolution from a tool call can never become a command. The picture comes back
 * on fswebcam's stdout; fswebcam exits 0 even when the device does not exist, so "no JPEG on
 * stdout" is what decides that the camera is unavailable.
 */
import { spawn } from 'node:child_process';
import { HomeAgentError } from '../../src/sdk/index.js';
import { hasJpegMagic, readJpegSize } from './jpeg-size.js';

export interface CaptureOptions {
  /** "TEST" (fswebcam's built-in colour bars), /dev/videoN, or /dev/v4l/by-id|by-path/NAME. */
  device: string;
  /** "WxH", each side 16..4096. The camera may deliver another size; the result says which. */
  resolution: string;
  /** JPEG quality 1..100. */
  jpegQuality: number;
  /** Frames thrown away first, so auto-exposure can settle: 0..100. */
  skipFrames: number;
  /** fswebcam is killed after this long: 1..600000 ms. */
  timeoutMs: number;
}

export interface CaptureResult {
  jpeg: Buffer;
  /** The size inside the JPEG (its SOF marker), not the one requested. */
  width: number;
  height: number;
  /** How long fswebcam took, by the injected clock. */
  ms: number;
}

export interface CaptureRuntime {
  /** The child's environment; PATH decides which fswebcam runs. Default: process.env. */
  env?: NodeJS.ProcessEnv;
  /** Milliseconds, for `ms`. Default: performance.now. */
  now?: () => number;
  /** Stdout beyond this is a failure, not a picture. Default 64 MiB (a 4096x4096 q100 JPEG fits). */
  maxBytes?: number;
}

export const RESOLUTION_MIN = 16;
export const RESOLUTION_MAX = 4096;
export const TIMEOUT_MAX_MS = 600_000;
const DEFAULT_MAX_BYTES = 64 * 1024 * 1024;
/** Enough of fswebcam's stderr to explain a failure; the rest is dropped. */
const STDERR_KEEP = 2048;

const VIDEO_NODE = /^\/dev\/video\d{1,3}$/;
const V4L_LINK = /^\/dev\/v4l\/by-(id|path)\/[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$/;
const RESOLUTION = /^(\d{1,4})x(\d{1,4})$/;

function optionError(option: string, problem: string): HomeAgentError {
  return new HomeAgentError('HA_ERR_CAMERA_OPTION', `camera option ${option}: ${problem}`, { details: { option } });
}

function checkInteger(option: string, value: unknown, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw optionError(option, `must be an integer from ${min} to ${max}, got ${JSON.stringify(value) ?? String(value)}`);
  }
  return value;
}

/** Checks every option; throws HA_ERR_CAMERA_OPTION naming the first bad one. */
export function checkCaptureOptions(options: CaptureOptions): { width: number; height: number } {
  const { device, resolution } = options;
  if (typeof device !== 'string' || !(device === 'TEST' || VIDEO_NODE.test(device) || V4L_LINK.test(device))) {
    throw optionError(
      'device',
      `must be TEST, /dev/videoN or /dev/v4l/by-id/NAME (letters, digits . _ : -), got ${JSON.stringify(device)}`,
    );
  }
  const match = typeof resolution === 'string' ? RESOLUTION.exec(resolution) : null;
  const width = match ? Number(match[1]) : Number.NaN;
  const height = match ? Number(match[2]) : Number.NaN;
  const inRange = (side: number) => side >= RESOLUTION_MIN && side <= RESOLUTION_MAX;
  if (!(inRange(width) && inRange(height))) {
    throw optionError('resolution', `must be WxH with each side ${RESOLUTION_MIN}..${RESOLUTION_MAX}, got ${JSON.stringify(resolution)}`);
  }
  checkInteger('jpegQuality', options.jpegQuality, 1, 100);
  checkInteger('skipFrames', options.skipFrames, 0, 100);
  checkInteger('timeoutMs', options.timeoutMs, 1, TIMEOUT_MAX_MS);
  return { width, height };
}

/** The fswebcam command line; `-` as the file name writes the JPEG to stdout. */
export function fswebcamArgs(options: CaptureOptions): string[] {
  return [
    '-d',
    options.device,
    '-r',
    options.resolution,
    '--jpeg',
    String(options.jpegQuality),
    '-S',
    String(options.skipFrames),
    '--no-banner',
    '-q',
    '-',
  ];
}

/** fswebcam colours its messages; keep the last readable line for the error message. */
function lastLine(stderr: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: stripping ANSI colour codes is the point
  const lines = stderr.replace(/\x1b\[[0-9;]*m/g, '').split('\n');
  const useful = lines.map((line) => line.trim()).filter((line) => line !== '' && !line.startsWith('---'));
  return useful.at(-1) ?? '';
}

export function captureJpeg(options: CaptureOptions, runtime: CaptureRuntime = {}): Promise<CaptureResult> {
  try {
    checkCaptureOptions(options);
  } catch (error) {
    return Promise.reject(error);
  }
  const now = runtime.now ?? (() => performance.now());
  const maxBytes = runtime.maxBytes ?? DEFAULT_MAX_BYTES;
  const { device, timeoutMs } = options;
  const started = now();

  return new Promise<CaptureResult>((resolve, reject) => {
    const child = spawn('fswebcam', fswebcamArgs(options), {
      env: runtime.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      shell: false,
    });
    const chunks: Buffer[] = [];
    let received = 0;
    let stderr = '';
    let failure: HomeAgentError | undefined;
    let settled = false;

    const stop = (error: HomeAgentError) => {
      failure ??= error;
      child.kill('SIGKILL');
    };
    const timer = setTimeout(
      () =>
        stop(new HomeAgentError('HA_ERR_CAMERA_TIMEOUT', `camera ${device} gave no picture within ${timeoutMs} ms; fswebcam was stopped`)),
      timeoutMs,
    );
    const finish = (outcome: () => CaptureResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      try {
        resolve(outcome());
      } catch (error) {
        reject(error);
      }
    };

    child.stdout.on('data', (chunk: Buffer) => {
      received += chunk.length;
      if (received > maxBytes) {
        stop(new HomeAgentError('HA_ERR_CAMERA_IMAGE', `camera ${device}: fswebcam wrote more than ${maxBytes} bytes`));
        return;
      }
      chunks.push(chunk);
    });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (text: string) => {
      stderr = (stderr + text).slice(-STDERR_KEEP);
    });

    child.on('error', (error: NodeJS.ErrnoException) => {
      finish(() => {
        if (error.code === 'ENOENT') {
          throw new HomeAgentError('HA_ERR_CAMERA_UNAVAILABLE', 'fswebcam is not installed (apt install fswebcam)', { cause: error });
        }
        throw new HomeAgentError('HA_ERR_CAMERA_UNAVAILABLE', `fswebcam could not be started: ${error.message}`, { cause: error });
      });
    });

    child.on('close', (exitCode, signal) => {
      finish(() => {
        if (failure) throw failure;
        const jpeg = Buffer.concat(chunks);
        const said = lastLine(stderr);
        const reason = said ? ` (fswebcam: ${said})` : '';
        if (exitCode !== 0) {
          const how = signal ? `was killed by ${signal}` : `exited with status ${exitCode}`;
          throw new HomeAgentError('HA_ERR_CAMERA_UNAVAILABLE', `camera ${device}: fswebcam ${how}${reason}`);
        }
        if (!hasJpegMagic(jpeg)) {
          const what = jpeg.length === 0 ? 'no picture' : `${jpeg.length} bytes that are not a JPEG`;
          throw new HomeAgentError('HA_ERR_CAMERA_UNAVAILABLE', `camera ${device} is not available: fswebcam produced ${what}${reason}`);
        }
        const size = readJpegSize(jpeg);
        return { jpeg, width: size.width, height: size.height, ms: now() - started };
      });
    });
  });
}

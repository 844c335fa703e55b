/**
 * Speaker playback through the `aplay` program (Debian package `alsa-utils`). Playback runs in a
 * child process on purpose: the `speaker` npm package aborts the whole Node process when ALSA
 * cannot open its device, while a failing aplay only exits non-zero, which becomes a coded error.
 * The WAV goes to aplay's stdin; stop() kills aplay so a new utterance can interrupt (barge-in).
 */
import { type ChildProcessByStdio, spawn } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { HomeAgentError } from '../../src/sdk/index.js';

export interface AplayPlayerOptions {
  /** ALSA PCM name (`aplay -L`), e.g. "default", "plughw:CARD=Headphones,DEV=0". */
  device?: string;
  /** Longest a single play() may run before aplay is killed (plugin.voice.speaker.timeout_ms). */
  timeoutMs: number;
  /** Environment for the child (PATH finds aplay, ALSA_CONFIG_PATH picks devices); defaults to this process's. */
  env?: NodeJS.ProcessEnv;
  now?: () => number;
}

export interface PlayResult {
  /** aplay finished the whole buffer. */
  played: boolean;
  /** stop() ended the playback early. */
  stopped: boolean;
  ms: number;
}

export type ProbeResult = { ok: true } | { ok: false; problem: string };

/** Characters ALSA PCM names and their arguments use; anything else never reaches aplay's argv. */
const PCM_NAME = /^[A-Za-z0-9_][A-Za-z0-9_:,.=-]*$/;
const MAX_DEVICE_NAME = 200;
const STDERR_KEEP = 2000;
/** How long aplay gets to exit after SIGTERM before it is killed. */
const STOP_GRACE_MS = 500;

export function checkPcmName(device: string): string {
  if (device.length > MAX_DEVICE_NAME || !PCM_NAME.test(device)) {
    throw new HomeAgentError(
      'HA_ERR_SPEAKER_UNAVAILABLE',
      `speaker device "${device.slice(0, MAX_DEVICE_NAME)}" is not an ALSA PCM name (letters, digits and _:,.=- only)`,
    );
  }
  return device;
}

/** aplay's own explanation, without the ALSA library's internal "ALSA lib file.c:123:" noise first. */
function aplayMessage(stderr: string): string {
  const lines = stderr
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
  const own = lines.filter((line) => line.startsWith('aplay:'));
  const alsa = lines.filter((line) => line.startsWith('ALSA lib')).map((line) => line.replace(/^ALSA lib [^)]*\)\s*/, ''));
  const picked = [...alsa.slice(-1), ...own.map((line) => line.replace(/^aplay: \w+:\d+: /, ''))];
  return (picked.length > 0 ? picked : lines.slice(-2)).join('; ').slice(0, STDERR_KEEP) || 'no message';
}

type AplayChild = ChildProcessByStdio<Writable, null, Readable>;

interface Run {
  exit: Promise<{ code: number | null; stderr: string }>;
  child: AplayChild;
}

export class AplayPlayer {
  readonly device: string;
  private readonly timeoutMs: number;
  private readonly env: NodeJS.ProcessEnv;
  private readonly now: () => number;
  private current: { child: AplayChild; stopped: boolean } | undefined;

  constructor(options: AplayPlayerOptions) {
    this.device = checkPcmName(options.device ?? 'default');
    this.timeoutMs = options.timeoutMs;
    this.env = options.env ?? process.env;
    this.now = options.now ?? Date.now;
  }

  get playing(): boolean {
    return this.current !== undefined;
  }

  /** Plays a WAV to the end, or until stop(); one playback at a time. */
  async play(wav: Buffer): Promise<PlayResult> {
    if (this.current) throw this.unavailable('it is already playing; call stop() first');
    const started = this.now();
    const run = this.run(['-q', '-D', this.device, '-'], wav);
    const playback = { child: run.child, stopped: false };
    this.current = playback;
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      run.child.kill('SIGKILL');
    }, this.timeoutMs);
    try {
      const { code, stderr } = await run.exit;
      const ms = this.now() - started;
      if (playback.stopped) return { played: false, stopped: true, ms };
      if (timedOut) throw this.unavailable(`aplay did not finish within ${this.timeoutMs} ms and was stopped`);
      if (code !== 0) throw this.unavailable(aplayMessage(stderr));
      return { played: true, stopped: false, ms };
    } finally {
      clearTimeout(timer);
      this.current = undefined;
    }
  }

  /** Ends the current playback (its play() resolves with stopped: true); false if nothing played. */
  stop(): boolean {
    const playback = this.current;
    if (!playback || playback.stopped) return false;
    playback.stopped = true;
    playback.child.stdin.destroy();
    playback.child.kill('SIGTERM');
    // aplay's SIGTERM handler drains the PCM before exiting; on a wedged device that would block
    // until speaker_timeout_ms, so a barge-in that does not end it soon ends it for good.
    setTimeout(() => playback.child.kill('SIGKILL'), STOP_GRACE_MS).unref();
    return true;
  }

  /**
   * Opens the device and configures it for 16 kHz mono with no audio to play. aplay still pads one
   * period of silence, so nothing audible comes out, and a missing or busy device fails as it would
   * for real playback.
   */
  async probe(): Promise<ProbeResult> {
    const run = this.run(['-q', '-D', this.device, '-t', 'raw', '-f', 'S16_LE', '-r', '16000', '-c', '1', '-'], Buffer.alloc(0));
    const timer = setTimeout(() => run.child.kill('SIGKILL'), this.timeoutMs);
    try {
      const { code, stderr } = await run.exit;
      if (code === 0) return { ok: true };
      return {
        ok: false,
        problem: this.unavailable(code === null ? `aplay did not answer within ${this.timeoutMs} ms` : aplayMessage(stderr)).message,
      };
    } catch (error) {
      return { ok: false, problem: error instanceof Error ? error.message : String(error) };
    } finally {
      clearTimeout(timer);
    }
  }

  private unavailable(problem: string, cause?: unknown): HomeAgentError {
    return new HomeAgentError('HA_ERR_SPEAKER_UNAVAILABLE', `speaker "${this.device}": ${problem}`, cause === undefined ? {} : { cause });
  }

  private run(args: string[], input: Buffer): Run {
    const child = spawn('aplay', args, { stdio: ['pipe', 'ignore', 'pipe'], env: this.env });
    let stderr = '';
    const exit = new Promise<{ code: number | null; stderr: string }>((resolve, reject) => {
      child.on('error', (error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') reject(this.unavailable('aplay is not installed (apt install alsa-utils)', error));
        else reject(this.unavailable(`aplay could not start: ${error.message}`, error));
      });
      child.on('close', (code) => resolve({ code, stderr }));
    });
    child.stderr.on('data', (chunk: Buffer) => {
      if (stderr.length < STDERR_KEEP) stderr += chunk.toString('utf8');
    });
    // aplay that fails to open the device exits without reading; its exit status tells why, not EPIPE.
    child.stdin.on('error', () => {});
    child.stdin.end(input);
    return { exit, child };
  }
}

/**
 * The microphone: arecord (through node-record-lpcm16) streaming an ALSA capture device, turned into
 * mono 16-bit samples for the voice pipeline. A microphone is unplugged, busy or missing more often
 * than not on a home server, so a recorder that exits never throws: the microphone reports
 * `waiting` with arecord's own reason and tries again after a back-off that doubles up to a maximum
 * and starts over once a recording has run healthily for a while.
 */
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import lpcm16, { type Recording } from 'node-record-lpcm16';
import { HomeAgentError } from '../../src/sdk/index.js';
import type arecordRecorder from './arecord-recorder.cjs';
import { PcmMixdown, type SampleFormat } from './pcm-mixdown.js';

export interface MicrophoneStatus {
  /**
   * recording: audio is arriving. waiting: arecord is starting (no problem yet) or failed with
   * `problem` and will be started again. failed: the recorder module itself could not be loaded.
   */
  state: 'stopped' | 'recording' | 'waiting' | 'failed';
  problem?: string;
  restarts: number;
  since: number;
}

export interface MicrophoneClock {
  now(): number;
  setTimer(fn: () => void, ms: number): { cancel(): void };
}

export interface MicrophoneOptions {
  /** ALSA capture PCM name (`arecord -L`), e.g. "default", "plughw:CARD=Device,DEV=0". */
  device: string;
  sampleRate: 16000 | 8000;
  channels: 1 | 2;
  format: SampleFormat;
  restartBackoffMs: number;
  restartBackoffMaxMs: number;
  /** Environment for arecord (PATH finds it, ALSA_CONFIG_PATH picks devices); defaults to this process's. */
  env?: NodeJS.ProcessEnv;
  /** Absolute path of a recorder module for node-record-lpcm16 (tests); default: arecord-recorder. */
  recorder?: string;
  /** Mono 16-bit samples at sampleRate, in stream order. */
  onAudio(samples: Int16Array): void;
  onStatus?(status: MicrophoneStatus): void;
  clock?: MicrophoneClock;
}

/** After this much audio without a failure, the next failure waits restartBackoffMs again. */
const HEALTHY_MS = 30_000;
/** How long stop() waits for arecord to leave after SIGTERM before SIGKILL. */
const KILL_GRACE_MS = 2000;
const PCM_NAME = /^[A-Za-z0-9_][A-Za-z0-9_:,.=-]*$/;
const MAX_DEVICE_NAME = 200;
const STDERR_KEEP = 2000;

// Compiled, the recorder is arecord-recorder.cjs next to this file; from source (tests) the .cts itself.
const DEFAULT_RECORDER = fileURLToPath(
  new URL(import.meta.url.endsWith('.ts') ? './arecord-recorder.cts' : './arecord-recorder.cjs', import.meta.url),
);

type RecorderOptions = Parameters<typeof arecordRecorder>[0];

const realClock: MicrophoneClock = {
  now: () => Date.now(),
  setTimer(fn, ms) {
    const timer = setTimeout(fn, ms);
    return { cancel: () => clearTimeout(timer) };
  },
};

export function checkCaptureName(device: string): string {
  if (device.length > MAX_DEVICE_NAME || !PCM_NAME.test(device)) {
    throw new HomeAgentError(
      'HA_ERR_MICROPHONE_UNAVAILABLE',
      `microphone device "${device.slice(0, MAX_DEVICE_NAME)}" is not an ALSA PCM name (letters, digits and _:,.=- only)`,
    );
  }
  return device;
}

/** arecord's own explanation, without the ALSA library's "ALSA lib file.c:123:(function)" prefix. */
export function arecordMessage(stderr: string): string {
  const lines = stderr
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
  const own = lines.filter((line) => line.startsWith('arecord:')).map((line) => line.replace(/^arecord: \w+:\d+: /, ''));
  const alsa = lines.filter((line) => line.startsWith('ALSA lib')).map((line) => line.replace(/^ALSA lib [^)]*\)\s*/, ''));
  const picked = [...alsa.slice(-1), ...own];
  return (picked.length > 0 ? picked : lines.slice(-2)).join('; ').slice(0, STDERR_KEEP);
}

interface Run {
  recording: Recording;
  child: ChildProcess;
  stderr: string;
  /** Set when the child could not be started at all (ENOENT: arecord is missing). */
  spawnError?: NodeJS.ErrnoException;
  samples: number;
  stopping: boolean;
  closed: Promise<void>;
}

export class Microphone {
  readonly device: string;
  private readonly options: MicrophoneOptions;
  private readonly clock: MicrophoneClock;
  private readonly mixdown: PcmMixdown;
  private current: Run | undefined;
  private timer: { cancel(): void } | undefined;
  private wanted = false;
  private backoffMs: number;
  private state: MicrophoneStatus;

  constructor(options: MicrophoneOptions) {
    this.device = checkCaptureName(options.device);
    this.options = options;
    this.clock = options.clock ?? realClock;
    this.mixdown = new PcmMixdown(options.format, options.channels);
    this.backoffMs = options.restartBackoffMs;
    this.state = { state: 'stopped', restarts: 0, since: this.clock.now() };
  }

  status(): MicrophoneStatus {
    return { ...this.state };
  }

  /** The running arecord's process id, if one runs. */
  get pid(): number | undefined {
    return this.current?.child.pid;
  }

  /** Starts recording; a failure shows in status() and is retried, never thrown. */
  start(): void {
    if (this.wanted) return;
    this.wanted = true;
    this.backoffMs = this.options.restartBackoffMs;
    this.spawn();
  }

  /** Stops recording; resolves once arecord has exited. */
  async stop(): Promise<void> {
    this.wanted = false;
    this.timer?.cancel();
    this.timer = undefined;
    const run = this.current;
    if (run) {
      run.stopping = true;
      run.child.kill('SIGTERM');
      const kill = setTimeout(() => run.child.kill('SIGKILL'), KILL_GRACE_MS);
      await run.closed;
      clearTimeout(kill);
    }
    // start() may have been called again while arecord was leaving.
    if (!this.wanted) this.setStatus('stopped', undefined);
  }

  private spawn(): void {
    this.mixdown.reset();
    const recorderOptions: RecorderOptions = {
      device: this.device,
      sampleRate: this.options.sampleRate,
      channels: this.options.channels,
      format: this.options.format,
      ...(this.options.env === undefined ? {} : { env: this.options.env }),
    };
    let recording: Recording;
    try {
      recording = lpcm16.record({ recorder: this.options.recorder ?? DEFAULT_RECORDER, audioType: 'raw', ...recorderOptions });
    } catch (error) {
      // The recorder module itself is missing or broken: no retry will fix that.
      this.wanted = false;
      this.setStatus('failed', this.unavailable(error instanceof Error ? error.message : String(error)).message);
      return;
    }
    const child = recording.process;
    let closed!: () => void;
    const run: Run = { recording, child, stderr: '', samples: 0, stopping: false, closed: new Promise((resolve) => (closed = resolve)) };
    this.current = run;
    // Recording only once audio arrives: a device that is missing fails before that.
    if (this.state.state === 'stopped') this.setStatus('waiting', undefined);
    child.on('error', (error: NodeJS.ErrnoException) => {
      run.spawnError = error;
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      if (run.stderr.length < STDERR_KEEP) run.stderr += chunk.toString('utf8');
    });
    const stream = recording.stream();
    // The package turns every non-zero exit, stop() included, into a stream error; the exit is handled below.
    stream.on('error', () => {});
    stream.on('data', (chunk: Buffer) => this.onData(run, chunk));
    child.on('close', (code, signal) => {
      closed();
      this.exited(run, code, signal);
    });
  }

  private onData(run: Run, chunk: Buffer): void {
    if (run.stopping || run !== this.current) return;
    const samples = this.mixdown.push(chunk);
    if (samples.length === 0) return;
    if (this.state.state !== 'recording') this.setStatus('recording', undefined);
    run.samples += samples.length;
    if (run.samples >= (HEALTHY_MS / 1000) * this.options.sampleRate) this.backoffMs = this.options.restartBackoffMs;
    this.options.onAudio(samples);
  }

  private exited(run: Run, code: number | null, signal: NodeJS.Signals | null): void {
    if (run !== this.current) return;
    this.current = undefined;
    if (run.stopping || !this.wanted) return;
    this.setStatus('waiting', this.unavailable(this.reason(run, code, signal)).message);
    const wait = this.backoffMs;
    this.backoffMs = Math.min(this.backoffMs * 2, this.options.restartBackoffMaxMs);
    this.timer = this.clock.setTimer(() => {
      this.timer = undefined;
      if (!this.wanted) return;
      this.state = { ...this.state, restarts: this.state.restarts + 1 };
      this.spawn();
    }, wait);
  }

  private reason(run: Run, code: number | null, signal: NodeJS.Signals | null): string {
    if (run.spawnError?.code === 'ENOENT') return 'arecord is not installed (apt install alsa-utils)';
    if (run.spawnError) return `arecord could not start: ${run.spawnError.message}`;
    const said = arecordMessage(run.stderr);
    if (said) return said;
    return signal ? `arecord was killed by ${signal}` : `arecord stopped (exit code ${code})`;
  }

  private setStatus(state: MicrophoneStatus['state'], problem: string | undefined): void {
    this.state = {
      state,
      ...(problem === undefined ? {} : { problem }),
      restarts: this.state.restarts,
      since: state === this.state.state ? this.state.since : this.clock.now(),
    };
    this.options.onStatus?.(this.status());
  }

  private unavailable(problem: string): HomeAgentError {
    return new HomeAgentError('HA_ERR_MICROPHONE_UNAVAILABLE', `microphone "${this.device}": ${problem}`);
  }
}

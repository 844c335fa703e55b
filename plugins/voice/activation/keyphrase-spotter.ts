/**
 * The local wake word without downloaded models: CMU pocketsphinx's keyphrase spotting (Debian's
 * `pocketsphinx` and `pocketsphinx-en-us` packages). The phrase ("hey home" by default) is spelled
 * with the model's pronunciation dictionary, so any phrase of dictionary words works without
 * training; the threshold (kws_threshold) and the phone-loop penalty (kws_plp) trade true accepts
 * against false ones and were tuned on generated speech (bench/wake-word.mjs).
 *
 * Debian bookworm ships pocketsphinx 5prealpha, whose `pocketsphinx_continuous` reads raw 16 kHz
 * 16-bit mono from a file: it gets the microphone's audio on its stdin, so the microphone is opened
 * once (by arecord) and shared with voice activity detection. It prints the phrase with its times
 * (`-time yes`) when its own voice activity detection ends the utterance it was heard in, about
 * half a second after the phrase. The program is restarted with back-off when it exits; it never
 * takes the plugin down.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type BackoffBounds, findProgram, HomeAgentError, POCKETSPHINX_PROGRAM, ReconnectBackoff } from '../../../src/sdk/index.js';

export const KEYPHRASE_PROGRAM = POCKETSPHINX_PROGRAM;
export const DEFAULT_MODEL_DIR = '/usr/share/pocketsphinx/model/en-us';
export const KEYPHRASE_SAMPLE_RATE = 16000;
/**
 * Audio waiting for pocketsphinx at most (bytes; 5 s at 16 kHz). More means it is behind the
 * microphone: newer audio is dropped rather than buffered without end, and the status says so.
 */
const MAX_PENDING_BYTES = 5 * KEYPHRASE_SAMPLE_RATE * 2;
const STDERR_KEEP = 2000;

export interface KeyphraseDetection {
  phrase: string;
  /** The decoder's posterior for the phrase (0..1), for the activation log. */
  score: number;
  /** Where the phrase ended, in seconds of the decoder's utterance, for the log. */
  endS: number;
}

export interface KeyphraseSpotterOptions {
  /** Words of the dictionary, lower case ("hey home"). */
  phrase: string;
  /** kws_threshold: lower detects more (and more falsely). */
  threshold: number;
  /** kws_plp: the phone loop's penalty; lower lets the phrase win more often. */
  phoneLoopPenalty: number;
  /** The directory with en-us/ (acoustic model) and cmudict-en-us.dict. */
  modelDir?: string;
  /** The program; a name on PATH or an absolute path. */
  program?: string;
  restart: () => BackoffBounds;
  onDetection(detection: KeyphraseDetection): void;
  /** A problem line when the spotter stopped hearing (exit, backlog), undefined once it hears again. */
  onProblem?(problem: string | undefined): void;
}

/** Lower-cased words of a phrase, as the dictionary spells them. */
export function phraseWords(phrase: string): string[] {
  return phrase
    .toLowerCase()
    .split(/[\s,.!?]+/)
    .filter((word) => word !== '');
}

function killGroup(child: ChildProcess): void {
  try {
    if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
  } catch {
    // the group is gone already
  }
  child.stdin?.destroy();
}

function keyphraseError(message: string, cause?: unknown): HomeAgentError {
  return new HomeAgentError('HA_ERR_VOICE_KEYPHRASE', message, cause === undefined ? {} : { cause });
}

/** The decoder's command line: raw 16 kHz audio on stdin, one keyphrase, word times on stdout. */
export function keyphraseArgs(options: { phrase: string; threshold: number; phoneLoopPenalty: number; modelDir?: string }): string[] {
  const modelDir = options.modelDir ?? DEFAULT_MODEL_DIR;
  return [
    '-infile',
    '/dev/stdin',
    '-hmm',
    join(modelDir, 'en-us'),
    '-dict',
    join(modelDir, 'cmudict-en-us.dict'),
    '-keyphrase',
    phraseWords(options.phrase).join(' '),
    '-kws_threshold',
    options.threshold.toExponential(),
    '-kws_plp',
    options.phoneLoopPenalty.toExponential(),
    '-samprate',
    String(KEYPHRASE_SAMPLE_RATE),
    '-time',
    'yes',
    '-logfn',
    '/dev/null',
  ];
}

/** A `-time yes` line: the phrase, then start and end seconds and the posterior. */
export function parseTimedLine(line: string, phrase: string): KeyphraseDetection | undefined {
  const parts = line.trim().split(/\s+/);
  if (parts.length < 4) return undefined;
  const [start, end, prob] = parts.slice(-3).map(Number);
  const words = parts.slice(0, -3).join(' ');
  if (words !== phrase || !Number.isFinite(start) || !Number.isFinite(end) || !Number.isFinite(prob)) return undefined;
  return { phrase, score: prob as number, endS: end as number };
}

/**
 * Stops a pocketsphinx process started in its own process group (behind `sh -c "cat | …"`, so the
 * shell and the decoder go together) and resolves when it has exited; one already gone is left alone.
 */
export async function stopDecoder(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.stdin?.destroy();
  try {
    if (child.pid !== undefined) process.kill(-child.pid, 'SIGTERM');
  } catch {
    child.kill('SIGTERM');
  }
  await exited;
}

export class KeyphraseSpotter {
  readonly phrase: string;
  readonly #options: KeyphraseSpotterOptions;
  readonly #program: string;
  readonly #modelDir: string;
  readonly #backoff: ReconnectBackoff;
  #child: ChildProcess | undefined;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;
  #stdout = '';
  #stderr = '';
  #dropping = false;

  private constructor(options: KeyphraseSpotterOptions, program: string, modelDir: string) {
    this.#options = options;
    this.phrase = phraseWords(options.phrase).join(' ');
    this.#program = program;
    this.#modelDir = modelDir;
    this.#backoff = new ReconnectBackoff(options.restart);
  }

  /**
   * Checks that the program, the model and every word of the phrase are there (a clear error
   * names what is missing), then starts listening.
   */
  static async open(options: KeyphraseSpotterOptions): Promise<KeyphraseSpotter> {
    const name = options.program ?? KEYPHRASE_PROGRAM;
    const program = findProgram(name);
    if (!program) {
      throw keyphraseError(`${name} is not installed (apt-get install pocketsphinx pocketsphinx-en-us)`);
    }
    const modelDir = options.modelDir ?? DEFAULT_MODEL_DIR;
    const words = phraseWords(options.phrase);
    if (words.length === 0) throw keyphraseError('the wake word phrase is empty');
    let dictionary: string;
    try {
      dictionary = await readFile(join(modelDir, 'cmudict-en-us.dict'), 'utf8');
    } catch (error) {
      throw keyphraseError(`the pocketsphinx English model is missing in ${modelDir} (apt-get install pocketsphinx-en-us)`, error);
    }
    const known = new Set<string>();
    for (const line of dictionary.split('\n')) {
      const word = line.slice(0, line.indexOf(' '));
      if (word !== '') known.add(word);
    }
    const unknown = words.filter((word) => !known.has(word));
    if (unknown.length > 0) {
      throw keyphraseError(`the wake word phrase has words the pronunciation dictionary lacks: ${unknown.join(', ')}`);
    }
    const spotter = new KeyphraseSpotter(options, program, modelDir);
    spotter.#spawn();
    return spotter;
  }

  /** Microphone audio, 16 kHz mono. */
  push(samples: Int16Array): void {
    const stdin = this.#child?.stdin;
    if (!stdin || stdin.destroyed || !stdin.writable) return;
    if (stdin.writableLength > MAX_PENDING_BYTES) {
      if (!this.#dropping) {
        this.#dropping = true;
        this.#options.onProblem?.('the wake word spotter is behind the microphone; audio is dropped');
      }
      return;
    }
    if (this.#dropping) {
      this.#dropping = false;
      this.#options.onProblem?.(undefined);
    }
    stdin.write(Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength));
  }

  /**
   * Ends the audio and waits until the decoder has said what it heard in it and exited (no
   * restart afterwards): the end of a recording rather than of the microphone.
   */
  async finish(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    const child = this.#child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    // 'close', not 'exit': the last lines may still be in the stdout pipe when the process exits.
    const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
    child.stdin?.end();
    await exited;
    this.#child = undefined;
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    const child = this.#child;
    this.#child = undefined;
    await stopDecoder(child);
  }

  #args(): string[] {
    return keyphraseArgs({ ...this.#options, modelDir: this.#modelDir });
  }

  #spawn(): void {
    if (this.#closed) return;
    const startedAt = Date.now();
    // Node hands a child a socket, not a pipe, as its stdin, and the decoder's fopen("/dev/stdin")
    // fails on a socket: `cat` turns it into a real pipe. The program and its arguments are
    // positional parameters, never parsed by the shell. Its own process group, so close() stops both.
    // When the decoder dies, `cat` ends at the next piece of audio (a broken pipe), and the shell
    // then exits with the decoder's status: the microphone sends a piece every 100 ms.
    const child = spawn('sh', ['-c', 'cat | "$0" "$@"', this.#program, ...this.#args()], {
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
    });
    this.#child = child;
    this.#stdout = '';
    this.#stderr = '';
    // A write after the program died is reported by 'exit'; the pipe's EPIPE says nothing more.
    child.stdin?.on('error', () => {});
    child.stdout?.setEncoding('utf8');
    child.stdout?.on('data', (chunk: string) => this.#read(chunk));
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      this.#stderr = (this.#stderr + chunk).slice(-STDERR_KEEP);
    });
    child.on('error', (error) => {
      this.#options.onProblem?.(`the wake word spotter could not start: ${error.message}`);
    });
    child.on('exit', (code, signal) => {
      // The `cat` in front of the decoder outlives it and would hold the pipes open.
      killGroup(child);
      if (this.#child !== child) return;
      this.#child = undefined;
      if (this.#closed) return;
      // A run that lasted a minute worked: the next failure waits the shortest time again.
      if (Date.now() - startedAt > 60_000) this.#backoff.reset();
      const wait = this.#backoff.next();
      const last = this.#stderr.trim().split('\n').at(-1) ?? '';
      this.#options.onProblem?.(
        `the wake word spotter exited (${signal ?? `code ${code}`}${last ? `: ${last.slice(0, 200)}` : ''}); restarting in ${wait} ms`,
      );
      this.#timer = setTimeout(() => {
        this.#spawn();
        this.#options.onProblem?.(undefined);
      }, wait);
    });
  }

  #read(chunk: string): void {
    this.#stdout += chunk;
    let newline = this.#stdout.indexOf('\n');
    while (newline >= 0) {
      const line = this.#stdout.slice(0, newline);
      this.#stdout = this.#stdout.slice(newline + 1);
      const detection = parseTimedLine(line, this.phrase);
      if (detection) this.#options.onDetection(detection);
      newline = this.#stdout.indexOf('\n');
    }
    if (this.#stdout.length > STDERR_KEEP) this.#stdout = this.#stdout.slice(-STDERR_KEEP);
  }
}

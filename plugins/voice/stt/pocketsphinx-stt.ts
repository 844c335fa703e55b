/**
 * Offline command recognition (issue 30): CMU pocketsphinx constrained by the home's command
 * grammar (command-grammar.ts), Debian's `pocketsphinx` and `pocketsphinx-en-us` packages.
 *
 * One decoder runs for as long as the grammar stays the same: loading the acoustic model and a
 * grammar of the intent engine's size takes most of a second, longer than the whole turn may.
 * Each utterance the plugin's voice activity detection ended is written to the decoder's stdin
 * (raw 16 kHz, as the wake word spotter feeds it, through `cat`), followed by a second of faint
 * noise so that the decoder's own endpointer closes it. The decoder logs "N frames" when it closes
 * an utterance, then prints the words it heard on stdout, or logs that nothing of the grammar
 * matched. Utterances go one at a time, so every answer belongs to the last one written.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { findProgram, locatePocketsphinxModel, type PocketsphinxModelFiles } from '../../../src/sdk/index.js';
import { DEFAULT_MODEL_DIR, KEYPHRASE_PROGRAM, KEYPHRASE_SAMPLE_RATE, stopDecoder } from '../activation/keyphrase-spotter.js';
import type { PcmAudio, SpeechToText, TranscribeOptions, TranscriptResult } from '../speech.js';
import { checkAudio, pcmBytes, sttError, throwIfAborted } from './stt-common.js';

export { DEFAULT_MODEL_DIR };
/** Where a pocketsphinx-format model keeps its parts (src/shared/pocketsphinx-model.ts). */
export type LocalModelFiles = PocketsphinxModelFiles;
export const locateModel = locatePocketsphinxModel;

/** Faint noise after each utterance (s): the decoder's endpointer needs half a second of quiet. */
const TRAILING_QUIET_S = 1;
const STDERR_KEEP = 2000;
/** The decoder's log line when it closed an utterance, heard or not. */
const UTTERANCE_END = /fsg_search\.c\(\d+\): \d+ frames, /u;
/** Its log line when nothing of the grammar fits the utterance: no words will follow. */
const NO_MATCH = /Final result does not match the grammar/u;
/**
 * After the utterance ended, how long its answer may take to arrive on the other pipe when neither
 * a line on stdout (its words, or an empty line for an empty hypothesis) nor NO_MATCH came. Long:
 * the two pipes are read apart, and a loaded machine (CI running two test files at once) delayed
 * the words of a long command past the second this was, so they were lost and the command heard as
 * nothing. The utterance's own timer (NO_SPEECH_*) still bounds the wait.
 */
const WORDS_GRACE_MS = 5000;
/** An utterance's answer is given up as "nothing heard" after this plus NO_SPEECH_PER_AUDIO × its length. */
const NO_SPEECH_BASE_MS = 3000;
const NO_SPEECH_PER_AUDIO = 2;

export interface LocalModelCheck {
  ok: boolean;
  /** The program found, when it was. */
  program?: string;
  /** The model's parts, when they are all there. */
  files?: LocalModelFiles;
  why?: string;
  whyZh?: string;
}

/** Whether the local recogniser can run here: the program on PATH and the model's files. */
export function checkLocalModel(modelDir: string, programName = KEYPHRASE_PROGRAM): LocalModelCheck {
  const program = findProgram(programName);
  const install = 'apt-get install pocketsphinx pocketsphinx-en-us';
  if (!program) {
    return { ok: false, why: `${programName} is not installed (${install})`, whyZh: `没有安装 ${programName}（${install}）` };
  }
  const files = locateModel(modelDir);
  const lacking = [
    ...(files.hmm ? [] : [{ en: 'acoustic model (mdef, feat.params)', zh: '声学模型（mdef、feat.params）' }]),
    ...(files.dict ? [] : [{ en: 'pronunciation dictionary (*.dict)', zh: '发音词典（*.dict）' }]),
  ];
  if (lacking.length > 0) {
    return {
      ok: false,
      program,
      why: `the pocketsphinx model is missing in ${modelDir} (no ${lacking.map((l) => l.en).join(', no ')}; ${install})`,
      whyZh: `${modelDir} 里缺少 pocketsphinx 模型（没有${lacking.map((l) => l.zh).join('，也没有')}；${install}）`,
    };
  }
  return { ok: true, program, files: files as LocalModelFiles };
}

/** The decoder's command line: raw 16 kHz on stdin, the grammar as an FSG file, the log on stderr. */
export function localDecoderArgs(model: LocalModelFiles, grammar: { fsg: string; dict?: string }): string[] {
  const dict = grammar.dict ?? model.dict;
  return ['-infile', '/dev/stdin', '-hmm', model.hmm, '-dict', dict, '-fsg', grammar.fsg, '-samprate', String(KEYPHRASE_SAMPLE_RATE)];
}

export interface PocketsphinxSttOptions {
  program: string;
  model: LocalModelFiles;
  /** The current grammar file and its words' dictionary; a new grammar restarts the decoder with it. */
  grammar: () => Promise<{ fsg: string; dict?: string }>;
  timeoutMs: number;
}

interface Waiter {
  words: string[];
  /** The decoder printed its answer's line, though it was empty (nothing of the grammar but silence). */
  answered: boolean;
  ended: boolean;
  done: (text: string | undefined, error?: Error) => void;
}

/** Speech to text by the offline decoder; an utterance outside the grammar gives an empty text. */
export class PocketsphinxStt implements SpeechToText {
  readonly name = 'local';
  readonly #options: PocketsphinxSttOptions;
  #child: ChildProcess | undefined;
  #childGrammar = '';
  #chain: Promise<unknown> = Promise.resolve();
  #waiter: Waiter | undefined;
  #stdout = '';
  #stderr = '';
  #log = '';

  constructor(options: PocketsphinxSttOptions) {
    this.#options = options;
  }

  transcribe(audio: PcmAudio, options: TranscribeOptions): Promise<TranscriptResult> {
    const run = this.#chain.then(() => this.#transcribe(audio, options));
    this.#chain = run.catch(() => {});
    return run;
  }

  /** Starts the decoder ahead of the first utterance (it takes most of a second to load). */
  async warm(): Promise<void> {
    const run = this.#chain.then(() => this.#decoder());
    this.#chain = run.catch(() => {});
    await run;
  }

  async close(): Promise<void> {
    const child = this.#child;
    this.#child = undefined;
    await stopDecoder(child);
  }

  async #transcribe(audio: PcmAudio, options: TranscribeOptions): Promise<TranscriptResult> {
    checkAudio(audio);
    throwIfAborted('local', options.signal);
    if (audio.sampleRate !== KEYPHRASE_SAMPLE_RATE) {
      throw sttError(`local speech-to-text needs 16000 Hz audio, got ${audio.sampleRate} (plugin.voice.microphone.sample_rate)`);
    }
    const child = await this.#decoder();
    const heard = await new Promise<string | undefined>((resolve, reject) => {
      // Noise its own endpointer never took for speech closes no utterance: past this the decoder
      // heard none. It is restarted then, so that a late answer cannot be taken for the next one's.
      const quietMs = NO_SPEECH_BASE_MS + (NO_SPEECH_PER_AUDIO * audio.samples.length * 1000) / audio.sampleRate;
      const timer = setTimeout(
        () => {
          void this.close();
          if (quietMs < this.#options.timeoutMs) finish(undefined);
          else finish(undefined, sttError(`local speech-to-text gave no answer within ${this.#options.timeoutMs} ms`));
        },
        Math.min(quietMs, this.#options.timeoutMs),
      );
      const onAbort = (): void => finish(undefined, sttError('local speech-to-text was cancelled'));
      const finish = (text: string | undefined, error?: Error): void => {
        if (this.#waiter !== waiter) return;
        this.#waiter = undefined;
        clearTimeout(timer);
        options.signal?.removeEventListener('abort', onAbort);
        if (error) reject(error);
        else resolve(text);
      };
      const waiter: Waiter = { words: [], answered: false, ended: false, done: finish };
      this.#waiter = waiter;
      options.signal?.addEventListener('abort', onAbort, { once: true });
      child.stdin?.write(pcmBytes(audio));
      child.stdin?.write(quiet(TRAILING_QUIET_S));
    });
    return { text: heard ?? '', language: 'en' };
  }

  async #decoder(): Promise<ChildProcess> {
    const grammar = await this.#options.grammar();
    const running = this.#child;
    if (running && this.#childGrammar === grammar.fsg && running.exitCode === null && running.signalCode === null) return running;
    await this.close();
    // Node hands a child a socket as stdin and the decoder cannot fopen a socket: `cat` makes it a pipe.
    const child = spawn('sh', ['-c', 'cat | "$0" "$@"', this.#options.program, ...localDecoderArgs(this.#options.model, grammar)], {
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
    });
    this.#child = child;
    this.#childGrammar = grammar.fsg;
    this.#stdout = '';
    this.#stderr = '';
    this.#log = '';
    child.stdin?.on('error', () => {});
    child.stdout?.setEncoding('utf8');
    child.stdout?.on('data', (chunk: string) => this.#readWords(chunk));
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => this.#readLog(chunk));
    child.on('exit', (code, signal) => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // the group is gone already
      }
      // A decoder closed on purpose (a new grammar, an utterance given up) answers for nobody.
      if (this.#child !== child) return;
      this.#child = undefined;
      const last = this.#stderr.trim().split('\n').at(-1) ?? '';
      this.#waiter?.done(
        undefined,
        sttError(`the local decoder exited (${signal ?? `code ${code}`})${last ? `: ${last.slice(0, 200)}` : ''}`),
      );
    });
    return child;
  }

  #readWords(chunk: string): void {
    this.#stdout += chunk;
    let newline = this.#stdout.indexOf('\n');
    while (newline >= 0) {
      const line = this.#stdout.slice(0, newline).trim();
      this.#stdout = this.#stdout.slice(newline + 1);
      const waiter = this.#waiter;
      if (waiter) {
        if (line !== '') waiter.words.push(line);
        waiter.answered = true;
        if (waiter.ended) waiter.done(heardWords(waiter));
      }
      newline = this.#stdout.indexOf('\n');
    }
  }

  #readLog(chunk: string): void {
    this.#stderr = (this.#stderr + chunk).slice(-STDERR_KEEP);
    this.#log += chunk;
    let newline = this.#log.indexOf('\n');
    while (newline >= 0) {
      const line = this.#log.slice(0, newline);
      this.#log = this.#log.slice(newline + 1);
      const waiter = this.#waiter;
      if (waiter && !waiter.ended && UTTERANCE_END.test(line)) {
        waiter.ended = true;
        // The words are printed after this line, on stdout: they may still be on their way.
        if (waiter.answered) waiter.done(heardWords(waiter));
        else setTimeout(() => waiter.done(heardWords(waiter)), WORDS_GRACE_MS).unref();
      } else if (waiter?.ended && waiter.words.length === 0 && NO_MATCH.test(line)) waiter.done(undefined);
      newline = this.#log.indexOf('\n');
    }
  }
}

function heardWords(waiter: Waiter): string | undefined {
  return waiter.words.length > 0 ? waiter.words.join(' ') : undefined;
}

/** Faint noise rather than digital silence, which the decoder's features take badly. */
function quiet(seconds: number): Buffer {
  const samples = Math.round(seconds * KEYPHRASE_SAMPLE_RATE);
  const bytes = Buffer.alloc(samples * 2);
  let seed = 12345;
  for (let index = 0; index < samples; index++) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    bytes.writeInt16LE((seed % 9) - 4, index * 2);
  }
  return bytes;
}

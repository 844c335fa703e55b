/**
 * Speech-to-text by any local program that reads a WAV file and prints the text (whisper.cpp's
 * whisper-cli, a vosk script, ...). The configured argument list is used as is, with {wav} and
 * {language} replaced inside each argument; the WAV lives in a private temporary directory that is
 * removed after the run, whatever the outcome.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PcmAudio, SpeechToText, TranscribeOptions, TranscriptResult } from '../speech.js';
import { pcmToWav } from '../wav.js';
import { runProgram } from './run-program.js';
import { acceptTranscript, checkAudio, type LanguageSetting, languageHint, pcmBytes, sttError, throwIfAborted } from './stt-common.js';

export interface CommandSttOptions {
  /** Program and arguments (plugin.voice.stt.command). */
  command: string[];
  timeoutMs: number;
  language: LanguageSetting;
  maxOutputChars: number;
  /** Environment for the program; defaults to this process's. */
  env?: NodeJS.ProcessEnv;
}

/** UTF-8 takes at most 4 bytes a character; more output than that cannot be an accepted transcript. */
const BYTES_PER_CHAR = 4;

export function commandArgs(command: string[], wavPath: string, language: string): { program: string; args: string[] } {
  const [program, ...rest] = command.map((part) => part.replaceAll('{wav}', wavPath).replaceAll('{language}', language));
  if (!program) throw sttError('plugin.voice.stt.command is empty');
  return { program, args: rest };
}

export class CommandStt implements SpeechToText {
  readonly name = 'command';

  constructor(private readonly options: CommandSttOptions) {}

  async transcribe(audio: PcmAudio, options: TranscribeOptions): Promise<TranscriptResult> {
    checkAudio(audio);
    throwIfAborted('command', options.signal);
    const dir = await mkdtemp(join(tmpdir(), 'homeagent-stt-'));
    try {
      const wavPath = join(dir, 'utterance.wav');
      await writeFile(wavPath, pcmToWav(pcmBytes(audio), audio.sampleRate, 1), { mode: 0o600 });
      const { program, args } = commandArgs(this.options.command, wavPath, languageHint(options, this.options.language) ?? 'auto');
      const output = await runProgram({
        program,
        args,
        ...(this.options.env ? { env: this.options.env } : {}),
        timeoutMs: this.options.timeoutMs,
        ...(options.signal ? { signal: options.signal } : {}),
        maxStdoutBytes: this.options.maxOutputChars * BYTES_PER_CHAR + 1024,
        what: 'speech-to-text command',
        fail: sttError,
      });
      return acceptTranscript('the speech-to-text command', output.stdout.toString('utf8'), this.options.maxOutputChars);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
}

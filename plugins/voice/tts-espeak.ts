/**
 * Text to speech with the espeak-ng program (Debian package `espeak-ng`). It runs as a child
 * process with an argument array and the text on stdin, so a text such as "-v xx" is spoken, never
 * parsed as an option, and nothing passes through a shell. The WAV comes back on stdout.
 */
import { spawn } from 'node:child_process';
import { HomeAgentError } from '../../src/sdk/index.js';
import { parseWav, withExactSizes } from './wav.js';

export type TtsLanguage = 'en' | 'zh';

export interface EspeakOptions {
  language: TtsLanguage;
  /** An espeak-ng voice name (`espeak-ng --voices`); defaults per language, see DEFAULT_VOICES. */
  voice?: string;
  /** Words per minute (espeak-ng -s). */
  rate?: number;
  timeoutMs: number;
  /** Longest text accepted (plugin.voice.tts.max_chars). */
  maxChars?: number;
  /** Environment for the child (its PATH finds espeak-ng); defaults to this process's. */
  env?: NodeJS.ProcessEnv;
}

export interface SynthesizedSpeech {
  /** A WAV whose header sizes match the PCM it carries. */
  wav: Buffer;
  sampleRate: number;
  channels: number;
  durationMs: number;
}

/** `cmn` reads Latin letters in a mixed sentence as English, which suits device names. */
export const DEFAULT_VOICES: Record<TtsLanguage, string> = { en: 'en-us', zh: 'cmn' };
export const DEFAULT_MAX_CHARS = 2000;
/** espeak-ng's own accepted range for -s. */
const MIN_RATE = 80;
const MAX_RATE = 450;
const VOICE_NAME = /^[A-Za-z0-9_][A-Za-z0-9_+./-]*$/;
const STDERR_KEEP = 2000;

function ttsError(message: string, cause?: unknown): HomeAgentError {
  return new HomeAgentError('HA_ERR_VOICE_TTS', message, cause === undefined ? {} : { cause });
}

function espeakArgs(options: EspeakOptions): string[] {
  const voice = options.voice ?? DEFAULT_VOICES[options.language];
  if (!voice) throw ttsError(`unknown language "${String(options.language)}" (expected en or zh)`);
  if (!VOICE_NAME.test(voice)) throw ttsError(`voice name "${voice}" has characters espeak-ng voice names do not use`);
  const args = ['-v', voice, '--stdout'];
  if (options.rate !== undefined) {
    if (!Number.isInteger(options.rate) || options.rate < MIN_RATE || options.rate > MAX_RATE) {
      throw ttsError(`rate ${options.rate} is outside ${MIN_RATE}..${MAX_RATE} words per minute`);
    }
    args.push('-s', String(options.rate));
  }
  return args;
}

export function synthesizeEspeak(text: string, options: EspeakOptions): Promise<SynthesizedSpeech> {
  const maxChars = options.maxChars ?? DEFAULT_MAX_CHARS;
  if (text.trim() === '') return Promise.reject(ttsError('nothing to say: the text is empty'));
  if (text.length > maxChars) {
    return Promise.reject(ttsError(`the text has ${text.length} characters, over plugin.voice.tts.max_chars (${maxChars})`));
  }
  let args: string[];
  try {
    args = espeakArgs(options);
  } catch (error) {
    return Promise.reject(error);
  }

  return new Promise((resolve, reject) => {
    const child = spawn('espeak-ng', args, { stdio: ['pipe', 'pipe', 'pipe'], env: options.env ?? process.env });
    const stdout: Buffer[] = [];
    let stderr = '';
    let settled = false;
    const finish = (error: HomeAgentError | undefined, result?: SynthesizedSpeech): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (error) reject(error);
      else if (result) resolve(result);
    };
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      finish(ttsError(`espeak-ng did not finish within ${options.timeoutMs} ms and was stopped`));
    }, options.timeoutMs);

    child.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') finish(ttsError('espeak-ng is not installed (apt install espeak-ng)', error));
      else finish(ttsError(`espeak-ng could not start: ${error.message}`, error));
    });
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => {
      if (stderr.length < STDERR_KEEP) stderr += chunk.toString('utf8');
    });
    // A child that dies early closes its stdin; the exit handler reports that, not EPIPE.
    child.stdin.on('error', () => {});
    child.on('close', (code, signal) => {
      if (code !== 0) {
        const why = stderr.trim() || (signal ? `killed by ${signal}` : 'no message');
        finish(ttsError(`espeak-ng failed (exit ${code ?? signal}): ${why.slice(0, STDERR_KEEP)}`));
        return;
      }
      try {
        const wav = withExactSizes(Buffer.concat(stdout));
        const info = parseWav(wav);
        if (info.dataLength === 0) throw ttsError(`espeak-ng produced no audio${stderr.trim() ? `: ${stderr.trim()}` : ''}`);
        finish(undefined, { wav, sampleRate: info.sampleRate, channels: info.channels, durationMs: info.durationMs });
      } catch (error) {
        finish(error instanceof HomeAgentError ? error : ttsError(`espeak-ng output unreadable: ${String(error)}`, error));
      }
    });
    child.stdin.end(text, 'utf8');
  });
}

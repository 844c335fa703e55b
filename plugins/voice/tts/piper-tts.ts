/**
 * Text-to-speech with the piper program (a neural voice per language, much clearer than espeak-ng
 * where a model is installed). The text goes in on stdin and piper writes raw S16LE mono with
 * --output-raw, which every piper release supports; the sample rate comes from the voice's
 * <model>.json (audio.sample_rate), read once per model. A language without a model is an
 * error, so the espeak fallback speaks it.
 */
import { readFile } from 'node:fs/promises';
import type { SpeechLanguage, SynthesizedSpeech, SynthesizeOptions, TextToSpeech } from '../speech.js';
import { runProgram } from '../stt/run-program.js';
import { pcmToWav } from '../wav.js';
import { checkText, speechFromWav, ttsError } from './tts-common.js';

export interface PiperTtsOptions {
  /** A name on PATH or an absolute path. */
  program: string;
  /** Voice model (.onnx) per language; empty: no piper voice for it. */
  models: Record<SpeechLanguage, string>;
  timeoutMs: number;
  maxChars: number;
  env?: NodeJS.ProcessEnv;
}

/** About ten minutes of 22 kHz 16-bit mono. */
const MAX_AUDIO_BYTES = 32 * 1024 * 1024;

export class PiperTts implements TextToSpeech {
  readonly name = 'piper';
  private readonly sampleRates = new Map<string, Promise<number>>();

  constructor(private readonly options: PiperTtsOptions) {}

  async synthesize(text: string, options: SynthesizeOptions): Promise<SynthesizedSpeech> {
    checkText('piper', text, this.options.maxChars, options.signal);
    const model = this.options.models[options.language];
    if (!model) throw ttsError(`no piper model for ${options.language} (plugin.voice.tts.piper_model_${options.language} is empty)`);
    const sampleRate = await this.sampleRate(model);
    const output = await runProgram({
      program: this.options.program,
      args: ['--model', model, '--output-raw'],
      // piper speaks each input line as its own utterance: one answer is one line.
      stdin: `${text.replace(/\s*[\r\n]+\s*/g, ' ').trim()}\n`,
      ...(this.options.env ? { env: this.options.env } : {}),
      timeoutMs: this.options.timeoutMs,
      ...(options.signal ? { signal: options.signal } : {}),
      maxStdoutBytes: MAX_AUDIO_BYTES,
      what: 'piper',
      fail: ttsError,
    });
    // An odd trailing byte is half a sample: drop it rather than misalign the WAV.
    const pcm = output.stdout.subarray(0, output.stdout.length - (output.stdout.length % 2));
    return speechFromWav('piper', pcmToWav(pcm, sampleRate, 1));
  }

  private sampleRate(model: string): Promise<number> {
    let rate = this.sampleRates.get(model);
    if (!rate) {
      rate = readSampleRate(model);
      // A failed read is retried next time: the file may be installed meanwhile.
      rate.catch(() => this.sampleRates.delete(model));
      this.sampleRates.set(model, rate);
    }
    return rate;
  }
}

async function readSampleRate(model: string): Promise<number> {
  const configPath = `${model}.json`;
  let text: string;
  try {
    text = await readFile(configPath, 'utf8');
  } catch (error) {
    throw ttsError(`piper voice config ${configPath} cannot be read (it comes with the model): ${(error as Error).message}`, error);
  }
  let rate: unknown;
  try {
    rate = (JSON.parse(text) as { audio?: { sample_rate?: unknown } }).audio?.sample_rate;
  } catch (error) {
    throw ttsError(`piper voice config ${configPath} is not JSON`, error);
  }
  if (typeof rate !== 'number' || !Number.isSafeInteger(rate) || rate < 1000 || rate > 192000) {
    throw ttsError(`piper voice config ${configPath} has no valid audio.sample_rate`);
  }
  return rate;
}

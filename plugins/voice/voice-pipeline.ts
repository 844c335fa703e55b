/**
 * The voice turn: a finished utterance is checked against the activation policy, transcribed only
 * when it may be for HomeAgent, and its command handed to the agent as an input on the voice
 * conversation. The answer comes back through the speaker channel (it answers that conversation),
 * so the pipeline never speaks the receipt itself; it speaks only its own short lines (the "Yes?"
 * after a bare wake phrase, the apology when speech-to-text failed). Speech heard while the
 * speaker talks stops it (barge-in).
 *
 * Utterances are handled one at a time, in the order heard, so a command and the one after it
 * reach the agent in order.
 */
import { isHomeAgentError, type Logger } from '../../src/sdk/index.js';
import type { ActivationMethod, ActivationPolicy, WakePhraseHit } from './activation-policy.js';
import type { SpeechLanguage, SpeechToText, Utterance } from './speech.js';

export const PROMPT: Record<SpeechLanguage, string> = { en: 'Yes?', zh: '嗯？' };
export const APOLOGY: Record<SpeechLanguage, string> = { en: "Sorry, I couldn't hear that.", zh: '抱歉，我没听清。' };
/** The local recogniser heard no home command and no open back end is configured (HA_ERR_VOICE_OFFLINE_ONLY). */
export const OFFLINE_ANSWER: Record<SpeechLanguage, string> = {
  en: 'I only understand home commands offline.',
  zh: '离线时我只听得懂家居指令。',
};
/**
 * Utterances waiting for the one being transcribed. A television in the room with wake phrases on
 * makes an utterance every few seconds; when speech-to-text is slower than that, newer ones are
 * dropped rather than queued without end.
 */
export const MAX_WAITING_UTTERANCES = 3;

/** What the pipeline needs of the speaker (SpeakerOutput). */
export interface PipelineSpeaker {
  readonly active: boolean;
  say(text: string, language?: SpeechLanguage): Promise<unknown>;
  interrupt(): boolean;
}

export interface VoiceCommand {
  command: string;
  language: SpeechLanguage;
  activation: ActivationMethod;
}

export interface VoicePipelineOptions {
  now: () => number;
  policy: ActivationPolicy;
  stt: () => SpeechToText | undefined;
  speaker?: PipelineSpeaker;
  bargeIn: () => boolean;
  wakePhrases: () => readonly string[];
  matchWakePhrase: (transcript: string, phrases: readonly string[]) => WakePhraseHit | undefined;
  spokenLanguage: (text: string) => SpeechLanguage;
  /** The configured language hint (stt.language), when not auto: the apology's language. */
  languageHint: () => SpeechLanguage | undefined;
  /** Hands a command to the agent; the pipeline does not wait for the answer. */
  command: (command: VoiceCommand) => Promise<unknown>;
  log: Logger;
}

export interface PipelineStats {
  utterances: number;
  dropped: number;
  transcribed: number;
  commands: number;
  stt_failures: number;
  barge_ins: number;
}

export class VoicePipeline {
  readonly #options: VoicePipelineOptions;
  #speechStartedAt: number | undefined;
  /** The language of the last command, for lines spoken when nothing was understood. */
  #lastLanguage: SpeechLanguage = 'en';
  #chain: Promise<void> = Promise.resolve();
  /** The utterance being handled and those waiting for it. */
  #pending = 0;
  /** The last transcription failed because only home commands are understood offline. */
  #offlineMiss = false;
  readonly #stats: PipelineStats = { utterances: 0, dropped: 0, transcribed: 0, commands: 0, stt_failures: 0, barge_ins: 0 };

  constructor(options: VoicePipelineOptions) {
    this.#options = options;
  }

  stats(): PipelineStats {
    return { ...this.#stats };
  }

  /** The voice activity detector heard speech begin. */
  speechStarted(): void {
    this.#speechStartedAt = this.#options.now();
    const speaker = this.#options.speaker;
    if (speaker?.active && this.#options.bargeIn() && speaker.interrupt()) {
      this.#stats.barge_ins++;
      this.#options.log.info('speech while speaking: playback stopped (barge-in)');
    }
  }

  /** A finished utterance; resolves when it was handled (tests and the benchmark wait for it). */
  utterance(utterance: Utterance): Promise<void> {
    const endedAt = this.#options.now();
    const spokenMs = Math.max(0, utterance.speechEndMs - utterance.speechStartMs);
    const startedAt = this.#speechStartedAt ?? endedAt - spokenMs;
    this.#speechStartedAt = undefined;
    if (this.#pending > MAX_WAITING_UTTERANCES) {
      this.#stats.dropped++;
      this.#options.log.warn({ waiting: this.#pending - 1 }, 'utterance dropped: speech-to-text is behind');
      return Promise.resolve();
    }
    this.#pending++;
    const run = this.#chain.then(() => this.#handle(utterance, startedAt, endedAt)).finally(() => this.#pending--);
    this.#chain = run.catch(() => {});
    return run;
  }

  async #handle(utterance: Utterance, startedAt: number, endedAt: number): Promise<void> {
    this.#stats.utterances++;
    const { policy, log } = this.#options;
    const decision = policy.decide(startedAt);
    const stt = this.#options.stt();
    if (decision.kind === 'drop' || !stt) {
      this.#stats.dropped++;
      log.debug({ ms: utterance.speechEndMs - utterance.speechStartMs }, 'utterance dropped untranscribed: no activation');
      return;
    }
    const heard = await this.#transcribe(stt, utterance, decision.kind === 'accept');
    if (heard === undefined) {
      const language = this.#options.languageHint() ?? this.#lastLanguage;
      if (decision.kind === 'accept') await this.#say((this.#offlineMiss ? OFFLINE_ANSWER : APOLOGY)[language]);
      return;
    }
    const phrases = this.#options.wakePhrases();
    const hit = heard.text === '' || phrases.length === 0 ? undefined : this.#options.matchWakePhrase(heard.text, phrases);
    if (decision.kind === 'accept') {
      // A wake phrase said after a button press is not part of the command.
      const command = hit?.command ?? heard.text;
      if (command === '') {
        await this.#say(APOLOGY[hit ? this.#options.spokenLanguage(hit.phrase) : (this.#options.languageHint() ?? this.#lastLanguage)]);
        return;
      }
      await this.#command(command, heard.language, decision.method);
      return;
    }
    const answer = policy.wakePhrase(hit, endedAt);
    if (answer.kind === 'command') await this.#command(answer.command, heard.language, 'wake_phrase');
    else if (answer.kind === 'prompt') await this.#say(PROMPT[this.#options.spokenLanguage(answer.phrase)]);
  }

  async #transcribe(stt: SpeechToText, utterance: Utterance, forUs: boolean): Promise<{ text: string; language?: string } | undefined> {
    this.#offlineMiss = false;
    try {
      const result = await stt.transcribe(utterance, {});
      this.#stats.transcribed++;
      return { text: result.text.trim(), ...(result.language ? { language: result.language } : {}) };
    } catch (error) {
      if (isHomeAgentError(error) && error.code === 'HA_ERR_VOICE_OFFLINE_ONLY') {
        // Not a failure: the room's talk that is no home command, heard by the offline recogniser.
        this.#offlineMiss = true;
        this.#options.log.debug({ activated: forUs }, 'no home command heard offline');
        return undefined;
      }
      this.#stats.stt_failures++;
      this.#options.log.warn({ err: error, backend: stt.name, activated: forUs }, 'speech-to-text failed');
      return undefined;
    }
  }

  #language(reported: string | undefined, text: string): SpeechLanguage {
    const code = reported?.toLowerCase() ?? '';
    if (code.startsWith('zh') || code === 'chinese' || code === 'cmn') return 'zh';
    if (code.startsWith('en') || code === 'english') return 'en';
    return this.#options.spokenLanguage(text);
  }

  async #command(command: string, reported: string | undefined, activation: ActivationMethod): Promise<void> {
    this.#stats.commands++;
    const language = this.#language(reported, command);
    this.#lastLanguage = language;
    this.#options.log.info({ activation, language, chars: command.length }, 'voice command');
    this.#options.command({ command, language, activation }).catch((error: unknown) => {
      this.#options.log.warn({ err: error }, 'the voice command was not taken');
    });
  }

  async #say(text: string): Promise<void> {
    const speaker = this.#options.speaker;
    if (!speaker) return;
    // The pipeline goes on while its own line plays; a failed playback is the speaker's status.
    speaker.say(text).catch((error: unknown) => this.#options.log.debug({ err: error }, 'could not speak'));
  }
}

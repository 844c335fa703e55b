/**
 * The voice plugin: the room's microphone and speaker as a conversation with HomeAgent. It
 * composes the drivers (devices/microphone, devices/speaker; decision 0006) with the pipeline's
 * parts: microphone → voice activity → activation (push-to-talk, wake word, wake phrase) →
 * speech-to-text → an input on the `voice` conversation; answers, timers and announcements for
 * that conversation come out of the `speaker` output channel.
 *
 * Nothing here may take the daemon down: a missing microphone or speaker is a status line and
 * the plugin stays healthy; only a part that broke (the voice activity detector, the wake word
 * models, a back end that cannot be built from its settings) makes the health check fail.
 */

import { randomUUID } from 'node:crypto';
import { Microphone, type MicrophoneStatus } from '../../devices/microphone/microphone.js';
import { AplayPlayer } from '../../devices/speaker/aplay-player.js';
import {
  CAPABILITY,
  definePlugin,
  HomeAgentError,
  type PluginContext,
  type PluginHealth,
  type PluginInstance,
} from '../../src/sdk/index.js';
import { ActivationLog } from './activation/activation-log.js';
import { KeyphraseSpotter, type KeyphraseSpotterOptions } from './activation/keyphrase-spotter.js';
import { matchWakePhrase } from './activation/wake-phrase.js';
import { WakeWordDetector } from './activation/wake-word.js';
import { ActivationPolicy, type ActivationRecord } from './activation-policy.js';
import type { OpenSatelliteVad } from './satellites/satellite-device.js';
import { Satellites } from './satellites/satellites.js';
import type { VoiceSettings } from './settings-schema.js';
import { SpeakerOutput } from './speaker-output.js';
import type { SpeechLanguage, SpeechToText, TextToSpeech, Utterance } from './speech.js';
import { SpokenStream } from './spoken-stream.js';
import { speakableText, spokenLanguage } from './spoken-text.js';
import { createSpeechToText } from './stt/create-stt.js';
import { type LocalStt, openLocalStt } from './stt/local-stt.js';
import type { LocalModelCheck } from './stt/pocketsphinx-stt.js';
import { createTextToSpeech } from './tts/create-tts.js';
import { VoiceActivityDetector } from './vad/voice-activity-detector.js';
import { registerVoiceMethods, type VoiceStatus } from './voice-methods.js';
import { type PipelineSpeaker, VoicePipeline } from './voice-pipeline.js';
import { activationSettings, sttSettings, ttsSettings, type VadLeaves, vadSettings, wakePhrasesOff } from './voice-settings.js';

/** The voice activity detector as the plugin uses it (VoiceActivityDetector; a fake in tests). */
export interface VadHandle {
  push(samples: Int16Array): void;
  close(): Promise<void> | void;
}

export type OpenVad = (options: {
  sampleRate: 16000 | 8000;
  settings: () => VadLeaves;
  events: { onSpeechStart(atMs: number): void; onUtterance(utterance: Utterance): void; onError?(error: Error): void };
}) => Promise<VadHandle>;

/** What the plugin needs of the local wake word spotter (KeyphraseSpotter). */
export interface KeyphraseHandle {
  readonly phrase: string;
  push(samples: Int16Array): void;
  close(): Promise<void> | void;
}

export interface VoicePluginOptions {
  /** Opens the voice activity detector; the Silero one by default. */
  openVad?: OpenVad;
  /** Opens the local wake word spotter; pocketsphinx by default. */
  openKeyphrase?: (options: KeyphraseSpotterOptions) => Promise<KeyphraseHandle>;
  /** Whether pocketsphinx and its model are here (stt.backend auto or local); the real check by default. */
  checkLocalModel?: (modelDir: string) => LocalModelCheck;
  /** Opens the voice activity detector of each satellite; the Silero one by default. */
  openSatelliteVad?: OpenSatelliteVad;
  /**
   * Open the detectors at start rather than when the microphone first records, for tests that
   * drive the detector's events without a microphone.
   */
  eagerDetectors?: boolean;
  now?: () => number;
}

/** Audio kept while the detectors load at the first recording (the VAD takes a few hundred ms), at most this long. */
const DETECTOR_START_BUFFER_S = 5;

const SPEAKER_CHANNEL = 'speaker';

const sileroVad: OpenVad = (options) => VoiceActivityDetector.open(options);

export class VoicePlugin implements PluginInstance {
  readonly #ctx: PluginContext<VoiceSettings>;
  readonly #options: VoicePluginOptions;
  readonly #now: () => number;
  readonly #undo: Array<() => void> = [];
  /** Status lines of parts that are off or missing, each logged once when it appears. */
  readonly #notes = new Map<string, string>();
  readonly #notesZh = new Map<string, string>();
  /** Parts that broke: these fail the health check. */
  readonly #broken = new Map<string, string>();
  readonly #brokenZh = new Map<string, string>();
  #speaker: SpeakerOutput | undefined;
  #stream: SpokenStream | undefined;
  #tts: TextToSpeech | undefined;
  #stt: SpeechToText | undefined;
  #localStt: LocalStt | undefined;
  #microphone: Microphone | undefined;
  #micStatus: MicrophoneStatus | undefined;
  #vad: VadHandle | undefined;
  #wakeWord: WakeWordDetector | undefined;
  #keyphrase: KeyphraseHandle | undefined;
  /** The detectors' start, begun once (see #startDetectors); audio that arrives meanwhile waits in #heldAudio. */
  #detectorsStarting: Promise<void> | undefined;
  #detectorsReady = false;
  #heldAudio: Int16Array[] = [];
  #heldSamples = 0;
  #stopped = false;
  #policy: ActivationPolicy | undefined;
  #pipeline: VoicePipeline | undefined;
  #log: ActivationLog | undefined;
  #satellites: Satellites | undefined;

  constructor(ctx: PluginContext<VoiceSettings>, options: VoicePluginOptions = {}) {
    this.#ctx = ctx;
    this.#options = options;
    this.#now = options.now ?? Date.now;
  }

  async start(): Promise<void> {
    const ctx = this.#ctx;
    this.#stopped = false;
    this.#tts = this.#build('tts', 'text-to-speech', '文字转语音', () => createTextToSpeech(ttsSettings(ctx.settings), ctx.log));
    this.#log = new ActivationLog({ dir: ctx.paths.data, maxEntries: () => ctx.settings.get('activation.log_entries') });
    this.#policy = new ActivationPolicy({
      now: this.#now,
      settings: () => activationSettings(ctx.settings),
      record: (entry) => this.#recordActivation(entry),
    });
    if (ctx.settings.get('speaker_enabled') && this.#tts) this.#startSpeaker();
    this.#undo.push(...registerVoiceMethods(ctx.control, this.#methodTarget()));
    this.#undo.push(ctx.settings.onChange((key) => this.#settingChanged(key)));
    const localMissing = this.#startSpeechToText();
    this.#startSatellites();
    if (this.#broken.has('stt')) return;
    if (!this.#stt) {
      this.#note(
        'input',
        `voice input off: no speech-to-text back end (plugin.voice.stt.backend)${localMissing ? `; ${localMissing.en}` : ''}`,
        `语音输入关闭：没有语音转文字后端（plugin.voice.stt.backend）${localMissing ? `；${localMissing.zh}` : ''}`,
        'info',
      );
      return;
    }
    await this.#startInput();
  }

  async stop(): Promise<void> {
    for (const undo of this.#undo.splice(0)) undo();
    await this.#satellites?.stop();
    this.#satellites = undefined;
    this.#speaker?.interrupt();
    this.#stopped = true;
    await this.#microphone?.stop();
    // A start still loading ends first, so that what it opens is closed here.
    await this.#detectorsStarting;
    await Promise.allSettled([this.#vad?.close(), this.#wakeWord?.close(), this.#keyphrase?.close(), this.#localStt?.close()]);
    this.#detectorsStarting = undefined;
    this.#detectorsReady = false;
    this.#heldAudio = [];
    this.#heldSamples = 0;
    this.#localStt = undefined;
    this.#microphone = undefined;
    this.#vad = undefined;
    this.#wakeWord = undefined;
    this.#keyphrase = undefined;
    this.#pipeline = undefined;
    this.#speaker = undefined;
  }

  health(): Required<PluginHealth> {
    if (this.#broken.size > 0) {
      return { ok: false, detail: [...this.#broken.values()].join('; '), detail_zh: [...this.#brokenZh.values()].join('；') };
    }
    if (this.#notes.size === 0) return { ok: true, detail: 'listening and speaking', detail_zh: '正在听，也能说' };
    return { ok: true, detail: [...this.#notes.values()].join('; '), detail_zh: [...this.#notesZh.values()].join('；') };
  }

  status(): VoiceStatus {
    const off = wakePhrasesOff(this.#ctx.settings);
    return {
      microphone: this.#micStatus ?? { state: 'stopped', problem: this.#notes.get('input') },
      vad: this.#vad
        ? { state: 'running' }
        : this.#broken.has('vad')
          ? { state: 'failed', problem: this.#broken.get('vad') }
          : // It loads when the microphone first records.
            { state: this.#pipeline ? 'waiting' : 'off' },
      stt: {
        backend: this.#stt?.name ?? 'none',
        ...(this.#pipeline ? this.#pipeline.stats() : {}),
        ...(this.#localStt?.grammar() ? { grammar: this.#localStt.grammar() } : {}),
      },
      tts: { backend: this.#tts?.name },
      speaker: this.#speaker?.status() ?? { enabled: false },
      activation: {
        ...this.#policy?.state(),
        wake_phrases: off ? { on: false, why: off.en } : { on: true },
        wake_word: this.#wakeWord ? { models: this.#wakeWord.models } : { on: false, problem: this.#broken.get('wake_word') },
        keyphrase: this.#keyphrase
          ? { on: true, phrase: this.#keyphrase.phrase, ...(this.#notes.has('keyphrase') ? { problem: this.#notes.get('keyphrase') } : {}) }
          : { on: false, problem: this.#broken.get('keyphrase') ?? this.#notes.get('keyphrase') },
        push_to_talk: this.#ctx.settings.get('activation.push_to_talk_entity') || undefined,
      },
      ...(this.#satellites && this.#satellites.devices.length > 0
        ? { satellites: this.#satellites.list().map((s) => ({ id: s.id, state: s.state })) }
        : {}),
    };
  }

  /**
   * Back ends follow their settings at once. Turning speech-to-text on or off, and the microphone's
   * own settings, need a restart of the plugin (they decide whether arecord runs at all).
   */
  #settingChanged(key: string): void {
    const ctx = this.#ctx;
    if (key.startsWith('tts.')) {
      const tts = this.#build('tts', 'text-to-speech', '文字转语音', () => createTextToSpeech(ttsSettings(ctx.settings), ctx.log));
      if (tts) {
        this.#tts = tts;
        this.#mend('tts');
      }
    } else if (key.startsWith('stt.') && this.#localStt) {
      // The local recogniser stays (its own settings need a restart); its open back end follows.
      this.#localStt.settingsChanged();
    } else if (key === 'stt.backend' && ['auto', 'local'].includes(ctx.settings.get('stt.backend'))) {
      // The offline recogniser is started with the plugin (it needs the microphone's rate and the grammar).
      this.#note(
        'stt_restart',
        'plugin.voice.stt.backend local takes effect when the voice plugin restarts',
        'plugin.voice.stt.backend local 在语音插件重启后生效',
        'info',
      );
    } else if (key.startsWith('stt.') && this.#pipeline) {
      const stt = this.#build('stt', 'speech-to-text', '语音转文字', () => createSpeechToText(sttSettings(ctx.settings)));
      if (stt) {
        this.#stt = stt;
        this.#mend('stt');
      }
    }
  }

  /**
   * The configured speech-to-text back end; auto and local are the offline recogniser (stt/local-stt.ts).
   * Returns why auto found none, for the status line.
   */
  #startSpeechToText(): { en: string; zh: string } | undefined {
    const ctx = this.#ctx;
    const backend = ctx.settings.get('stt.backend');
    if (backend !== 'auto' && backend !== 'local') {
      this.#stt = this.#build('stt', 'speech-to-text', '语音转文字', () => createSpeechToText(sttSettings(ctx.settings)));
      return undefined;
    }
    const outcome = openLocalStt({
      ctx,
      build: (create) => this.#build('stt', 'speech-to-text fallback', '语音转文字备用后端', create),
      ...(this.#options.checkLocalModel ? { check: this.#options.checkLocalModel } : {}),
      onProblem: (problem) => {
        if (problem === undefined) this.#forgetNote('local_stt');
        else this.#note('local_stt', problem.en, problem.zh);
      },
    });
    if (outcome.kind === 'missing') return outcome;
    if (outcome.kind === 'broken') {
      this.#break('stt', outcome.en, outcome.zh);
      return undefined;
    }
    this.#localStt = outcome.local;
    this.#stt = outcome.local.stt;
    return undefined;
  }

  #startSpeaker(): void {
    const ctx = this.#ctx;
    const player = new AplayPlayer({
      device: ctx.settings.get('speaker_device'),
      timeoutMs: ctx.settings.get('speaker_timeout_ms'),
    });
    const speaker = new SpeakerOutput({
      player,
      tts: () => this.#tts as TextToSpeech,
      speakable: (text) => {
        const spoken = speakableText(text, ctx.settings.get('tts.max_chars'));
        return { text: spoken, language: spokenLanguage(spoken) };
      },
      onProblem: (problem) => {
        if (problem === undefined) {
          this.#forgetNote('speaker');
          ctx.log.info(`speaker: "${player.device}" plays again`);
          // The player's own problem text (aplay's error).
        } else this.#note('speaker', problem, `扬声器：${problem}`);
      },
    });
    this.#speaker = speaker;
    const stream = new SpokenStream({
      speaker,
      ...(ctx.io.cancelInput ? { cancel: (id: string) => ctx.io.cancelInput?.(id, 'barge-in') ?? false } : {}),
      language: (text) => spokenLanguage(text),
      onError: (error) => ctx.log.debug({ err: error }, 'a streamed sentence was not spoken'),
    });
    this.#stream = stream;
    this.#undo.push(
      ctx.events.subscribe('agent.text_delta', (event) => {
        if (ctx.settings.get('stream_speech') && stream.follows(event.input_id)) stream.delta(event);
      }),
    );
    // In the background: aplay on a wedged device may take speaker_timeout_ms, which must not hold up the daemon's start.
    void speaker.probe().catch((error: unknown) => ctx.log.debug({ err: error }, 'speaker probe failed'));
    this.#undo.push(
      ctx.io.registerOutputChannel({
        name: SPEAKER_CHANNEL,
        description: 'The room speaker: text is spoken aloud, audio (WAV) is played. Answers spoken commands.',
        capabilities: CAPABILITY.TEXT | CAPABILITY.AUDIO,
        synchronous: false,
        answers: [ctx.settings.get('channel')],
        // A speaker whose device does not open hears nothing: a later message (a timer) then goes to the next announcement channel.
        listening: () => speaker.status().available,
        send: (event) => {
          // The answer of a streamed turn: only what was not spoken while the model wrote it.
          if (event.type === 'text' && typeof event.payload === 'string' && stream.follows(event.input_id)) {
            const rest = stream.final(event.input_id as string, event.payload);
            return rest === undefined ? Promise.resolve() : speaker.send({ ...event, payload: rest });
          }
          return speaker.send(event);
        },
      }),
    );
  }

  async #startInput(): Promise<void> {
    const ctx = this.#ctx;
    const policy = this.#policy as ActivationPolicy;
    const off = wakePhrasesOff(ctx.settings);
    if (off) this.#note('wake_phrases', off.en, off.zh);
    const pipeline = new VoicePipeline({
      now: this.#now,
      policy,
      stt: () => this.#stt,
      ...(this.#speaker ? { speaker: this.#bargeInSpeaker(this.#speaker) } : {}),
      bargeIn: () => ctx.settings.get('barge_in'),
      wakePhrases: () => (wakePhrasesOff(ctx.settings) ? [] : ctx.settings.get('activation.wake_phrases')),
      matchWakePhrase,
      spokenLanguage,
      languageHint: () => {
        const hint = ctx.settings.get('stt.language');
        return hint === 'auto' ? undefined : (hint as SpeechLanguage);
      },
      command: ({ command, language, activation }) => {
        const area = ctx.settings.get('area');
        // Our own id, so the turn's text deltas can be spoken as they come.
        const id = `voice_${randomUUID().replaceAll('-', '')}`;
        if (ctx.settings.get('stream_speech')) this.#stream?.begin(id);
        return ctx.io.injectInput({
          id,
          channel: ctx.settings.get('channel'),
          // Anyone in the room can speak, and the speaker answers the whole room.
          sender: { trust: 'household', id: 'voice', proof: `a voice heard through the microphone (${activation})`, shared: true },
          payload: command,
          meta: { ...(area ? { area } : {}), language, activation },
        });
      },
      log: ctx.log,
    });
    this.#pipeline = pipeline;
    this.#watchPushToTalk(policy);
    if (this.#options.eagerDetectors) await this.#startDetectors();
    this.#startMicrophone();
  }

  /**
   * The voice activity detector (an ONNX model in a worker, about 60 MB) and the wake word
   * spotters only matter once there is audio: they start when the microphone first records, so a
   * box without a microphone never loads them (issue 32: nothing loads before it is needed). Once.
   */
  #startDetectors(): Promise<void> {
    this.#detectorsStarting ??= this.#openDetectors().then(() => {
      if (this.#stopped) return;
      this.#detectorsReady = true;
      for (const samples of this.#heldAudio.splice(0)) this.#hear(samples);
      this.#heldSamples = 0;
    });
    return this.#detectorsStarting;
  }

  async #openDetectors(): Promise<void> {
    const ctx = this.#ctx;
    const policy = this.#policy as ActivationPolicy;
    const pipeline = this.#pipeline as VoicePipeline;
    try {
      const openVad = this.#options.openVad ?? sileroVad;
      this.#vad = await openVad({
        sampleRate: ctx.settings.get('microphone.sample_rate'),
        settings: () => vadSettings(ctx.settings),
        events: {
          onSpeechStart: () => pipeline.speechStarted(),
          onUtterance: (utterance) => void pipeline.utterance(utterance),
          onError: (error) =>
            this.#break('vad', `voice activity detection stopped: ${error.message}`, `语音活动检测停止了：${error.message}`),
        },
      });
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      this.#break('vad', `voice activity detection could not start: ${why}`, `语音活动检测无法启动：${why}`);
      // Without a detector nothing the microphone hears can become an utterance.
      this.#heldAudio = [];
      await this.#microphone?.stop();
      return;
    }
    if (this.#stopped) return;
    await this.#startWakeWord(policy);
    if (this.#stopped) return;
    await this.#startKeyphrase(policy);
  }

  #hear(samples: Int16Array): void {
    this.#vad?.push(samples);
    this.#wakeWord?.push(samples);
    this.#keyphrase?.push(samples);
  }

  /** Barge-in stops what plays and also the model's turn that is still writing the answer. */
  #bargeInSpeaker(speaker: SpeakerOutput): PipelineSpeaker {
    return {
      get active() {
        return speaker.active;
      },
      say: (text, language) => speaker.say(text, language),
      interrupt: () => {
        const stopped = speaker.interrupt();
        if (this.#stream?.bargeIn()) this.#ctx.log.info('barge-in: the answer being written was cancelled');
        return stopped;
      },
    };
  }

  async #startWakeWord(policy: ActivationPolicy): Promise<void> {
    const dir = this.#ctx.settings.get('activation.wake_word_model_dir');
    if (dir === '') return;
    if (this.#ctx.settings.get('microphone.sample_rate') !== 16000) {
      this.#note(
        'wake_word',
        'wake word off: the models need plugin.voice.microphone.sample_rate 16000',
        '唤醒词已关闭：模型需要 plugin.voice.microphone.sample_rate 16000',
      );
      return;
    }
    try {
      this.#wakeWord = await WakeWordDetector.open({
        dir,
        threshold: () => this.#ctx.settings.get('activation.wake_word_threshold'),
        onDetection: (detection) => policy.trigger('wake_word', { score: detection.score, model: detection.model }),
        onError: (error) => this.#break('wake_word', `wake word detection stopped: ${error.message}`, `唤醒词检测停止了：${error.message}`),
      });
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      this.#break('wake_word', `wake word detection could not start: ${why}`, `唤醒词检测无法启动：${why}`);
    }
  }

  /**
   * The local wake word (pocketsphinx). A missing package is a status line, not a failure: the
   * plugin still hears wake phrases and push-to-talk; a phrase the dictionary cannot spell is a
   * setting that cannot work and fails the health check.
   */
  async #startKeyphrase(policy: ActivationPolicy): Promise<void> {
    const ctx = this.#ctx;
    const phrase = ctx.settings.get('activation.keyphrase').trim();
    if (phrase === '') return;
    if (ctx.settings.get('microphone.sample_rate') !== 16000) {
      this.#note(
        'keyphrase',
        'wake word off: pocketsphinx needs plugin.voice.microphone.sample_rate 16000',
        '唤醒词已关闭：pocketsphinx 需要 plugin.voice.microphone.sample_rate 16000',
      );
      return;
    }
    const open = this.#options.openKeyphrase ?? ((options: KeyphraseSpotterOptions) => KeyphraseSpotter.open(options));
    try {
      this.#keyphrase = await open({
        phrase,
        threshold: ctx.settings.get('activation.keyphrase_threshold'),
        phoneLoopPenalty: ctx.settings.get('activation.keyphrase_phone_loop_penalty'),
        modelDir: ctx.settings.get('activation.keyphrase_model_dir'),
        restart: () => ({
          min_ms: ctx.settings.get('activation.keyphrase_restart_ms'),
          max_ms: ctx.settings.get('activation.keyphrase_restart_max_ms'),
        }),
        onDetection: (detection) => policy.trigger('wake_word', { score: detection.score, model: `pocketsphinx:${detection.phrase}` }),
        onProblem: (problem) => {
          if (problem === undefined) this.#forgetNote('keyphrase');
          else this.#note('keyphrase', problem, `唤醒词监听暂停，正在重试：${problem}`);
        },
      });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if (/not installed|model is missing/.test(message)) {
        this.#note('keyphrase', `wake word "${phrase}" off: ${message}`, `唤醒词“${phrase}”已关闭：${message}`, 'info');
      } else this.#break('keyphrase', `wake word "${phrase}" could not start: ${message}`, `唤醒词“${phrase}”无法启动：${message}`);
    }
  }

  #watchPushToTalk(policy: ActivationPolicy): void {
    this.#undo.push(
      this.#ctx.events.subscribe('entity.state_changed', (change) => {
        const entity = this.#ctx.settings.get('activation.push_to_talk_entity');
        if (entity === '' || change.entity_id !== entity || !change.state_changed) return;
        if (change.new_state === 'on' && change.old_state !== 'on') policy.trigger('push_to_talk');
      }),
    );
  }

  #startMicrophone(): void {
    const ctx = this.#ctx;
    const microphone = new Microphone({
      device: ctx.settings.get('microphone.device'),
      sampleRate: ctx.settings.get('microphone.sample_rate'),
      // The schema bounds it to 1 or 2.
      channels: ctx.settings.get('microphone.channels') === 2 ? 2 : 1,
      format: ctx.settings.get('microphone.format'),
      restartBackoffMs: ctx.settings.get('microphone.restart_backoff_ms'),
      restartBackoffMaxMs: ctx.settings.get('microphone.restart_backoff_max_ms'),
      onAudio: (samples) => {
        if (this.#detectorsReady) return this.#hear(samples);
        const limit = DETECTOR_START_BUFFER_S * ctx.settings.get('microphone.sample_rate');
        if (this.#heldSamples + samples.length > limit) return;
        this.#heldAudio.push(samples);
        this.#heldSamples += samples.length;
      },
      onStatus: (status) => {
        this.#micStatus = status;
        if (status.state === 'recording') {
          this.#forgetNote('microphone');
          void this.#startDetectors();
          this.#localStt?.warm();
        } else if (status.problem) this.#note('microphone', `microphone: ${status.problem}`, `麦克风：${status.problem}`);
      },
    });
    this.#microphone = microphone;
    microphone.start();
  }

  /** Satellites connect whether or not the local microphone runs: each is its own room's microphone and speaker. */
  #startSatellites(): void {
    const satellites = new Satellites({
      ctx: this.#ctx,
      now: this.#now,
      stt: () => this.#stt,
      tts: () => this.#tts,
      record: (entry) => this.#recordActivation(entry),
      onProblem: (key, problem) => {
        if (problem === undefined) this.#forgetNote(key);
        else this.#note(key, problem.en, problem.zh);
      },
      ...(this.#options.openSatelliteVad ? { openVad: this.#options.openSatelliteVad } : {}),
    });
    this.#satellites = satellites;
    satellites.start();
  }

  #recordActivation(entry: ActivationRecord): void {
    const { at, ...rest } = entry;
    void this.#log?.append({ ...rest, at: new Date(at).toISOString() }).then((error) => {
      if (error) this.#note('activation_log', `activation log not written: ${error.message}`, `激活日志没有写入：${error.message}`);
    });
  }

  #methodTarget() {
    return {
      status: () => this.status(),
      satellites: () => this.#satellites?.list() ?? [],
      say: async (text: string, language?: SpeechLanguage) => {
        if (!this.#speaker) throw new HomeAgentError('HA_ERR_SPEAKER_UNAVAILABLE', 'the speaker is off (plugin.voice.speaker_enabled)');
        return this.#speaker.say(text, language);
      },
      listen: () => {
        if (!this.#pipeline) return { armed: false, reason: this.#notes.get('input') ?? 'voice input is not running' };
        const armed = (this.#policy as ActivationPolicy).trigger('push_to_talk');
        return armed ? { armed } : { armed, reason: 'refractory' };
      },
      activations: (limit: number) => (this.#log as ActivationLog).recent(limit),
    };
  }

  /** A back end from its settings; a setting that cannot work breaks that part only (health says which). */
  #build<T>(key: string, what: string, whatZh: string, create: () => T): T | undefined {
    try {
      return create();
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      this.#break(key, `${what} off: ${why}`, `${whatZh}已关闭：${why}`);
      return undefined;
    }
  }

  /** A status line, logged once when it appears; `info` for parts that are off by choice. `zh` is the line in Chinese, for health. */
  #note(key: string, line: string, zh: string, level: 'info' | 'warn' = 'warn'): void {
    if (this.#notes.get(key) === line) return;
    this.#notes.set(key, line);
    this.#notesZh.set(key, zh);
    this.#ctx.log[level](line);
  }

  #forgetNote(key: string): void {
    this.#notes.delete(key);
    this.#notesZh.delete(key);
  }

  #break(key: string, line: string, zh: string): void {
    this.#broken.set(key, line);
    this.#brokenZh.set(key, zh);
    this.#ctx.log.error(line);
  }

  #mend(key: string): void {
    this.#broken.delete(key);
    this.#brokenZh.delete(key);
  }
}

export default definePlugin<VoiceSettings>((ctx) => new VoicePlugin(ctx));

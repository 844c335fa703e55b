/**
 * One satellite as a HomeAgent device in its room: its connection (SatelliteLink), a voice activity
 * detector over its audio, the same voice pipeline the local microphone uses (activation policy →
 * speech-to-text → an input for the agent) with the satellite's area on every command, and an
 * output channel `satellite_<id>` that speaks answers and announcements on it (SpeakerOutput over a
 * SatellitePlayer).
 *
 * A turn, as wyoming-satellite runs it: the satellite hears its wake word and sends `detection` and
 * `run-pipeline` (start_stage asr), then streams audio-chunk events. We answer `voice-started` and
 * `voice-stopped` as the detector hears the command begin and end, then `transcript` (the satellite
 * stops streaming and goes back to its wake word), and the answer comes back as synthesize plus
 * audio (sentence by sentence while the model writes, with stream_speech). A turn that hears nothing within turn_timeout_ms, or whose audio is bad, ends with an
 * `error` event, which also sends the satellite back to its wake word. A satellite without a local
 * wake word (start_stage wake) streams all the time: its utterances are searched for a wake phrase
 * like the microphone's.
 */
import { randomUUID } from 'node:crypto';
import type { SatelliteStatus, SatelliteTurn, SatelliteTurnOutcome } from '../../../src/sdk/api.js';
import { CAPABILITY, type EventMap, HomeAgentError, type Logger, type OutputChannel, type PluginInput } from '../../../src/sdk/index.js';
import { ActivationPolicy, type ActivationRecord, type ActivationSettings, type WakePhraseHit } from '../activation-policy.js';
import { SpeakerOutput } from '../speaker-output.js';
import type { SpeechLanguage, SpeechToText, TextToSpeech, Utterance } from '../speech.js';
import { SpokenStream } from '../spoken-stream.js';
import type { VadSettings } from '../vad/speech-segmenter.js';
import { type VoiceCommand, VoicePipeline } from '../voice-pipeline.js';
import type { WyomingEvent } from '../wyoming-events.js';
import {
  chunkSamples,
  event,
  NO_TEXT_CODE,
  type RunPipeline,
  readPcmFormat,
  readRunPipeline,
  type SatelliteInfo,
  satelliteError,
} from './satellite-events.js';
import { type LinkLimits, SatelliteLink } from './satellite-link.js';
import { SatellitePlayer } from './satellite-player.js';

export interface SatelliteConfig {
  id: string;
  name: string;
  host: string;
  port: number;
  area: string;
}

export interface SatelliteLimits extends LinkLimits {
  turn_timeout_ms: number;
  play_timeout_ms: number;
}

/** The voice activity detector as a satellite uses it (VoiceActivityDetector; a fake in tests). */
export interface SatelliteVad {
  push(samples: Int16Array): void;
  /** Resolves once the audio pushed so far was rated. */
  flush(): Promise<void>;
  /** Forgets the stream (a new turn). */
  reset(): void;
  close(): Promise<void> | void;
}

export type OpenSatelliteVad = (options: {
  sampleRate: 16000;
  settings: () => VadSettings;
  events: { onSpeechStart(atMs: number): void; onUtterance(utterance: Utterance): void; onError?(error: Error): void };
}) => Promise<SatelliteVad>;

export interface SatelliteDeviceOptions {
  config: SatelliteConfig;
  limits: () => SatelliteLimits;
  now: () => number;
  log: Logger;
  openVad: OpenSatelliteVad;
  vadSettings: () => VadSettings;
  stt: () => SpeechToText | undefined;
  tts: () => TextToSpeech | undefined;
  activation: () => ActivationSettings;
  record: (entry: ActivationRecord) => void;
  wakePhrases: () => readonly string[];
  matchWakePhrase: (transcript: string, phrases: readonly string[]) => WakePhraseHit | undefined;
  spokenLanguage: (text: string) => SpeechLanguage;
  languageHint: () => SpeechLanguage | undefined;
  speakable: (text: string) => { text: string; language: SpeechLanguage };
  inject: (input: PluginInput) => Promise<unknown>;
  registerChannel: (channel: Omit<OutputChannel, 'owner'>) => () => void;
  /** plugin.voice.stream_speech: speak each finished sentence of an answer while the model writes the rest. */
  streamSpeech: () => boolean;
  /** Follows the kernel's agent.text_delta events; returns the unsubscribe. */
  subscribeDeltas: (listener: (delta: EventMap['agent.text_delta']) => void) => () => void;
  /** The satellite's problem as a status line (en, zh), and undefined once it works again. */
  onProblem: (problem: { en: string; zh: string } | undefined) => void;
  random?: () => number;
}

interface Turn {
  pipeline: RunPipeline;
  timer: NodeJS.Timeout | undefined;
  /** An utterance of this turn is being transcribed and handled. */
  handling: boolean;
  commanded: boolean;
}

/** The channel (and conversation) of satellite `id`. */
export function satelliteChannel(id: string): string {
  return `satellite_${id}`;
}

/** Silence pushed after audio-stop so an utterance still open reaches its end (min_silence_ms and a frame more). */
const CLOSING_FRAME_MS = 64;

export class SatelliteDevice {
  readonly config: SatelliteConfig;
  readonly channel: string;
  readonly #options: SatelliteDeviceOptions;
  readonly #label: string;
  readonly #link: SatelliteLink;
  readonly #player: SatellitePlayer;
  readonly #speaker: SpeakerOutput;
  readonly #policy: ActivationPolicy;
  readonly #pipeline: VoicePipeline;
  readonly #stream: SpokenStream;
  /** The text each synthesized WAV was made from, for the synthesize event before its audio. */
  readonly #texts = new WeakMap<Buffer, string>();
  readonly #undo: Array<() => void> = [];
  #vad: Promise<SatelliteVad> | undefined;
  #turn: Turn | undefined;
  #turns = 0;
  #lastTurn: SatelliteTurn | undefined;
  #info: SatelliteInfo | undefined;
  #stopped = false;

  constructor(options: SatelliteDeviceOptions) {
    this.#options = options;
    this.config = options.config;
    this.channel = satelliteChannel(options.config.id);
    this.#label = `satellite ${options.config.id} (${options.config.host}:${options.config.port})`;
    this.#link = new SatelliteLink({
      label: this.#label,
      host: options.config.host,
      port: options.config.port,
      limits: options.limits,
      now: options.now,
      onConnected: (info) => this.#connected(info),
      onEvent: (received) => this.#event(received),
      onDisconnected: (problem) => this.#disconnected(problem),
      ...(options.random ? { random: options.random } : {}),
    });
    this.#player = new SatellitePlayer({
      device: options.config.id,
      label: this.#label,
      link: this.#link,
      textOf: (wav) => this.#texts.get(wav),
      playTimeoutMs: () => options.limits().play_timeout_ms,
    });
    this.#speaker = new SpeakerOutput({
      player: this.#player,
      tts: () => this.#recordingTts(),
      speakable: options.speakable,
    });
    this.#stream = new SpokenStream({
      speaker: this.#speaker,
      language: options.spokenLanguage,
      onError: (error) => options.log.debug({ err: error, satellite: options.config.id }, 'a streamed sentence was not spoken'),
    });
    this.#policy = new ActivationPolicy({ now: options.now, settings: options.activation, record: options.record });
    this.#pipeline = new VoicePipeline({
      now: options.now,
      policy: this.#policy,
      stt: options.stt,
      speaker: this.#speaker,
      // The satellite stops streaming while it speaks: there is nothing to barge in with.
      bargeIn: () => false,
      wakePhrases: options.wakePhrases,
      matchWakePhrase: options.matchWakePhrase,
      spokenLanguage: options.spokenLanguage,
      languageHint: options.languageHint,
      command: (command) => this.#command(command),
      log: options.log,
    });
  }

  start(): void {
    const { config } = this;
    const where = config.name === '' ? config.area : `${config.name}, ${config.area}`;
    this.#undo.push(
      this.#options.registerChannel({
        name: this.channel,
        description: `The voice satellite ${config.id} (${where}): text is spoken on its speaker, audio (WAV) is played. Answers what was said to it.`,
        capabilities: CAPABILITY.TEXT | CAPABILITY.AUDIO,
        synchronous: false,
        listening: () => this.#link.connected,
        send: (sent) => {
          // The answer of a streamed turn: only what was not spoken while the model wrote it.
          if (sent.type === 'text' && typeof sent.payload === 'string' && this.#stream.follows(sent.input_id)) {
            const rest = this.#stream.final(sent.input_id as string, sent.payload);
            return rest === undefined ? Promise.resolve() : this.#speaker.send({ ...sent, payload: rest });
          }
          return this.#speaker.send(sent);
        },
      }),
    );
    this.#undo.push(
      this.#options.subscribeDeltas((delta) => {
        if (this.#options.streamSpeech() && this.#stream.follows(delta.input_id)) this.#stream.delta(delta);
      }),
    );
    this.#link.start();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    for (const undo of this.#undo.splice(0)) undo();
    this.#endTurn();
    this.#speaker.interrupt();
    await this.#link.stop();
    const vad = this.#vad;
    this.#vad = undefined;
    if (vad) await vad.then((opened) => opened.close()).catch(() => {});
  }

  status(): SatelliteStatus {
    const link = this.#link.status();
    const iso = (ms: number) => new Date(ms).toISOString();
    const { id, name, area, host, port } = this.config;
    return {
      id,
      name: name === '' ? id : name,
      area,
      host,
      port,
      state: link.state,
      ...(link.problem ? { problem: link.problem } : {}),
      since: iso(link.since),
      ...(link.lastSeen === undefined ? {} : { last_seen: iso(link.lastSeen) }),
      failures: link.failures,
      ...(link.retryAt === undefined ? {} : { retry_at: iso(link.retryAt) }),
      ...(this.#info
        ? {
            reported: {
              ...(this.#info.name ? { name: this.#info.name } : {}),
              ...(this.#info.area ? { area: this.#info.area } : {}),
              wake_words: this.#info.wakeWords,
            },
          }
        : {}),
      turns: this.#turns,
      ...(this.#lastTurn ? { last_turn: this.#lastTurn } : {}),
    };
  }

  #connected(info: SatelliteInfo | undefined): void {
    this.#info = info;
    this.#options.log.info({ satellite: this.config.id, reported: info }, `${this.#label}: connected`);
    // A speech-to-text or wake word server listed by mistake answers describe too, but never runs a pipeline.
    if (!info)
      this.#options.log.warn(
        `${this.#label}: its info has no satellite section; is it a Wyoming satellite (wyoming-satellite, port 10700)?`,
      );
    this.#options.onProblem(undefined);
    this.#vad ??= this.#openVad();
  }

  #disconnected(problem: HomeAgentError): void {
    this.#player.disconnected();
    if (this.#turn) this.#finishTurn('error', 'the satellite disconnected during the turn');
    this.#options.log.debug({ satellite: this.config.id }, problem.message);
    this.#options.onProblem({ en: problem.message, zh: `语音卫星 ${this.config.id} 未连接：${problem.message}` });
  }

  #openVad(): Promise<SatelliteVad> {
    const opened = this.#options.openVad({
      sampleRate: 16000,
      settings: this.#options.vadSettings,
      events: {
        onSpeechStart: () => this.#speechStarted(),
        onUtterance: (utterance) => this.#utterance(utterance),
        onError: (error) => {
          this.#options.log.warn({ err: error, satellite: this.config.id }, `${this.#label}: voice activity detection stopped`);
          this.#vad = undefined;
          if (this.#turn) this.#refuse('error', `voice activity detection stopped: ${error.message}`);
        },
      },
    });
    opened.catch((error: unknown) => {
      this.#vad = undefined;
      const why = error instanceof Error ? error.message : String(error);
      this.#options.log.warn({ err: error, satellite: this.config.id }, `${this.#label}: voice activity detection could not start`);
      if (this.#turn) this.#refuse('error', `voice activity detection could not start: ${why}`);
    });
    return opened;
  }

  /** Every event after the handshake. Protocol problems inside a turn end the turn, not the connection. */
  #event(received: WyomingEvent): void {
    try {
      switch (received.type) {
        case 'run-pipeline':
          this.#runPipeline(received);
          return;
        case 'audio-chunk':
          this.#audio(received);
          return;
        case 'audio-stop':
          this.#audioStopped();
          return;
        case 'played':
          this.#player.played();
          return;
        case 'error':
          this.#options.log.info({ satellite: this.config.id, data: received.data }, `${this.#label} reported an error`);
          return;
        default:
          // describe answers, detection (run-pipeline follows), streaming-started/stopped, timers: nothing to do.
          return;
      }
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      this.#options.log.warn({ satellite: this.config.id, event: received.type }, `${this.#label}: ${message}`);
      this.#refuse('error', message);
    }
  }

  #runPipeline(received: WyomingEvent): void {
    const pipeline = readRunPipeline(received);
    if (this.#turn) this.#endTurn();
    if (!this.#options.stt()) {
      this.#refuse('refused', 'HomeAgent has no speech-to-text back end (plugin.voice.stt.backend)', 'stt-provider-missing');
      return;
    }
    this.#vad ??= this.#openVad();
    const turn: Turn = { pipeline, timer: undefined, handling: false, commanded: false };
    this.#turn = turn;
    void this.#vad.then((vad) => vad.reset()).catch(() => {});
    if (pipeline.start === 'asr') {
      const model = `satellite:${this.config.id}${pipeline.wakeWord ? `:${pipeline.wakeWord}` : ''}`;
      if (!this.#policy.trigger('wake_word', { model })) {
        this.#refuse('refused', 'a turn began less than plugin.voice.activation.refractory_ms after the last one');
        return;
      }
      this.#armTimer(turn);
    }
  }

  #armTimer(turn: Turn): void {
    const ms = this.#options.limits().turn_timeout_ms;
    turn.timer = setTimeout(() => {
      if (this.#turn === turn && !turn.handling) this.#refuse('timeout', `no command heard within ${ms} ms`);
    }, ms);
  }

  #audio(received: WyomingEvent): void {
    const turn = this.#turn;
    // Audio between turns (a satellite still sending after our transcript) is dropped.
    if (!turn || turn.handling) return;
    const samples = chunkSamples(readPcmFormat(received), received.payload);
    const vad = this.#vad;
    if (!vad) throw satelliteError('voice activity detection is not running');
    void vad
      .then((opened) => {
        if (this.#turn === turn) opened.push(samples);
      })
      // A detector that could not open ends the turn where it failed (#openVad).
      .catch(() => {});
  }

  /** The satellite ended the stream: close an utterance under way with silence; no utterance means nothing was said. */
  #audioStopped(): void {
    const turn = this.#turn;
    const vad = this.#vad;
    if (!turn || turn.handling || !vad) return;
    const silenceMs = this.#options.vadSettings().min_silence_ms + CLOSING_FRAME_MS * 2;
    void vad
      .then(async (opened) => {
        if (this.#turn !== turn) return;
        opened.push(new Int16Array(Math.ceil((silenceMs * 16000) / 1000)));
        await opened.flush();
      })
      .catch(() => {})
      .then(() => {
        if (this.#turn === turn && !turn.handling) this.#refuse('nothing', 'the satellite stopped streaming before a command was heard');
      });
  }

  #speechStarted(): void {
    if (!this.#turn || this.#turn.handling) return;
    this.#link.send(event('voice-started', { timestamp: this.#options.now() }));
    this.#pipeline.speechStarted();
  }

  #utterance(utterance: Utterance): void {
    const turn = this.#turn;
    if (!turn || turn.handling) return;
    turn.handling = true;
    if (turn.timer) clearTimeout(turn.timer);
    this.#link.send(event('voice-stopped', { timestamp: this.#options.now() }));
    void this.#pipeline.utterance(utterance).then(() => {
      if (this.#turn !== turn) return;
      turn.handling = false;
      if (turn.pipeline.start === 'asr' && !turn.commanded) this.#refuse('nothing', 'nothing was understood');
    });
  }

  /** The pipeline found a command: tell the satellite what was heard, then hand it to the agent in this room. */
  #command({ command, language, activation }: VoiceCommand): Promise<unknown> {
    const turn = this.#turn;
    const { id, area, name } = this.config;
    if (turn) turn.commanded = true;
    if (activation === 'wake_phrase') this.#link.send(event('detection', { name: 'wake_phrase', timestamp: this.#options.now() }));
    this.#link.send(event('transcript', { text: command, language }));
    this.#turns++;
    this.#lastTurn = { at: new Date(this.#options.now()).toISOString(), outcome: 'command', heard: command };
    if (turn?.pipeline.start === 'asr') this.#endTurn();
    else if (turn) turn.handling = false;
    // Our own id, so the turn's text deltas can be spoken on this satellite as they come.
    const inputId = `voice_${randomUUID().replaceAll('-', '')}`;
    if (this.#options.streamSpeech()) this.#stream.begin(inputId);
    return this.#options.inject({
      id: inputId,
      channel: this.channel,
      // Anyone in that room can speak, and its speaker answers the whole room.
      sender: {
        trust: 'household',
        id: 'voice',
        proof: `a voice heard through the satellite ${name === '' ? id : name} (${activation})`,
        shared: true,
      },
      payload: command,
      meta: { area, language, activation, satellite: id },
    });
  }

  /** Ends the turn with an error event (the satellite goes back to its wake word) and records why. */
  #refuse(outcome: Exclude<SatelliteTurnOutcome, 'command'>, problem: string, code = NO_TEXT_CODE): void {
    this.#link.send(event('error', { text: problem, code }));
    this.#finishTurn(outcome, problem);
  }

  #finishTurn(outcome: Exclude<SatelliteTurnOutcome, 'command'>, problem: string): void {
    this.#turns++;
    this.#lastTurn = { at: new Date(this.#options.now()).toISOString(), outcome, problem };
    if (!this.#stopped)
      this.#options.log.info({ satellite: this.config.id, outcome }, `${this.#label}: turn ended without a command: ${problem}`);
    this.#endTurn();
  }

  #endTurn(): void {
    const turn = this.#turn;
    if (!turn) return;
    if (turn.timer) clearTimeout(turn.timer);
    this.#turn = undefined;
  }

  /** The back end in use, remembering which text each WAV came from. */
  #recordingTts(): TextToSpeech {
    const tts = this.#options.tts();
    if (!tts) {
      return {
        name: 'none',
        synthesize: () => Promise.reject(new HomeAgentError('HA_ERR_VOICE_TTS', 'text-to-speech is off (plugin.voice.tts)')),
      };
    }
    return {
      name: tts.name,
      synthesize: async (text, options) => {
        const speech = await tts.synthesize(text, options);
        this.#texts.set(speech.wav, text);
        return speech;
      },
    };
  }
}

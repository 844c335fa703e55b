/**
 * The configured satellites (plugin.voice.satellites.list), one SatelliteDevice each, built from
 * the voice plugin's settings and back ends. A changed list takes effect at once: the devices are
 * stopped and built again. A list that cannot work (two satellites with one id) is a status line
 * naming the id, and the others still run.
 */
import type { SatelliteStatus } from '../../../src/sdk/api.js';
import type { PluginContext } from '../../../src/sdk/index.js';
import { matchWakePhrase } from '../activation/wake-phrase.js';
import type { ActivationRecord } from '../activation-policy.js';
import type { VoiceSettings } from '../settings-schema.js';
import type { SpeechLanguage, SpeechToText, TextToSpeech } from '../speech.js';
import { speakableText, spokenLanguage } from '../spoken-text.js';
import { VoiceActivityDetector } from '../vad/voice-activity-detector.js';
import { activationSettings, vadSettings, wakePhrasesOff } from '../voice-settings.js';
import { type OpenSatelliteVad, type SatelliteConfig, SatelliteDevice, type SatelliteLimits } from './satellite-device.js';

export interface SatellitesOptions {
  ctx: PluginContext<VoiceSettings>;
  now: () => number;
  stt: () => SpeechToText | undefined;
  tts: () => TextToSpeech | undefined;
  record: (entry: ActivationRecord) => void;
  /** A satellite's status line under `key` (satellite:<id>), or undefined to clear it. */
  onProblem: (key: string, problem: { en: string; zh: string } | undefined) => void;
  openVad?: OpenSatelliteVad;
  random?: () => number;
}

const sileroVad: OpenSatelliteVad = (options) => VoiceActivityDetector.open(options);

export class Satellites {
  readonly #options: SatellitesOptions;
  #devices: SatelliteDevice[] = [];
  #keys = new Set<string>();
  #unsubscribe: (() => void) | undefined;
  /** Rebuilds run one after the other, so a quick second change never races the first. */
  #chain: Promise<void> = Promise.resolve();

  constructor(options: SatellitesOptions) {
    this.#options = options;
  }

  start(): void {
    this.#build();
    this.#unsubscribe = this.#options.ctx.settings.onChange((key) => {
      if (key === 'satellites.list') this.#chain = this.#chain.then(() => this.#rebuild());
    });
  }

  async stop(): Promise<void> {
    this.#unsubscribe?.();
    this.#unsubscribe = undefined;
    await this.#chain;
    await this.#stopDevices();
  }

  list(): SatelliteStatus[] {
    return this.#devices.map((device) => device.status());
  }

  /** The devices (tests reach a device's channel name through it). */
  get devices(): readonly SatelliteDevice[] {
    return this.#devices;
  }

  async #rebuild(): Promise<void> {
    await this.#stopDevices();
    this.#build();
  }

  async #stopDevices(): Promise<void> {
    const devices = this.#devices;
    this.#devices = [];
    await Promise.allSettled(devices.map((device) => device.stop()));
    for (const key of this.#keys) this.#options.onProblem(key, undefined);
    this.#keys.clear();
  }

  #build(): void {
    const { ctx } = this.#options;
    const seen = new Set<string>();
    for (const entry of ctx.settings.get('satellites.list')) {
      const config: SatelliteConfig = {
        id: entry.id,
        name: entry.name ?? '',
        host: entry.host,
        port: entry.port ?? 10700,
        area: entry.area,
      };
      const key = `satellite:${config.id}`;
      this.#keys.add(key);
      if (seen.has(config.id)) {
        this.#options.onProblem(key, {
          en: `satellite ${config.id} is listed twice in plugin.voice.satellites.list; only the first runs`,
          zh: `语音卫星 ${config.id} 在 plugin.voice.satellites.list 里出现了两次；只运行第一个`,
        });
        continue;
      }
      seen.add(config.id);
      const device = this.#device(config, key);
      this.#devices.push(device);
      device.start();
    }
  }

  #device(config: SatelliteConfig, key: string): SatelliteDevice {
    const { ctx } = this.#options;
    const limits = (): SatelliteLimits => {
      const s = ctx.settings.values().satellites;
      return {
        min_ms: s.reconnect_min_ms,
        max_ms: s.reconnect_max_ms,
        connect_timeout_ms: s.connect_timeout_ms,
        ping_interval_ms: s.ping_interval_ms,
        pong_timeout_ms: s.pong_timeout_ms,
        max_payload_bytes: s.max_payload_bytes,
        turn_timeout_ms: s.turn_timeout_ms,
        play_timeout_ms: s.play_timeout_ms,
      };
    };
    return new SatelliteDevice({
      config,
      limits,
      now: this.#options.now,
      log: ctx.log,
      openVad: this.#options.openVad ?? sileroVad,
      vadSettings: () => vadSettings(ctx.settings),
      stt: this.#options.stt,
      tts: this.#options.tts,
      activation: () => activationSettings(ctx.settings),
      record: this.#options.record,
      wakePhrases: () => (wakePhrasesOff(ctx.settings) ? [] : ctx.settings.get('activation.wake_phrases')),
      matchWakePhrase,
      spokenLanguage,
      languageHint: () => {
        const hint = ctx.settings.get('stt.language');
        return hint === 'auto' ? undefined : (hint as SpeechLanguage);
      },
      speakable: (text) => {
        const spoken = speakableText(text, ctx.settings.get('tts.max_chars'));
        return { text: spoken, language: spokenLanguage(spoken) };
      },
      inject: (input) => ctx.io.injectInput(input),
      registerChannel: (channel) => ctx.io.registerOutputChannel(channel),
      streamSpeech: () => ctx.settings.get('stream_speech'),
      subscribeDeltas: (listener) => ctx.events.subscribe('agent.text_delta', listener),
      onProblem: (problem) => this.#options.onProblem(key, problem),
      ...(this.#options.random ? { random: this.#options.random } : {}),
    });
  }
}

/**
 * The local speech-to-text back end put together (issue 30): plugin.voice.stt.backend auto or
 * local. It checks that pocketsphinx and its model are installed (auto falls back to none with a
 * status line naming the packages), keeps the home's command grammar in step with the entity
 * registry, starts the decoder ahead of the first command and hands what it cannot place to the
 * configured open back end (plugin.voice.stt.fallback_backend). Kept out of index.ts so the plugin
 * only asks for it and closes it.
 */
import type { PluginContext } from '../../../src/sdk/index.js';
import type { VoiceSettings } from '../settings-schema.js';
import type { SpeechToText } from '../speech.js';
import { sttSettings } from '../voice-settings.js';
import { createSpeechToText } from './create-stt.js';
import { type GrammarReport, LocalGrammar } from './local-grammar.js';
import { OfflineFirstStt } from './offline-first-stt.js';
import { checkLocalModel, type LocalModelCheck, PocketsphinxStt } from './pocketsphinx-stt.js';

export interface LocalStt {
  stt: SpeechToText;
  /** The settings of the open back end changed: build it again. */
  settingsChanged(): void;
  grammar(): GrammarReport | undefined;
  /**
   * Builds the grammar and loads the decoder (a second or more) before the first command rather
   * than during it; called once the microphone records, so a daemon without one never pays for it.
   */
  warm(): void;
  close(): Promise<void>;
}

export type LocalSttOutcome =
  | { kind: 'local'; local: LocalStt }
  /** auto without pocketsphinx: no back end, the status line says what to install. */
  | { kind: 'missing'; en: string; zh: string }
  /** local asked for but it cannot run: a broken part. */
  | { kind: 'broken'; en: string; zh: string };

export interface LocalSttOptions {
  ctx: PluginContext<VoiceSettings>;
  /** Builds a back end from its settings; a setting that cannot work is reported by the plugin. */
  build: (create: () => SpeechToText | undefined) => SpeechToText | undefined;
  check?: (modelDir: string) => LocalModelCheck;
  onProblem: (problem: { en: string; zh: string } | undefined) => void;
}

export function openLocalStt(options: LocalSttOptions): LocalSttOutcome {
  const { ctx } = options;
  const backend = ctx.settings.get('stt.backend');
  const modelDir = ctx.settings.get('stt.local_model_dir');
  const check = (options.check ?? checkLocalModel)(modelDir);
  if (!check.ok || check.program === undefined || check.files === undefined) {
    const en = check.why ?? 'pocketsphinx is not installed';
    const zh = check.whyZh ?? '没有安装 pocketsphinx';
    if (backend === 'local') return { kind: 'broken', en: `local speech-to-text off: ${en}`, zh: `本地语音识别已关闭：${zh}` };
    return { kind: 'missing', en: `offline home commands need pocketsphinx: ${en}`, zh: `离线家居指令需要 pocketsphinx：${zh}` };
  }
  if (ctx.settings.get('microphone.sample_rate') !== 16000) {
    return {
      kind: 'broken',
      en: 'local speech-to-text off: pocketsphinx needs plugin.voice.microphone.sample_rate 16000',
      zh: '本地语音识别已关闭：pocketsphinx 需要 plugin.voice.microphone.sample_rate 16000',
    };
  }
  const grammar = new LocalGrammar({
    dir: `${ctx.paths.data}/local-stt`,
    dictionary: check.files.dict,
    entities: () => ctx.entities.list(),
    areas: () => ctx.entities.areas(),
    wakePhrases: () => ctx.settings.get('activation.wake_phrases'),
    maxStates: () => ctx.settings.get('stt.local_max_grammar_states'),
    maxAlternatives: () => ctx.settings.get('stt.local_max_alternatives'),
    maxTemplatesPerGroup: () => ctx.settings.get('stt.local_max_templates_per_group'),
    log: ctx.log,
  });
  const decoder = new PocketsphinxStt({
    program: check.program,
    model: check.files,
    grammar: () => grammar.files(),
    timeoutMs: ctx.settings.get('stt.timeout_ms'),
  });
  const buildFallback = (): SpeechToText | undefined => {
    const settings = sttSettings(ctx.settings);
    return settings.fallback_backend === 'none' ? undefined : options.build(() => createSpeechToText(settings, settings.fallback_backend));
  };
  let fallback = buildFallback();
  const changed = (): void => grammar.changed(ctx.settings.get('stt.local_grammar_delay_ms'));
  const unsubscribe = [ctx.events.subscribe('entity.registered', changed), ctx.events.subscribe('entity.removed', changed)];
  return {
    kind: 'local',
    local: {
      stt: new OfflineFirstStt(decoder, () => fallback),
      settingsChanged: () => {
        fallback = buildFallback();
      },
      grammar: () => grammar.report(),
      warm: () => {
        decoder.warm().then(
          () => options.onProblem(undefined),
          (error: unknown) => {
            const why = error instanceof Error ? error.message : String(error);
            options.onProblem({ en: `local speech-to-text not ready: ${why}`, zh: `本地语音识别没有就绪：${why}` });
          },
        );
      },
      close: async () => {
        for (const undo of unsubscribe) undo();
        grammar.close();
        await decoder.close();
      },
    },
  };
}

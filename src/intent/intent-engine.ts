/**
 * The local intent engine assembled from the running system's parts: a recogniser that follows
 * the entity registry, the executor acting through the agent's tools, and the stage hooks. The
 * daemon's composition root, the end-to-end bench and the tests build it the same way.
 */
import type { ExecuteOptions, StageContext, ToolOutcome } from '../agent/types.js';
import type { EventBus } from '../events/event-bus.js';
import type { EntityRegistry } from '../home/entity-registry.js';
import type { OutputEvent } from '../io/types.js';
import type { ToolCall } from '../llm/spec/model.js';
import type { Logger } from '../log/logger.js';
import { IntentExecutor } from './intent-executor.js';
import { type IntentSettings, intentStage, turnToolRunner } from './intent-stage.js';
import { LiveRecognizer } from './live-recognizer.js';
import { ALL_SENTENCES } from './sentences/index.js';

export interface IntentEngineSettings extends IntentSettings {
  recompile_delay_ms: number;
  weather_entity: string;
  broadcast_channels: string[];
}

/** A channel an announcement may go to. */
export interface SpeakerChannel {
  name: string;
  /** Plays sound: an announcement goes to every such channel unless broadcast_channels names some. */
  audio: boolean;
}

export interface IntentEngineOptions {
  entities: Pick<EntityRegistry, 'list' | 'areas'>;
  events: Pick<EventBus, 'on'>;
  executeBatch: (calls: ToolCall[], options: ExecuteOptions) => Promise<{ outcomes: ToolOutcome[] }>;
  hasTool: (name: string) => boolean;
  channels: () => readonly SpeakerChannel[];
  send: (event: Omit<OutputEvent, 'id' | 'created_at'>) => Promise<void>;
  findList: (name: string) => string | undefined;
  settings: () => IntentEngineSettings;
  modelAvailable: () => boolean;
  isMachineInput: (ctx: StageContext) => boolean;
  now: () => number;
  log: Logger;
}

export function createIntentEngine(options: IntentEngineOptions) {
  const { entities, log } = options;
  const recognizer = new LiveRecognizer({
    sentences: ALL_SENTENCES,
    entities: () => entities.list(),
    areas: () => entities.areas(),
    delayMs: () => options.settings().recompile_delay_ms,
    followupQuietS: () => options.settings().followup_quiet_s,
  });
  const unsubscribe = [
    options.events.on('intent', 'entity.registered', () => recognizer.changed()),
    options.events.on('intent', 'entity.removed', () => recognizer.changed()),
  ];
  const executor = new IntentExecutor({
    entities: () => entities.list(),
    areas: () => entities.areas(),
    hasTool: options.hasTool,
    findList: options.findList,
    weatherEntity: () => options.settings().weather_entity,
    now: options.now,
    broadcast: async (text) => {
      const named = options.settings().broadcast_channels;
      const targets = options.channels().filter((c) => (named.length > 0 ? named.includes(c.name) : c.audio));
      const said: string[] = [];
      for (const channel of targets) {
        try {
          await options.send({ channel: channel.name, type: 'text', payload: text, meta: { broadcast: true } });
          said.push(channel.name);
        } catch (error) {
          log.warn({ channel: channel.name, err: error }, 'an announcement could not be sent');
        }
      }
      return said;
    },
  });
  const hooks = intentStage({
    recognizer: () => recognizer.current(),
    understander: () => recognizer.understander(),
    executor,
    toolRunner: (ctx) => turnToolRunner(options.executeBatch, ctx),
    settings: options.settings,
    now: options.now,
    modelAvailable: options.modelAvailable,
    isMachineInput: options.isMachineInput,
    log,
  });
  return {
    ...hooks,
    recognizer,
    close: () => {
      for (const off of unsubscribe) off();
      recognizer.close();
    },
  };
}

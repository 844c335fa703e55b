/**
 * The household memory as one service: opens memory.db, builds the text analyzer (jieba loads on
 * the first text that needs it, not at start), the embedder, the three layers, recall, the tools,
 * the maintenance loops and the raw conversation log. The agent records each input before the
 * model sees it (`recordInput`), gives it the finished turn (`remember`), reads its history from
 * the window (`conversation`) and asks for the prompt's memory block (`promptBlock`).
 */
import { join, resolve } from 'node:path';
import { defaultConfig } from '../config/loader.js';
import type { Config } from '../config/schema.js';
import { cosine, type Embedder } from '../embed/embedder.js';
import { HashEmbedder } from '../embed/hash-embedder.js';
import { OnnxEmbedder } from '../embed/onnx-embedder.js';
import type { Logger } from '../log/logger.js';
import { createDependencyParser } from '../nlp/create-dependency-parser.js';
import type { DependencyParser } from '../nlp/dependency-parser.js';
import { createTextAnalyzer } from '../nlp/text-analyzer.js';
import type { TextAnalyzer } from '../nlp/types.js';
import type { Clock } from '../shared/clock.js';
import { describeError, HomeAgentError } from '../shared/errors.js';
import type { Service } from '../shared/service.js';
import type { ToolDefinition } from '../shared/tool.js';
import type { Trust } from '../shared/trust.js';
import type { ManagedDatabase } from '../store/database.js';
import { ConversationLog } from './conversation-log.js';
import { prepareFacts, withLocationFacts } from './fact-intake.js';
import { forgetRecentTool, forgetReply, forgetTurns, isForgetRequest, recentTurns } from './forget-recent.js';
import { type HouseholdPerson, speakerName, UNKNOWN_SPEAKER, UNKNOWN_SPEAKER_CONFIDENCE } from './household-people.js';
import { MemoryMaintenance, type TimerScheduler } from './maintenance.js';
import { blockMergeTool } from './memory-block-merge-tool.js';
import { type MemoryStores, openMemoryStores } from './memory-stores.js';
import { type MemoryPolicy, memoryToolResults, type PolicyLookup } from './memory-text.js';
import { memoryTools } from './memory-tools.js';
import { MemoryRecall, type RecallOptions } from './recall.js';
import { recallLine } from './recall-lines.js';
import { type SceneFingerprint, type SceneTurn, sceneFingerprint } from './scene-fingerprint.js';
import type { SceneRanking } from './scene-recall.js';
import { SceneStore } from './scene-store.js';
import { withScenes } from './scene-tools.js';
import { consolidationTask, reviewTask } from './self-tasks.js';
import { resolveTimeWords } from './time-words.js';
import { WindowConversation } from './window-conversation.js';

/** core.memory. */
export type MemorySettings = Config['core']['memory'];

/** The internal channel maintenance talks to the agent on; never remembered. */
export const SELF_CHANNEL = 'self';
/** The source of inputs on {@link SELF_CHANNEL}. */
export const SELF_SOURCE = '_consolidation_';

const NO_MEMORY: MemoryPolicy = { no_memory: true };

export interface MemoryServiceOptions {
  database: () => ManagedDatabase;
  /** core.agent.max_context_size and core.agent.prompt_documents, read when used. */
  limits: () => { max_context_size: number; prompt_documents: number };
  /**
   * core.memory, read when used (no_memory_channels and consolidation_channel apply at once; the
   * embedder, intervals, merge and review limits and the raw log at start). Default: the schema defaults.
   */
  memory?: () => MemorySettings;
  /** The data directory: models in <data>/models, the raw log in <data>/memory/raw. Without it: hash embedder, no raw log. */
  dataDir?: string;
  /** Each tool's memory policy (ToolDefinition.no_memory and cleaner), by tool name. */
  toolPolicy?: PolicyLookup;
  /**
   * Hands a task to the agent on {@link SELF_CHANNEL} (merge proposals, doubtful facts) when
   * core.memory.consolidation_channel is on; without it they are only logged. True when the task
   * was queued; false (e.g. no language model) means not taken: logged as if the channel were off.
   * A throw fails the pass: the same pairs and relations come again at the next one.
   */
  selfInput?: (text: string) => boolean | Promise<boolean>;
  /**
   * core.agent.onnx_model_path, read at start: the dependency-parser model directory (relative to
   * <data>/models); empty: the rule parser.
   */
  parserModelPath?: () => string;
  /**
   * core.home.people, read when used: who said an input is named from these (never the transport
   * it came by). Absent: nobody is known, every input is said by "someone".
   */
  people?: () => readonly HouseholdPerson[];
  /** Recall tuning for the evaluation's ablation runs (`homeagent memory-eval --fusion ...`); defaults otherwise. */
  recall?: Partial<Pick<RecallOptions, 'fusion' | 'neighbours' | 'itemChars' | 'charsPerItem' | 'paths'>>;
  clock: Clock;
  log: Logger;
  /** The maintenance loops' timers (tests pass one that never fires and run the loops by hand). */
  timers?: TimerScheduler;
}

/**
 * The memory part of the plugin SDK (src/sdk/plugin.ts PluginMemory), declared here because memory
 * sits below the SDK's layer; the shapes are the same.
 */
export interface PluginMemoryApi {
  recall(query: string, options?: { limit?: number }): Promise<Array<{ text: string; score: number; source?: string; at?: string }>>;
  commit(
    triples: Array<{ subject: string; relation: string; object: string; confidence?: number }>,
    options?: { source?: string },
  ): Promise<void>;
}

/** What a running MemoryService is made of. */
export interface MemoryParts {
  stores: MemoryStores;
  recall: MemoryRecall;
  analyzer: TextAnalyzer;
  embedder: Embedder;
  maintenance: MemoryMaintenance;
  /**
   * The raw conversation log under `<data>/memory/raw` (undefined without a data directory; not
   * written to when core.memory.conversation_log_days is 0, yet its files can still be read and
   * forgotten from): memory.event reads it, memory.forget {event} removes the event from it.
   */
  rawLog: ConversationLog | undefined;
  /** The scenes (recurring situations) the turns were attached to. */
  scenes: SceneStore;
}

/** Turns whose scene is remembered in memory between arrival and the end of the turn. */
const TURN_SCENES = 256;

/** An input as it arrives, before the model sees it. */
export interface RecordedInput {
  id: string;
  timestamp: number;
  source: string;
  channel: string;
  peer: string;
  input: string;
  /** InputSender.id (`cli`, `webui:admin`, `qq:12345`): names the speaker by core.home.people. */
  sender_id?: string;
  /** The room a voice was heard in (meta.area): `voice@<area>` in core.home.people. */
  area?: string;
  /**
   * The sender's trust (recorded) or, for a finished turn, the lowest of what entered it. Absent:
   * untrusted (what nobody vouched for, recall does not either).
   */
  trust?: Trust;
}

/** A finished turn as the agent hands it over. */
export interface RememberedTurn extends RecordedInput {
  response: string;
  tools: Array<{ tool: string; text: string }>;
}

export class MemoryService implements Service {
  readonly name = 'memory';
  readonly #o: MemoryServiceOptions;
  readonly #defaults: MemorySettings;
  #analyzer: TextAnalyzer | undefined;
  #embedder: Embedder | undefined;
  #stores: MemoryStores | undefined;
  #recall: MemoryRecall | undefined;
  #maintenance: MemoryMaintenance | undefined;
  #rawLog: ConversationLog | undefined;
  #tools: ToolDefinition[] = [];
  #parser: DependencyParser | undefined;
  #scenes: SceneStore | undefined;
  /** The scene each recent input matched when it arrived (by input id), for its recall and memory_commit. */
  readonly #turnScenes = new Map<string, string>();

  constructor(options: MemoryServiceOptions) {
    this.#o = options;
    this.#defaults = defaultConfig().core.memory;
  }

  async start(signal?: AbortSignal): Promise<void> {
    const { clock, log } = this.#o;
    const settings = this.#settings();
    const modelPath = this.#o.parserModelPath?.() ?? '';
    const parser = createDependencyParser({
      modelPath: modelPath === '' || this.#o.dataDir === undefined ? modelPath : resolve(this.#o.dataDir, 'models', modelPath),
      log,
    });
    const analyzer = createTextAnalyzer({ parser });
    let created: Embedder | undefined;
    let rawLog: ConversationLog | undefined;
    try {
      const embedder = await this.#createEmbedder(settings.embedder, analyzer, signal);
      created = embedder;
      const stores = openMemoryStores({
        database: this.#o.database(),
        embedder,
        indexText: (text) => analyzer.indexText(text),
        scorer: async (query, texts) => {
          const [q, ...vectors] = await embedder.embed([query, ...texts]);
          return vectors.map((v) => (q ? cosine(q, v) : 0));
        },
        clock,
        log,
        maxContextSize: this.#o.limits().max_context_size,
        channelPolicy: (channel) => this.#channelPolicy(channel),
        toolPolicy: (tool) => this.#o.toolPolicy?.(tool),
      });
      const recall = new MemoryRecall({
        window: stores.window,
        documents: stores.documents,
        graph: stores.graph,
        facts: stores.facts,
        embedder,
        tokens: (text) => analyzer.tokens(text),
        tag: (text) => analyzer.tag(text),
        ...this.#o.recall,
      });
      const maintenance = new MemoryMaintenance({
        window: stores.window,
        documents: stores.documents,
        graph: stores.graph,
        analyzer,
        proposeConsolidation: async (pairs) => {
          if (!(await this.#toSelf(consolidationTask(pairs)))) {
            log.info({ pairs: pairs.map((p) => [p.a.name, p.b.name]) }, 'similar entities could be merged');
          }
        },
        reviewRelations: async (relations) => {
          if (!(await this.#toSelf(reviewTask(relations)))) {
            log.info({ relations: relations.map((r) => r.id) }, 'low-confidence relations to review');
          }
        },
        clock,
        log,
        ...(this.#o.timers !== undefined && { timers: this.#o.timers }),
        intervals: {
          distill: settings.distill_interval_ms,
          archive: settings.archive_interval_ms,
          merge: settings.merge_interval_ms,
          review: settings.review_interval_ms,
        },
        limits: {
          mergeThreshold: settings.merge_similarity,
          mergePairs: settings.merge_pairs_per_tick,
          reviewBelow: settings.review_below,
        },
      });
      const scenes = new SceneStore(this.#o.database().db, () => ({
        similarity: this.#settings().scene_similarity,
        maxSightings: this.#settings().scene_sightings,
      }));
      rawLog = this.#rawLogFor(settings);
      if (settings.conversation_log_days > 0) await rawLog?.start();
      await maintenance.start(signal ?? new AbortController().signal);
      this.#parser = parser;
      this.#analyzer = analyzer;
      this.#embedder = embedder;
      this.#stores = stores;
      this.#recall = recall;
      this.#maintenance = maintenance;
      this.#rawLog = rawLog;
      this.#scenes = scenes;
      this.#tools = [
        ...withScenes(memoryTools({ stores, recall, analyzer, clock, embedder }), {
          turnScene: (inputId) => this.#turnScenes.get(inputId),
          attach: (eventId, key) => scenes.attach(eventId, key),
          sceneChannel: (channel) => this.#sceneChannel(channel),
        }),
        blockMergeTool({ graph: stores.graph, clock }),
        forgetRecentTool({ stores, rawLog: () => this.#rawLog }),
      ];
    } catch (error) {
      await rawLog?.stop();
      await created?.close();
      await parser.close?.();
      throw error;
    }
  }

  async stop(): Promise<void> {
    await this.#maintenance?.stop();
    await this.#parser?.close?.();
    this.#parser = undefined;
    await this.#rawLog?.stop();
    await this.#embedder?.close();
    this.#tools = [];
    this.#maintenance = undefined;
    this.#rawLog = undefined;
    this.#scenes = undefined;
    this.#turnScenes.clear();
    this.#recall = undefined;
    this.#stores = undefined;
    this.#embedder = undefined;
    this.#analyzer = undefined;
  }

  /** What plugins reach through ctx.memory (external plugins only recall; the host enforces that). */
  pluginMemory(): PluginMemoryApi {
    return {
      recall: async (query, options) => {
        const recall = this.#require().recall;
        const result = await recall.recall(query, Math.min(Math.max(options?.limit ?? 5, 1), 20));
        return result.items.map((item) => ({
          text: item.text,
          score: item.score,
          source: item.sources.join(','),
          at: new Date(item.at).toISOString(),
        }));
      },
      commit: async (triples, options) => {
        const { stores } = this.#require();
        await stores.graph.commit(
          triples.map((t) => ({ ...t })),
          { session: options?.source ?? 'plugin', timestamp: this.#o.clock.now() },
        );
      },
    };
  }

  /**
   * The running parts, for the control methods (`homeagentctl memory …`); throws
   * HA_ERR_UNAVAILABLE while the service is stopped.
   */
  parts(): MemoryParts {
    const { stores, recall } = this.#require();
    if (!this.#analyzer || !this.#embedder || !this.#maintenance || !this.#scenes)
      throw new HomeAgentError('HA_ERR_UNAVAILABLE', 'memory is not running');
    return {
      stores,
      recall,
      analyzer: this.#analyzer,
      embedder: this.#embedder,
      maintenance: this.#maintenance,
      rawLog: this.#rawLog,
      scenes: this.#scenes,
    };
  }

  #require(): { stores: MemoryStores; recall: MemoryRecall } {
    if (!this.#stores || !this.#recall) throw new HomeAgentError('HA_ERR_UNAVAILABLE', 'memory is not running');
    return { stores: this.#stores, recall: this.#recall };
  }

  /** The memory tools (none until the service runs). */
  tools(): readonly ToolDefinition[] {
    return this.#tools;
  }

  /** The agent's conversation history, read from the context window (empty while stopped). */
  conversation(options: { maxExchanges?: number; maxChars?: number } = {}): WindowConversation {
    return new WindowConversation({ ...options, events: () => this.#stores?.window.events() ?? [] });
  }

  /**
   * Stores the input in the context window before the model is called; durable when this
   * returns, so a kill -9 during the turn loses nothing that was acknowledged. An input already
   * recorded is left as it is.
   */
  async recordInput(input: RecordedInput): Promise<void> {
    const window = this.#stores?.window;
    if (!window || window.get(input.id)) return;
    this.#stores?.trust.record(input.id, input.trust ?? 'untrusted');
    const scene = this.turnScene(input);
    if (scene !== undefined) {
      this.#turnScenes.set(input.id, scene);
      for (const id of this.#turnScenes.keys()) {
        if (this.#turnScenes.size <= TURN_SCENES) break;
        this.#turnScenes.delete(id);
      }
    }
    window.append({
      id: input.id,
      timestamp: input.timestamp,
      source: input.source,
      channel: input.channel,
      peer: this.speakerOf(input),
      input: input.input,
    });
  }

  /**
   * Completes the turn's event with the answer and tool results (or stores the whole turn when
   * its input was not recorded), reads facts from what the person said into the graph unless the
   * channel is no_memory, writes the raw log, and prunes the window when it is over its size.
   * A turn already completed is left as it is.
   */
  async remember(turn: RememberedTurn): Promise<void> {
    const stores = this.#stores;
    const analyzer = this.#analyzer;
    if (!stores || !analyzer) return;
    const existing = stores.window.get(turn.id);
    if (existing && (existing.response !== '' || existing.tools_used.length > 0)) return;
    // An approval code is no memory: the agent hands its turn over with no input text.
    const finished = {
      ...(existing && turn.input === '' && { input: '' }),
      response: turn.response,
      tools_used: turn.tools.map((t) => t.tool),
      tool_results: turn.tools,
    };
    const speaker = this.speakerOf(turn);
    // What the turn read (a web page, a file) is kept with it: the event is trusted no further.
    stores.trust.record(turn.id, turn.trust ?? 'untrusted');
    if (existing) stores.window.complete(turn.id, finished);
    else
      stores.window.append({
        id: turn.id,
        timestamp: turn.timestamp,
        source: turn.source,
        channel: turn.channel,
        peer: speaker,
        input: turn.input,
        ...finished,
      });

    const noMemory = this.#channelPolicy(turn.channel)?.no_memory === true;
    if (!noMemory && this.#sceneChannel(turn.channel)) {
      // The whole turn, with its tools, joins or makes its scene (an index only: nothing above changes).
      const fingerprint = this.#fingerprint({ ...turn, tools: turn.tools.map((t) => t.tool) });
      if (fingerprint) this.#scenes?.observe(turn.id, fingerprint, turn.timestamp);
    }
    if (!noMemory) {
      this.#writeRawLog(turn);
      // "I", "my", "我", "我的" are the speaker; what nobody known said counts for less.
      const known = speaker !== UNKNOWN_SPEAKER;
      const extracted =
        turn.input === '' ? [] : withLocationFacts(analyzer.sentences(turn.input), await analyzer.extract(turn.input, { speaker }));
      const triples = prepareFacts(extracted, stores.graph).map((t) =>
        known ? t : { ...t, confidence: t.confidence * UNKNOWN_SPEAKER_CONFIDENCE },
      );
      // One commit per sentence: each keeps the date its own time words point at.
      const bySentence = new Map<string, typeof triples>();
      for (const t of triples) bySentence.set(t.sentence, [...(bySentence.get(t.sentence) ?? []), t]);
      for (const [sentence, group] of bySentence) {
        const refersTo = resolveTimeWords(sentence, turn.timestamp);
        await stores.graph.commit(group, {
          source_event_id: turn.id,
          timestamp: turn.timestamp,
          session: turn.channel,
          speaker,
          ...(refersTo !== undefined && { refers_to: refersTo }),
        });
      }
    }
    const maxSize = this.#o.limits().max_context_size;
    if (stores.window.size() > maxSize) {
      // Scored the way the window scores its events: the cleaned text with its speaker.
      const current = stores.window.get(turn.id);
      await stores.window.prune(current ? stores.window.similarityText(current) || turn.input : turn.input, { maxSize });
    }
  }

  /**
   * The prompt's memory block for an input: the most relevant remembered items with their dates,
   * or, when nothing relevant exists, the instruction to say there is no record.
   */
  async promptBlock(text: string, options: { inputId?: string; signal?: AbortSignal } = {}): Promise<string | undefined> {
    return (await this.recallBlock(text, options))?.text;
  }

  /**
   * The prompt block, how many remembered items it holds, and the lowest trust of the events they
   * came from: the agent trusts the turn no further (memory's own "no record" note is no item).
   */
  async recallBlock(
    text: string,
    options: { inputId?: string; signal?: AbortSignal } = {},
  ): Promise<{ text: string; items: number; trust: Trust } | undefined> {
    const recall = this.#recall;
    const stores = this.#stores;
    if (!recall || !stores || text.trim() === '') return undefined;
    const scene = options.inputId !== undefined ? this.sceneRanking(this.#turnScenes.get(options.inputId)) : undefined;
    const result = await recall.recall(text, this.#o.limits().prompt_documents, {
      ...(options.signal && { signal: options.signal }),
      ...(options.inputId !== undefined && { exclude: [options.inputId] }),
      ...(scene && { scene }),
    });
    if (result.abstain) {
      return {
        text: 'Nothing in memory relates to this message. If it asks about something from the past, say you have no record of it rather than guessing.',
        items: 0,
        trust: 'owner',
      };
    }
    return {
      // Attributed and dated: "Anna, 3 days ago (2024-05-06): the spare key is under the flower pot".
      text: result.items.map((item) => `- ${recallLine(item, this.#o.clock.now())}`).join('\n'),
      items: result.items.length,
      trust: stores.trust.lowest(result.items),
    };
  }

  /**
   * Answers "forget that" / "忘掉我刚才说的" without a model: forgets what the same speaker said
   * last on the channel and returns the reply, in the request's language; undefined when the input
   * is no such request (the composition's on_input stage calls this, so it works offline).
   */
  async answerForgetRequest(input: RecordedInput): Promise<string | undefined> {
    const stores = this.#stores;
    if (!stores || !isForgetRequest(input.input)) return undefined;
    await this.recordInput(input);
    const turns = recentTurns(stores, { channel: input.channel, speaker: this.speakerOf(input), before: input.id, count: 1 });
    const result = forgetTurns(
      stores,
      this.#rawLog,
      turns.map((t) => t.id),
    );
    this.#o.log.info({ input_id: input.id, forgotten: result.events, facts_removed: result.facts_removed }, 'forgot on request');
    return forgetReply(input.input, result);
  }

  /** Who said an input, named by core.home.people; never the channel or transport it came by. */
  speakerOf(input: Pick<RecordedInput, 'sender_id' | 'source' | 'channel' | 'peer' | 'area'>): string {
    return speakerName(this.#o.people?.() ?? [], {
      sender_id: input.sender_id,
      source: input.source,
      channel: input.channel,
      peer: input.peer,
      area: input.area,
    });
  }

  /**
   * The existing scene an arriving input belongs to (channel, peer, words, time of day; its tools
   * are not known yet), undefined when none does or its channel's scene policy is none. Writes nothing.
   */
  turnScene(input: SceneTurn): string | undefined {
    if (!this.#sceneChannel(input.channel)) return undefined;
    const fingerprint = this.#fingerprint(input);
    return fingerprint ? this.#scenes?.match(fingerprint) : undefined;
  }

  /** How recall is shaped by a scene under core.memory.scene_recall (undefined: not at all). */
  sceneRanking(key: string | undefined): SceneRanking | undefined {
    const settings = this.#settings();
    const scenes = this.#scenes;
    if (key === undefined || !scenes || settings.scene_recall === 'off') return undefined;
    return {
      mode: settings.scene_recall,
      boost: settings.scene_boost,
      inScene: (events) => scenes.eventsUnder(key, events),
    };
  }

  /** Scene policy: none for the internal self channel and core.memory.scene_none_channels, auto otherwise. */
  #sceneChannel(channel: string): boolean {
    return channel !== SELF_CHANNEL && !this.#settings().scene_none_channels.includes(channel);
  }

  #fingerprint(turn: SceneTurn): SceneFingerprint | undefined {
    const analyzer = this.#analyzer;
    return analyzer ? sceneFingerprint(turn, (text) => analyzer.tokens(text)) : undefined;
  }

  #settings(): MemorySettings {
    return this.#o.memory?.() ?? this.#defaults;
  }

  /** Read on every use, so `config set core.memory.no_memory_channels` applies to the next turn. */
  #channelPolicy(channel: string): MemoryPolicy | undefined {
    if (channel === SELF_CHANNEL || this.#settings().no_memory_channels.includes(channel)) return NO_MEMORY;
    return undefined;
  }

  /** True when the task went to the agent. */
  async #toSelf(text: string): Promise<boolean> {
    const send = this.#o.selfInput;
    if (!send || !this.#settings().consolidation_channel) return false;
    return await send(text);
  }

  /** The configured embedder; a model that cannot be loaded leaves the house on the built-in one, loudly. */
  async #createEmbedder(name: string, analyzer: TextAnalyzer, signal: AbortSignal | undefined): Promise<Embedder> {
    const hash = () => new HashEmbedder({ tokens: (text) => analyzer.tokens(text) });
    if (name === 'hash') return hash();
    const fix = `install it with \`homeagentctl models install <dir|url> --name ${name}\` or set core.memory.embedder to hash`;
    if (this.#o.dataDir === undefined) {
      this.#o.log.warn(
        { model: name },
        `embedding model ${name} cannot be used without a data directory; using the built-in hash embedder`,
      );
      return hash();
    }
    const dir = join(this.#o.dataDir, 'models', name);
    try {
      const embedder = await OnnxEmbedder.create(dir, signal ? { signal } : {});
      this.#o.log.info({ model: name, fingerprint: embedder.fingerprint }, 'embedding model loaded');
      return embedder;
    } catch (error) {
      if (signal?.aborted) throw error;
      this.#o.log.warn(
        { model: name, dir, error: describeError(error) },
        `embedding model ${name} could not be loaded; using the built-in hash embedder until it is fixed (${fix})`,
      );
      return hash();
    }
  }

  /**
   * The one ConversationLog of the directory, also when the log is off (then never started, so it
   * writes nothing): files written before it was turned off can still be read and forgotten from.
   */
  #rawLogFor(settings: MemorySettings): ConversationLog | undefined {
    if (this.#o.dataDir === undefined) return undefined;
    return new ConversationLog({
      directory: join(this.#o.dataDir, 'memory', 'raw'),
      clock: this.#o.clock,
      log: this.#o.log,
      retentionMs: settings.conversation_log_days * 24 * 3600 * 1000,
      maxFileBytes: settings.conversation_log_file_mb * 1024 * 1024,
    });
  }

  /** The turn as the person and the model saw it; tool results only through their cleaners. Failures only log (inside the log). */
  #writeRawLog(turn: RememberedTurn): void {
    const rawLog = this.#rawLog;
    if (!rawLog) return;
    const common = { event_id: turn.id, channel: turn.channel, peer: this.speakerOf(turn), session: turn.channel };
    if (turn.input !== '') rawLog.append({ ...common, role: 'user', content: turn.input, timestamp: turn.timestamp });
    const now = this.#o.clock.now();
    for (const result of memoryToolResults(turn.tools, { toolPolicy: this.#o.toolPolicy })) {
      rawLog.append({ ...common, role: 'tool', tool: result.tool, content: result.text, timestamp: now });
    }
    if (turn.response !== '') rawLog.append({ ...common, role: 'assistant', content: turn.response, timestamp: now });
  }
}

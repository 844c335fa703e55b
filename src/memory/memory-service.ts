/**
 * The household memory as one service: opens memory.db, builds the text analyzer (jieba loads on
 * the first text that needs it, not at start), the embedder, the three layers, recall, the tools
 * and the maintenance loops. The agent gives it every finished turn (`remember`) and asks it for
 * the prompt's memory block (`promptBlock`).
 */
import { cosine, type Embedder } from '../embed/embedder.js';
import { HashEmbedder } from '../embed/hash-embedder.js';
import type { Logger } from '../log/logger.js';
import { createTextAnalyzer } from '../nlp/text-analyzer.js';
import type { TextAnalyzer } from '../nlp/types.js';
import type { Clock } from '../shared/clock.js';
import { HomeAgentError } from '../shared/errors.js';
import type { Service } from '../shared/service.js';
import type { ToolDefinition } from '../shared/tool.js';
import type { ManagedDatabase } from '../store/database.js';
import { MemoryMaintenance } from './maintenance.js';
import { type MemoryStores, openMemoryStores } from './memory-stores.js';
import { memoryTools } from './memory-tools.js';
import { MemoryRecall } from './recall.js';

export interface MemoryServiceOptions {
  database: () => ManagedDatabase;
  /** core.agent.max_context_size and core.agent.prompt_documents, read when used. */
  limits: () => { max_context_size: number; prompt_documents: number };
  clock: Clock;
  log: Logger;
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
}

/** A finished turn as the agent hands it over. */
export interface RememberedTurn {
  id: string;
  timestamp: number;
  source: string;
  channel: string;
  peer: string;
  input: string;
  response: string;
  tools: Array<{ tool: string; text: string }>;
}

export class MemoryService implements Service {
  readonly name = 'memory';
  readonly #o: MemoryServiceOptions;
  #analyzer: TextAnalyzer | undefined;
  #embedder: Embedder | undefined;
  #stores: MemoryStores | undefined;
  #recall: MemoryRecall | undefined;
  #maintenance: MemoryMaintenance | undefined;
  #tools: ToolDefinition[] = [];

  constructor(options: MemoryServiceOptions) {
    this.#o = options;
  }

  async start(signal?: AbortSignal): Promise<void> {
    const { clock, log } = this.#o;
    const analyzer = createTextAnalyzer();
    const embedder = new HashEmbedder({ tokens: (text) => analyzer.tokens(text) });
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
    });
    const recall = new MemoryRecall({
      window: stores.window,
      documents: stores.documents,
      graph: stores.graph,
      embedder,
      tokens: (text) => analyzer.tokens(text),
    });
    const maintenance = new MemoryMaintenance({
      window: stores.window,
      documents: stores.documents,
      graph: stores.graph,
      analyzer,
      // Until the self-input channel exists, similar entities and doubtful relations are only logged.
      proposeConsolidation: (pairs) => log.info({ pairs: pairs.length }, 'similar entities could be merged'),
      reviewRelations: (relations) => log.info({ relations: relations.length }, 'low-confidence relations to review'),
      clock,
      log,
    });
    await maintenance.start(signal ?? new AbortController().signal);
    this.#analyzer = analyzer;
    this.#embedder = embedder;
    this.#stores = stores;
    this.#recall = recall;
    this.#maintenance = maintenance;
    this.#tools = memoryTools({ stores, recall, analyzer, clock, embedder });
  }

  async stop(): Promise<void> {
    await this.#maintenance?.stop();
    await this.#embedder?.close();
    this.#tools = [];
    this.#maintenance = undefined;
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
    if (!this.#analyzer || !this.#embedder || !this.#maintenance) throw new HomeAgentError('HA_ERR_UNAVAILABLE', 'memory is not running');
    return { stores, recall, analyzer: this.#analyzer, embedder: this.#embedder, maintenance: this.#maintenance };
  }

  #require(): { stores: MemoryStores; recall: MemoryRecall } {
    if (!this.#stores || !this.#recall) throw new HomeAgentError('HA_ERR_UNAVAILABLE', 'memory is not running');
    return { stores: this.#stores, recall: this.#recall };
  }

  /** The memory tools (none until the service runs). */
  tools(): readonly ToolDefinition[] {
    return this.#tools;
  }

  /**
   * Stores a finished turn in the context window (durably, before it returns), reads facts from
   * what the person said into the graph, and prunes the window when it is over its size.
   */
  async remember(turn: RememberedTurn): Promise<void> {
    const stores = this.#stores;
    const analyzer = this.#analyzer;
    if (!stores || !analyzer) return;
    if (stores.window.get(turn.id)) return;
    stores.window.append({
      id: turn.id,
      timestamp: turn.timestamp,
      source: turn.source,
      channel: turn.channel,
      peer: turn.peer,
      input: turn.input,
      response: turn.response,
      tools_used: turn.tools.map((t) => t.tool),
      tool_results: turn.tools,
    });
    const triples = await analyzer.extract(turn.input, { speaker: turn.peer });
    if (triples.length > 0) {
      await stores.graph.commit(triples, { source_event_id: turn.id, timestamp: turn.timestamp, session: turn.channel });
    }
    if (stores.window.size() > this.#o.limits().max_context_size) await stores.window.prune(turn.input);
  }

  /**
   * The prompt's memory block for an input: the most relevant remembered items with their dates,
   * or, when nothing relevant exists, the instruction to say there is no record.
   */
  async promptBlock(text: string, signal?: AbortSignal): Promise<string | undefined> {
    const recall = this.#recall;
    if (!recall || text.trim() === '') return undefined;
    const result = await recall.recall(text, this.#o.limits().prompt_documents, signal);
    if (result.abstain) {
      return 'Nothing in memory relates to this message. If it asks about something from the past, say you have no record of it rather than guessing.';
    }
    return result.items
      .map((item) => `- (${new Date(item.at).toISOString().slice(0, 10)}) ${item.text.replace(/\s*\n\s*/g, ' / ')}`)
      .join('\n');
  }
}

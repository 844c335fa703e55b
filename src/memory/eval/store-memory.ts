/**
 * The daemon's memory as the evaluation measures it: a fresh data directory with its own
 * memory.db, the real context window, document store, graph, extraction and recall, fed the way
 * the agent feeds them (each turn an event with its speaker as peer, extraction into the graph,
 * a prune whenever the window is over its size).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cosine } from '../../embed/embedder.js';
import { HashEmbedder } from '../../embed/hash-embedder.js';
import type { LogManager } from '../../log/logger.js';
import { createTextAnalyzer } from '../../nlp/text-analyzer.js';
import type { Clock } from '../../shared/clock.js';
import { Store } from '../../store/store.js';
import { openMemoryStores } from '../memory-stores.js';
import { type FusionMethod, MemoryRecall, type RecallPath } from '../recall.js';
import type { EvalMemory, EvalMemoryFactory, EvalScope } from './eval-memory.js';

export interface StoreMemoryOptions {
  logs: LogManager;
  fusion?: FusionMethod;
  maxContextSize?: number;
  /** Neighbouring documents added to a document hit. */
  neighbours?: number;
  itemChars?: number;
  paths?: readonly RecallPath[];
}

/** A factory for {@link runMemoryEval}: each scope gets a fresh memory in a temporary directory. */
export function storeMemoryFactory(options: StoreMemoryOptions): EvalMemoryFactory {
  return (scope) => createStoreMemory(scope, options);
}

async function createStoreMemory(scope: EvalScope, options: StoreMemoryOptions): Promise<EvalMemory> {
  const dir = mkdtempSync(join(tmpdir(), 'ha-memory-eval-'));
  // Time stands just after the conversation, as if the household asked its questions then.
  let now = scope.last_timestamp + 60_000;
  const clock: Clock = { now: () => now, monotonic: () => performance.now() };
  const log = options.logs.child('memory-eval');
  const store = new Store({
    databases: [{ name: 'memory', file: join(dir, 'memory.db'), synchronous: 'NORMAL' }],
    busyTimeoutMs: 5000,
    startupCheck: 'off',
    log,
    clock,
  });
  await store.start();
  const analyzer = createTextAnalyzer();
  const embedder = new HashEmbedder({ tokens: (text) => analyzer.tokens(text) });
  const stores = openMemoryStores({
    database: store.database('memory'),
    embedder,
    indexText: (text) => analyzer.indexText(text),
    scorer: async (query, texts) => {
      const [q, ...vectors] = await embedder.embed([query, ...texts]);
      return vectors.map((v) => (q ? cosine(q, v) : 0));
    },
    clock,
    log,
    ...(options.maxContextSize === undefined ? {} : { maxContextSize: options.maxContextSize }),
  });
  const recall = new MemoryRecall({
    window: stores.window,
    documents: stores.documents,
    graph: stores.graph,
    embedder,
    tokens: (text) => analyzer.tokens(text),
    ...(options.fusion === undefined ? {} : { fusion: options.fusion }),
    ...(options.neighbours === undefined ? {} : { neighbours: options.neighbours }),
    ...(options.itemChars === undefined ? {} : { itemChars: options.itemChars }),
    ...(options.paths === undefined ? {} : { paths: options.paths }),
  });

  return {
    async ingest(event) {
      now = Math.max(now, event.timestamp);
      const input = `${event.speaker}: ${event.text}`;
      stores.window.append({
        id: event.source_id,
        timestamp: event.timestamp,
        source: 'conversation',
        channel: event.conversation_id,
        peer: event.speaker,
        input,
      });
      const triples = await analyzer.extract(event.text, { speaker: event.speaker });
      if (triples.length > 0) {
        await stores.graph.commit(triples, {
          source_event_id: event.source_id,
          timestamp: event.timestamp,
          session: `${event.conversation_id}#${event.session}`,
        });
      }
      if (stores.window.size() > (options.maxContextSize ?? 30)) await stores.window.prune(input);
    },
    async settle() {
      now = scope.last_timestamp + 60_000;
      await stores.documents.refreshStaleVectors(100_000);
    },
    async recall(query, k) {
      const result = await recall.recall(query, k);
      return result.items.map((item) => ({ text: item.text, sources: item.sources, score: item.score }));
    },
    async close() {
      await embedder.close();
      await store.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

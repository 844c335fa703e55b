/**
 * The daemon's memory as the evaluation measures it: a MemoryService on a fresh memory.db in a
 * temporary directory, fed through the calls the agent makes (recordInput when a turn arrives,
 * remember when it is done: window, extraction into the graph, pruning into documents) and asked
 * through the recall that builds prompts. Time follows the conversation, so what is archived and
 * distilled gets the times it would have had; settling runs every maintenance loop to completion.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LogManager } from '../../log/logger.js';
import { MemoryService } from '../../memory/memory-service.js';
import type { FusionMethod, RecallPath } from '../../memory/recall.js';
import type { Clock } from '../../shared/clock.js';
import { Store } from '../../store/store.js';
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

/** The maintenance loops run only when settle() asks: their timers never fire. */
const noTimers = { set: () => undefined, clear: () => {} };

async function createStoreMemory(scope: EvalScope, options: StoreMemoryOptions): Promise<EvalMemory> {
  const dir = mkdtempSync(join(tmpdir(), 'ha-memory-eval-'));
  let now = 0;
  const clock: Clock = { now: () => now, monotonic: () => performance.now() };
  const log = options.logs.child('memory-eval');
  const store = new Store({
    databases: [{ name: 'memory', file: join(dir, 'memory.db'), synchronous: 'NORMAL' }],
    busyTimeoutMs: 5000,
    startupCheck: 'off',
    log,
    clock,
  });
  const memory = new MemoryService({
    database: () => store.database('memory'),
    limits: () => ({ max_context_size: options.maxContextSize ?? 30, prompt_documents: 3 }),
    recall: {
      ...(options.fusion !== undefined && { fusion: options.fusion }),
      ...(options.neighbours !== undefined && { neighbours: options.neighbours }),
      ...(options.itemChars !== undefined && { itemChars: options.itemChars }),
      ...(options.paths !== undefined && { paths: options.paths }),
    },
    timers: noTimers,
    clock,
    log,
  });
  try {
    await store.start();
    await memory.start();
  } catch (error) {
    await store.stop();
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }

  return {
    async ingest(event) {
      now = Math.max(now, event.timestamp);
      const input = {
        id: event.source_id,
        timestamp: event.timestamp,
        source: 'conversation',
        channel: event.conversation_id,
        peer: event.speaker,
        input: event.text,
      };
      await memory.recordInput(input);
      // A conversation turn between two people gets no answer from the agent.
      await memory.remember({ ...input, response: '', tools: [] });
    },
    async settle() {
      // The household asks its questions just after the conversation.
      now = scope.last_timestamp + 60_000;
      const report = await memory.parts().maintenance.runAll();
      const failed = Object.entries(report).filter(([, outcome]) => !outcome.ok);
      if (failed.length > 0) throw new Error(`memory maintenance failed: ${failed.map(([loop]) => loop).join(', ')}`);
    },
    async recall(query, k) {
      const result = await memory.parts().recall.recall(query, k);
      return result.items.map((item) => ({ text: item.text, sources: item.sources, score: item.score }));
    },
    async close() {
      await memory.stop();
      await store.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

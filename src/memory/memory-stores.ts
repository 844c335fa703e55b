/**
 * One call that opens the memory layer on `<data>/memory.db`: runs the `memory` migrations and
 * builds the document store, the graph, the social layer and the context window over the same
 * connection. The daemon opens the database with synchronous=FULL (acknowledged events survive
 * power loss).
 */
import type { Embedder } from '../embed/embedder.js';
import type { Logger } from '../log/logger.js';
import type { Clock } from '../shared/clock.js';
import type { ManagedDatabase } from '../store/database.js';
import type { SqlDatabase } from '../store/types.js';
import { ContextWindow, type RelevanceScorer } from './context-window.js';
import { DocumentStore } from './document-store.js';
import { EventTrust } from './event-trust.js';
import { FactIndex } from './fact-index.js';
import { GraphStore } from './graph-store.js';
import { openMemoryDatabase } from './memory-schema.js';
import type { PolicyLookup } from './memory-text.js';
import { PersonDirectory } from './person-directory.js';

export interface MemoryStoresOptions {
  database: ManagedDatabase;
  embedder: Embedder;
  /** The analyser's `indexText` (src/nlp TextAnalyzer). */
  indexText: (text: string) => string;
  /** Relevance of window events to the current input, for pruning. */
  scorer: RelevanceScorer;
  clock: Clock;
  log: Logger;
  /** core.agent.max_context_size; default 30. */
  maxContextSize?: number;
  channelPolicy?: PolicyLookup;
  toolPolicy?: PolicyLookup;
  singleValuedRelations?: Iterable<string>;
}

export interface MemoryStores {
  db: SqlDatabase;
  window: ContextWindow;
  documents: DocumentStore;
  graph: GraphStore;
  people: PersonDirectory;
  trust: EventTrust;
  /** The graph's sentences by word, with who said them and whether they are still so. */
  facts: FactIndex;
}

export function openMemoryStores(options: MemoryStoresOptions): MemoryStores {
  const db = openMemoryDatabase(options.database);
  const { embedder, clock, log } = options;
  const documents = new DocumentStore({ database: db, embedder, indexText: options.indexText, clock, log });
  const graph = new GraphStore({
    database: db,
    embedder,
    clock,
    log,
    ...(options.singleValuedRelations !== undefined && { singleValuedRelations: options.singleValuedRelations }),
  });
  const window = new ContextWindow({
    database: db,
    documents,
    scorer: options.scorer,
    clock,
    log,
    ...(options.maxContextSize !== undefined && { maxSize: options.maxContextSize }),
    ...(options.channelPolicy !== undefined && { channelPolicy: options.channelPolicy }),
    ...(options.toolPolicy !== undefined && { toolPolicy: options.toolPolicy }),
  });
  return {
    db,
    window,
    documents,
    graph,
    people: new PersonDirectory(graph),
    trust: new EventTrust(db),
    facts: new FactIndex({ database: db, indexText: options.indexText }),
  };
}

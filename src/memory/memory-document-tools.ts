/**
 * doc_query and doc_commit. doc_query consumes what it finds: the documents leave the store and
 * their events go back into the context window at their original times (source cold_storage), so
 * what the model looked up is in the conversation from then on and is archived again by pruning.
 */
import { type ToolContext, type ToolDefinition, ToolError } from '../shared/tool.js';
import { cut, integerArg, isoDate, optionalText, requiredText, stringList, type ToolArgs } from '../shared/tool-args.js';
import type { DocumentStore } from './document-store.js';
import { MEMORY_OWNER, type MemoryToolDeps, NO_RECORD_SENTENCE, toolProvenance } from './memory-graph-tools.js';
import { fuseWeighted, type RecallPath } from './recall.js';
import { extractSymbols } from './symbols.js';

/** Candidates taken from each search path before fusion. */
const PER_PATH = 20;
/** A vector hit alone must be at least this close: doc_query removes what it returns, so loose matches must not qualify. */
export const DOC_QUERY_MIN_COSINE = 0.5;
const CONTENT_CHARS = 1200;

export interface DocumentToolDeps extends MemoryToolDeps {
  /** The embedder of the document vectors; without it doc_query searches by words and exact symbols only. */
  embedder?: { embed(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]> };
}

/** The ids of the documents best matching `query`: BM25, exact symbols and (given an embedder) close vectors, fused. */
async function searchDocuments(
  documents: DocumentStore,
  deps: DocumentToolDeps,
  query: string,
  topK: number,
  signal?: AbortSignal,
): Promise<number[]> {
  const ranked = new Map<RecallPath, Array<{ key: string; score: number }>>();
  const key = (id: number) => String(id);
  ranked.set(
    'lexical',
    documents.searchLexical(query, PER_PATH).map((h) => ({ key: key(h.id), score: h.score })),
  );
  const symbols = extractSymbols(query);
  if (symbols.length > 0) {
    ranked.set(
      'symbol',
      documents.searchSymbols(symbols, PER_PATH).map((h) => ({ key: key(h.id), score: h.score })),
    );
  }
  if (deps.embedder) {
    const [vector] = await deps.embedder.embed([query], signal);
    if (vector) {
      ranked.set(
        'vector',
        documents.searchVector(vector, PER_PATH, DOC_QUERY_MIN_COSINE).map((h) => ({ key: key(h.id), score: h.score })),
      );
    }
  }
  return fuseWeighted(ranked)
    .slice(0, topK)
    .map(([id]) => Number(id));
}

export function documentTools(deps: DocumentToolDeps): ToolDefinition[] {
  const { documents, window } = deps.stores;
  return [
    {
      name: 'doc_query',
      owner: MEMORY_OWNER,
      tier: 'act',
      no_memory: true,
      description:
        'Search archived conversation and stored documents. Found documents are taken out of the archive and put back into the ' +
        'conversation at their original time. Returns no_record when nothing matches.',
      parameters: {
        type: 'object',
        properties: {
          query: { type: 'string', minLength: 1, maxLength: 500, description: 'Words, names or numbers to look for.' },
          top_k: { type: 'integer', minimum: 1, maximum: 10, default: 3, description: 'Most documents returned (default 3).' },
        },
        required: ['query'],
        additionalProperties: false,
      },
      execute: async (args: ToolArgs, context?: ToolContext) => {
        const query = requiredText(args, 'query', 'pass words to look for, e.g. "plumber Monday"', 500);
        const topK = integerArg(args, 'top_k', { min: 1, max: 10, fallback: 3 });
        const ids = await searchDocuments(documents, deps, query, topK, context?.signal);
        const restored = ids.length > 0 ? window.restoreDocuments(ids) : [];
        if (restored.length === 0) return { documents: [], no_record: true, say: NO_RECORD_SENTENCE };
        return {
          documents: restored.map(({ document, event }) => ({
            ...(document.summary !== '' && { summary: cut(document.summary, 300) }),
            content: cut(document.content, CONTENT_CHARS),
            ...(document.tags.length > 0 && { tags: document.tags.slice(0, 10) }),
            when: isoDate(document.created_at),
            sources: document.source_event_ids.slice(0, 10),
            restored_event: event.id,
          })),
        };
      },
    },
    {
      name: 'doc_commit',
      owner: MEMORY_OWNER,
      tier: 'act',
      description: 'Store a document (notes, a list, a recipe, instructions) in long-term memory, searchable later with doc_query.',
      parameters: {
        type: 'object',
        properties: {
          content: { type: 'string', minLength: 1, maxLength: 20000 },
          summary: { type: 'string', maxLength: 500, description: 'One line saying what the document is.' },
          tags: { type: 'array', maxItems: 20, items: { type: 'string', minLength: 1, maxLength: 50 } },
        },
        required: ['content'],
        additionalProperties: false,
      },
      execute: async (args: ToolArgs, context?: ToolContext) => {
        const content = requiredText(args, 'content', 'pass the text to store', 20000);
        const summary = optionalText(args, 'summary', 'one line saying what the document is', 500);
        const tags = stringList(args, 'tags', { maxItems: 20, maxLength: 50 });
        const provenance = toolProvenance(deps, context);
        try {
          const stored = await documents.insert(
            {
              content,
              source: 'doc_commit',
              created_at: deps.clock.now(),
              ...(summary !== undefined && { summary }),
              ...(tags.length > 0 && { tags }),
              ...(provenance.source_event_id !== undefined && { source_event_ids: [provenance.source_event_id] }),
            },
            context?.signal,
          );
          return { stored: true, id: stored.id, when: isoDate(stored.created_at) };
        } catch (error) {
          if (error instanceof ToolError) throw error;
          throw new ToolError({ reason: 'failed', detail: 'the document could not be stored', hint: 'try again later' });
        }
      },
    },
  ];
}

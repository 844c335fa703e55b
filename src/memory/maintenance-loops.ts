/**
 * The bodies of the four memory maintenance loops (archive, distill, merge, review). Each is one
 * pass over what the database holds now and keeps no state of its own, so a restart simply runs
 * the next pass. {@link MemoryMaintenance} schedules them; here only the rules live.
 */
import type { Logger } from '../log/logger.js';
import type { TextAnalyzer } from '../nlp/types.js';
import { describeError } from '../shared/errors.js';
import type { ContextWindow } from './context-window.js';
import type { DistillMark, DocumentStore, StoredDocument } from './document-store.js';
import type { GraphStore, SimilarEntityPair } from './graph-store.js';
import type { GraphRelation } from './graph-types.js';

export type MaintenanceLoopName = 'archive' | 'distill' | 'merge' | 'review';

/** How much one pass may do. A drained pass (`runAll`) ignores the per-tick caps. */
export interface MaintenanceLimits {
  /** Vectors re-embedded per embedder call. Default 64. */
  vectorBatch: number;
  /** Re-embedding calls per timer tick (per store). Default 16. */
  vectorBatchesPerTick: number;
  /** Cold documents read per query. Default 50. */
  distillBatch: number;
  /** Cold documents tried per timer tick. Default 200. */
  distillPerTick: number;
  /** Similar pairs proposed per tick (above `mergeThreshold`). Default 5. */
  mergePairs: number;
  /** Default 0.75 (strictly above). */
  mergeThreshold: number;
  /** Low-confidence relations reviewed per tick. Default 5. */
  reviewBatch: number;
  /** Relations below this confidence are reviewed. Default 0.6. */
  reviewBelow: number;
}

export const DEFAULT_MAINTENANCE_LIMITS: MaintenanceLimits = {
  vectorBatch: 64,
  vectorBatchesPerTick: 16,
  distillBatch: 50,
  distillPerTick: 200,
  mergePairs: 5,
  mergeThreshold: 0.75,
  reviewBatch: 5,
  reviewBelow: 0.6,
};

/** The session recorded on relations written by the distill loop. */
export const DISTILL_SESSION = 'maintenance:distill';

export interface MaintenanceContext {
  window: ContextWindow;
  documents: DocumentStore;
  graph: GraphStore;
  analyzer: Pick<TextAnalyzer, 'extract'>;
  /** Similar entity pairs for the LLM to decide on (a task on the internal self-input channel). */
  proposeConsolidation: (pairs: SimilarEntityPair[]) => void | Promise<void>;
  /** Low-confidence relations for the LLM to check (fix with memory_edit). */
  reviewRelations: (relations: GraphRelation[]) => void | Promise<void>;
  limits: MaintenanceLimits;
  log: Logger;
}

export interface PassOptions {
  /** Keep going until nothing is left to do instead of stopping at the per-tick caps. */
  drain: boolean;
  signal: AbortSignal;
}

export interface ArchiveResult {
  /** Events archived or dropped by a forced prune (0 when the window was within twice its size). */
  pruned: number;
  document_vectors: number;
  entity_vectors: number;
}

export interface DistillResult {
  /** Cold documents tried. */
  documents: number;
  /** Documents whose facts the graph now holds and links back to them (marked distilled). */
  linked: number;
  /** Documents that yielded no fact (marked distilled too, so they are not re-read every tick). */
  empty: number;
  /** Documents whose facts were written but not linked back (left undistilled, retried next pass). */
  unlinked: number;
  /** Documents whose extraction or commit failed (left undistilled, retried next pass). */
  failed: number;
  relations: number;
}

export interface MergeLoopResult {
  exact_merges: number;
  proposed: SimilarEntityPair[];
  expired_marks: number;
}

export interface ReviewResult {
  reviewed: number;
  orphan_sentences: number;
}

/**
 * Forces a prune when the window holds more than twice its size (nothing else prunes it without
 * a new input), then re-embeds vectors that are missing or from another embedder.
 */
export async function archivePass(ctx: MaintenanceContext, options: PassOptions): Promise<ArchiveResult> {
  let pruned = 0;
  if (ctx.window.overflowing()) {
    // No input is being answered: relevance is judged against the latest event instead.
    const latest = ctx.window.events().at(-1);
    const query = latest ? ctx.window.similarityText(latest) : '';
    const result = await ctx.window.prune(query, { signal: options.signal });
    pruned = result.archived.length + result.dropped.length;
    ctx.log.info({ before: result.before, after: result.after, archived: result.archived.length }, 'context window force-pruned');
  }
  const document_vectors = await refreshVectors(ctx.documents, ctx.limits, options);
  const entity_vectors = await refreshVectors(ctx.graph, ctx.limits, options);
  return { pruned, document_vectors, entity_vectors };
}

async function refreshVectors(
  store: { refreshStaleVectors(limit: number, signal?: AbortSignal): Promise<number> },
  limits: MaintenanceLimits,
  options: PassOptions,
): Promise<number> {
  let total = 0;
  for (let batch = 0; options.drain || batch < limits.vectorBatchesPerTick; batch++) {
    options.signal.throwIfAborted();
    const updated = await store.refreshStaleVectors(limits.vectorBatch, options.signal);
    total += updated;
    // Vectors the embedder cannot produce stay stale at the head of the list: stop when a batch
    // makes no progress rather than asking for the same ones forever.
    if (updated === 0) break;
  }
  return total;
}

/**
 * Reads triples out of cold documents into the graph (provenance: the document id, its event,
 * its original time) and marks each document distilled. Documents are never removed here: they
 * stay as the evidence of their facts and keep being found by recall (removing them cost most of
 * the measured recall, docs/decisions/0003-memory-distillation.md).
 */
export async function distillPass(ctx: MaintenanceContext, options: PassOptions): Promise<DistillResult> {
  const result: DistillResult = { documents: 0, linked: 0, empty: 0, unlinked: 0, failed: 0, relations: 0 };
  // Unlinked and failed documents stay cold and come back first on every query: skip the ones
  // already tried in this pass and widen the query until no untried cold document is left.
  const tried = new Set<number>();
  for (;;) {
    const room = options.drain ? ctx.limits.distillBatch : Math.min(ctx.limits.distillBatch, ctx.limits.distillPerTick - tried.size);
    if (room <= 0) break;
    const fresh = ctx.documents.coldDocuments({ limit: tried.size + room }).filter((d) => !tried.has(d.id));
    if (fresh.length === 0) break;
    for (const doc of fresh) {
      options.signal.throwIfAborted();
      tried.add(doc.id);
      result.documents++;
      try {
        const outcome = await distillDocument(ctx, doc, options.signal);
        result.relations += outcome.relations;
        if (outcome.mark === 'linked') result.linked++;
        else if (outcome.mark === 'nothing_written') result.empty++;
        else if (outcome.mark === 'not_linked') result.unlinked++;
      } catch (error) {
        if (options.signal.aborted) throw error;
        result.failed++;
        ctx.log.warn({ loop: 'distill', document_id: doc.id, error: describeError(error) }, 'distilling a document failed; it is kept');
      }
    }
  }
  return result;
}

async function distillDocument(
  ctx: MaintenanceContext,
  doc: StoredDocument,
  signal: AbortSignal,
): Promise<{ mark: DistillMark; relations: number }> {
  const text = doc.content.trim() !== '' ? doc.content : doc.summary;
  const speaker = doc.origin?.peer ?? '';
  const triples = text.trim() === '' ? [] : await ctx.analyzer.extract(text, speaker !== '' ? { speaker } : {});
  if (triples.length === 0) return { mark: ctx.documents.markDistilled(doc.id, { sentence_ids: [] }), relations: 0 };
  const eventId = doc.origin?.event_id ?? (doc.source_event_ids.length === 1 ? doc.source_event_ids[0] : undefined);
  const commit = await ctx.graph.commit(
    triples,
    {
      document_id: doc.id,
      session: DISTILL_SESSION,
      timestamp: doc.created_at,
      ...(eventId !== undefined && { source_event_id: eventId }),
    },
    { signal },
  );
  const mark = ctx.documents.markDistilled(doc.id, { sentence_ids: commit.sentence_ids });
  if (mark === 'not_linked')
    ctx.log.warn({ document_id: doc.id }, 'facts read from a document do not link back to it; it stays undistilled');
  return { mark, relations: commit.relation_ids.length };
}
/**
 * Merges what needs no judgement (exact normalised duplicates), hands similar pairs to the LLM
 * (no-merge marks are honoured by the graph's query) and drops expired no-merge marks.
 */
export async function mergePass(ctx: MaintenanceContext, options: PassOptions): Promise<MergeLoopResult> {
  const exact_merges = ctx.graph.mergeExactDuplicates();
  const proposed = await ctx.graph.similarEntityPairs({
    threshold: ctx.limits.mergeThreshold,
    limit: ctx.limits.mergePairs,
    signal: options.signal,
  });
  if (proposed.length > 0) await ctx.proposeConsolidation(proposed);
  const expired_marks = ctx.graph.expireNoMergeMarks();
  return { exact_merges, proposed, expired_marks };
}

/**
 * Shows the least confident unreviewed relations to the LLM, marking them reviewed only once the
 * callback accepted them (a failed hand-over is retried next tick), then deletes sentences no
 * relation refers to.
 */
export async function reviewPass(ctx: MaintenanceContext, _options: PassOptions): Promise<ReviewResult> {
  const relations = ctx.graph.lowConfidenceRelations({ below: ctx.limits.reviewBelow, limit: ctx.limits.reviewBatch });
  if (relations.length > 0) {
    await ctx.reviewRelations(relations);
    ctx.graph.markReviewed(relations.map((r) => r.id));
  }
  return { reviewed: relations.length, orphan_sentences: ctx.graph.cleanupOrphanSentences() };
}

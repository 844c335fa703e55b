/**
 * Forgetting on request: "forget that", "忘掉我刚才说的" said by voice or chat removes what the
 * speaker said last on that channel — the event from the window, the document archived from it,
 * its raw-log records, and the facts read from it (a fact other turns also said stays, with only
 * their evidence). The model reaches it as the `memory_forget_recent` tool; a local request
 * ({@link isForgetRequest}) reaches it without any model, so it works offline too.
 */
import { type ToolContext, type ToolDefinition, ToolError } from '../shared/tool.js';
import type { ContextEvent } from './context-window.js';
import type { ConversationLog } from './conversation-log.js';
import type { MemoryStores } from './memory-stores.js';

/** Turns one request may forget at most. */
export const MAX_FORGET_TURNS = 5;

export interface ForgottenTurns {
  events: string[];
  documents_removed: number;
  facts_removed: number;
  raw_log_records_removed: number;
}

const FORGET_EN =
  /^\s*(?:please\s+)?(?:forget|delete|erase|remove|don'?t remember)\s+(?:that|this|it|what i (?:just )?said|my last message|the last thing i said)\b[\s.!]*(?:please)?[\s.!]*$/i;
const FORGET_ZH =
  /^\s*(?:请|麻烦)?(?:你)?(?:忘掉|忘记|删掉|删除|别记)(?:我)?(?:刚才|刚刚)?(?:说的|讲的)?(?:那句话?|这句话?|那个|这个|那条|吧|了)*[。！!.\s]*$/;

/** True when the whole input asks memory to forget what was just said. */
export function isForgetRequest(text: string): boolean {
  return FORGET_EN.test(text) || FORGET_ZH.test(text);
}

/** The reply to a forget request, in the request's language. */
export function forgetReply(text: string, result: ForgottenTurns): string {
  const zh = /[\u4e00-\u9fff]/.test(text);
  if (result.events.length === 0)
    return zh ? '没有找到你刚才说的、可以忘掉的内容。' : 'There was nothing you said just now for me to forget.';
  return zh ? '好的，我已经忘掉你刚才说的话。' : "Done: I've forgotten what you just said.";
}

/**
 * The speaker's `count` latest turns on `channel` other than `before` (the request itself) and
 * other forget requests, newest first, still in the window.
 */
export function recentTurns(
  stores: MemoryStores,
  options: { channel: string; speaker?: string; before: string; count: number },
): ContextEvent[] {
  // Everything but the request itself: a clock set back must not hide the turn just said.
  const earlier = stores.window
    .events()
    .filter(
      (e) =>
        e.id !== options.before &&
        e.channel === options.channel &&
        e.input.trim() !== '' &&
        !isForgetRequest(e.input) &&
        (options.speaker === undefined || e.peer === options.speaker),
    );
  return earlier.slice(-options.count).reverse();
}

/** Removes each event, its archive, its raw-log records and the facts read from it, in one transaction. */
export function forgetTurns(stores: MemoryStores, rawLog: ConversationLog | undefined, eventIds: readonly string[]): ForgottenTurns {
  let records = 0;
  for (const id of eventIds) records += rawLog?.forgetEvent(id).records_removed ?? 0;
  const db = stores.db;
  const run = db.transaction(() => {
    let documents = 0;
    let facts = 0;
    for (const id of eventIds) {
      db.prepare('DELETE FROM context_events WHERE id = ?').run(id);
      const archived = (
        db.prepare("SELECT id FROM documents WHERE json_extract(origin, '$.event_id') = ? ORDER BY id").all(id) as Array<{ id: number }>
      ).map((r) => r.id);
      documents += stores.documents.take(archived).length;
      // Facts whose every piece of evidence came from this event go; others lose this evidence only.
      const sentences = (db.prepare('SELECT id FROM graph_sentences WHERE source_event_id = ?').all(id) as Array<{ id: number }>).map(
        (r) => r.id,
      );
      for (const sentence of sentences) {
        const relations = (
          db.prepare('SELECT relation_id AS id FROM graph_relation_evidence WHERE sentence_id = ?').all(sentence) as Array<{ id: number }>
        ).map((r) => r.id);
        for (const relation of relations) {
          const others = db
            .prepare('SELECT count(*) AS n FROM graph_relation_evidence WHERE relation_id = ? AND sentence_id <> ?')
            .get(relation, sentence) as { n: number };
          if (others.n === 0) {
            db.prepare('DELETE FROM graph_relations WHERE id = ?').run(relation);
            facts++;
          }
        }
        db.prepare('DELETE FROM graph_relation_evidence WHERE sentence_id = ?').run(sentence);
        db.prepare('UPDATE graph_relations SET sentence_id = NULL WHERE sentence_id = ?').run(sentence);
        db.prepare('DELETE FROM graph_sentences WHERE id = ?').run(sentence);
        db.prepare('DELETE FROM graph_sentences_trigram WHERE rowid = ?').run(sentence);
        db.prepare('DELETE FROM graph_sentences_fts WHERE rowid = ?').run(sentence);
      }
    }
    return { documents, facts };
  });
  try {
    const { documents, facts } = run();
    return { events: [...eventIds], documents_removed: documents, facts_removed: facts, raw_log_records_removed: records };
  } catch (error) {
    stores.documents.invalidateVectorCache();
    throw error;
  }
}

/** The model's way to forget on request (`memory_forget_recent`). */
export function forgetRecentTool(deps: { stores: MemoryStores; rawLog: () => ConversationLog | undefined }): ToolDefinition {
  return {
    name: 'memory_forget_recent',
    owner: 'core',
    tier: 'act',
    no_memory: true,
    description:
      'Forgets what the person said last in this conversation (the last 1-5 of their turns before this one), facts read from it included. Use it when they ask you to forget something they just said ("forget that", "忘掉我刚才说的").',
    parameters: {
      type: 'object',
      properties: {
        turns: { type: 'integer', minimum: 1, maximum: MAX_FORGET_TURNS, description: 'How many of their latest turns (default 1).' },
      },
      additionalProperties: false,
    },
    execute: (args: { turns?: number }, context: ToolContext) => {
      const current = context.input_id ? deps.stores.window.get(context.input_id) : undefined;
      if (!current) throw new ToolError({ reason: 'not_found', detail: 'memory_forget_recent works within a conversation turn only' });
      const turns = recentTurns(deps.stores, {
        channel: current.channel,
        speaker: current.peer,
        before: current.id,
        count: Math.min(Math.max(args.turns ?? 1, 1), MAX_FORGET_TURNS),
      });
      const result = forgetTurns(
        deps.stores,
        deps.rawLog(),
        turns.map((t) => t.id),
      );
      return { forgotten: turns.map((t) => t.input.slice(0, 200)), ...result };
    },
  };
}

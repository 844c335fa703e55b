/**
 * The texts of the tasks memory maintenance gives the agent on the internal self channel: which
 * entities or facts, why they are in doubt, and which tool settles each case. Short and in
 * English whatever the household's language, since they are read by the model, not by people.
 */

import { cut } from '../shared/tool-args.js';
import type { SimilarEntityPair } from './graph-store.js';
import type { GraphRelation } from './graph-types.js';

const HEADER = 'Memory upkeep (internal task, nobody is waiting for an answer).';
const SENTENCE_CHARS = 160;

/** One task for all similar entity pairs of a merge pass. */
export function consolidationTask(pairs: readonly SimilarEntityPair[]): string {
  const lines = pairs.map((p, i) => `${i + 1}. ${entity(p.a)} and ${entity(p.b)}: ${why(p)}.`);
  return [
    HEADER,
    'These entities may name the same thing:',
    ...lines,
    'For each pair: if both are the same thing, call memory_merge with target = the name to keep and source = the other; ' +
      'if they are different things, call memory_block_merge with a and b so they are not proposed again. ' +
      'When unsure, look first with memory_recall or person_query. End with one short line per pair saying what you did.',
  ].join('\n');
}

/** One task for the low-confidence relations of a review pass. */
export function reviewTask(relations: readonly GraphRelation[]): string {
  const lines = relations.map((r, i) => {
    const said = r.sentence ? `, from "${cut(r.sentence.text.replace(/\s+/g, ' '), SENTENCE_CHARS)}"` : '';
    return `${i + 1}. ${r.source.name} ${r.type} ${r.target.name} (confidence ${r.confidence.toFixed(2)}${said})`;
  });
  return [
    HEADER,
    'These facts were read with low confidence:',
    ...lines,
    'For each: if it is right, confirm it by calling memory_commit with the same subject, relation and object; ' +
      'if a part is wrong, correct it with memory_edit. Removing a fact needs the owner, who is not here: ' +
      'if one is wrong altogether or you cannot tell, leave it and say so. End with one short line per fact saying what you did.',
  ].join('\n');
}

function entity(e: { name: string; type: string }): string {
  return e.type !== '' ? `"${e.name}" (${e.type})` : `"${e.name}"`;
}

function why(pair: SimilarEntityPair): string {
  const percent = Math.round(pair.similarity * 100);
  return pair.method === 'bigram' ? `their names share ${percent}% of their letter pairs` : `their meanings are ${percent}% alike`;
}

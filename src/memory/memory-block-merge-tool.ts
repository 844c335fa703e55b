/**
 * memory_block_merge: the answer to a merge proposal when the two entities are different things.
 * The merge loop proposes similar pairs again every tick until they are merged or marked; the
 * mark expires, so a decision made on little evidence is asked again one day.
 */
import { type ToolDefinition, ToolError } from '../shared/tool.js';
import { integerArg, isoDate, notFound, optionalText, requiredText, type ToolArgs } from '../shared/tool-args.js';
import { normalizeName } from './graph-names.js';
import type { GraphStore } from './graph-store.js';

const DAY_MS = 24 * 3600 * 1000;
export const DEFAULT_BLOCK_MERGE_DAYS = 180;
const HINT = 'name both entities as the merge proposal or memory_introspect shows them';

export function blockMergeTool(deps: { graph: GraphStore; clock: { now(): number } }): ToolDefinition {
  const { graph, clock } = deps;
  return {
    name: 'memory_block_merge',
    owner: 'memory',
    tier: 'act',
    description: 'Mark two similar entities as different things, so they are not proposed for merging again (for `days`, default 180).',
    parameters: {
      type: 'object',
      properties: {
        a: { type: 'string', minLength: 1, maxLength: 200 },
        b: { type: 'string', minLength: 1, maxLength: 200 },
        reason: { type: 'string', maxLength: 200, description: 'Why they differ.' },
        days: { type: 'integer', minimum: 1, maximum: 3650 },
      },
      required: ['a', 'b'],
      additionalProperties: false,
    },
    execute: (args: ToolArgs) => {
      const a = requiredText(args, 'a', HINT);
      const b = requiredText(args, 'b', HINT);
      const reason = optionalText(args, 'reason', 'a short reason, or leave it out') ?? '';
      const days = integerArg(args, 'days', { min: 1, max: 3650, fallback: DEFAULT_BLOCK_MERGE_DAYS });
      const ea = graph.entity(a);
      const eb = graph.entity(b);
      if (!ea || normalizeName(a) === '') throw notFound('a', a, HINT);
      if (!eb || normalizeName(b) === '') throw notFound('b', b, HINT);
      if (ea.id === eb.id) {
        throw new ToolError({ reason: 'rejected', field: 'b', detail: `${a} and ${b} are one entity already`, hint: 'nothing to mark' });
      }
      const until = clock.now() + days * DAY_MS;
      graph.markNoMerge(ea.id, eb.id, until, reason);
      return { marked: true, a: ea.name, b: eb.name, until: isoDate(until) };
    },
  };
}

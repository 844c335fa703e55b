/**
 * What a sequence reaches through seq_call: the groups and sequences it calls, whether that comes
 * back to itself (a cycle, refused when the sequence is created), and its tier, the highest tier
 * of every tool it can reach, so that running it meets the same policies and owner confirmation as
 * its most dangerous step would alone. A target that does not exist yet adds nothing here (it is an
 * error when the call runs); a tool that is no longer registered counts as dangerous.
 */
import type { ToolTier } from '../../src/sdk/index.js';
import { callTarget, isSequenceCall, nameKey, type Sequence } from './sequence-definition.js';

export type SequenceLookup = (name: string) => Sequence | undefined;

const RANK: Record<ToolTier, number> = { read: 0, act: 1, dangerous: 2 };

export function higherTier(a: ToolTier, b: ToolTier): ToolTier {
  return RANK[a] >= RANK[b] ? a : b;
}

/** A node of the call graph: a whole sequence (`good night`) or one group of it (`good night#lights`). */
function nodeKey(sequence: string, group?: string): string {
  return group === undefined ? nameKey(sequence) : `${nameKey(sequence)}#${group}`;
}

/** The nodes one node calls directly. */
function edges(node: string, lookup: SequenceLookup): string[] {
  const hash = node.indexOf('#');
  const sequence = lookup(hash < 0 ? node : node.slice(0, hash));
  if (!sequence) return [];
  const groups = hash < 0 ? sequence.groups : sequence.groups.filter((g) => g.name === node.slice(hash + 1));
  if (hash < 0) return groups.map((g) => nodeKey(sequence.name, g.name));
  const out: string[] = [];
  for (const group of groups)
    for (const call of group.calls) {
      if (!isSequenceCall(call.tool)) continue;
      const target = callTarget(call.args, sequence.name);
      out.push(nodeKey(target.sequence, target.group));
    }
  return out;
}

/**
 * The cycle `candidate` would close if stored (the names along it, first repeated last), or
 * undefined. `lookup` sees the stored sequences; the candidate replaces the one of its name.
 */
export function findCycle(candidate: Sequence, lookup: SequenceLookup): string[] | undefined {
  const withCandidate: SequenceLookup = (name) => (nameKey(name) === nameKey(candidate.name) ? candidate : lookup(name));
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (node: string): string[] | undefined => {
    if (state.get(node) === 'open') return [...path.slice(path.indexOf(node)), node];
    if (state.get(node) === 'done') return undefined;
    state.set(node, 'open');
    path.push(node);
    for (const next of edges(node, withCandidate)) {
      const cycle = visit(next);
      if (cycle) return cycle;
    }
    path.pop();
    state.set(node, 'done');
    return undefined;
  };
  return visit(nodeKey(candidate.name));
}

/** The highest tier of every tool the node (a sequence, or one group of it) can reach. */
export function reachTier(
  sequence: Sequence,
  group: string | undefined,
  lookup: SequenceLookup,
  tierOf: (tool: string) => ToolTier | undefined,
): ToolTier {
  const seen = new Set<string>();
  let tier: ToolTier = 'read';
  const visit = (node: string): void => {
    if (seen.has(node)) return;
    seen.add(node);
    const hash = node.indexOf('#');
    const owner =
      nameKey(sequence.name) === (hash < 0 ? node : node.slice(0, hash)) ? sequence : lookup(hash < 0 ? node : node.slice(0, hash));
    if (!owner) return;
    for (const g of owner.groups) {
      if (hash >= 0 && g.name !== node.slice(hash + 1)) continue;
      for (const call of g.calls) {
        if (isSequenceCall(call.tool)) {
          const target = callTarget(call.args, owner.name);
          visit(nodeKey(target.sequence, target.group));
        } else tier = higherTier(tier, tierOf(call.tool) ?? 'dangerous');
      }
    }
  };
  visit(nodeKey(sequence.name, group));
  return tier;
}

/** Steps listed at most in an approval request; the rest are counted. */
const MAX_STEP_LINES = 40;

/**
 * The tool calls a run of the node would make, as the owner's approval request lists them
 * (`lights: entity_call {"entity":"light.kitchen"}`), the sequences it calls expanded in place.
 */
export function stepLines(sequence: Sequence, group: string | undefined, lookup: SequenceLookup): string[] {
  const lines: string[] = [];
  const seen = new Set<string>();
  const visit = (owner: Sequence, only: string | undefined, prefix: string): void => {
    const node = nodeKey(owner.name, only);
    if (seen.has(node)) return;
    seen.add(node);
    for (const g of owner.groups) {
      if (only !== undefined && g.name !== only) continue;
      for (const call of g.calls) {
        const where = `${prefix}${g.name}`;
        if (!isSequenceCall(call.tool)) {
          lines.push(`${where}: ${call.tool} ${JSON.stringify(call.args)}`);
          continue;
        }
        const target = callTarget(call.args, owner.name);
        const nested = nameKey(target.sequence) === nameKey(owner.name) ? owner : lookup(target.sequence);
        if (nested) visit(nested, target.group, `${where} → ${nested.name}/`);
      }
    }
  };
  visit(sequence, group, '');
  return lines.length > MAX_STEP_LINES ? [...lines.slice(0, MAX_STEP_LINES), `… ${lines.length - MAX_STEP_LINES} more`] : lines;
}

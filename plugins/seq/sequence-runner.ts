/**
 * Runs a checked sequence: the groups one after another, the calls of a group side by side when the
 * group allows it and every tool in it says it may run concurrently (otherwise in order), each
 * call's arguments filled from `$args` and earlier `$results` just before it runs. seq_call inside
 * a sequence runs the named group or sequence here, one level deeper, refused beyond
 * plugin.seq.max_call_depth or when it comes back to a sequence already running (a cycle created
 * since, through a replaced sequence). The first failed call of a `stop` group ends the run with an
 * error naming the tool, what it said, the groups done and those not run.
 */
import { type ToolContext, ToolError, type ToolErrorInfo, type ToolFacts } from '../../src/sdk/index.js';
import { parseCondition } from './sequence-condition.js';
import {
  callTarget,
  checkedRunArgs,
  isSequenceCall,
  nameKey,
  SEQ_WHEN_CALL,
  type Sequence,
  type SequenceCall,
  type SequenceGroup,
} from './sequence-definition.js';
import type { SequenceLookup } from './sequence-graph.js';
import { referencesIn, type Scope, substitute } from './sequence-values.js';

export interface RunnerTools {
  describe(name: string): ToolFacts | undefined;
  call(name: string, args: Record<string, unknown>, context: ToolContext): Promise<unknown>;
}

export interface RunnerOptions {
  lookup: SequenceLookup;
  tools: RunnerTools;
  maxDepth: () => number;
}

export interface CallRun {
  tool: string;
  as?: string;
  ok: boolean;
  error?: ToolErrorInfo;
}

export interface GroupRun {
  name: string;
  mode: 'parallel' | 'serial' | 'skipped';
  calls: CallRun[];
}

export interface SequenceRun {
  sequence: string;
  groups: GroupRun[];
  /** The results the sequence hands back (`out`, or every `as`). */
  results: Record<string, unknown>;
}

interface Frame {
  depth: number;
  /** Name keys of the sequences running around this one. */
  stack: string[];
  context: ToolContext;
  calls: number;
}

export class SequenceRunner {
  readonly #options: RunnerOptions;

  constructor(options: RunnerOptions) {
    this.#options = options;
  }

  /** Runs the whole sequence with `args` (checked against its `in`). */
  run(sequence: Sequence, args: Record<string, unknown>, context: ToolContext): Promise<SequenceRun> {
    return this.#runSequence(sequence, args, { depth: 1, stack: [], context, calls: 0 });
  }

  /** Runs one group of the sequence with `args`; only the arguments it reads must be given. */
  async runGroup(sequence: Sequence, groupName: string, args: Record<string, unknown>, context: ToolContext): Promise<SequenceRun> {
    const frame: Frame = { depth: 1, stack: [nameKey(sequence.name)], context, calls: 0 };
    const group = findGroup(sequence, groupName);
    const checked = checkedRunArgs(sequence, args, argsReadBy(group));
    const results: Record<string, unknown> = {};
    const run = await this.#runGroup(sequence, group, { args: checked, results }, frame, []);
    return { sequence: sequence.name, groups: [run], results };
  }

  async #runSequence(sequence: Sequence, args: Record<string, unknown>, outer: Frame): Promise<SequenceRun> {
    const key = nameKey(sequence.name);
    if (outer.stack.includes(key))
      throw new ToolError({
        reason: 'rejected',
        detail: `HA_ERR_SEQ_CYCLE: ${sequence.name} is already running (${[...outer.stack, key].join(' → ')}); a sequence may not call itself`,
      });
    const max = this.#options.maxDepth();
    if (outer.depth > max)
      throw new ToolError({
        reason: 'rejected',
        detail: `HA_ERR_SEQ_DEPTH: ${sequence.name} would run ${outer.depth} sequences deep; at most ${max} (plugin.seq.max_call_depth)`,
      });
    const frame: Frame = { ...outer, stack: [...outer.stack, key] };
    const scope: Scope = { args: checkedRunArgs(sequence, args), results: {} };
    const done: GroupRun[] = [];
    for (const group of sequence.groups) done.push(await this.#runGroup(sequence, group, scope, frame, done));
    const out = sequence.out.length > 0 ? sequence.out : Object.keys(scope.results);
    const results = Object.fromEntries(out.filter((name) => Object.hasOwn(scope.results, name)).map((name) => [name, scope.results[name]]));
    return { sequence: sequence.name, groups: done, results };
  }

  async #runGroup(sequence: Sequence, group: SequenceGroup, scope: Scope, frame: Frame, done: readonly GroupRun[]): Promise<GroupRun> {
    if (frame.context.signal.aborted)
      throw new ToolError({ reason: 'failed', detail: `${sequence.name} was cancelled before group ${group.name}` });
    if (group.when !== undefined && !parseCondition(group.when, 'when').evaluate(scope.args))
      return { name: group.name, mode: 'skipped', calls: [] };
    const parallel = group.parallel && group.calls.length > 1 && group.calls.every((call) => this.#parallelSafe(call));
    const runCall = async (call: SequenceCall): Promise<{ run: CallRun; value?: unknown }> => {
      try {
        const value = await this.#runCall(sequence, call, scope, frame);
        return { run: { tool: call.tool, ...(call.as === undefined ? {} : { as: call.as }), ok: true }, value };
      } catch (error) {
        return { run: { tool: call.tool, ...(call.as === undefined ? {} : { as: call.as }), ok: false, error: errorInfo(error) } };
      }
    };
    const outcomes: Array<{ run: CallRun; value?: unknown }> = [];
    if (parallel) outcomes.push(...(await Promise.all(group.calls.map(runCall))));
    else
      for (const call of group.calls) {
        const outcome = await runCall(call);
        outcomes.push(outcome);
        if (!outcome.run.ok && group.on_error === 'stop') break;
      }
    // Results land after the whole group: calls of one group never read each other, whatever the order they finished in.
    outcomes.forEach((outcome, index) => {
      const as = group.calls[index]?.as;
      if (outcome.run.ok && as !== undefined) scope.results[as] = outcome.value;
    });
    const run: GroupRun = { name: group.name, mode: parallel ? 'parallel' : 'serial', calls: outcomes.map((o) => o.run) };
    const failed = run.calls.find((c) => !c.ok);
    if (failed && group.on_error === 'stop') {
      const later = sequence.groups.slice(sequence.groups.indexOf(group) + 1).map((g) => g.name);
      throw new ToolError({
        reason: 'failed',
        detail: `HA_ERR_SEQ_STEP_FAILED: in ${sequence.name}, ${failed.tool} (group ${group.name}) failed: ${failed.error?.detail ?? 'no reason given'}. Groups done: ${done.map((g) => g.name).join(', ') || 'none'}; not run: ${later.join(', ') || 'none'}`,
        ...(failed.error?.hint === undefined ? {} : { hint: failed.error.hint }),
      });
    }
    return run;
  }

  async #runCall(sequence: Sequence, call: SequenceCall, scope: Scope, frame: Frame): Promise<unknown> {
    // seq_when_call's condition is judged on the arguments it passes on, so it is not filled in from this scope.
    const { when, ...rest } = call.args;
    const args = substitute(call.tool === SEQ_WHEN_CALL ? rest : call.args, scope) as Record<string, unknown>;
    if (!isSequenceCall(call.tool)) {
      frame.calls++;
      return this.#options.tools.call(call.tool, args, { ...frame.context, call_id: `${frame.context.call_id}.${frame.calls}` });
    }
    const nestedArgs = isObject(args.args) ? args.args : {};
    if (call.tool === SEQ_WHEN_CALL && !parseCondition(String(when), 'when').evaluate(nestedArgs)) return { skipped: true, when };
    const target = callTarget(args, sequence.name);
    const nested = this.#options.lookup(target.sequence);
    if (!nested)
      throw new ToolError({
        reason: 'not_found',
        field: 'target',
        detail: `HA_ERR_SEQ_NOT_FOUND: there is no sequence named ${target.sequence}`,
      });
    const inner: Frame = { ...frame, depth: frame.depth + 1 };
    if (target.group === undefined) return (await this.#runSequence(nested, nestedArgs, inner)).results;
    if (inner.depth > this.#options.maxDepth())
      throw new ToolError({
        reason: 'rejected',
        detail: `HA_ERR_SEQ_DEPTH: calling group ${target.group} would go ${inner.depth} levels deep; at most ${this.#options.maxDepth()} (plugin.seq.max_call_depth)`,
      });
    const group = findGroup(nested, target.group);
    const results: Record<string, unknown> = {};
    await this.#runGroup(nested, group, { args: checkedRunArgs(nested, nestedArgs, argsReadBy(group)), results }, inner, []);
    return results;
  }

  #parallelSafe(call: SequenceCall): boolean {
    return !isSequenceCall(call.tool) && this.#options.tools.describe(call.tool)?.parallel_safe === true;
  }
}

export function findGroup(sequence: Sequence, name: string): SequenceGroup {
  const group = sequence.groups.find((g) => g.name === name);
  if (!group)
    throw new ToolError({
      reason: 'not_found',
      field: 'target',
      detail: `HA_ERR_SEQ_NOT_FOUND: ${sequence.name} has no group ${name} (it has ${sequence.groups.map((g) => g.name).join(', ')})`,
    });
  return group;
}

/** The argument names a group reads, in its condition and its calls. */
function argsReadBy(group: SequenceGroup): Set<string> {
  const names = new Set(group.when === undefined ? [] : parseCondition(group.when, 'when').args);
  for (const ref of referencesIn(group.calls.map((c) => c.args))) if (ref.kind === 'args') names.add(ref.name);
  return names;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function errorInfo(error: unknown): ToolErrorInfo {
  if (error instanceof ToolError) return error.info;
  if (error instanceof Error && error.name === 'ToolError' && isObject((error as { info?: unknown }).info))
    return (error as ToolError).info;
  return { reason: 'failed', detail: error instanceof Error ? error.message : String(error) };
}

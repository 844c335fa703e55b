/**
 * What a sequence is and the checks it passes before it is stored: groups of tool calls (the calls
 * of a group run side by side, the groups one after another), declared arguments with types (`in`)
 * that `$args.x` reads, named results (`as`) that later groups read as `$results.name`, the results
 * the sequence hands back (`out`), and conditions (`when`). Everything is checked here, once, when
 * the sequence is created: a definition that passes runs without being parsed again, and one that
 * fails is refused whole with a message naming the field, so nothing half-checked is ever stored.
 * Which tools exist and which are forbidden is the caller's knowledge, passed in as `ToolLookup`.
 */
import { ToolError, type ToolTier } from '../../src/sdk/index.js';
import { parseCondition } from './sequence-condition.js';
import { referencesIn } from './sequence-values.js';

/** The types a declared argument may have. */
export const ARG_TYPES = ['string', 'number', 'integer', 'boolean', 'object', 'array', 'any'] as const;
export type ArgType = (typeof ARG_TYPES)[number];

export interface ArgSpec {
  type: ArgType;
  required: boolean;
  description?: string;
  default?: unknown;
}

/** One tool call of a group. */
export interface SequenceCall {
  tool: string;
  args: Record<string, unknown>;
  /** The name its result is kept under, read by later groups as `$results.<as>`. */
  as?: string;
}

export interface SequenceGroup {
  name: string;
  /** Runs only when true; reads `$args` only. */
  when?: string;
  /** False keeps the calls in order even when every tool may run concurrently. */
  parallel: boolean;
  /** `stop` (default) ends the run at the first failed call; `continue` records it and goes on. */
  on_error: 'stop' | 'continue';
  calls: SequenceCall[];
}

export interface Sequence {
  name: string;
  description: string;
  in: Record<string, ArgSpec>;
  /** Result names the sequence hands back; every `as` when empty. */
  out: string[];
  groups: SequenceGroup[];
}

/** The built-in calls a sequence may make of other sequences: not tools it reaches through the registry. */
export const SEQ_CALL = 'seq_call';
export const SEQ_WHEN_CALL = 'seq_when_call';
export const isSequenceCall = (tool: string): boolean => tool === SEQ_CALL || tool === SEQ_WHEN_CALL;

/** Where a seq_call inside a sequence goes: a group of a sequence, or a whole sequence (`#name`). */
export interface CallTarget {
  sequence: string;
  group?: string;
}

export interface ToolLookup {
  /** The tool's tier; undefined when no tool has that name. */
  tier(name: string): ToolTier | undefined;
  /** Why a sequence may not call it, or undefined when it may. */
  forbidden(name: string): string | undefined;
}

export interface DefinitionLimits {
  max_groups: number;
  max_calls_per_group: number;
  max_definition_chars: number;
}

const NAME_CHARS = 64;
const DESCRIPTION_CHARS = 500;
const SLOT = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
const GROUP = /^[\p{L}\p{N}_-]{1,64}$/u;
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
const CONTROL = /[\u0000-\u001f\u007f]/;

/** The form names are compared in: "Good Night", "good  night" and "ｇｏｏｄ night" are one sequence. */
export function nameKey(name: string): string {
  return name.normalize('NFKC').trim().toLowerCase().replace(/\s+/g, ' ');
}

export function invalid(field: string, detail: string, hint?: string): ToolError {
  return new ToolError({ reason: 'format', field, detail: `HA_ERR_SEQ_INVALID: ${detail}`, ...(hint === undefined ? {} : { hint }) });
}

/** The checked name: trimmed, 1-64 characters, no control characters. */
export function checkedName(raw: unknown, field = 'name'): string {
  if (typeof raw !== 'string') throw invalid(field, `${field} must be a string`);
  const name = raw.normalize('NFKC').trim().replace(/\s+/g, ' ');
  if (name === '' || [...name].length > NAME_CHARS || CONTROL.test(name) || name.startsWith('#'))
    throw invalid(
      field,
      `${field} must be 1-${NAME_CHARS} characters, without control characters, not starting with #; got ${JSON.stringify(raw)}`,
    );
  return name;
}

/** Where a seq_call's arguments point; `self` is the sequence that makes the call. */
export function callTarget(args: Record<string, unknown>, self: string): CallTarget {
  const target = args.target;
  if (typeof target !== 'string' || target.trim() === '')
    throw invalid('target', 'seq_call needs target: a group name, or #name for a whole sequence');
  if (target.startsWith('#')) return { sequence: checkedName(target.slice(1), 'target') };
  const named = args.name === undefined ? self : checkedName(args.name, 'name');
  return { sequence: named, group: target.trim() };
}

/**
 * Checks a definition as seq_create receives it and returns it normalised (defaults filled in).
 * Throws a ToolError naming the problem; the forbidden-tool refusal carries HA_ERR_SEQ_FORBIDDEN_TOOL.
 */
export function checkDefinition(raw: Record<string, unknown>, tools: ToolLookup, limits: DefinitionLimits): Sequence {
  const text = JSON.stringify(raw);
  if (text.length > limits.max_definition_chars)
    throw new ToolError({
      reason: 'range',
      detail: `HA_ERR_SEQ_LIMIT: the definition is ${text.length} characters; at most ${limits.max_definition_chars} (plugin.seq.max_definition_chars)`,
      hint: 'split it into smaller sequences that call each other with seq_call and #name',
    });
  const name = checkedName(raw.name);
  const description = typeof raw.description === 'string' ? raw.description.trim().slice(0, DESCRIPTION_CHARS) : '';
  const inSpec = checkedArgs(raw.in);
  const rawGroups = raw.groups;
  if (!Array.isArray(rawGroups) || rawGroups.length === 0) throw invalid('groups', 'groups must be a non-empty array of groups');
  if (rawGroups.length > limits.max_groups)
    throw new ToolError({
      reason: 'range',
      field: 'groups',
      detail: `HA_ERR_SEQ_LIMIT: ${rawGroups.length} groups; at most ${limits.max_groups} (plugin.seq.max_groups)`,
    });
  const groupNames = new Set<string>();
  const slots = new Set<string>();
  const groups: SequenceGroup[] = rawGroups.map((rawGroup, index) => {
    const where = `groups[${index}]`;
    if (typeof rawGroup !== 'object' || rawGroup === null || Array.isArray(rawGroup))
      throw invalid(where, `${where} must be an object with calls`);
    const g = rawGroup as Record<string, unknown>;
    const groupName = g.name === undefined ? `group${index + 1}` : g.name;
    if (typeof groupName !== 'string' || !GROUP.test(groupName))
      throw invalid(`${where}.name`, `${where}.name must be 1-64 letters, digits, _ or -; got ${JSON.stringify(g.name)}`);
    if (groupNames.has(groupName)) throw invalid(`${where}.name`, `two groups are named ${groupName}`);
    groupNames.add(groupName);
    let when: string | undefined;
    if (g.when !== undefined) {
      if (typeof g.when !== 'string') throw invalid(`${where}.when`, `${where}.when must be a string such as "$args.away == true"`);
      when = g.when.trim();
      const condition = parseCondition(when, `${where}.when`);
      for (const arg of condition.args) if (!(arg in inSpec)) throw undeclaredArg(`${where}.when`, arg);
    }
    if (g.parallel !== undefined && typeof g.parallel !== 'boolean') throw invalid(`${where}.parallel`, 'parallel must be true or false');
    if (g.on_error !== undefined && g.on_error !== 'stop' && g.on_error !== 'continue')
      throw invalid(`${where}.on_error`, 'on_error must be "stop" or "continue"');
    if (!Array.isArray(g.calls) || g.calls.length === 0) throw invalid(`${where}.calls`, `${where}.calls must be a non-empty array`);
    if (g.calls.length > limits.max_calls_per_group)
      throw new ToolError({
        reason: 'range',
        field: `${where}.calls`,
        detail: `HA_ERR_SEQ_LIMIT: ${g.calls.length} calls in ${groupName}; at most ${limits.max_calls_per_group} (plugin.seq.max_calls_per_group)`,
      });
    // Results of this group are not there yet for its own calls (they run side by side): collected after.
    const produced: string[] = [];
    const calls = g.calls.map((rawCall, callIndex) => {
      const at = `${where}.calls[${callIndex}]`;
      const call = checkedCall(rawCall, at, name, tools);
      // seq_when_call's own condition reads the arguments it passes on, not this sequence's.
      const { when: _ownCondition, ...passed } = call.args;
      for (const ref of referencesIn(call.tool === SEQ_WHEN_CALL ? passed : call.args)) {
        if (ref.kind === 'args' && !(ref.name in inSpec)) throw undeclaredArg(`${at}.args`, ref.name);
        if (ref.kind === 'results' && !slots.has(ref.name))
          throw invalid(
            `${at}.args`,
            `$results.${ref.name} is not the result of an earlier group`,
            'name a result with "as" in an earlier group; calls of the same group run side by side and cannot read each other',
          );
      }
      if (call.as !== undefined) {
        if (slots.has(call.as) || produced.includes(call.as)) throw invalid(`${at}.as`, `two calls keep their result as ${call.as}`);
        produced.push(call.as);
      }
      return call;
    });
    for (const slot of produced) slots.add(slot);
    return {
      name: groupName,
      ...(when === undefined ? {} : { when }),
      parallel: g.parallel !== false,
      on_error: g.on_error === 'continue' ? 'continue' : 'stop',
      calls,
    };
  });
  const out = checkedOut(raw.out, slots);
  // seq_call targets inside this very sequence must name one of its groups.
  for (const group of groups)
    for (const call of group.calls) {
      if (!isSequenceCall(call.tool)) continue;
      const target = callTarget(call.args, name);
      if (target.group !== undefined && nameKey(target.sequence) === nameKey(name) && !groupNames.has(target.group))
        throw new ToolError({
          reason: 'not_found',
          field: 'target',
          detail: `HA_ERR_SEQ_NOT_FOUND: ${name} has no group ${target.group} (it has ${[...groupNames].join(', ')})`,
        });
    }
  return { name, description, in: inSpec, out, groups };
}

function checkedCall(raw: unknown, at: string, self: string, tools: ToolLookup): SequenceCall {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw invalid(at, `${at} must be an object {tool, args, as}`);
  const c = raw as Record<string, unknown>;
  if (typeof c.tool !== 'string' || c.tool === '') throw invalid(`${at}.tool`, `${at}.tool must name a tool`);
  const tool = c.tool;
  const why = tools.forbidden(tool);
  if (why !== undefined)
    throw new ToolError({
      reason: 'rejected',
      field: `${at}.tool`,
      detail: `HA_ERR_SEQ_FORBIDDEN_TOOL: a sequence may not call ${tool}: ${why}`,
      hint: 'leave that step to the conversation; a sequence only reads and acts',
    });
  if (!isSequenceCall(tool) && tools.tier(tool) === undefined)
    throw new ToolError({
      reason: 'not_found',
      field: `${at}.tool`,
      detail: `HA_ERR_SEQ_INVALID: no tool named ${tool} is registered`,
      hint: 'call get_plugin_tools to see the tools and their arguments',
    });
  const args = c.args === undefined ? {} : c.args;
  if (typeof args !== 'object' || args === null || Array.isArray(args)) throw invalid(`${at}.args`, `${at}.args must be an object`);
  if (isSequenceCall(tool)) {
    callTarget(args as Record<string, unknown>, self);
    if (tool === SEQ_WHEN_CALL) {
      const when = (args as Record<string, unknown>).when;
      if (typeof when !== 'string') throw invalid(`${at}.args.when`, 'seq_when_call needs when, such as "$args.away == true"');
      parseCondition(when, `${at}.args.when`);
    }
  }
  if (c.as !== undefined && (typeof c.as !== 'string' || !SLOT.test(c.as)))
    throw invalid(`${at}.as`, `${at}.as must be a name of letters, digits and _ (not starting with a digit); got ${JSON.stringify(c.as)}`);
  return { tool, args: args as Record<string, unknown>, ...(typeof c.as === 'string' ? { as: c.as } : {}) };
}

function checkedArgs(raw: unknown): Record<string, ArgSpec> {
  if (raw === undefined) return {};
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw invalid(
      'in',
      'in must be an object of argument names, such as {"room": "string"} or {"room": {"type": "string", "required": false}}',
    );
  const out: Record<string, ArgSpec> = {};
  for (const [key, spec] of Object.entries(raw as Record<string, unknown>)) {
    if (!SLOT.test(key)) throw invalid(`in.${key}`, `argument name ${JSON.stringify(key)} must be letters, digits and _`);
    const s: Record<string, unknown> = typeof spec === 'string' ? { type: spec } : (spec as Record<string, unknown>);
    if (typeof s !== 'object' || s === null || !ARG_TYPES.includes(s.type as ArgType))
      throw invalid(`in.${key}`, `the type of ${key} must be one of ${ARG_TYPES.join(', ')}`);
    if (s.required !== undefined && typeof s.required !== 'boolean') throw invalid(`in.${key}.required`, 'required must be true or false');
    const arg: ArgSpec = { type: s.type as ArgType, required: s.required !== false && s.default === undefined };
    if (typeof s.description === 'string') arg.description = s.description.slice(0, DESCRIPTION_CHARS);
    if (s.default !== undefined) {
      const problem = typeProblem(s.default, arg.type);
      if (problem !== undefined) throw invalid(`in.${key}.default`, `the default of ${key} ${problem}`);
      arg.default = s.default;
    }
    out[key] = arg;
  }
  return out;
}

function checkedOut(raw: unknown, slots: ReadonlySet<string>): string[] {
  if (raw === undefined) return [];
  if (!Array.isArray(raw) || raw.some((n) => typeof n !== 'string')) throw invalid('out', 'out must be an array of result names');
  for (const slot of raw as string[])
    if (!slots.has(slot))
      throw invalid('out', `out names ${slot}, which no call keeps with "as"`, `results kept: ${[...slots].join(', ') || 'none'}`);
  return [...new Set(raw as string[])];
}

function undeclaredArg(field: string, arg: string): ToolError {
  return invalid(field, `$args.${arg} is not declared in "in"`, `declare it: "in": {"${arg}": "string"}`);
}

/** Why a value does not have the declared type, or undefined when it does. */
export function typeProblem(value: unknown, type: ArgType): string | undefined {
  const ok =
    type === 'any' ||
    (type === 'array' && Array.isArray(value)) ||
    (type === 'object' && typeof value === 'object' && value !== null && !Array.isArray(value)) ||
    (type === 'integer' && Number.isInteger(value)) ||
    (type === 'number' && typeof value === 'number' && Number.isFinite(value)) ||
    ((type === 'string' || type === 'boolean') && typeof value === type);
  return ok
    ? undefined
    : `must be ${type === 'integer' || type === 'array' || type === 'object' ? 'an' : 'a'} ${type}, got ${JSON.stringify(value)}`;
}

/** The arguments of a run checked against the declared ones (`only`: just these names must be present), defaults filled in. */
export function checkedRunArgs(sequence: Sequence, given: Record<string, unknown>, only?: ReadonlySet<string>): Record<string, unknown> {
  const unknownArgs = Object.keys(given).filter((k) => !(k in sequence.in));
  if (unknownArgs.length > 0)
    throw new ToolError({
      reason: 'rejected',
      field: 'args',
      detail: `HA_ERR_SEQ_ARGS: ${sequence.name} takes no argument ${unknownArgs.join(', ')}`,
      hint: `it takes: ${Object.keys(sequence.in).join(', ') || 'none'} (seq_help with its name shows them)`,
    });
  const out: Record<string, unknown> = {};
  for (const [key, spec] of Object.entries(sequence.in)) {
    const value = given[key] ?? spec.default;
    if (value === undefined) {
      if (spec.required && (only === undefined || only.has(key)))
        throw new ToolError({
          reason: 'required',
          field: `args.${key}`,
          detail: `HA_ERR_SEQ_ARGS: ${sequence.name} needs the argument ${key} (${spec.type})`,
        });
      continue;
    }
    const problem = typeProblem(value, spec.type);
    if (problem !== undefined) throw new ToolError({ reason: 'type', field: `args.${key}`, detail: `HA_ERR_SEQ_ARGS: ${key} ${problem}` });
    out[key] = value;
  }
  return out;
}

/**
 * The conditions of groups and of seq_when_call: `true`, `false`, `$args.x` (true when truthy),
 * `not $args.x`, or `$args.x <op> <value>` with ==, !=, >, <, >=, <= or contains, the value a JSON
 * literal ("text", 3, true, null) or a bare word. A condition reads the call's arguments only. It is
 * parsed when the sequence is created, and a condition that cannot be judged when it runs (a
 * number compared with a word) is an error, never a silent false: a skipped step the person
 * believes ran is worse than a refused run.
 */
import { ToolError } from '../../src/sdk/index.js';

type Op = '==' | '!=' | '>' | '<' | '>=' | '<=' | 'contains';

export interface Condition {
  /** The argument names it reads. */
  args: string[];
  evaluate(args: Record<string, unknown>): boolean;
}

const CONSTANT = /^(true|false)$/i;
const TRUTHY = /^(not\s+|!)?\$args\.([A-Za-z_][A-Za-z0-9_]*)$/;
const COMPARE = /^\$args\.([A-Za-z_][A-Za-z0-9_]*)\s*(==|!=|>=|<=|>|<|contains)\s*(.+)$/;

export function parseCondition(text: string, field: string): Condition {
  const source = text.trim();
  const constant = CONSTANT.exec(source);
  if (constant) {
    const value = constant[1]?.toLowerCase() === 'true';
    return { args: [], evaluate: () => value };
  }
  const truthy = TRUTHY.exec(source);
  if (truthy?.[2]) {
    const negate = truthy[1] !== undefined;
    const name = truthy[2];
    return { args: [name], evaluate: (args) => Boolean(args[name]) !== negate };
  }
  const compare = COMPARE.exec(source);
  if (compare?.[1] && compare[2] && compare[3]) {
    const name = compare[1];
    const op = compare[2] as Op;
    const literal = parseLiteral(compare[3].trim());
    return { args: [name], evaluate: (args) => judge(args[name], op, literal, source) };
  }
  throw new ToolError({
    reason: 'format',
    field,
    detail: `HA_ERR_SEQ_INVALID: cannot read the condition ${JSON.stringify(text)}`,
    hint: 'write true, false, $args.x, not $args.x, or $args.x == "value" (also !=, >, <, >=, <=, contains)',
  });
}

function parseLiteral(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function judge(value: unknown, op: Op, literal: unknown, source: string): boolean {
  switch (op) {
    case '==':
      return sameValue(value, literal);
    case '!=':
      return !sameValue(value, literal);
    case 'contains':
      if (typeof value === 'string' && typeof literal === 'string') return value.includes(literal);
      if (Array.isArray(value)) return value.some((item) => sameValue(item, literal));
      throw unjudgeable(source, value);
    default: {
      if (typeof value !== 'number' || typeof literal !== 'number') throw unjudgeable(source, value);
      if (op === '>') return value > literal;
      if (op === '<') return value < literal;
      if (op === '>=') return value >= literal;
      return value <= literal;
    }
  }
}

function sameValue(a: unknown, b: unknown): boolean {
  return a === b || (a === undefined && b === null) || JSON.stringify(a) === JSON.stringify(b);
}

function unjudgeable(source: string, value: unknown): ToolError {
  return new ToolError({
    reason: 'type',
    field: 'when',
    detail: `HA_ERR_SEQ_ARGS: the condition ${JSON.stringify(source)} cannot be judged with the value ${JSON.stringify(value) ?? 'undefined'}`,
    hint: 'give the argument the type the condition compares (a number for > and <)',
  });
}

/**
 * How a call's arguments take the sequence's arguments and earlier results: a string that is
 * exactly `$args.x` or `$results.name.field.0` becomes that value with its type (a number stays a
 * number); inside a longer string the reference is replaced by its text. A reference to a result or
 * field that is not there is an error naming it, never an empty string sent to a device.
 */
import { ToolError } from '../../src/sdk/index.js';

export interface Reference {
  kind: 'args' | 'results';
  name: string;
}

const REF = /\$(args|results)\.([A-Za-z_][A-Za-z0-9_]*)((?:\.[A-Za-z0-9_]+)*)/g;
const WHOLE = /^\$(args|results)\.([A-Za-z_][A-Za-z0-9_]*)((?:\.[A-Za-z0-9_]+)*)$/;

/** Every `$args.x` and `$results.name` the value holds, anywhere inside it. */
export function referencesIn(value: unknown): Reference[] {
  const out: Reference[] = [];
  walkStrings(value, (text) => {
    for (const match of text.matchAll(REF)) out.push({ kind: match[1] as Reference['kind'], name: match[2] as string });
  });
  return out;
}

function walkStrings(value: unknown, visit: (text: string) => void): void {
  if (typeof value === 'string') visit(value);
  else if (Array.isArray(value)) for (const item of value) walkStrings(item, visit);
  else if (typeof value === 'object' && value !== null) for (const item of Object.values(value)) walkStrings(item, visit);
}

export interface Scope {
  args: Record<string, unknown>;
  results: Record<string, unknown>;
}

/** The value with every reference filled in from `scope`. */
export function substitute(value: unknown, scope: Scope): unknown {
  if (typeof value === 'string') {
    const whole = WHOLE.exec(value);
    if (whole) return lookup(scope, whole[1] as Reference['kind'], whole[2] as string, whole[3] ?? '', value);
    return value.replace(REF, (text, kind: Reference['kind'], name: string, path: string) => {
      const found = lookup(scope, kind, name, path, text);
      return typeof found === 'string' ? found : JSON.stringify(found);
    });
  }
  if (Array.isArray(value)) return value.map((item) => substitute(item, scope));
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, substitute(item, scope)]));
  return value;
}

function lookup(scope: Scope, kind: Reference['kind'], name: string, path: string, text: string): unknown {
  const root = kind === 'args' ? scope.args : scope.results;
  if (!Object.hasOwn(root, name))
    throw missing(text, kind === 'args' ? `the argument ${name} was not given` : `no result is named ${name}`);
  let current: unknown = root[name];
  for (const step of path.split('.').filter((s) => s !== '')) {
    if (typeof current === 'string') current = parseJsonObject(current);
    if (typeof current !== 'object' || current === null || !Object.hasOwn(current, step))
      throw missing(text, `the value has no field ${step}`);
    current = (current as Record<string, unknown>)[step];
  }
  return current;
}

/** A tool that answers JSON text still has fields. */
function parseJsonObject(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function missing(text: string, why: string): ToolError {
  return new ToolError({ reason: 'not_found', field: 'args', detail: `HA_ERR_SEQ_ARGS: ${text}: ${why}` });
}

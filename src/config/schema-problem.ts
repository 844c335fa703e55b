/**
 * The first problem of a value against a schema, worded for a person: where it is and what was
 * expected. TypeBox says only "Expected union value" when a value fits none of a union's
 * alternatives, which leaves the reader guessing (`driver: bme281` → which drivers are there?).
 * Here a union of literals (or an enum) lists its allowed values with the near misses, a union
 * of objects told apart by a literal field (an automation trigger's `type`) is judged against the
 * alternative whose field matches — or, when none does, the field's allowed values are listed —
 * and any other union names the kinds of value it takes.
 */
import { Kind, type TSchema } from '@sinclair/typebox';
import { Value, type ValueError, ValueErrorType } from '@sinclair/typebox/value';
import { didYouMean } from '../shared/near-names.js';

export interface SchemaProblem {
  /** JSON pointer of the wrong part of the value ('' for the value itself): `/0/driver`. */
  path: string;
  /** `expected one of bme280, aht20, found "bme281" (did you mean bme280?)`. */
  text: string;
}

/** How many allowed values a line names before it only counts the rest. */
const LISTED_VALUES = 30;

/** The first problem of `value` against `schema`, or undefined when it fits. `hidden`: do not repeat what was found. */
export function firstSchemaProblem(schema: TSchema, value: unknown, hidden = false): SchemaProblem | undefined {
  const first = firstError(schema, value);
  if (first === undefined) return undefined;
  const found = hidden ? '' : `, found ${describeFound(first.value)}`;
  const alternatives = unionAlternatives(first.schema);
  if (alternatives !== undefined) return withPrefix(first.path, unionProblem(alternatives, first.value, hidden));
  return { path: first.path, text: objectProblem(first) ?? `${lowerFirst(first.message)}${found}` };
}

/** Errors looked at for a better first one. */
const LOOKED_AT = 32;

/**
 * TypeBox's first error, except that an unknown key beside a missing required one in the same
 * mapping comes first: a misspelt key explains both, and "unknown key" is the one to fix.
 */
function firstError(schema: TSchema, value: unknown): ValueError | undefined {
  const first = Value.Errors(schema, value).First();
  if (first?.type !== ValueErrorType.ObjectRequiredProperty) return first;
  const parent = parentOf(first.path);
  let seen = 0;
  for (const error of Value.Errors(schema, value)) {
    if (++seen > LOOKED_AT) break;
    if (error.type === ValueErrorType.ObjectAdditionalProperties && parentOf(error.path) === parent) return error;
  }
  return first;
}

function parentOf(path: string): string {
  return path.slice(0, path.lastIndexOf('/'));
}

/** A key the mapping does not know (with the near misses and the known keys), or a required one missing. */
function objectProblem(error: ValueError): string | undefined {
  if (error.type === ValueErrorType.ObjectRequiredProperty) return 'required, but missing';
  if (error.type !== ValueErrorType.ObjectAdditionalProperties) return undefined;
  const name = error.path
    .slice(error.path.lastIndexOf('/') + 1)
    .replace(/~1/g, '/')
    .replace(/~0/g, '~');
  // A mapping of free names (log levels per subsystem): the name breaks its pattern.
  const patterns = isPlainObject(error.schema.patternProperties) ? Object.keys(error.schema.patternProperties) : [];
  if (patterns.length > 0) return `the name ${JSON.stringify(name)} does not match ${patterns.join(' or ')}`;
  if (!isPlainObject(error.schema.properties)) return undefined;
  const known = Object.keys(error.schema.properties);
  return `unknown key${didYouMean(name, known)}, expected one of: ${known.join(', ')}`;
}

/** The problem of a value that fits none of a union's alternatives, relative to that value. */
function unionProblem(alternatives: TSchema[], value: unknown, hidden: boolean): SchemaProblem {
  const found = hidden ? '' : `, found ${describeFound(value)}`;
  const literals = literalValues(alternatives);
  if (literals !== undefined) return { path: '', text: `expected ${oneOf(literals)}${found}${nearMiss(value, literals, hidden)}` };

  const field = discriminator(alternatives);
  if (field !== undefined && isPlainObject(value)) {
    const given = value[field.name];
    const branch = field.branches.find((b) => b.values.some((v) => v === given));
    if (branch) {
      // Judged as the loader would keep it: with the alternative's defaults filled in.
      const inner = firstSchemaProblem(branch.schema, Value.Default(branch.schema, structuredClone(value)), hidden);
      // The matching alternative may accept it where the union did not (it cannot, but never say nothing).
      if (inner !== undefined) return inner;
    }
    const allowed = field.branches.flatMap((b) => b.values);
    const foundField = hidden ? '' : `, found ${describeFound(given)}`;
    return { path: `/${escapePointer(field.name)}`, text: `expected ${oneOf(allowed)}${foundField}${nearMiss(given, allowed, hidden)}` };
  }
  // An alternative of the value's own kind (a list where "a value or a list" is allowed) says more.
  const sameKind = alternatives.filter((a) => kindFits(a, value));
  if (sameKind.length === 1 && sameKind[0] !== undefined) {
    const inner = firstSchemaProblem(sameKind[0], value, hidden);
    if (inner !== undefined) return inner;
  }
  const kinds = [...new Set(alternatives.map(describeKind))];
  return { path: '', text: `expected ${joinOr(kinds)}${found}` };
}

/** The alternatives of a union, nested unions flattened; undefined for any other schema. */
function unionAlternatives(schema: TSchema | undefined): TSchema[] | undefined {
  if (schema === undefined) return undefined;
  if (Array.isArray(schema.enum)) return (schema.enum as unknown[]).map((v) => ({ const: v }) as unknown as TSchema);
  if (!Array.isArray(schema.anyOf)) return undefined;
  return (schema.anyOf as TSchema[]).flatMap((s) => unionAlternatives(s) ?? [s]);
}

/** The values of a union whose every alternative is one literal; undefined otherwise. */
function literalValues(alternatives: TSchema[]): unknown[] | undefined {
  return alternatives.every((a) => 'const' in a) ? alternatives.map((a) => a.const) : undefined;
}

interface Discriminator {
  name: string;
  branches: Array<{ schema: TSchema; values: unknown[] }>;
}

/**
 * A required field every alternative is an object with, holding a literal (or a union of
 * literals) in each, no value shared between two alternatives: the field that says which
 * alternative a value means (`type` of an automation trigger).
 */
function discriminator(alternatives: TSchema[]): Discriminator | undefined {
  const objects = alternatives.filter((a) => a.type === 'object' && isPlainObject(a.properties));
  if (objects.length !== alternatives.length || objects.length < 2) return undefined;
  const candidates = Object.keys(objects[0]?.properties ?? {});
  for (const name of candidates) {
    const branches: Discriminator['branches'] = [];
    for (const schema of objects) {
      const property = (schema.properties as Record<string, TSchema>)[name];
      const values = property === undefined ? undefined : literalValues(unionAlternatives(property) ?? [property]);
      if (values === undefined || !(schema.required as string[] | undefined)?.includes(name)) break;
      branches.push({ schema, values });
    }
    if (branches.length !== objects.length) continue;
    const all = branches.flatMap((b) => b.values);
    if (new Set(all).size === all.length) return { name, branches };
  }
  return undefined;
}

/** Whether a value is of the schema's kind (a list for an array schema, ...), whatever its details. */
function kindFits(schema: TSchema, value: unknown): boolean {
  switch (schema.type) {
    case 'array':
      return Array.isArray(value);
    case 'object':
      return isPlainObject(value);
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number';
    case 'integer':
      return typeof value === 'number';
    case 'boolean':
      return typeof value === 'boolean';
    default:
      return false;
  }
}

/** "a string", "a list", "true or false": the kind an alternative takes. */
function describeKind(schema: TSchema): string {
  if ('const' in schema) return JSON.stringify(schema.const);
  switch (schema.type) {
    case 'string':
      return 'a string';
    case 'integer':
      return 'an integer';
    case 'number':
      return 'a number';
    case 'boolean':
      return 'true or false';
    case 'array':
      return 'a list';
    case 'object':
      return 'a mapping (key: value)';
    case 'null':
      return 'null';
    default:
      return schema[Kind] === 'Unknown' || schema[Kind] === 'Any' ? 'any value' : String(schema[Kind] ?? 'a value');
  }
}

/** `one of bme280, aht20, sht3x` (strings as they are written in YAML, others as JSON). */
function oneOf(values: unknown[]): string {
  const shown = values.slice(0, LISTED_VALUES).map((v) => (typeof v === 'string' ? v : JSON.stringify(v)));
  const more = values.length > LISTED_VALUES ? ` and ${values.length - LISTED_VALUES} more` : '';
  return values.length === 1 ? String(shown[0]) : `one of ${shown.join(', ')}${more}`;
}

/** ` (did you mean bme280?)` for a string close to one of the allowed ones. */
function nearMiss(value: unknown, allowed: unknown[], hidden: boolean): string {
  if (hidden || typeof value !== 'string') return '';
  return didYouMean(
    value,
    allowed.filter((v): v is string => typeof v === 'string'),
  );
}

function joinOr(parts: string[]): string {
  return parts.length <= 1 ? (parts[0] ?? 'a value') : `${parts.slice(0, -1).join(', ')} or ${parts[parts.length - 1]}`;
}

function withPrefix(prefix: string, problem: SchemaProblem): SchemaProblem {
  return { path: `${prefix}${problem.path}`, text: problem.text };
}

function escapePointer(name: string): string {
  return name.replace(/~/g, '~0').replace(/\//g, '~1');
}

function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A short, safe rendering of a value someone supplied, for error messages. */
export function describeFound(value: unknown): string {
  if (value === undefined) return 'nothing';
  const text = typeof value === 'string' ? JSON.stringify(value) : (JSON.stringify(value) ?? String(value));
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

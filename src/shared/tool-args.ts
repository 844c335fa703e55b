/**
 * Argument checks for the built-in tools (memory, knowledge, home, lists). The registry validates
 * arguments against each tool's JSON Schema before a call runs, but the tools are also called
 * directly (tests, the CLI, the maintenance loops), and some rules are beyond the schema (text that
 * normalises to nothing). Every problem becomes a {@link ToolError} naming the field, with a hint
 * the model can act on.
 */
import { ToolError } from './tool.js';

export type ToolArgs = Record<string, unknown>;

/** A non-empty string (after trimming), at most `max` characters. */
export function requiredText(args: ToolArgs, field: string, hint: string, max = 200): string {
  const value = args[field];
  if (value === undefined || value === null) throw new ToolError({ reason: 'required', field, detail: `${field} is required`, hint });
  return checkedText(value, field, hint, max);
}

/** Like {@link requiredText}, but undefined when absent. */
export function optionalText(args: ToolArgs, field: string, hint: string, max = 200): string | undefined {
  const value = args[field];
  if (value === undefined || value === null) return undefined;
  return checkedText(value, field, hint, max);
}

function checkedText(value: unknown, field: string, hint: string, max: number): string {
  if (typeof value !== 'string') throw new ToolError({ reason: 'type', field, detail: `${field} must be a string`, hint });
  const text = value.trim();
  if (text === '') throw new ToolError({ reason: 'required', field, detail: `${field} must not be empty`, hint });
  if (text.length > max) throw new ToolError({ reason: 'range', field, detail: `${field} is longer than ${max} characters`, hint });
  return text;
}

/** An integer in [min, max]; `fallback` when absent. */
export function integerArg(args: ToolArgs, field: string, range: { min: number; max: number; fallback: number }): number {
  const value = args[field];
  if (value === undefined || value === null) return range.fallback;
  const hint = `pass a whole number from ${range.min} to ${range.max}, or leave ${field} out for ${range.fallback}`;
  if (typeof value !== 'number' || !Number.isInteger(value))
    throw new ToolError({ reason: 'type', field, detail: `${field} must be an integer`, hint });
  if (value < range.min || value > range.max) {
    throw new ToolError({ reason: 'range', field, detail: `${field} must be between ${range.min} and ${range.max}`, hint });
  }
  return value;
}

export function enumArg<T extends string>(args: ToolArgs, field: string, allowed: readonly T[]): T {
  const value = args[field];
  const hint = `use one of: ${allowed.join(', ')}`;
  if (value === undefined || value === null) throw new ToolError({ reason: 'required', field, detail: `${field} is required`, hint });
  if (typeof value !== 'string' || !allowed.includes(value as T)) {
    throw new ToolError({ reason: 'enum', field, detail: `${field} must be one of ${allowed.join(', ')}`, hint });
  }
  return value as T;
}

/** An optional list of non-empty strings, each at most `maxLength` characters. */
export function stringList(args: ToolArgs, field: string, limits: { maxItems: number; maxLength: number }): string[] {
  const value = args[field];
  if (value === undefined || value === null) return [];
  const hint = `pass up to ${limits.maxItems} short strings, e.g. ["garden", "tools"]`;
  if (!Array.isArray(value)) throw new ToolError({ reason: 'type', field, detail: `${field} must be an array of strings`, hint });
  if (value.length > limits.maxItems)
    throw new ToolError({ reason: 'range', field, detail: `${field} has more than ${limits.maxItems} items`, hint });
  return value.map((item, i) => checkedText(item, `${field}[${i}]`, hint, limits.maxLength));
}

/** An unknown entity, with where to look instead. */
export function notFound(field: string, name: string, hint: string): ToolError {
  return new ToolError({ reason: 'not_found', field, detail: `no entity named ${JSON.stringify(name)} in memory`, hint });
}

/** Text cut to `max` characters, marked when cut (results stay compact). */
export function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** A millisecond time as an ISO date (`2024-05-06`), for the model. */
export function isoDate(ms: number): string {
  return Number.isFinite(ms) ? new Date(ms).toISOString().slice(0, 10) : '';
}

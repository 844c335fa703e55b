/**
 * What crosses from a Lua plugin to the host about its tools, checked on the host side: the tool
 * definitions start() registered, and the failures a handler reports for the model to read. The
 * Lua runtime already checks them; this is the boundary, so it checks again and never trusts
 * shapes that came out of the sandbox.
 */
import { HomeAgentError } from '../../shared/errors.js';
import { type JsonSchema, TOOL_ERROR_REASONS, TOOL_TIERS, ToolError, type ToolErrorReason, type ToolTier } from '../../shared/tool.js';

/** A tool as a Lua plugin's start() declared it (everything but the handler, which stays in Lua). */
export interface LuaToolSpec {
  name: string;
  description: string;
  parameters: JsonSchema;
  tier: ToolTier;
  parallel_safe?: boolean;
  no_memory?: boolean;
  timeout_ms?: number;
}

const MAX_TOOLS = 256;
const MAX_DESCRIPTION = 4000;
const EMPTY_PARAMETERS: JsonSchema = { type: 'object', properties: {} };

/** Checks start()'s answer; throws HA_ERR_PLUGIN_START naming the tool and the problem. */
export function parseToolSpecs(value: unknown, plugin: string): LuaToolSpec[] {
  const bad = (why: string): never => {
    throw new HomeAgentError('HA_ERR_PLUGIN_START', `Lua plugin ${plugin}: ${why}`);
  };
  if (!Array.isArray(value)) return bad('start() did not produce a tool list');
  if (value.length > MAX_TOOLS) return bad(`start() registered more than ${MAX_TOOLS} tools`);
  return value.map((raw: unknown, i): LuaToolSpec => {
    if (!isRecord(raw)) return bad(`tool ${i + 1} is not a table`);
    const name = raw.name;
    if (typeof name !== 'string' || name === '') return bad(`tool ${i + 1} has no name`);
    const { description, tier, parallel_safe, no_memory, timeout_ms } = raw;
    if (typeof description !== 'string' || description === '') return bad(`tool ${name} has no description`);
    if (description.length > MAX_DESCRIPTION) return bad(`the description of tool ${name} is longer than ${MAX_DESCRIPTION} characters`);
    if (!TOOL_TIERS.includes(tier as ToolTier)) return bad(`tool ${name} has no valid tier (read, act or dangerous)`);
    const parameters = raw.parameters === undefined ? EMPTY_PARAMETERS : raw.parameters;
    if (!isRecord(parameters)) return bad(`the parameters of tool ${name} are not a JSON schema object`);
    if (timeout_ms !== undefined && (typeof timeout_ms !== 'number' || !Number.isInteger(timeout_ms) || timeout_ms < 1)) {
      return bad(`timeout_ms of tool ${name} must be a positive integer`);
    }
    return {
      name,
      description,
      parameters: withArrayRequired(parameters),
      tier: tier as ToolTier,
      ...(parallel_safe === true ? { parallel_safe: true } : {}),
      ...(no_memory === true ? { no_memory: true } : {}),
      ...(typeof timeout_ms === 'number' ? { timeout_ms } : {}),
    };
  });
}

/**
 * A Lua table cannot tell an empty array from an empty object, so `required = {}` arrives as `{}`;
 * JSON Schema wants an array there.
 */
function withArrayRequired(schema: Record<string, unknown>): JsonSchema {
  const required = schema.required;
  if (isRecord(required) && Object.keys(required).length === 0) return { ...schema, required: [] };
  return schema;
}

/** A handler's reported failure (`ha.fail{...}` or `return nil, message`) as the model reads it. */
export function toolFailure(value: unknown): ToolError {
  if (!isRecord(value)) return new ToolError({ reason: 'failed', detail: 'the tool failed' });
  const reason = (TOOL_ERROR_REASONS as readonly string[]).includes(String(value.reason)) ? (value.reason as ToolErrorReason) : 'failed';
  const detail = typeof value.detail === 'string' && value.detail !== '' ? value.detail : 'the tool failed';
  return new ToolError({
    reason,
    detail,
    ...(typeof value.field === 'string' ? { field: value.field } : {}),
    ...(typeof value.hint === 'string' ? { hint: value.hint } : {}),
  });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

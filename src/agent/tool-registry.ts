/**
 * The one tool registry: static tools registered by owners (built-ins, devices, plugins, memory)
 * and dynamic sets from providers (the IO manager's output_send tools), read afresh on every
 * listing so a reloaded channel table shows at once. It also checks a call's arguments against
 * the tool's JSON Schema before anything runs, turning every problem into a {@link ToolErrorInfo}
 * the model can read and act on.
 */
import { isIPv4, isIPv6 } from 'node:net';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import type { ToolSpec } from '../llm/spec/index.js';
import type { Logger } from '../log/logger.js';
import { describeError, HomeAgentError } from '../shared/errors.js';
import { SECRET_SHOWN, TOOL_TIERS, type ToolDefinition, ToolError, type ToolErrorInfo, type ToolErrorReason } from '../shared/tool.js';
import type { ToolListing, ToolProvider } from './types.js';

export const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
/** The built-in tool the prompt's summary points to for full schemas. */
export const GET_PLUGIN_TOOLS = 'get_plugin_tools';
/** Description length per tool in the prompt's per-owner summary. */
export const SUMMARY_DESCRIPTION_CHARS = 60;
/** How many argument problems are spelled out to the model; the rest are counted. */
export const MAX_REPORTED_PROBLEMS = 3;

export type ArgumentCheck = { ok: true; args: Record<string, unknown> } | { ok: false; error: ToolErrorInfo };

export interface ToolSummaryGroup {
  owner: string;
  count: number;
  tools: Array<{ name: string; description: string }>;
}

export interface ToolRegistryOptions {
  log: Logger;
}

type AnyToolDefinition = ToolDefinition;

/** Compiled validators by schema text: providers may hand out fresh but identical definitions on every listing. */
const SCHEMA_CACHE_LIMIT = 1024;

export class ToolRegistry {
  readonly #static = new Map<string, AnyToolDefinition>();
  readonly #providers = new Set<ToolProvider>();
  readonly #byDefinition = new WeakMap<AnyToolDefinition, ValidateFunction>();
  readonly #bySchemaText = new Map<string, ValidateFunction>();
  /** Provider problems are logged once, not on every listing. */
  readonly #warned = new Set<string>();
  readonly #ajv: Ajv;
  readonly #log: Logger;

  constructor(options: ToolRegistryOptions) {
    this.#log = options.log;
    this.#ajv = newAjv(options.log);
    this.register(this.#getPluginToolsDefinition());
  }

  /** Adds a static tool; returns a function that removes just this one. */
  register<A>(definition: ToolDefinition<A>): () => void {
    const def = definition as unknown as AnyToolDefinition;
    const problem = this.#definitionProblem(def);
    if (problem) throw new HomeAgentError('HA_ERR_TOOL_DEFINITION', problem, { details: { name: def.name, owner: def.owner } });
    if (this.#static.has(def.name) || this.#fromProviders(def.name)) {
      throw new HomeAgentError('HA_ERR_TOOL_DEFINITION', `a tool named ${def.name} is already registered`, {
        details: { name: def.name, owner: def.owner },
      });
    }
    this.#static.set(def.name, def);
    return () => {
      if (this.#static.get(def.name) === def) this.#static.delete(def.name);
    };
  }

  unregister(name: string): boolean {
    return this.#static.delete(name);
  }

  /** Adds a dynamic tool set; returns a function that removes it. */
  addProvider(provider: ToolProvider): () => void {
    this.#providers.add(provider);
    return () => void this.#providers.delete(provider);
  }

  /**
   * Replaces the owner's static tools by `definitions` in one step (a plugin reload): every call
   * made before sees the old set, every call after the new one. Either the whole new set is valid
   * and free of clashes with other owners, or HA_ERR_TOOL_DEFINITION is thrown and nothing changes.
   */
  replaceOwner(owner: string, definitions: readonly ToolDefinition[]): void {
    const names = new Set<string>();
    for (const def of definitions) {
      const problem = def.owner === owner ? this.#definitionProblem(def) : `tool ${def.name} belongs to ${def.owner}, not to ${owner}`;
      if (problem) throw new HomeAgentError('HA_ERR_TOOL_DEFINITION', problem, { details: { name: def.name, owner } });
      const taken = this.#static.get(def.name);
      if (names.has(def.name) || (taken && taken.owner !== owner) || this.#fromProviders(def.name)) {
        throw new HomeAgentError('HA_ERR_TOOL_DEFINITION', `a tool named ${def.name} is already registered`, {
          details: { name: def.name, owner },
        });
      }
      names.add(def.name);
    }
    for (const [name, def] of this.#static) if (def.owner === owner) this.#static.delete(name);
    for (const def of definitions) this.#static.set(def.name, def);
  }

  /** Removes the owner's static tools and providers (the owner stopped or was unloaded). */
  removeOwner(owner: string): void {
    for (const [name, def] of this.#static) if (def.owner === owner) this.#static.delete(name);
    for (const provider of this.#providers) if (provider.owner === owner) this.#providers.delete(provider);
  }

  get(name: string): AnyToolDefinition | undefined {
    return this.#static.get(name) ?? this.#fromProviders(name);
  }

  /** Every tool, sorted by owner, then name. */
  list(): ToolListing[] {
    return this.#all()
      .map((d) => ({ name: d.name, description: d.description, parameters: d.parameters, owner: d.owner, tier: d.tier }))
      .sort((a, b) => compare(a.owner, b.owner) || compare(a.name, b.name));
  }

  /** What the model is offered, in {@link list} order. */
  specs(): ToolSpec[] {
    return this.list().map(({ name, description, parameters }) => ({ name, description, parameters }));
  }

  /** The prompt's compact view: per owner, the tools with one short line each. */
  summaryByOwner(): ToolSummaryGroup[] {
    const groups: ToolSummaryGroup[] = [];
    for (const tool of this.list()) {
      let group = groups.at(-1);
      if (group?.owner !== tool.owner) {
        group = { owner: tool.owner, count: 0, tools: [] };
        groups.push(group);
      }
      group.count++;
      group.tools.push({ name: tool.name, description: truncate(tool.description, SUMMARY_DESCRIPTION_CHARS) });
    }
    return groups;
  }

  /**
   * Parses and checks a call's raw arguments. Models often quote scalars, so "true"/"false" for a
   * boolean and numeric strings for a number are accepted and converted first (only there: a
   * string property keeps its string, and nothing is wrapped into an array). For a tool whose
   * arguments can hold a secret (`redact_arguments`), the problems name fields but never quote
   * what was sent: the result also reaches the web page's events.
   */
  validate(definition: ToolDefinition, rawArguments: string): ArgumentCheck {
    const quiet = definition.redact_arguments !== undefined;
    const parsed = parseArguments(rawArguments, quiet);
    if (!parsed.ok) return parsed;
    let validator: ValidateFunction;
    try {
      validator = this.#validator(definition);
    } catch (error) {
      // A schema valid against the meta-schema that still does not compile (a $ref to nowhere), or a
      // definition that bypassed registration: the model cannot fix it.
      return { ok: false, error: { reason: 'failed', detail: `the tool's argument schema is invalid: ${describeError(error)}` } };
    }
    const args = coerceScalars(parsed.args, definition.parameters) as Record<string, unknown>;
    if (validator(args)) return { ok: true, args };
    return { ok: false, error: summarizeProblems((validator.errors ?? []).map((e) => describeProblem(e, quiet))) };
  }

  #all(): AnyToolDefinition[] {
    const tools = [...this.#static.values()];
    const seen = new Set(this.#static.keys());
    for (const provider of this.#providers) {
      for (const def of this.#providerTools(provider)) {
        if (seen.has(def.name)) {
          this.#warnOnce(
            `${provider.owner}:${def.name}:duplicate`,
            { owner: provider.owner, tool: def.name },
            'provider tool skipped: the name is taken',
          );
          continue;
        }
        seen.add(def.name);
        tools.push(def);
      }
    }
    return tools;
  }

  #fromProviders(name: string): AnyToolDefinition | undefined {
    for (const provider of this.#providers) {
      const def = this.#providerTools(provider).find((d) => d.name === name);
      if (def) return def;
    }
    return undefined;
  }

  /** A provider's valid tools; a throwing provider or a bad definition is logged and left out, never fatal. */
  #providerTools(provider: ToolProvider): AnyToolDefinition[] {
    let tools: readonly AnyToolDefinition[];
    try {
      tools = provider.tools();
    } catch (error) {
      this.#log.error({ owner: provider.owner, err: error }, 'tool provider failed; its tools are left out');
      return [];
    }
    return tools.filter((def) => {
      const problem = this.#definitionProblem(def);
      if (problem)
        this.#warnOnce(
          `${provider.owner}:${String(def.name)}:${problem}`,
          { owner: provider.owner, tool: def.name },
          `provider tool skipped: ${problem}`,
        );
      return !problem;
    });
  }

  #definitionProblem(def: AnyToolDefinition): string | undefined {
    if (typeof def.name !== 'string' || !TOOL_NAME.test(def.name))
      return `invalid tool name ${JSON.stringify(def.name)} (must match ${TOOL_NAME.source})`;
    if (typeof def.owner !== 'string' || def.owner === '') return `tool ${def.name} has no owner`;
    if (typeof def.description !== 'string') return `tool ${def.name} has no description`;
    if (typeof def.execute !== 'function') return `tool ${def.name} has no execute function`;
    if (!TOOL_TIERS.includes(def.tier)) return `tool ${def.name}: tier must be one of ${TOOL_TIERS.join(', ')}`;
    if (!isRecord(def.parameters) || def.parameters.type !== 'object')
      return `tool ${def.name}: parameters must be a JSON Schema of type "object"`;
    // Checked against the meta-schema here; compiled on the first call. Compiling every tool's
    // schema at registration cost most of a start-up's time in ajv (about 75 ms for ~80 tools).
    const { $schema: _ignored, ...schema } = def.parameters;
    try {
      if (!this.#ajv.validateSchema(schema)) {
        return `tool ${def.name}: parameters are not a valid JSON Schema: ${this.#ajv.errorsText(this.#ajv.errors)}`;
      }
    } catch (error) {
      return `tool ${def.name}: parameters are not a valid JSON Schema: ${describeError(error)}`;
    }
    return undefined;
  }

  /** Compiles once per definition object (and once per distinct schema text). */
  #validator(def: AnyToolDefinition): ValidateFunction {
    const known = this.#byDefinition.get(def);
    if (known) return known;
    const text = JSON.stringify(def.parameters);
    let validator = this.#bySchemaText.get(text);
    if (!validator) {
      // `$schema` is dropped: tools declare assorted drafts, and ajv refuses meta-schemas it does not know.
      const { $schema: _ignored, ...schema } = def.parameters;
      validator = this.#ajv.compile(schema);
      // Ajv caches by schema object; fresh provider schemas would pile up there, and we cache ourselves.
      this.#ajv.removeSchema(schema);
      if (this.#bySchemaText.size >= SCHEMA_CACHE_LIMIT) {
        const oldest = this.#bySchemaText.keys().next();
        if (!oldest.done) this.#bySchemaText.delete(oldest.value);
      }
      this.#bySchemaText.set(text, validator);
    }
    this.#byDefinition.set(def, validator);
    return validator;
  }

  #warnOnce(key: string, fields: Record<string, unknown>, message: string): void {
    if (this.#warned.has(key)) return;
    this.#warned.add(key);
    this.#log.warn(fields, message);
  }

  #getPluginToolsDefinition(): ToolDefinition<{ owner?: string; names?: string[] }> {
    return {
      name: GET_PLUGIN_TOOLS,
      owner: 'core',
      tier: 'read',
      parallel_safe: true,
      description: 'Full descriptions and argument schemas of tools, by owner (as listed in the tool summary) or by tool names.',
      parameters: {
        type: 'object',
        properties: {
          owner: { type: 'string', description: 'An owner from the tool summary, e.g. "core" or "plugin:timer".' },
          names: { type: 'array', items: { type: 'string' }, maxItems: 64, description: 'Tool names.' },
        },
        additionalProperties: false,
      },
      execute: ({ owner, names }) => {
        const all = this.list();
        const owners = [...new Set(all.map((t) => t.owner))];
        if (owner === undefined && (names === undefined || names.length === 0)) {
          throw new ToolError({
            reason: 'required',
            field: 'owner',
            detail: 'pass an owner or tool names',
            hint: `owners: ${owners.join(', ')}`,
          });
        }
        let tools = all;
        if (owner !== undefined) {
          tools = tools.filter((t) => t.owner === owner);
          if (tools.length === 0) {
            throw new ToolError({
              reason: 'not_found',
              field: 'owner',
              detail: `no tools of owner ${JSON.stringify(owner)}`,
              hint: `owners: ${owners.join(', ')}`,
            });
          }
        }
        if (names === undefined || names.length === 0) return { tools };
        const wanted = new Set(names);
        const unknown = names.filter((n) => !all.some((t) => t.name === n));
        tools = tools.filter((t) => wanted.has(t.name));
        return unknown.length > 0 ? { tools, unknown } : { tools };
      },
    };
  }
}

// ---------------------------------------------------------------------------------------------
// Argument checking helpers

function newAjv(log: Logger): Ajv {
  return new Ajv({
    allErrors: true,
    // verbose: errors carry the offending data and parent schema, for readable details and hints.
    verbose: true,
    // Not strict: plugin and MCP schemas carry keywords of their own that should not block a tool.
    strict: false,
    formats: FORMATS,
    logger: {
      log: () => {},
      warn: (...args: unknown[]) => log.warn({ ajv: args.map(String).join(' ') }, 'tool schema warning'),
      error: (...args: unknown[]) => log.error({ ajv: args.map(String).join(' ') }, 'tool schema error'),
    },
  });
}

/** The formats tool schemas commonly use (ajv ships none; ajv-formats is not a dependency). */
const FORMATS: Record<string, RegExp | ((value: string) => boolean)> = {
  'date-time': (s) => /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:?\d{2})$/.test(s) && !Number.isNaN(Date.parse(s)),
  date: (s) => /^\d{4}-\d{2}-\d{2}$/.test(s) && !Number.isNaN(Date.parse(s)),
  time: /^\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:?\d{2})?$/,
  email: /^[^\s@]+@[^\s@]+\.[^\s@]+$/,
  uri: (s) => /^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(s) && URL.canParse(s),
  uuid: /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/,
  ipv4: (s) => isIPv4(s),
  ipv6: (s) => isIPv6(s),
  hostname: /^(?=.{1,253}$)[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(\.[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$/,
};

type Parsed = { ok: true; args: Record<string, unknown> } | { ok: false; error: ToolErrorInfo };

const ARGUMENTS_FIELD = '(arguments)';
const OBJECT_HINT = 'send the arguments as one JSON object, e.g. {"name": "value"}; send {} when the tool takes none';

/**
 * A call's arguments as they may be shown outside the call (audit, logs, the confirmation gate,
 * events): the raw text, or for a tool with `redact_arguments` its redaction as JSON; all of them
 * masked when they do not parse or the redaction throws, since they may hold a secret.
 */
export function shownArguments(definition: Pick<ToolDefinition, 'redact_arguments'> | undefined, raw: string): string {
  const redact = definition?.redact_arguments;
  if (!redact) return raw;
  const parsed = parseArguments(raw, true);
  if (!parsed.ok) return SECRET_SHOWN;
  try {
    return JSON.stringify(redact(parsed.args)) ?? SECRET_SHOWN;
  } catch {
    return SECRET_SHOWN;
  }
}

/** `quiet`: the JSON parser's message quotes the text it choked on, so it is left out. */
function parseArguments(raw: string, quiet = false): Parsed {
  // Models send "" for tools without arguments.
  if (raw.trim() === '') return { ok: true, args: {} };
  let value: unknown;
  try {
    value = JSON.parse(raw);
    // Some models encode the object twice ("{\"a\":1}"); unwrap one level.
    if (typeof value === 'string' && value.trim().startsWith('{')) value = JSON.parse(value);
  } catch (error) {
    return {
      ok: false,
      error: {
        reason: 'type',
        field: ARGUMENTS_FIELD,
        detail: quiet ? 'the arguments are not valid JSON' : `the arguments are not valid JSON: ${describeError(error)}`,
        hint: OBJECT_HINT,
      },
    };
  }
  if (!isRecord(value)) {
    return {
      ok: false,
      error: {
        reason: 'type',
        field: ARGUMENTS_FIELD,
        detail: `the arguments must be a JSON object, got ${jsonType(value)}`,
        hint: OBJECT_HINT,
      },
    };
  }
  return { ok: true, args: value };
}

const NUMERIC = /^-?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/** Converts quoted booleans and numbers where the schema wants them; everything else is left alone. */
function coerceScalars(value: unknown, schema: unknown): unknown {
  if (!isRecord(schema)) return value;
  if (typeof value === 'string') {
    const types = typeList(schema.type);
    if (types.includes('string')) return value;
    const text = value.trim();
    if (types.includes('boolean') && (text === 'true' || text === 'false')) return text === 'true';
    if ((types.includes('number') || types.includes('integer')) && NUMERIC.test(text)) {
      const n = Number(text);
      if (Number.isFinite(n)) return n;
    }
    return value;
  }
  if (Array.isArray(value)) return isRecord(schema.items) ? value.map((v) => coerceScalars(v, schema.items)) : value;
  if (isRecord(value) && isRecord(schema.properties)) {
    for (const [key, propertySchema] of Object.entries(schema.properties)) {
      if (Object.hasOwn(value, key)) value[key] = coerceScalars(value[key], propertySchema);
    }
  }
  return value;
}

interface Problem {
  reason: ToolErrorReason;
  field: string;
  detail: string;
  hint?: string;
}

const RANGE_KEYWORDS = new Set([
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'minLength',
  'maxLength',
  'minItems',
  'maxItems',
  'minProperties',
  'maxProperties',
  'uniqueItems',
]);

/** `quiet`: the offending value is not quoted (it may be a secret). */
function describeProblem(e: ErrorObject, quiet = false): Problem {
  const at = fieldPath(e.instancePath);
  const field = at || ARGUMENTS_FIELD;
  const params = e.params as Record<string, unknown>;
  const got = quiet ? '(value not shown)' : preview(e.data);
  switch (e.keyword) {
    case 'required': {
      const missing = String(params.missingProperty);
      const name = at ? `${at}.${missing}` : missing;
      const property = propertySchema(e.parentSchema, missing);
      const about = property ? describeSchema(property) : '';
      return {
        reason: 'required',
        field: name,
        detail: `missing required argument "${name}"`,
        hint: `add "${name}"${about ? ` (${about})` : ''}`,
      };
    }
    case 'type': {
      const expected = typeList(params.type).join(' or ');
      const hint = expected === 'boolean' ? 'use true or false' : expected === 'array' ? 'send a JSON array' : undefined;
      return { reason: 'type', field, detail: `"${field}" must be ${expected}, got ${jsonType(e.data)} ${got}`, ...(hint ? { hint } : {}) };
    }
    case 'enum':
    case 'const': {
      const allowed = e.keyword === 'enum' ? (params.allowedValues as unknown[]) : [params.allowedValue];
      return {
        reason: 'enum',
        field,
        detail: `"${field}" must be one of the allowed values, got ${got}`,
        hint: `allowed values: ${allowed.map((v) => JSON.stringify(v)).join(', ')}`,
      };
    }
    case 'format':
      return { reason: 'format', field, detail: `"${field}" must be a valid ${String(params.format)}, got ${got}` };
    case 'pattern':
      return { reason: 'format', field, detail: `"${field}" must match the pattern ${String(params.pattern)}, got ${got}` };
    case 'additionalProperties': {
      const extra = String(params.additionalProperty);
      const name = at ? `${at}.${extra}` : extra;
      const known = isRecord(e.parentSchema?.properties) ? Object.keys(e.parentSchema.properties) : [];
      return {
        reason: 'type',
        field: name,
        detail: `unknown argument "${name}"`,
        hint: known.length > 0 ? `known arguments here: ${known.join(', ')}` : 'send no other arguments',
      };
    }
    default:
      if (RANGE_KEYWORDS.has(e.keyword))
        return { reason: 'range', field, detail: `"${field}" ${e.message ?? 'is out of range'}, got ${got}` };
      return { reason: 'type', field, detail: `"${field}" ${e.message ?? 'is invalid'}` };
  }
}

/** One error for the model: the first problem's reason and field, the first few spelled out. */
function summarizeProblems(problems: Problem[]): ToolErrorInfo {
  const first = problems[0];
  if (!first) return { reason: 'type', field: ARGUMENTS_FIELD, detail: 'the arguments do not match the schema' };
  const shown = problems.slice(0, MAX_REPORTED_PROBLEMS);
  const more = problems.length - shown.length;
  const detail = shown.map((p) => p.detail).join('; ') + (more > 0 ? `; and ${more} more problem${more === 1 ? '' : 's'}` : '');
  const hints = [...new Set(shown.flatMap((p) => (p.hint ? [p.hint] : [])))];
  return { reason: first.reason, field: first.field, detail, ...(hints.length > 0 ? { hint: hints.join('; ') } : {}) };
}

/** `/lights/0/level` → `lights[0].level`. */
function fieldPath(pointer: string): string {
  let out = '';
  for (const raw of pointer.split('/').slice(1)) {
    const part = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    out += /^\d+$/.test(part) ? `[${part}]` : out ? `.${part}` : part;
  }
  return out;
}

function propertySchema(parent: unknown, name: string): Record<string, unknown> | undefined {
  if (!isRecord(parent) || !isRecord(parent.properties)) return undefined;
  const property = parent.properties[name];
  return isRecord(property) ? property : undefined;
}

function describeSchema(schema: Record<string, unknown>): string {
  const parts: string[] = [];
  const types = typeList(schema.type);
  if (types.length > 0) parts.push(types.join(' or '));
  if (Array.isArray(schema.enum)) parts.push(`one of ${schema.enum.map((v) => JSON.stringify(v)).join(', ')}`);
  if (typeof schema.description === 'string') parts.push(truncate(schema.description, 80));
  return parts.join(': ');
}

function typeList(type: unknown): string[] {
  if (typeof type === 'string') return [type];
  return Array.isArray(type) ? type.filter((t): t is string => typeof t === 'string') : [];
}

function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (Number.isInteger(value)) return 'integer';
  return typeof value;
}

function preview(value: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return truncate(text, 40);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** One line of at most `max` characters (code points, so no emoji is split), with … when cut. */
export function truncate(text: string, max: number): string {
  const chars = Array.from(text.replace(/\s+/g, ' ').trim());
  return chars.length <= max ? chars.join('') : `${chars.slice(0, max - 1).join('')}…`;
}

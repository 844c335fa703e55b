/**
 * OpenClaw-format plugins (docs/openclaw.md, docs/decisions/0013): a folder with
 * `openclaw.plugin.json` (id, configSchema, contracts.tools, toolMetadata) and a package.json whose
 * `openclaw.extensions` names the built entry, which default-exports `definePluginEntry({ id, name,
 * description, register(api) })` from `openclaw/plugin-sdk/plugin-entry` and registers tools with
 * `api.registerTool({ name, description, parameters, execute(toolCallId, params, signal) })`.
 *
 * Such a folder becomes a HomeAgent process plugin where it is installed: this writes its
 * plugin.json (kind process, the tools of contracts.tools as its only permitted tool names), the
 * HomeAgent runtime that hosts the OpenClaw entry in the plugin's own child process
 * (openclaw-runtime.ts, as homeagent-openclaw.mjs), the runtime's spec (entry, each tool's tier,
 * setting names) and a small `openclaw/plugin-sdk` in the folder's node_modules for the entry to
 * import. Nothing of the plugin's code runs here: everything is read from its two JSON files.
 *
 * Tiers come from the tool's declared effects, `toolMetadata.<tool>.sideEffecting`: false → read,
 * true → act, not declared → dangerous (a tool that says nothing of what it does needs the owner's
 * yes each time). What HomeAgent cannot host is refused here, naming the field: no tools, a
 * TypeScript entry (OpenClaw's own rule: installed plugins ship built JavaScript), settings that are
 * not plain values. What only shows when the code runs (a channel or a provider registered) fails
 * the plugin's start, naming the call (openclaw-runtime.ts).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { isAbsolute, join, normalize } from 'node:path';
import { describeError, HomeAgentError } from '../../shared/errors.js';
import type { ToolTier } from '../../shared/tool.js';
import { VERSION } from '../../shared/version.js';
import { type ConfigKey, type Manifest, PLUGIN_NAME } from '../manifest.js';
import { OPENCLAW_RUNTIME_SOURCE, OPENCLAW_SDK_PACKAGE, OPENCLAW_SDK_PLUGIN_ENTRY } from './openclaw-runtime.js';

export const OPENCLAW_MANIFEST = 'openclaw.plugin.json';
/** The runtime's file and its spec in the converted folder. */
export const RUNTIME_FILE = 'homeagent-openclaw.mjs';
export const SPEC_FILE = 'homeagent-openclaw.json';

/** What the runtime reads at start (SPEC_FILE). */
export interface OpenClawSpec {
  id: string;
  /** The OpenClaw entry, relative to the folder. */
  entry: string;
  tools: Record<string, ToolTier>;
  /** OpenClaw's config key → the HomeAgent setting key under plugin.<name>. */
  settings: Record<string, string>;
}

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const DESCRIPTION_MAX = 500;

export function isOpenClawPackage(dir: string): boolean {
  return existsSync(join(dir, OPENCLAW_MANIFEST)) && !existsSync(join(dir, 'plugin.json'));
}

function refuse(field: string, problem: string): never {
  throw new HomeAgentError('HA_ERR_OPENCLAW_MANIFEST', `${field}: ${problem}`);
}

function readJson(file: string, name: string): Record<string, unknown> {
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    refuse(name, `is not readable JSON (${describeError(error)})`);
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) refuse(name, 'must be a JSON object');
  return data as Record<string, unknown>;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The tier a tool's declared effects give it. */
export function tierOf(metadata: unknown): ToolTier {
  if (!isObject(metadata) || typeof metadata.sideEffecting !== 'boolean') return 'dangerous';
  return metadata.sideEffecting ? 'act' : 'read';
}

/** `apiKey` → `api_key`: HomeAgent setting keys are snake case. */
export function settingKey(key: string): string {
  return key
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/[^A-Za-z0-9_]/g, '_')
    .toLowerCase();
}

/** One property of configSchema as a HomeAgent setting (plain values only). */
function settingOf(key: string, schema: unknown, sensitive: boolean): ConfigKey {
  const field = `${OPENCLAW_MANIFEST} /configSchema/properties/${key}`;
  if (!isObject(schema)) refuse(field, 'must be a JSON schema object');
  const type = schema.type;
  if (type !== 'string' && type !== 'number' && type !== 'integer' && type !== 'boolean') {
    refuse(
      field,
      `type ${JSON.stringify(type)} is not supported; HomeAgent settings of OpenClaw plugins are strings, numbers, integers or booleans`,
    );
  }
  const zero = type === 'string' ? '' : type === 'boolean' ? false : 0;
  const description =
    typeof schema.description === 'string' && schema.description.trim() !== '' ? schema.description : `OpenClaw setting ${key}.`;
  const setting: ConfigKey = { type, default: schema.default ?? zero, description: description.slice(0, DESCRIPTION_MAX) };
  if (typeof schema.minimum === 'number') setting.minimum = schema.minimum;
  if (typeof schema.maximum === 'number') setting.maximum = schema.maximum;
  if (Array.isArray(schema.enum) && schema.enum.every((v) => typeof v === 'string') && schema.enum.length > 0) {
    setting.enum = schema.enum as string[];
    if (!setting.enum.includes(String(setting.default))) setting.default = setting.enum[0];
  }
  if (sensitive) setting.secret = true;
  return setting;
}

/** The built entry: package.json's openclaw.extensions[0], else index.js or dist/index.js. */
function entryOf(dir: string, pkg: Record<string, unknown> | undefined): string {
  let entry: string | undefined;
  if (pkg !== undefined) {
    const extensions = isObject(pkg.openclaw) ? pkg.openclaw.extensions : undefined;
    if (extensions !== undefined) {
      if (!Array.isArray(extensions) || typeof extensions[0] !== 'string')
        refuse('package.json /openclaw/extensions', 'must be a list of entry files');
      if (extensions.length > 1)
        refuse('package.json /openclaw/extensions', 'a package with several entries is not supported; install each as its own plugin');
      entry = extensions[0];
    }
  }
  entry ??= ['index.js', 'index.mjs', 'dist/index.js', 'dist/index.mjs'].find((f) => existsSync(join(dir, f)));
  const field = 'package.json /openclaw/extensions/0';
  if (entry === undefined) refuse(field, 'no entry: name the built JavaScript file (e.g. ./dist/index.js)');
  const relativeEntry = normalize(entry);
  if (isAbsolute(relativeEntry) || relativeEntry.startsWith('..')) refuse(field, `${entry} is outside the plugin`);
  if (/\.(ts|mts|cts|tsx)$/.test(relativeEntry))
    refuse(field, `${entry} is TypeScript; an installed plugin ships its built JavaScript (npm run build first)`);
  if (!/\.(js|mjs)$/.test(relativeEntry)) refuse(field, `${entry} is not a JavaScript module`);
  if (!existsSync(join(dir, relativeEntry))) refuse(field, `${entry} does not exist in the plugin`);
  return `./${relativeEntry}`;
}

function versionOf(pkg: Record<string, unknown> | undefined, manifest: Record<string, unknown>): string {
  const version = typeof pkg?.version === 'string' ? pkg.version : typeof manifest.version === 'string' ? manifest.version : '0.0.0';
  if (!/^\d+\.\d+\.\d+([-+][0-9A-Za-z.-]+)?$/.test(version))
    refuse('package.json /version', `${JSON.stringify(version)} is not a semver version`);
  return version;
}

/** Reads the OpenClaw package in `dir` and writes what makes it a HomeAgent process plugin there; returns its manifest. */
export function convertOpenClawPackage(dir: string): Manifest {
  const manifest = readJson(join(dir, OPENCLAW_MANIFEST), OPENCLAW_MANIFEST);
  const id = manifest.id;
  if (typeof id !== 'string' || !PLUGIN_NAME.test(id)) {
    refuse(`${OPENCLAW_MANIFEST} /id`, `${JSON.stringify(id)} must be 1-64 lowercase letters, digits and -_. (HomeAgent's plugin names)`);
  }
  if (!isObject(manifest.configSchema)) refuse(`${OPENCLAW_MANIFEST} /configSchema`, 'is required (an inline JSON schema object)');
  const contracts = isObject(manifest.contracts) ? manifest.contracts : {};
  const names = contracts.tools;
  if (!Array.isArray(names) || names.length === 0) {
    refuse(
      `${OPENCLAW_MANIFEST} /contracts/tools`,
      'lists no tools; HomeAgent hosts the agent tools of OpenClaw plugins (channels, providers and hooks are not supported)',
    );
  }
  const metadata = isObject(manifest.toolMetadata) ? manifest.toolMetadata : {};
  const tools: Record<string, ToolTier> = {};
  names.forEach((name, i) => {
    if (typeof name !== 'string' || !TOOL_NAME.test(name))
      refuse(`${OPENCLAW_MANIFEST} /contracts/tools/${i}`, `${JSON.stringify(name)} is not a tool name (letters, digits, _ and -)`);
    tools[name] = tierOf(metadata[name]);
  });

  const properties = isObject(manifest.configSchema.properties) ? manifest.configSchema.properties : {};
  const hints = isObject(manifest.uiHints) ? manifest.uiHints : {};
  const config: Record<string, ConfigKey> = {};
  const settings: Record<string, string> = {};
  for (const [key, schema] of Object.entries(properties)) {
    const name = settingKey(key);
    if (!/^[a-z][a-z0-9_]{0,63}$/.test(name) || name === 'enabled' || name in config) {
      refuse(`${OPENCLAW_MANIFEST} /configSchema/properties/${key}`, `cannot be a HomeAgent setting name (${name})`);
    }
    const hint = hints[key];
    config[name] = settingOf(key, schema, isObject(hint) && hint.sensitive === true);
    settings[key] = name;
  }

  const packageFile = join(dir, 'package.json');
  const pkg = existsSync(packageFile) ? readJson(packageFile, 'package.json') : undefined;
  const spec: OpenClawSpec = { id, entry: entryOf(dir, pkg), tools, settings };
  const description =
    typeof manifest.description === 'string' && manifest.description.trim() !== '' ? manifest.description : `OpenClaw plugin ${id}.`;
  const converted: Manifest = {
    name: id,
    version: versionOf(pkg, manifest),
    description: `${description.slice(0, DESCRIPTION_MAX - 12)} (OpenClaw)`,
    engine: `>=${VERSION.replace(/[-+].*$/, '')}`,
    kind: 'process',
    entry: RUNTIME_FILE,
    permissions: { tools: Object.keys(tools) },
    ...(Object.keys(config).length > 0 && { config }),
  };
  // The entry imports openclaw/plugin-sdk/...: HomeAgent's small stand-in (definePluginEntry), in
  // place of the real SDK, which needs OpenClaw's gateway around it.
  const sdk = join(dir, 'node_modules', 'openclaw');
  mkdirSync(join(sdk, 'plugin-sdk'), { recursive: true });
  writeFileSync(join(sdk, 'package.json'), OPENCLAW_SDK_PACKAGE);
  writeFileSync(join(sdk, 'plugin-sdk', 'plugin-entry.js'), OPENCLAW_SDK_PLUGIN_ENTRY);
  writeFileSync(join(dir, RUNTIME_FILE), OPENCLAW_RUNTIME_SOURCE);
  writeFileSync(join(dir, SPEC_FILE), `${JSON.stringify(spec, null, 2)}\n`);
  writeFileSync(join(dir, 'plugin.json'), `${JSON.stringify(converted, null, 2)}\n`);
  return converted;
}

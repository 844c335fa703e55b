/**
 * cfgmgr: the settings as tools for the agent. Every read and change goes through the kernel's
 * config.* control methods, so the settings registry does what it does for `homeagentctl config`:
 * it masks secrets, checks values against their definitions, writes the change and its history
 * row in one transaction and writes the audit record (actor `plugin:cfgmgr`); this plugin adds an
 * audit record saying on whose turn the agent did it.
 *
 * The tier a change needs depends on the key (setting-tier.ts), and a tool's tier is fixed: the
 * confirmation gate reads `definition.tier` before the tool runs (src/agent/confirmation-gate.ts),
 * and the act policy (core.agent.*_act_tools) matches tool names. So, as entity_call does for
 * critical entities, each change comes as two tools: `config_set` / `config_reset` (act) change
 * ordinary settings and answer a protected key with `unauthorized`, pointing to
 * `config_set_protected` / `config_reset_protected` (dangerous), which the gate holds until the
 * owner approves from an owner-proven input. An MQTT payload, a group chat, a web page or a
 * tool's output can thus make the model ask for a protected change, never make one.
 */

import type { HistoryEntry, SettingView } from '../../src/sdk/api.js';
import { type Caller, definePlugin, type PluginContext, type PluginInstance, type ToolContext, ToolError } from '../../src/sdk/index.js';
import { explainClasses, type ProtectedClass, settingTier, type TierVerdict } from './setting-tier.js';
import type { CfgmgrSettings } from './settings-schema.js';
import { SecretSettings } from './shown-arguments.js';

/** The actor of every change in the settings history and audit records. */
const CALLER: Caller = { actor: 'plugin:cfgmgr' };
/** How the settings registry shows a secret (src/config/settings-registry.ts SECRET_MASK). */
const SECRET_MASK = '********';
/** config_get shows a value up to this many times max_value_chars. */
const GET_VALUE_FACTOR = 10;

const KEY = {
  type: 'string',
  minLength: 1,
  maxLength: 256,
  description: 'The dotted setting key, as config_list shows it (core.log.level, plugin.timer.max_timers).',
};
const VALUE = {
  description:
    'The new value, of the setting\'s type (a number, true/false, text, a list or a mapping); text is converted for number and boolean settings ("30", "true").',
};

/** A setting as the tools show it: the registry's view, the value cut to a length, and the tier its changes need. */
interface ShownSetting {
  key: string;
  value: unknown;
  source: string;
  type: string;
  change_with: 'config_set' | 'config_set_protected';
  protected_because?: string;
  requires_restart?: true;
  restart_pending?: true;
}

export class CfgmgrPlugin implements PluginInstance {
  readonly #ctx: PluginContext<CfgmgrSettings>;
  readonly #unregister: Array<() => void> = [];
  /** Which settings are secret, so that a secret value is masked wherever a call's arguments are shown. */
  readonly #secrets = new SecretSettings();

  constructor(ctx: PluginContext<CfgmgrSettings>) {
    this.#ctx = ctx;
  }

  async start(): Promise<void> {
    await this.#learnSecrets();
    const tools = this.#ctx.tools;
    this.#unregister.push(
      tools.register<{ prefix?: string }>({
        name: 'config_list',
        tier: 'read',
        parallel_safe: true,
        no_memory: true,
        description:
          'Lists the settings whose keys start with prefix (core.agent., plugin.voice.): value (secrets masked), source, and which tool changes it. Use a narrower prefix when the list is cut.',
        parameters: {
          type: 'object',
          properties: { prefix: { type: 'string', maxLength: 256, description: 'Key prefix; empty or absent lists every setting.' } },
          additionalProperties: false,
        },
        execute: (args) => this.#list(args.prefix ?? ''),
      }),
      tools.register<{ key: string }>({
        name: 'config_get',
        tier: 'read',
        parallel_safe: true,
        no_memory: true,
        description:
          'One setting in full: value (secrets masked), default, source, type, bounds, description, whether it needs a restart, its last change, and which tool changes it.',
        parameters: { type: 'object', properties: { key: KEY }, required: ['key'], additionalProperties: false },
        execute: (args) => this.#get(args.key),
      }),
      tools.register<{ key: string; value: unknown }>({
        name: 'config_set',
        tier: 'act',
        no_memory: true,
        redact_arguments: this.#secrets.redact,
        description:
          'Changes an ordinary setting at once (checked against its definition; kept across restarts). Secrets, security settings, network addresses, files and programs, and settings that need a restart are refused here: use config_set_protected for them.',
        parameters: { type: 'object', properties: { key: KEY, value: VALUE }, required: ['key', 'value'], additionalProperties: false },
        execute: (args, context) => this.#set(args.key, args.value, context, false),
      }),
      tools.register<{ key: string; value: unknown }>({
        name: 'config_set_protected',
        tier: 'dangerous',
        no_memory: true,
        redact_arguments: this.#secrets.redact,
        description:
          "Changes a protected setting (a secret, a security setting, a network address, a file or program, or one that needs a restart). Runs only after the owner approves. A secret given here goes through the language model: the owner's own `homeagentctl config set` keeps it off the conversation.",
        parameters: { type: 'object', properties: { key: KEY, value: VALUE }, required: ['key', 'value'], additionalProperties: false },
        execute: (args, context) => this.#set(args.key, args.value, context, true),
      }),
      tools.register<{ key: string }>({
        name: 'config_reset',
        tier: 'act',
        no_memory: true,
        description:
          'Removes the run-time change of an ordinary setting: the configuration file, environment or default value applies again. Protected settings: config_reset_protected.',
        parameters: { type: 'object', properties: { key: KEY }, required: ['key'], additionalProperties: false },
        execute: (args, context) => this.#reset(args.key, context, false),
      }),
      tools.register<{ key: string }>({
        name: 'config_reset_protected',
        tier: 'dangerous',
        no_memory: true,
        description: 'Removes the run-time change of a protected setting. Runs only after the owner approves.',
        parameters: { type: 'object', properties: { key: KEY }, required: ['key'], additionalProperties: false },
        execute: (args, context) => this.#reset(args.key, context, true),
      }),
    );
  }

  async stop(): Promise<void> {
    for (const unregister of this.#unregister.splice(0)) unregister();
  }

  async #list(prefix: string): Promise<{ settings: ShownSetting[]; total: number; shown: number; hint?: string }> {
    const views = (await this.#call('config.list', { prefix })) as SettingView[];
    this.#secrets.note(views);
    const max = this.#ctx.settings.get('max_list_items');
    const chars = this.#ctx.settings.get('max_value_chars');
    const shown = views.slice(0, max).map((view) => this.#shown(view, chars));
    return {
      settings: shown,
      total: views.length,
      shown: shown.length,
      ...(views.length > max && {
        hint: `${views.length - max} more settings were left out: list a narrower prefix (their sections: ${sections(views.slice(max)).join(', ')})`,
      }),
    };
  }

  async #get(key: string): Promise<Record<string, unknown>> {
    const view = await this.#view(key);
    const history = (await this.#call('config.history', { key, limit: 1 })) as HistoryEntry[];
    const last = history[0];
    const chars = this.#ctx.settings.get('max_value_chars') * GET_VALUE_FACTOR;
    return {
      ...this.#shown(view, chars),
      default: cut(view.default, chars),
      description: view.description,
      ...(view.description_zh !== undefined && { description_zh: view.description_zh }),
      ...(view.minimum !== undefined && { minimum: view.minimum }),
      ...(view.maximum !== undefined && { maximum: view.maximum }),
      ...(view.enum !== undefined && { enum: view.enum }),
      ...(view.secret && { secret: true }),
      ...(view.file_only && { file_only: `only the configuration file or ${view.env} can set it` }),
      ...(last !== undefined && { last_change: { action: last.action, by: last.actor, at: last.at } }),
    };
  }

  async #set(key: string, value: unknown, context: ToolContext, approved: boolean): Promise<Record<string, unknown>> {
    if (holdsMask(value)) {
      throw new ToolError({
        reason: 'rejected',
        field: 'value',
        detail: `HA_ERR_CFGMGR_MASKED_VALUE: the value for ${key} holds ${SECRET_MASK}, the mask a secret is shown as; storing it would replace the secret with asterisks`,
        hint: 'give the real secret, or leave the secret fields out of what you change',
      });
    }
    const before = await this.#view(key);
    const verdict = this.#verdict(before, value);
    if (verdict.tier === 'dangerous' && !approved) throw protectedRefusal(key, verdict.classes, 'config_set_protected');
    const after = (await this.#call('config.set', { key, value })) as SettingView;
    this.#audit('cfgmgr.set', key, verdict, context);
    return this.#changed(after, verdict);
  }

  async #reset(key: string, context: ToolContext, approved: boolean): Promise<Record<string, unknown>> {
    const before = await this.#view(key);
    const verdict = this.#verdict(before);
    if (verdict.tier === 'dangerous' && !approved) throw protectedRefusal(key, verdict.classes, 'config_reset_protected');
    const after = (await this.#call('config.reset', { key })) as SettingView;
    this.#audit('cfgmgr.reset', key, verdict, context);
    return this.#changed(after, verdict);
  }

  #changed(view: SettingView, verdict: TierVerdict): Record<string, unknown> {
    const shown = this.#shown(view, this.#ctx.settings.get('max_value_chars'), verdict);
    return {
      ...shown,
      note: view.restart_pending
        ? 'stored; the running daemon keeps the old value until it restarts'
        : view.source === 'runtime'
          ? 'applied now and kept across restarts'
          : `applied now: the value from ${view.source} is used again`,
    };
  }

  /** Whose turn changed what: the registry's own record names only the plugin. */
  #audit(action: string, key: string, verdict: TierVerdict, context: ToolContext): void {
    this.#ctx.audit(action, {
      key,
      tier: verdict.tier,
      ...(verdict.classes.length > 0 && { protected: verdict.classes }),
      source: context.source,
      channel: context.channel,
      turn_trust: context.trust,
      task_id: context.task_id,
    });
  }

  #verdict(view: SettingView, proposed?: unknown): TierVerdict {
    return settingTier(
      { key: view.key, secret: view.secret, requires_restart: view.requires_restart, value: view.value },
      this.#ctx.settings.get('dangerous_keys'),
      proposed,
    );
  }

  #shown(view: SettingView, chars: number, verdict = this.#verdict(view)): ShownSetting {
    return {
      key: view.key,
      value: cut(view.value, chars),
      source: view.source,
      type: view.type,
      change_with: verdict.tier === 'dangerous' ? 'config_set_protected' : 'config_set',
      ...(verdict.classes.length > 0 && { protected_because: explainClasses(verdict.classes) }),
      ...(view.requires_restart && { requires_restart: true as const }),
      ...(view.restart_pending && { restart_pending: true as const }),
    };
  }

  async #view(key: string): Promise<SettingView> {
    const view = (await this.#call('config.get', { key })) as SettingView;
    this.#secrets.note([view]);
    return view;
  }

  /** Every setting's secret flag; without them every value of a change is shown masked, which is safe. */
  async #learnSecrets(): Promise<void> {
    try {
      this.#secrets.note((await this.#call('config.list', { prefix: '' })) as SettingView[]);
    } catch (error) {
      this.#ctx.log.warn({ err: error }, 'cfgmgr could not read which settings are secret; change requests show every value masked');
    }
  }

  /** A control call whose failure becomes a tool error the model can read, the registry's code first. */
  async #call(method: string, params: Record<string, unknown>): Promise<unknown> {
    try {
      return await this.#ctx.control.call(method, params, CALLER);
    } catch (error) {
      throw toolError(error);
    }
  }
}

/**
 * The act tool's answer for a protected key. Its reason is `unauthorized` (this tool may not change
 * that key), not `confirmation_required`: the agent ends the tool loop after a round whose every
 * call was rejected or held (src/agent/agent.ts), and the model must get the next round to call
 * the protected tool, which the gate then holds.
 */
function protectedRefusal(key: string, classes: readonly ProtectedClass[], tool: string): ToolError {
  return new ToolError({
    reason: 'unauthorized',
    field: 'key',
    detail: `HA_ERR_CFGMGR_PROTECTED: ${key} was not changed: changing it needs the owner's approval because ${explainClasses(classes)}`,
    hint: `call ${tool} with the same arguments; the owner is asked to approve it`,
  });
}

/** The registry's and the control API's codes, as reasons the model can act on. */
function toolError(error: unknown): ToolError {
  const code = typeof (error as { code?: unknown }).code === 'string' ? (error as { code: string }).code : 'HA_ERR_INTERNAL';
  const message = error instanceof Error ? error.message : String(error);
  const detail = `${code}: ${message}`;
  switch (code) {
    case 'HA_ERR_SETTINGS_UNKNOWN_KEY':
      return new ToolError({ reason: 'not_found', field: 'key', detail, hint: 'config_list shows the keys' });
    case 'HA_ERR_SETTINGS_INVALID_VALUE':
      return new ToolError({ reason: 'rejected', field: 'value', detail, hint: 'config_get shows the type and bounds' });
    case 'HA_ERR_SETTINGS_FILE_ONLY':
      return new ToolError({ reason: 'rejected', field: 'key', detail, hint: 'tell the owner to change it in the configuration file' });
    case 'HA_ERR_RPC_INVALID_PARAMS':
      return new ToolError({ reason: 'format', detail });
    case 'HA_ERR_RPC_UNKNOWN_METHOD':
      return new ToolError({ reason: 'unavailable', detail: `this daemon has no settings registry (${detail})` });
    default:
      return new ToolError({ reason: 'failed', detail });
  }
}

/** True when the value is, or holds anywhere inside it, the secret mask. */
function holdsMask(value: unknown, depth = 0): boolean {
  if (value === SECRET_MASK) return true;
  if (depth > 8 || value === null || typeof value !== 'object') return false;
  return Object.values(value).some((inner) => holdsMask(inner, depth + 1));
}

/** A long value as its JSON cut to `chars`, so one mapping cannot fill the model's context. */
function cut(value: unknown, chars: number): unknown {
  const text = JSON.stringify(value) ?? '';
  return text.length <= chars ? value : `${text.slice(0, chars)}… [cut: ${text.length - chars} more characters; config_get shows more]`;
}

/** `core.agent`, `plugin.voice`: the sections of the left-out keys, for the hint. */
function sections(views: readonly SettingView[]): string[] {
  return [...new Set(views.map((view) => view.key.split('.').slice(0, 2).join('.')))].slice(0, 12);
}

export default definePlugin<CfgmgrSettings>((ctx) => new CfgmgrPlugin(ctx));

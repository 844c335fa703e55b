/**
 * How config_set / config_set_protected arguments are shown outside the call (the audit record,
 * the logs, the owner's approval request and pending list, the web page's events): the `value` as
 * the settings registry would show it once stored, so a secret (an API key, a password) never
 * reaches them, while the owner still sees the key and any value that is not a secret (the
 * address or program they approve).
 *
 * The kernel asks synchronously, before the call runs, but the registry (which knows which
 * settings are secret) answers only through async control calls; so the secret flags are kept
 * here, read at start and from every view the tools fetch. A key not known yet is shown masked:
 * hiding an ordinary value for once costs a less informative prompt, showing a secret costs the
 * secret.
 */
import { SECRET_SHOWN } from '../../src/sdk/index.js';
import { settingTier } from './setting-tier.js';

/** Field names whose values are masked inside a mapping or list value: the registry's secret fields, and headers and environments (they carry credentials). */
const SECRET_FIELD = /^(api_key|password|token|secret|headers|env)$/;
/** Nesting followed at most; deeper values are masked whole. */
const MAX_DEPTH = 8;

export class SecretSettings {
  /** Setting key → whether the registry marks it secret. */
  readonly #secret = new Map<string, boolean>();

  /** Records what the registry says of settings (config.list / config.get views). */
  note(views: ReadonlyArray<{ key: string; secret: boolean }>): void {
    for (const view of views) this.#secret.set(view.key, view.secret);
  }

  /** The tool's redact_arguments: `value` masked as far as it is, or may be, a secret. */
  redact = (args: Record<string, unknown>): Record<string, unknown> => {
    if (!('value' in args)) return args;
    return { ...args, value: this.shownValue(args.key, args.value) };
  };

  shownValue(key: unknown, value: unknown): unknown {
    if (typeof key !== 'string') return SECRET_SHOWN;
    const registrySecret = this.#secret.get(key);
    // Unknown to the registry as far as we know: it may be a secret.
    if (registrySecret !== false) return masked(value);
    // A mapping or list shows its fields, secret ones masked (core.llm.sources: the owner sees where the words go).
    if (value !== null && typeof value === 'object') return maskFields(value, 0);
    return namedSecret(key) ? masked(value) : value;
  }
}

/** A secret by its name (`*_api_key`, `*_password`, `*_token`), though the registry does not mark it. */
function namedSecret(key: string): boolean {
  return settingTier({ key, secret: false, requires_restart: false }, []).classes.includes('secret');
}

/** An empty value says "clear it", which the owner should see; anything else is masked. */
function masked(value: unknown): unknown {
  return value === '' || value === null ? value : SECRET_SHOWN;
}

function maskFields(value: unknown, depth: number): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (depth >= MAX_DEPTH) return SECRET_SHOWN;
  if (Array.isArray(value)) return value.map((item) => maskFields(item, depth + 1));
  return Object.fromEntries(
    Object.entries(value).map(([name, inner]) => [name, SECRET_FIELD.test(name) ? masked(inner) : maskFields(inner, depth + 1)]),
  );
}

/**
 * Which tier a change of one setting needs, decided per key (and, for mappings and lists, by the
 * fields of the value), so that the agent may change an ordinary setting on anyone's word the act
 * policy allows, but only the owner's approval changes one that guards the house:
 *
 * - secrets (the registry's `secret`, or a secret field inside a mapping such as core.llm.sources);
 * - security settings: who is the owner or may talk, what the agent may do without asking, the
 *   cmd and files sandboxes, the plugin sandbox's limits, logins and sessions, TLS, the audit
 *   history, automations (they act without the model, so a rule could do what a tool may not);
 * - network addresses: hosts, ports, URLs and bind addresses (where the daemon listens, and where it
 *   sends the household's words);
 * - files and programs a setting names (what the daemon reads, writes or runs);
 * - anything that needs a restart (the registry's `requires_restart`): the change cannot be tried
 *   and undone while the daemon runs, and most such keys are listeners and plugins on or off;
 * - the keys the owner adds in plugin.cfgmgr.dangerous_keys, and cfgmgr's own settings (otherwise
 *   an act-tier change could widen what act-tier changes may do).
 *
 * Everything else is `act`. The rules read key names because the wire view of a setting
 * (SettingView) carries no more than its type, secrecy and restart flag; a new setting named like
 * its kind (`*_host`, `*_token`, `*_file`) is classified without touching this file.
 */

/** Why a setting's changes need the owner's approval. */
export type ProtectedClass = 'secret' | 'security' | 'network' | 'files' | 'restart' | 'listed';

export interface SettingFacts {
  key: string;
  secret: boolean;
  requires_restart: boolean;
  /** The value shown now (secrets masked); its field names count for mappings and lists. */
  value?: unknown;
}

export interface TierVerdict {
  tier: 'act' | 'dangerous';
  /** Empty for act. */
  classes: ProtectedClass[];
}

/** Words of a key's last part that make it a secret (`api_key`, `broker_password`, `access_token`). */
const SECRET_WORDS = new Set(['api', 'password', 'passwd', 'token', 'secret', 'credentials', 'key']);
/** Words of a key's last part that make it a security setting. */
const SECURITY_WORDS = new Set([
  'owner',
  'owners',
  'auth',
  'trust',
  'allow',
  'allowed',
  'allowlist',
  'preauthorized',
  'permission',
  'permissions',
  'isolation',
  'sandbox',
  'runner',
  'login',
  'session',
  'sessions',
  'confirmation',
  'approvals',
  'anonymous',
  'unauthorized',
  'tls',
  'ca',
  'cert',
]);
/** Whole keys (or prefixes ending in `.`) that are security settings though their names do not say so. */
const SECURITY_KEYS = [
  'core.agent.household_act_tools',
  'core.agent.untrusted_act_tools',
  'core.home.people',
  'core.automations.',
  'core.settings.',
  'core.tracker.tracked_tools',
  'core.plugins.lua_',
  'core.plugins.process_',
  'core.plugins.install_max_bytes',
  'core.supervisor.debug_methods',
  'plugin.onebot.require_at_in_groups',
  'plugin.files.roots',
  'plugin.cmd.workdir',
  'plugin.cfgmgr.',
];
/** Last words of a key that make it a network address (`broker_port`, `allowed_hosts`, `openai_base_url`). */
const NETWORK_WORDS = new Set(['host', 'hosts', 'port', 'url', 'urls', 'addr', 'address', 'bind', 'listen', 'endpoint', 'endpoints']);
/**
 * The LLM sources hold addresses and keys even while the mapping is empty; the adapter decides
 * which program speaks to the model's address.
 */
const NETWORK_KEYS = ['core.llm.sources', 'core.llm.adapter'];
/** Last words of a key that name a file, a folder or a program (`backup_dir`, `piper_program`; not `command_timeout_ms`). */
const FILE_WORDS = new Set(['dir', 'file', 'path', 'socket', 'program', 'command', 'workdir', 'roots']);

/** Field names inside a mapping or list value that carry the same weight as a key of that kind. */
const SECRET_FIELD = /^(api_key|password|token|secret|headers|env)$/;
const NETWORK_FIELD = /^(url|base_url|host|port|address|endpoint)$/;
const FILE_FIELD = /^(command|args|cwd|path|file)$/;

/** The tier a change of this setting needs; `proposed` is the value a config_set would store. */
export function settingTier(facts: SettingFacts, listed: readonly string[], proposed?: unknown): TierVerdict {
  const words = lastPart(facts.key).split('_');
  const has = (set: ReadonlySet<string>) => words.some((word) => set.has(word));
  const endsWith = (set: ReadonlySet<string>) => set.has(words[words.length - 1] ?? '');
  const fields = new Set([...fieldNames(facts.value), ...fieldNames(proposed)]);
  const anyField = (pattern: RegExp) => [...fields].some((field) => pattern.test(field));
  const classes: ProtectedClass[] = [];
  if (facts.secret || has(SECRET_WORDS) || anyField(SECRET_FIELD) || facts.key === 'core.llm.sources') classes.push('secret');
  if (has(SECURITY_WORDS) || SECURITY_KEYS.some((entry) => matchesEntry(facts.key, entry))) classes.push('security');
  if (endsWith(NETWORK_WORDS) || NETWORK_KEYS.includes(facts.key) || anyField(NETWORK_FIELD)) classes.push('network');
  if (endsWith(FILE_WORDS) || anyField(FILE_FIELD)) classes.push('files');
  if (facts.requires_restart) classes.push('restart');
  if (listed.some((pattern) => globMatch(facts.key, pattern))) classes.push('listed');
  return { tier: classes.length > 0 ? 'dangerous' : 'act', classes };
}

/** What each class means, for the model (tool results) and the person (docs). */
export const CLASS_WHY: Record<ProtectedClass, { en: string; zh: string }> = {
  secret: { en: 'it is a secret', zh: '它是密钥或密码' },
  security: {
    en: 'it decides who may do what (trust, owners, sandboxes, logins, audit)',
    zh: '它决定谁能做什么（信任、主人、沙箱、登录、审计）',
  },
  network: { en: 'it is a network address (host, port, URL)', zh: '它是网络地址（主机、端口、URL）' },
  files: { en: 'it names a file, folder or program', zh: '它指定文件、目录或程序' },
  restart: { en: 'it takes effect only after a restart', zh: '它要重启后才生效' },
  listed: { en: 'the owner listed it in plugin.cfgmgr.dangerous_keys', zh: '主人把它列在 plugin.cfgmgr.dangerous_keys 中' },
};

/** `because it is a secret and it takes effect only after a restart`. */
export function explainClasses(classes: readonly ProtectedClass[]): string {
  return classes.map((c) => CLASS_WHY[c].en).join(' and ');
}

function lastPart(key: string): string {
  return key.slice(key.lastIndexOf('.') + 1);
}

function matchesEntry(key: string, entry: string): boolean {
  return entry.endsWith('.') || entry.endsWith('_') ? key.startsWith(entry) : key === entry;
}

/** `plugin.voice.*`, `*_model`: `*` stands for any run of characters. */
export function globMatch(key: string, pattern: string): boolean {
  const parts = pattern.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${parts.join('.*')}$`).test(key);
}

/** Every field name inside a mapping or list value, at any depth (bounded: values are settings, not documents). */
function fieldNames(value: unknown, depth = 0): string[] {
  if (depth > 6 || value === null || typeof value !== 'object') return [];
  if (Array.isArray(value)) return value.flatMap((item) => fieldNames(item, depth + 1));
  return Object.entries(value).flatMap(([name, inner]) => [name, ...fieldNames(inner, depth + 1)]);
}

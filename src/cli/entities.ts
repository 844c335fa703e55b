/**
 * `homeagentctl entities list|get|call|history|rename|area|alias` and `homeagentctl sensors`: the
 * home's entities in a running daemon (the `entities.*` control methods). `sensors` is the quick
 * look people want most: every sensor and binary sensor with its value and how long ago it last
 * changed. States are shown in words of the terminal's language (a door is "open" / "开着", not
 * "on"; src/api/state-words.ts); diagnostic entities (battery, signal) are marked. rename, area and
 * alias are the owner's changes, kept over the driver's values (the CLI socket's peer is the owner).
 */
import {
  ENTITY_DOMAINS,
  type EntitiesGetResult,
  type EntitiesHistoryResult,
  type EntityInfo,
  type EntityState,
  type StateHistoryRow,
} from '../api/home.js';
import { showStateIn } from '../api/state-words.js';
import type { Language } from '../shared/language.js';
import { cliLanguage } from './cli-language.js';
import { type CommandRunOptions, withDaemon } from './command-client.js';
import { CommandUsageError, defineCommand } from './command-module.js';
import { duration, table } from './format.js';

/** homeagentctl's option table entries for entities and sensors (merged into its parseArgs options). */
export const ENTITIES_OPTIONS = {
  domain: { type: 'string' },
  area: { type: 'string' },
  data: { type: 'string' },
  hours: { type: 'string' },
  none: { type: 'boolean' },
  default: { type: 'boolean' },
} as const;

export type EntitiesFlags = {
  [K in keyof typeof ENTITIES_OPTIONS]?: (typeof ENTITIES_OPTIONS)[K]['type'] extends 'boolean' ? boolean | undefined : string | undefined;
};

export type EntitiesCommand =
  | { command: 'list'; domain?: string; area?: string }
  | { command: 'get'; entity: string }
  | { command: 'call'; entity: string; service: string; data: Record<string, unknown> }
  | { command: 'history'; entity: string; hours: number }
  /** name undefined: the driver's name again. */
  | { command: 'rename'; entity: string; name?: string }
  /** area null: no area; undefined: the driver's area again. */
  | { command: 'area'; entity: string; area?: string | null }
  | { command: 'alias'; entity: string; action: 'add' | 'remove'; alias: string }
  | { command: 'alias'; entity: string; action: 'reset' }
  | { command: 'sensors'; area?: string };

export class EntitiesUsageError extends CommandUsageError {}

/** `homeagentctl entities` for the command catalogue (src/cli/commands.ts): its flags, help and parser. */
export const entitiesCommand = defineCommand<EntitiesFlags>({
  name: 'entities',
  options: ENTITIES_OPTIONS,
  usage: [
    {
      synopsis: 'entities list [--domain D] [--area A]',
      about: "the home's entities with state, area and when they last changed",
      zh: '家中的实体，附状态、区域和上次变化时间',
    },
    {
      synopsis: 'entities get ENTITY',
      about: 'one entity (id, name or alias, "kitchen light") with its recent history',
      zh: '一个实体（ID、名称或别名，如 "kitchen light"）及其近期历史',
    },
    {
      synopsis: 'entities call ENTITY SERVICE [--data JSON]',
      about: 'call a service, e.g. entities call kitchen light turn_on --data \'{"brightness":128}\'',
      zh: '调用服务，例如 entities call kitchen light turn_on --data \'{"brightness":128}\'',
    },
    {
      synopsis: 'entities history ENTITY [--hours N]',
      about: 'stored states of the last N hours (default 24)',
      zh: '最近 N 小时存储的状态（默认 24）',
    },
    {
      synopsis: 'entities rename ENTITY "NEW NAME" | --default',
      about: "the owner's name (kept over rediscovery); --default: the driver's",
      zh: '主人起的名字（重新发现后仍保留）；--default：恢复驱动给的名字',
    },
    {
      synopsis: 'entities area ENTITY AREA | --none | --default',
      about: "move it to an area, to none, or back to the driver's",
      zh: '移到某个区域、不属于任何区域，或恢复驱动给的区域',
    },
    {
      synopsis: 'entities alias ENTITY add|remove ALIAS | --default',
      about: "another name people use for it; --default: the driver's aliases",
      zh: '家人对它的其他叫法；--default：恢复驱动给的别名',
    },
  ],
  parse: (args, flags) => {
    const command = parseEntitiesCommand(args, flags);
    return (context) => runEntities(command, context);
  },
});

/** `homeagentctl sensors` for the command catalogue (src/cli/commands.ts): its flags, help and parser. */
export const sensorsCommand = defineCommand<EntitiesFlags>({
  name: 'sensors',
  options: ENTITIES_OPTIONS,
  usage: [
    {
      synopsis: 'sensors [--area A]',
      about: 'every sensor and binary sensor with its value and age',
      zh: '所有传感器和二值传感器的值及其更新时间',
    },
  ],
  parse: (args, flags) => {
    const command = parseSensorsCommand(args, flags);
    return (context) => runEntities(command, context);
  },
});

const COMMANDS = 'list, get, call, history, rename, area or alias';
const COMMANDS_ZH = 'list、get、call、history、rename、area 或 alias';
const DEFAULT_HOURS = 24;
/** core.home.history_days at most (3650 days). */
const MAX_HOURS = 87_600;
const HOUR_MS = 3_600_000;

const ALLOWED: Record<EntitiesCommand['command'], ReadonlyArray<keyof EntitiesFlags>> = {
  list: ['domain', 'area'],
  get: [],
  call: ['data'],
  history: ['hours'],
  rename: ['default'],
  area: ['none', 'default'],
  alias: ['default'],
  sensors: ['area'],
};

/** The entities flags given on the command line (the parser refuses those its subcommand does not take). */
export function entitiesFlagsUsed(flags: EntitiesFlags): Array<keyof EntitiesFlags> {
  return (Object.keys(ENTITIES_OPTIONS) as Array<keyof EntitiesFlags>).filter((k) => flags[k] !== undefined);
}

/** Reads `entities <sub> …` (positionals after `entities`); throws EntitiesUsageError. */
export function parseEntitiesCommand(positionals: readonly string[], flags: EntitiesFlags): EntitiesCommand {
  const [sub, ...rest] = positionals;
  if (sub === undefined) throw new EntitiesUsageError(`entities needs a command: ${COMMANDS}`, `entities 需要一个子命令：${COMMANDS_ZH}`);
  if (sub === 'sensors' || !Object.hasOwn(ALLOWED, sub))
    throw new EntitiesUsageError(`unknown entities command ${sub}; use ${COMMANDS}`, `未知的 entities 子命令 ${sub}；可用 ${COMMANDS_ZH}`);
  const command = sub as Exclude<EntitiesCommand['command'], 'sensors'>;
  refuseStray(`entities ${command}`, command, flags);
  // Words are joined so that `entities get kitchen light` needs no quotes.
  const entity = (words: readonly string[]): string => {
    const text = words.join(' ').trim();
    if (text === '')
      throw new EntitiesUsageError(
        `entities ${command} needs an ENTITY (id, name or alias)`,
        `entities ${command} 需要一个 ENTITY（ID、名称或别名）`,
      );
    return text;
  };
  switch (command) {
    case 'list':
      if (rest.length > 0)
        throw new EntitiesUsageError(
          'entities list takes no arguments (filter with --domain and --area)',
          'entities list 不接受参数（用 --domain 和 --area 筛选）',
        );
      return {
        command,
        ...(flags.domain !== undefined && { domain: domainFlag(flags.domain) }),
        ...(flags.area !== undefined && { area: nonEmpty(flags.area, '--area needs an AREA', '--area 需要一个 AREA') }),
      };
    case 'get':
      return { command, entity: entity(rest) };
    case 'call': {
      // The service is the last word: `entities call kitchen light turn_on`.
      const service = rest.at(-1);
      if (rest.length < 2 || service === undefined)
        throw new EntitiesUsageError('entities call needs an ENTITY and a SERVICE', 'entities call 需要 ENTITY 和 SERVICE');
      return { command, entity: entity(rest.slice(0, -1)), service, data: flags.data === undefined ? {} : dataFlag(flags.data) };
    }
    case 'history':
      return {
        command,
        entity: entity(rest),
        hours: flags.hours === undefined ? DEFAULT_HOURS : integer(flags.hours, '--hours', 1, MAX_HOURS),
      };
    case 'rename': {
      // The new name is the last word: `entities rename kitchen light "Ceiling light"`.
      if (flags.default === true) return { command, entity: entity(rest) };
      const name = rest.at(-1)?.trim();
      if (rest.length < 2 || name === undefined || name === '') {
        throw new EntitiesUsageError(
          'entities rename needs an ENTITY and the NEW NAME (quoted when it has spaces), or --default',
          'entities rename 需要 ENTITY 和新名称 NEW NAME（含空格时加引号），或 --default',
        );
      }
      return { command, entity: entity(rest.slice(0, -1)), name };
    }
    case 'area': {
      if (flags.none === true && flags.default === true)
        throw new EntitiesUsageError(
          'entities area takes --none or --default, not both',
          'entities area 接受 --none 或 --default，不能同时给出',
        );
      if (flags.none === true) return { command, entity: entity(rest), area: null };
      if (flags.default === true) return { command, entity: entity(rest) };
      const area = rest.at(-1)?.trim();
      if (rest.length < 2 || area === undefined || area === '') {
        throw new EntitiesUsageError(
          "entities area needs an ENTITY and an AREA, or --none (no area) or --default (the driver's)",
          'entities area 需要 ENTITY 和 AREA，或 --none（不属于任何区域）或 --default（驱动给的区域）',
        );
      }
      return { command, entity: entity(rest.slice(0, -1)), area };
    }
    case 'alias': {
      if (flags.default === true) return { command, entity: entity(rest), action: 'reset' };
      // `entities alias kitchen light add 厨房灯`: the last add/remove splits the entity from the alias.
      const at = Math.max(rest.lastIndexOf('add'), rest.lastIndexOf('remove'));
      const alias = rest
        .slice(at + 1)
        .join(' ')
        .trim();
      if (at < 1 || alias === '') {
        throw new EntitiesUsageError(
          'entities alias needs an ENTITY, add or remove, and an ALIAS, e.g. entities alias kitchen light add 厨房灯',
          'entities alias 需要 ENTITY、add 或 remove，以及 ALIAS，例如 entities alias kitchen light add 厨房灯',
        );
      }
      return { command, entity: entity(rest.slice(0, at)), action: rest[at] as 'add' | 'remove', alias };
    }
  }
}

/** Reads `sensors` (positionals after `sensors`); throws EntitiesUsageError. */
export function parseSensorsCommand(positionals: readonly string[], flags: EntitiesFlags): EntitiesCommand {
  if (positionals.length > 0)
    throw new EntitiesUsageError('sensors takes no arguments (filter with --area)', 'sensors 不接受参数（用 --area 筛选）');
  refuseStray('sensors', 'sensors', flags);
  return {
    command: 'sensors',
    ...(flags.area !== undefined && { area: nonEmpty(flags.area, '--area needs an AREA', '--area 需要一个 AREA') }),
  };
}

function refuseStray(what: string, command: EntitiesCommand['command'], flags: EntitiesFlags): void {
  const stray = entitiesFlagsUsed(flags).filter((f) => !ALLOWED[command].includes(f));
  if (stray.length > 0) throw new EntitiesUsageError(`--${stray[0]} does not belong to ${what}`, `--${stray[0]} 不属于 ${what}`);
}

function domainFlag(value: string): string {
  const domain = value.trim();
  if (!(ENTITY_DOMAINS as readonly string[]).includes(domain)) {
    throw new EntitiesUsageError(`--domain must be one of ${ENTITY_DOMAINS.join(', ')}`, `--domain 须为 ${ENTITY_DOMAINS.join('、')} 之一`);
  }
  return domain;
}

function dataFlag(text: string): Record<string, unknown> {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    throw new EntitiesUsageError(
      `--data must be a JSON object, e.g. '{"brightness": 128}'; ${JSON.stringify(text)} is not JSON`,
      `--data 须为 JSON 对象，例如 '{"brightness": 128}'；${JSON.stringify(text)} 不是 JSON`,
    );
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    throw new EntitiesUsageError(
      `--data must be a JSON object, e.g. '{"brightness": 128}'`,
      `--data 须为 JSON 对象，例如 '{"brightness": 128}'`,
    );
  }
  return data as Record<string, unknown>;
}

function nonEmpty(value: string, problem: string, problemZh: string): string {
  if (value.trim() === '') throw new EntitiesUsageError(problem, problemZh);
  return value.trim();
}

function integer(text: string, flag: string, min: number, max: number): number {
  const n = Number(text);
  if (text.trim() === '' || !Number.isInteger(n) || n < min || n > max) {
    throw new EntitiesUsageError(`${flag} must be a whole number from ${min} to ${max}`, `${flag} 须为 ${min} 到 ${max} 之间的整数`);
  }
  return n;
}

/**
 * Runs a parsed entities or sensors command; resolves with the exit code. Daemon errors are thrown
 * (homeagentctl reports them). `options.now` is the clock for --hours and the "changed … ago" column.
 */
export async function runEntities(command: EntitiesCommand, options: CommandRunOptions & { language?: Language }): Promise<number> {
  const now = (options.now ?? Date.now)();
  const lang = options.language ?? cliLanguage();
  return withDaemon(options, undefined, async ({ call, print }) => {
    switch (command.command) {
      case 'list': {
        const params = {
          ...(command.domain !== undefined && { domain: command.domain }),
          ...(command.area !== undefined && { area: command.area }),
        };
        return print((await call('entities.list', params)) as EntityInfo[], (r) => formatEntityList(r, now, lang));
      }
      case 'get':
        return print((await call('entities.get', { entity: command.entity })) as EntitiesGetResult, (r) => formatEntity(r, now, lang));
      case 'call':
        return print(
          (await call('entities.call', { entity: command.entity, service: command.service, data: command.data })) as EntityInfo,
          (r) =>
            lang === 'zh'
              ? `${command.service}：${r.entity_id}（${r.name}）现在${entityState(r, 'zh')}`
              : `${command.service}: ${r.entity_id} (${r.name}) is now ${entityState(r, 'en')}`,
        );
      case 'rename':
        return print(
          (await call('entities.rename', {
            entity: command.entity,
            ...(command.name !== undefined && { name: command.name }),
          })) as EntityInfo,
          (r) => changed(r, lang),
        );
      case 'area':
        return print(
          (await call('entities.set_area', {
            entity: command.entity,
            ...(command.area !== undefined && { area: command.area }),
          })) as EntityInfo,
          (r) => changed(r, lang),
        );
      case 'alias': {
        const params =
          command.action === 'reset'
            ? { entity: command.entity, reset: true }
            : { entity: command.entity, [command.action]: [command.alias] };
        return print((await call('entities.aliases', params)) as EntityInfo, (r) => changed(r, lang));
      }
      case 'history':
        return print(
          (await call('entities.history', {
            entity: command.entity,
            from: now - command.hours * HOUR_MS,
            to: now,
          })) as EntitiesHistoryResult,
          (r) => formatHistory(r, command.hours),
        );
      case 'sensors': {
        const area = command.area === undefined ? {} : { area: command.area };
        const sensors = (await call('entities.list', { domain: 'sensor', ...area })) as EntityInfo[];
        const binary = (await call('entities.list', { domain: 'binary_sensor', ...area })) as EntityInfo[];
        const all = [...sensors, ...binary].sort((a, b) => a.entity_id.localeCompare(b.entity_id));
        return print(all, (r) => formatSensors(r, now, lang));
      }
    }
  });
}

// ---- readable output ----

export function showState(state: EntityState, unit: string | null): string {
  if (state === null) return 'unknown';
  return unit === null || typeof state !== 'number' ? String(state) : `${state} ${unit}`;
}

/** An entity's state in words of its kind ("open", "开着", "21.5 °C"); English words in lower case, as a table reads them. */
export function entityState(e: Pick<EntityInfo, 'domain' | 'device_class' | 'state' | 'unit'>, lang: Language): string {
  const shown = showStateIn(lang, e, e.state, e.unit);
  return lang === 'en' && typeof e.state !== 'number' ? shown.toLowerCase() : shown;
}

/** The entity's name, area and aliases after an owner's change, and which of them are the owner's. */
function changed(e: EntityInfo, lang: Language): string {
  const own = (field: 'name' | 'area') => e.overrides !== undefined && field in e.overrides;
  const aliasesOwn = e.overrides?.aliases_added !== undefined || e.overrides?.aliases_removed !== undefined;
  const mark = (yes: boolean) => (yes ? (lang === 'zh' ? '（主人设置）' : ' (yours)') : lang === 'zh' ? '（驱动默认）' : " (the driver's)");
  const none = lang === 'zh' ? '无' : '-';
  const rows: Array<[string, string]> =
    lang === 'zh'
      ? [
          ['名称', `${e.name}${mark(own('name'))}`],
          ['区域', `${e.area ?? none}${mark(own('area'))}`],
          ['别名', `${e.aliases.join('，') || none}${mark(aliasesOwn)}`],
        ]
      : [
          ['name', `${e.name}${mark(own('name'))}`],
          ['area', `${e.area ?? none}${mark(own('area'))}`],
          ['aliases', `${e.aliases.join(', ') || none}${mark(aliasesOwn)}`],
        ];
  return [e.entity_id, ...rows.map(([k, v]) => `  ${k.padEnd(7)}  ${v}`)].join('\n');
}

/** "5m ago", "just now"; the age of a past epoch ms. */
export function age(at: number, now: number): string {
  const seconds = Math.max(0, Math.round((now - at) / 1000));
  if (seconds < 5) return 'just now';
  // Only the two largest units: "2d 3h ago" reads better than "2d 3h 4m 5s ago".
  const parts = duration(seconds)
    .split(' ')
    .filter((p) => p !== '0s');
  return `${parts.slice(0, 2).join(' ')} ago`;
}

/** "5m ago" / "5m前": the age in the run's language. */
function ageIn(at: number, now: number, lang: Language): string {
  const said = age(at, now);
  if (lang === 'en') return said;
  return said === 'just now' ? '刚刚' : `${said.replace(/ ago$/, '').replace(/ /g, '')}前`;
}

/** The name, marked when the entity is a diagnostic or config one (kept out of the page's main view and the model's list). */
function nameCell(e: EntityInfo, lang: Language): string {
  if (e.entity_category === null || e.entity_category === undefined) return e.name;
  const tag = lang === 'zh' ? (e.entity_category === 'config' ? '配置' : '诊断') : e.entity_category;
  return `${e.name} [${tag}]`;
}

export function formatEntityList(list: EntityInfo[], now: number, lang: Language = 'en'): string {
  if (list.length === 0) {
    return lang === 'zh' ? '没有实体（驱动和插件启动时注册它们）' : 'no entities (drivers and plugins register them when they start)';
  }
  const head = lang === 'zh' ? ['实体', '名称', '区域', '状态', '变化于'] : ['ENTITY', 'NAME', 'AREA', 'STATE', 'CHANGED'];
  return table(
    [head, ...list.map((e) => [e.entity_id, nameCell(e, lang), e.area ?? '-', entityState(e, lang), ageIn(e.last_changed, now, lang)])],
    '',
  );
}

export function formatSensors(list: EntityInfo[], now: number, lang: Language = 'en'): string {
  if (list.length === 0) return lang === 'zh' ? '没有传感器' : 'no sensors';
  const head = lang === 'zh' ? ['传感器', '名称', '值', '变化于'] : ['SENSOR', 'NAME', 'VALUE', 'CHANGED'];
  return table([head, ...list.map((e) => [e.entity_id, nameCell(e, lang), entityState(e, lang), ageIn(e.last_changed, now, lang)])], '');
}

export function formatEntity(r: EntitiesGetResult, now: number, lang: Language = 'en'): string {
  const e = r.entity;
  const rows: Array<[string, string]> = [
    ['state', entityState(e, lang)],
    ['changed', `${new Date(e.last_changed).toISOString()} (${age(e.last_changed, now)})`],
    ['updated', `${new Date(e.last_updated).toISOString()} (${age(e.last_updated, now)})`],
    ['area', e.area ?? '-'],
    ['device', e.device ?? '-'],
    ['class', e.device_class ?? '-'],
    ...(e.entity_category === null ? [] : ([['category', e.entity_category]] as Array<[string, string]>)),
    ...(e.state_class === null ? [] : ([['statistic', e.state_class]] as Array<[string, string]>)),
    ['aliases', e.aliases.join(', ') || '-'],
    [
      'services',
      e.services.length === 0 ? '(reports only)' : e.services.join(', ') + (e.critical ? ' (critical: asks before acting)' : ''),
    ],
    ['owner', e.owner],
  ];
  const attributes = Object.entries(e.attributes);
  if (attributes.length > 0) rows.push(['attributes', attributes.map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(' ')]);
  const width = Math.max(...rows.map(([k]) => k.length));
  const lines = [`${e.entity_id}  ${e.name}`, ...rows.map(([k, v]) => `  ${k.padEnd(width)}  ${v}`)];
  if (r.history.length > 0) lines.push('history:', ...r.history.map((h) => `  ${historyLine(h, e.unit)}`));
  return lines.join('\n');
}

export function formatHistory(r: EntitiesHistoryResult, hours: number): string {
  if (r.rows.length === 0) return `${r.entity_id}: no stored states in the last ${hours} h`;
  return [`${r.entity_id}: ${r.rows.length} stored states in the last ${hours} h`, ...r.rows.map((h) => `  ${historyLine(h, null)}`)].join(
    '\n',
  );
}

function historyLine(h: StateHistoryRow, unit: string | null): string {
  const at = new Date(h.at)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, 'Z');
  const state = showState(h.state, unit);
  if (h.period_ms === 0) return `${at}  ${state}`;
  const stats = h.mean === undefined ? '' : `  (min ${h.min}, mean ${round(h.mean)}, max ${h.max})`;
  return `${at}  ${state}  [${Math.round(h.period_ms / 60_000)} min]${stats}`;
}

function round(n: number): number {
  return Math.round(n * 1000) / 1000;
}

/**
 * `homeagentctl entities list|get|call|history` and `homeagentctl sensors`: the home's entities in
 * a running daemon (the `entities.*` control methods). `sensors` is the quick look people want
 * most: every sensor and binary sensor with its value and how long ago it last changed.
 */
import {
  ENTITY_DOMAINS,
  type EntitiesGetResult,
  type EntitiesHistoryResult,
  type EntityInfo,
  type EntityState,
  type StateHistoryRow,
} from '../api/home.js';
import { type CommandRunOptions, withDaemon } from './command-client.js';
import { defineCommand } from './command-module.js';
import { duration, table } from './format.js';

/** homeagentctl's option table entries for entities and sensors (merged into its parseArgs options). */
export const ENTITIES_OPTIONS = {
  domain: { type: 'string' },
  area: { type: 'string' },
  data: { type: 'string' },
  hours: { type: 'string' },
} as const;

export type EntitiesFlags = {
  [K in keyof typeof ENTITIES_OPTIONS]?: string | undefined;
};

export type EntitiesCommand =
  | { command: 'list'; domain?: string; area?: string }
  | { command: 'get'; entity: string }
  | { command: 'call'; entity: string; service: string; data: Record<string, unknown> }
  | { command: 'history'; entity: string; hours: number }
  | { command: 'sensors'; area?: string };

export class EntitiesUsageError extends Error {}

/** `homeagentctl entities` for the command catalogue (src/cli/commands.ts): its flags, help and parser. */
export const entitiesCommand = defineCommand<EntitiesFlags>({
  name: 'entities',
  options: ENTITIES_OPTIONS,
  usage: [
    { synopsis: 'entities list [--domain D] [--area A]', about: "the home's entities with state, area and when they last changed" },
    { synopsis: 'entities get ENTITY', about: 'one entity (id, name or alias, "kitchen light") with its recent history' },
    {
      synopsis: 'entities call ENTITY SERVICE [--data JSON]',
      about: 'call a service, e.g. entities call kitchen light turn_on --data \'{"brightness":128}\'',
    },
    { synopsis: 'entities history ENTITY [--hours N]', about: 'stored states of the last N hours (default 24)' },
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
  usage: [{ synopsis: 'sensors [--area A]', about: 'every sensor and binary sensor with its value and age' }],
  parse: (args, flags) => {
    const command = parseSensorsCommand(args, flags);
    return (context) => runEntities(command, context);
  },
});

const COMMANDS = 'list, get, call or history';
const DEFAULT_HOURS = 24;
/** core.home.history_days at most (3650 days). */
const MAX_HOURS = 87_600;
const HOUR_MS = 3_600_000;

const ALLOWED: Record<EntitiesCommand['command'], ReadonlyArray<keyof EntitiesFlags>> = {
  list: ['domain', 'area'],
  get: [],
  call: ['data'],
  history: ['hours'],
  sensors: ['area'],
};

/** The entities flags given on the command line (the parser refuses those its subcommand does not take). */
export function entitiesFlagsUsed(flags: EntitiesFlags): Array<keyof EntitiesFlags> {
  return (Object.keys(ENTITIES_OPTIONS) as Array<keyof EntitiesFlags>).filter((k) => flags[k] !== undefined);
}

/** Reads `entities <sub> …` (positionals after `entities`); throws EntitiesUsageError. */
export function parseEntitiesCommand(positionals: readonly string[], flags: EntitiesFlags): EntitiesCommand {
  const [sub, ...rest] = positionals;
  if (sub === undefined) throw new EntitiesUsageError(`entities needs a command: ${COMMANDS}`);
  if (sub === 'sensors' || !Object.hasOwn(ALLOWED, sub)) throw new EntitiesUsageError(`unknown entities command ${sub}; use ${COMMANDS}`);
  const command = sub as Exclude<EntitiesCommand['command'], 'sensors'>;
  refuseStray(`entities ${command}`, command, flags);
  // Words are joined so that `entities get kitchen light` needs no quotes.
  const entity = (words: readonly string[]): string => {
    const text = words.join(' ').trim();
    if (text === '') throw new EntitiesUsageError(`entities ${command} needs an ENTITY (id, name or alias)`);
    return text;
  };
  switch (command) {
    case 'list':
      if (rest.length > 0) throw new EntitiesUsageError('entities list takes no arguments (filter with --domain and --area)');
      return {
        command,
        ...(flags.domain !== undefined && { domain: domainFlag(flags.domain) }),
        ...(flags.area !== undefined && { area: nonEmpty(flags.area, '--area needs an AREA') }),
      };
    case 'get':
      return { command, entity: entity(rest) };
    case 'call': {
      // The service is the last word: `entities call kitchen light turn_on`.
      const service = rest.at(-1);
      if (rest.length < 2 || service === undefined) throw new EntitiesUsageError('entities call needs an ENTITY and a SERVICE');
      return { command, entity: entity(rest.slice(0, -1)), service, data: flags.data === undefined ? {} : dataFlag(flags.data) };
    }
    case 'history':
      return {
        command,
        entity: entity(rest),
        hours: flags.hours === undefined ? DEFAULT_HOURS : integer(flags.hours, '--hours', 1, MAX_HOURS),
      };
  }
}

/** Reads `sensors` (positionals after `sensors`); throws EntitiesUsageError. */
export function parseSensorsCommand(positionals: readonly string[], flags: EntitiesFlags): EntitiesCommand {
  if (positionals.length > 0) throw new EntitiesUsageError('sensors takes no arguments (filter with --area)');
  refuseStray('sensors', 'sensors', flags);
  return { command: 'sensors', ...(flags.area !== undefined && { area: nonEmpty(flags.area, '--area needs an AREA') }) };
}

function refuseStray(what: string, command: EntitiesCommand['command'], flags: EntitiesFlags): void {
  const stray = entitiesFlagsUsed(flags).filter((f) => !ALLOWED[command].includes(f));
  if (stray.length > 0) throw new EntitiesUsageError(`--${stray[0]} does not belong to ${what}`);
}

function domainFlag(value: string): string {
  const domain = value.trim();
  if (!(ENTITY_DOMAINS as readonly string[]).includes(domain)) {
    throw new EntitiesUsageError(`--domain must be one of ${ENTITY_DOMAINS.join(', ')}`);
  }
  return domain;
}

function dataFlag(text: string): Record<string, unknown> {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    throw new EntitiesUsageError(`--data must be a JSON object, e.g. '{"brightness": 128}'; ${JSON.stringify(text)} is not JSON`);
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    throw new EntitiesUsageError(`--data must be a JSON object, e.g. '{"brightness": 128}'`);
  }
  return data as Record<string, unknown>;
}

function nonEmpty(value: string, problem: string): string {
  if (value.trim() === '') throw new EntitiesUsageError(problem);
  return value.trim();
}

function integer(text: string, flag: string, min: number, max: number): number {
  const n = Number(text);
  if (text.trim() === '' || !Number.isInteger(n) || n < min || n > max) {
    throw new EntitiesUsageError(`${flag} must be a whole number from ${min} to ${max}`);
  }
  return n;
}

/**
 * Runs a parsed entities or sensors command; resolves with the exit code. Daemon errors are thrown
 * (homeagentctl reports them). `options.now` is the clock for --hours and the "changed … ago" column.
 */
export async function runEntities(command: EntitiesCommand, options: CommandRunOptions): Promise<number> {
  const now = (options.now ?? Date.now)();
  return withDaemon(options, undefined, async ({ call, print }) => {
    switch (command.command) {
      case 'list': {
        const params = {
          ...(command.domain !== undefined && { domain: command.domain }),
          ...(command.area !== undefined && { area: command.area }),
        };
        return print((await call('entities.list', params)) as EntityInfo[], (r) => formatEntityList(r, now));
      }
      case 'get':
        return print((await call('entities.get', { entity: command.entity })) as EntitiesGetResult, (r) => formatEntity(r, now));
      case 'call':
        return print(
          (await call('entities.call', { entity: command.entity, service: command.service, data: command.data })) as EntityInfo,
          (r) => `${command.service}: ${r.entity_id} (${r.name}) is now ${showState(r.state, r.unit)}`,
        );
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
        return print(all, (r) => formatSensors(r, now));
      }
    }
  });
}

// ---- readable output ----

export function showState(state: EntityState, unit: string | null): string {
  if (state === null) return 'unknown';
  return unit === null || typeof state !== 'number' ? String(state) : `${state} ${unit}`;
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

export function formatEntityList(list: EntityInfo[], now: number): string {
  if (list.length === 0) return 'no entities (drivers and plugins register them when they start)';
  return table(
    [
      ['ENTITY', 'NAME', 'AREA', 'STATE', 'CHANGED'],
      ...list.map((e) => [e.entity_id, e.name, e.area ?? '-', showState(e.state, e.unit), age(e.last_changed, now)]),
    ],
    '',
  );
}

export function formatSensors(list: EntityInfo[], now: number): string {
  if (list.length === 0) return 'no sensors';
  return table(
    [
      ['SENSOR', 'NAME', 'VALUE', 'CHANGED'],
      ...list.map((e) => [e.entity_id, e.name, showState(e.state, e.unit), age(e.last_changed, now)]),
    ],
    '',
  );
}

export function formatEntity(r: EntitiesGetResult, now: number): string {
  const e = r.entity;
  const rows: Array<[string, string]> = [
    ['state', showState(e.state, e.unit)],
    ['changed', `${new Date(e.last_changed).toISOString()} (${age(e.last_changed, now)})`],
    ['updated', `${new Date(e.last_updated).toISOString()} (${age(e.last_updated, now)})`],
    ['area', e.area ?? '-'],
    ['device', e.device ?? '-'],
    ['class', e.device_class ?? '-'],
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

/**
 * `homeagentctl automations list|run|enable|disable|runs`: the automations of a running daemon
 * (the `automations.*` control methods). `run` answers as soon as the run started; `runs` shows how
 * runs ended, step by step. A run that did not start (conditions, mode single, rate limit) exits 1
 * so scripts can tell.
 */
import type {
  AutomationsEnableResult,
  AutomationsListResult,
  AutomationsRunResult,
  AutomationsRunsResult,
} from '../automation/automation-methods.js';
import { summarizeTrigger } from '../automation/automation-store.js';
import type { AutomationRunRecord } from '../automation/types.js';
import { EXIT_CODES } from '../shared/exit-codes.js';
import { type CommandRunOptions, withDaemon } from './command-client.js';
import { defineCommand } from './command-module.js';

/** homeagentctl's option table entries for automations (merged into its parseArgs options; --limit is shared). */
export const AUTOMATIONS_OPTIONS = {
  limit: { type: 'string' },
  'skip-conditions': { type: 'boolean' },
} as const;

export type AutomationsFlags = {
  [K in keyof typeof AUTOMATIONS_OPTIONS]?: ((typeof AUTOMATIONS_OPTIONS)[K]['type'] extends 'boolean' ? boolean : string) | undefined;
};

export type AutomationsCommand =
  | { command: 'list' }
  | { command: 'run'; id: string; skip_conditions: boolean }
  | { command: 'enable'; id: string }
  | { command: 'disable'; id: string }
  | { command: 'runs'; id?: string; limit?: number };

export class AutomationsUsageError extends Error {}

/** `homeagentctl automations` for the command catalogue (src/cli/commands.ts): its flags, help and parser. */
export const automationsCommand = defineCommand<AutomationsFlags>({
  name: 'automations',
  options: AUTOMATIONS_OPTIONS,
  usage: [
    { synopsis: 'automations list', about: 'automations: enabled, mode, triggers, last run, problems' },
    { synopsis: 'automations run ID [--skip-conditions]', about: "run an automation's actions now" },
    { synopsis: 'automations enable|disable ID', about: 'switch an automation on or off (remembered across restarts)' },
    { synopsis: 'automations runs [ID] [--limit N]', about: 'the run log: trigger, status, error, duration' },
  ],
  parse: (args, flags) => {
    const command = parseAutomationsCommand(args, flags);
    return (context) => runAutomations(command, context);
  },
});

const COMMANDS = 'list, run, enable, disable or runs';
const ID = /^[a-z0-9_]{1,64}$/;

const ALLOWED: Record<AutomationsCommand['command'], ReadonlyArray<keyof AutomationsFlags>> = {
  list: [],
  run: ['skip-conditions'],
  enable: [],
  disable: [],
  runs: ['limit'],
};

/** The automations flags given on the command line (the parser refuses those its subcommand does not take). */
export function automationsFlagsUsed(flags: AutomationsFlags): Array<keyof AutomationsFlags> {
  return (Object.keys(AUTOMATIONS_OPTIONS) as Array<keyof AutomationsFlags>).filter((k) => flags[k] !== undefined);
}

/** Reads `automations <sub> …` (positionals after `automations`); throws AutomationsUsageError. No sub-command means list. */
export function parseAutomationsCommand(positionals: readonly string[], flags: AutomationsFlags): AutomationsCommand {
  const [sub = 'list', ...rest] = positionals;
  if (!Object.hasOwn(ALLOWED, sub)) throw new AutomationsUsageError(`unknown automations command ${sub}; use ${COMMANDS}`);
  const command = sub as AutomationsCommand['command'];
  const stray = automationsFlagsUsed(flags).filter((f) => !ALLOWED[command].includes(f));
  if (stray.length > 0) throw new AutomationsUsageError(`--${stray[0]} does not belong to automations ${command}`);
  const id = (value: string | undefined): string => {
    if (value === undefined || !ID.test(value)) {
      throw new AutomationsUsageError(
        `automations ${command} needs an automation ID (lowercase letters, digits and _), ${value === undefined ? 'none given' : `not ${JSON.stringify(value)}`}`,
      );
    }
    return value;
  };
  switch (command) {
    case 'list':
      if (rest.length > 0) throw new AutomationsUsageError('automations list takes no arguments');
      return { command };
    case 'run':
    case 'enable':
    case 'disable': {
      if (rest.length > 1) throw new AutomationsUsageError(`automations ${command} takes exactly one ID`);
      const target = id(rest[0]);
      return command === 'run' ? { command, id: target, skip_conditions: flags['skip-conditions'] === true } : { command, id: target };
    }
    case 'runs': {
      if (rest.length > 1) throw new AutomationsUsageError('automations runs takes at most one ID');
      return {
        command,
        ...(rest[0] !== undefined && { id: id(rest[0]) }),
        ...(flags.limit !== undefined && { limit: integer(flags.limit, '--limit', 1, 1000) }),
      };
    }
  }
}

function integer(text: string, flag: string, min: number, max: number): number {
  const n = Number(text);
  if (text.trim() === '' || !Number.isInteger(n) || n < min || n > max) {
    throw new AutomationsUsageError(`${flag} must be a whole number from ${min} to ${max}`);
  }
  return n;
}

/** Runs a parsed command; resolves with the exit code. Daemon errors are thrown (homeagentctl reports them). */
export async function runAutomations(command: AutomationsCommand, options: CommandRunOptions): Promise<number> {
  return withDaemon(options, undefined, async ({ call, print }) => {
    switch (command.command) {
      case 'list':
        return print((await call('automations.list', {})) as AutomationsListResult, formatAutomationList);
      case 'run': {
        const params = { id: command.id, ...(command.skip_conditions && { skip_conditions: true }) };
        const result = (await call('automations.run', params)) as AutomationsRunResult;
        print(result, formatRunResult);
        return result.outcome === 'started' || result.outcome === 'queued' ? EXIT_CODES.OK : EXIT_CODES.FAILURE;
      }
      case 'enable':
      case 'disable':
        return print(
          (await call(`automations.${command.command}`, { id: command.id })) as AutomationsEnableResult,
          (r) => `${r.id} ${r.enabled ? 'enabled' : 'disabled'}`,
        );
      case 'runs': {
        const params = {
          ...(command.id !== undefined && { id: command.id }),
          ...(command.limit !== undefined && { limit: command.limit }),
        };
        return print((await call('automations.runs', params)) as AutomationsRunsResult, (r) => formatRuns(r, command.id));
      }
    }
  });
}

// ---- readable output ----

/** `2026-11-30 07:00:05`, local time. */
export function localTime(ms: number): string {
  const d = new Date(ms);
  const two = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())} ${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`;
}

export function formatAutomationList(r: AutomationsListResult): string {
  if (r.automations.length === 0) return 'no automations (write them in core.automations.rules; see docs/automations.md)';
  const lines: string[] = [];
  for (const a of r.automations) {
    const by = a.enabled_by === 'config' ? '' : ` (by ${a.enabled_by})`;
    const name = a.name === '' ? '' : `  ${JSON.stringify(a.name)}`;
    lines.push(`${a.id}  ${a.enabled ? 'enabled' : 'disabled'}${by}  mode ${a.mode}${name}`);
    for (const t of a.triggers) lines.push(`  on ${t}`);
    if (a.running > 0 || a.queued > 0) lines.push(`  now: ${a.running} running${a.queued > 0 ? `, ${a.queued} waiting` : ''}`);
    const last = a.last_run;
    lines.push(
      last === null
        ? '  last run: never'
        : `  last run: ${last.status} at ${localTime(last.started_at)} (${last.trigger})${last.error === null ? '' : `: ${last.error}`}`,
    );
    for (const p of a.problems) lines.push(`  problem: ${p}`);
  }
  return lines.join('\n');
}

export function formatRunResult(r: AutomationsRunResult): string {
  switch (r.outcome) {
    case 'started':
      return `started ${r.automation_id} (run ${r.run_id}); homeagentctl automations runs ${r.automation_id} shows how it ends`;
    case 'queued':
      return `queued ${r.automation_id}: ${r.reason}`;
    default:
      return `${r.automation_id} did not run: ${r.reason}`;
  }
}

export function formatRuns(r: AutomationsRunsResult, id: string | undefined): string {
  if (r.runs.length === 0) return id === undefined ? 'no automation runs yet' : `${id} has not run yet`;
  return r.runs.map(formatRun).join('\n');
}

function formatRun(run: AutomationRunRecord): string {
  const ms = run.finished_at - run.started_at;
  const lines = [
    `${localTime(run.started_at)}  ${run.automation_id}  ${run.status}  ${ms} ms  ${summarizeTrigger(run.trigger)}${run.error === null ? '' : `\n  error: ${run.error}`}`,
  ];
  for (const step of run.steps) {
    lines.push(
      `  ${step.index + 1}. ${step.type} ${step.detail}: ${step.status}, ${step.ms} ms${step.error === undefined ? '' : ` (${step.error})`}`,
    );
  }
  return lines.join('\n');
}

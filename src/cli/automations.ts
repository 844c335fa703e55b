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
import type { Language } from '../shared/language.js';
import { cliLanguage } from './cli-language.js';
import { runLanguage, stateWord } from './cli-words.js';
import { type CommandRunOptions, withDaemon } from './command-client.js';
import { CommandUsageError, defineCommand } from './command-module.js';

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

export class AutomationsUsageError extends CommandUsageError {}

/** `homeagentctl automations` for the command catalogue (src/cli/commands.ts): its flags, help and parser. */
export const automationsCommand = defineCommand<AutomationsFlags>({
  name: 'automations',
  options: AUTOMATIONS_OPTIONS,
  usage: [
    {
      synopsis: 'automations list',
      about: 'automations: enabled, mode, triggers, last run, problems',
      zh: '自动化：是否启用、模式、触发器、上次运行、问题',
    },
    { synopsis: 'automations run ID [--skip-conditions]', about: "run an automation's actions now", zh: '立即执行一个自动化的动作' },
    {
      synopsis: 'automations enable|disable ID',
      about: 'switch an automation on or off (remembered across restarts)',
      zh: '启用或停用一个自动化（重启后保持）',
    },
    {
      synopsis: 'automations runs [ID] [--limit N]',
      about: 'the run log: trigger, status, error, duration',
      zh: '运行日志：触发、状态、错误、耗时',
    },
  ],
  parse: (args, flags) => {
    const command = parseAutomationsCommand(args, flags);
    return (context) => runAutomations(command, context);
  },
});

const COMMANDS = 'list, run, enable, disable or runs';
const COMMANDS_ZH = 'list、run、enable、disable 或 runs';
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
  if (!Object.hasOwn(ALLOWED, sub))
    throw new AutomationsUsageError(
      `unknown automations command ${sub}; use ${COMMANDS}`,
      `未知的 automations 子命令 ${sub}；可用 ${COMMANDS_ZH}`,
    );
  const command = sub as AutomationsCommand['command'];
  const stray = automationsFlagsUsed(flags).filter((f) => !ALLOWED[command].includes(f));
  if (stray.length > 0)
    throw new AutomationsUsageError(
      `--${stray[0]} does not belong to automations ${command}`,
      `--${stray[0]} 不属于 automations ${command}`,
    );
  const id = (value: string | undefined): string => {
    if (value === undefined || !ID.test(value)) {
      throw new AutomationsUsageError(
        `automations ${command} needs an automation ID (lowercase letters, digits and _), ${value === undefined ? 'none given' : `not ${JSON.stringify(value)}`}`,
        `automations ${command} 需要一个自动化 ID（小写字母、数字和 _），${value === undefined ? '未给出' : `而不是 ${JSON.stringify(value)}`}`,
      );
    }
    return value;
  };
  switch (command) {
    case 'list':
      if (rest.length > 0) throw new AutomationsUsageError('automations list takes no arguments', 'automations list 不接受参数');
      return { command };
    case 'run':
    case 'enable':
    case 'disable': {
      if (rest.length > 1)
        throw new AutomationsUsageError(`automations ${command} takes exactly one ID`, `automations ${command} 只接受一个 ID`);
      const target = id(rest[0]);
      return command === 'run' ? { command, id: target, skip_conditions: flags['skip-conditions'] === true } : { command, id: target };
    }
    case 'runs': {
      if (rest.length > 1) throw new AutomationsUsageError('automations runs takes at most one ID', 'automations runs 最多接受一个 ID');
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
    throw new AutomationsUsageError(`${flag} must be a whole number from ${min} to ${max}`, `${flag} 须为 ${min} 到 ${max} 之间的整数`);
  }
  return n;
}

/** Runs a parsed command; resolves with the exit code. Daemon errors are thrown (homeagentctl reports them). */
export async function runAutomations(command: AutomationsCommand, options: CommandRunOptions): Promise<number> {
  const language = runLanguage(options);
  return withDaemon(options, undefined, async ({ call, print }) => {
    switch (command.command) {
      case 'list':
        return print((await call('automations.list', {})) as AutomationsListResult, (r) => formatAutomationList(r, language));
      case 'run': {
        const params = { id: command.id, ...(command.skip_conditions && { skip_conditions: true }) };
        const result = (await call('automations.run', params)) as AutomationsRunResult;
        print(result, (r) => formatRunResult(r, language));
        return result.outcome === 'started' || result.outcome === 'queued' ? EXIT_CODES.OK : EXIT_CODES.FAILURE;
      }
      case 'enable':
      case 'disable':
        return print((await call(`automations.${command.command}`, { id: command.id })) as AutomationsEnableResult, (r) =>
          WORDS[language].switched(r.id, r.enabled),
        );
      case 'runs': {
        const params = {
          ...(command.id !== undefined && { id: command.id }),
          ...(command.limit !== undefined && { limit: command.limit }),
        };
        return print((await call('automations.runs', params)) as AutomationsRunsResult, (r) => formatRuns(r, command.id, language));
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

/** Every word the automations command prints around the daemon's values, in both languages. */
const WORDS = {
  en: {
    none: 'no automations (write them in core.automations.rules; see docs/automations.md)',
    enabled: (on: boolean) => (on ? 'enabled' : 'disabled'),
    switched: (id: string, on: boolean) => `${id} ${on ? 'enabled' : 'disabled'}`,
    by: (who: string) => ` (by ${who})`,
    mode: (mode: string) => `mode ${mode}`,
    on: (trigger: string) => `  on ${trigger}`,
    now: (running: number, queued: number) => `  now: ${running} running${queued > 0 ? `, ${queued} waiting` : ''}`,
    never: '  last run: never',
    last: (status: string, at: string, trigger: string, error: string | null) =>
      `  last run: ${status} at ${at} (${trigger})${error === null ? '' : `: ${error}`}`,
    problem: (p: string) => `  problem: ${p}`,
    started: (id: string, run: string | null) => `started ${id} (run ${run}); homeagentctl automations runs ${id} shows how it ends`,
    queued: (id: string, reason: string | null) => `queued ${id}: ${reason}`,
    notRun: (id: string, reason: string | null) => `${id} did not run: ${reason}`,
    noRuns: 'no automation runs yet',
    notYet: (id: string) => `${id} has not run yet`,
    error: (e: string) => `\n  error: ${e}`,
    step: (n: number, type: string, detail: string, status: string, ms: number, error: string | undefined) =>
      `  ${n}. ${type} ${detail}: ${status}, ${ms} ms${error === undefined ? '' : ` (${error})`}`,
    ms: (ms: number) => `${ms} ms`,
  },
  zh: {
    none: '没有自动化（写在 core.automations.rules 里；见 docs/automations.md）',
    enabled: (on: boolean) => (on ? '已启用' : '已停用'),
    switched: (id: string, on: boolean) => `${id} ${on ? '已启用' : '已停用'}`,
    by: (who: string) => `（由 ${who}）`,
    mode: (mode: string) => `模式 ${mode}`,
    on: (trigger: string) => `  触发：${trigger}`,
    now: (running: number, queued: number) => `  当前：${running} 个运行中${queued > 0 ? `，${queued} 个等待中` : ''}`,
    never: '  上次运行：从未',
    last: (status: string, at: string, trigger: string, error: string | null) =>
      `  上次运行：${status}，${at}（${trigger}）${error === null ? '' : `：${error}`}`,
    problem: (p: string) => `  问题：${p}`,
    started: (id: string, run: string | null) => `已启动 ${id}（运行 ${run}）；homeagentctl automations runs ${id} 可查看结果`,
    queued: (id: string, reason: string | null) => `${id} 已排队：${reason}`,
    notRun: (id: string, reason: string | null) => `${id} 没有运行：${reason}`,
    noRuns: '还没有自动化运行过',
    notYet: (id: string) => `${id} 还没有运行过`,
    error: (e: string) => `\n  错误：${e}`,
    step: (n: number, type: string, detail: string, status: string, ms: number, error: string | undefined) =>
      `  ${n}. ${type} ${detail}：${status}，${ms} 毫秒${error === undefined ? '' : `（${error}）`}`,
    ms: (ms: number) => `${ms} 毫秒`,
  },
} as const;

export function formatAutomationList(r: AutomationsListResult, language: Language = cliLanguage()): string {
  const w = WORDS[language];
  if (r.automations.length === 0) return w.none;
  const lines: string[] = [];
  for (const a of r.automations) {
    const by = a.enabled_by === 'config' ? '' : w.by(a.enabled_by);
    const name = a.name === '' ? '' : `  ${JSON.stringify(a.name)}`;
    lines.push(`${a.id}  ${w.enabled(a.enabled)}${by}  ${w.mode(a.mode)}${name}`);
    for (const t of a.triggers) lines.push(w.on(t));
    if (a.running > 0 || a.queued > 0) lines.push(w.now(a.running, a.queued));
    const last = a.last_run;
    lines.push(last === null ? w.never : w.last(stateWord(last.status, language), localTime(last.started_at), last.trigger, last.error));
    for (const p of a.problems) lines.push(w.problem(p));
  }
  return lines.join('\n');
}

export function formatRunResult(r: AutomationsRunResult, language: Language = cliLanguage()): string {
  const w = WORDS[language];
  switch (r.outcome) {
    case 'started':
      return w.started(r.automation_id, r.run_id);
    case 'queued':
      return w.queued(r.automation_id, r.reason);
    default:
      return w.notRun(r.automation_id, r.reason);
  }
}

export function formatRuns(r: AutomationsRunsResult, id: string | undefined, language: Language = cliLanguage()): string {
  const w = WORDS[language];
  if (r.runs.length === 0) return id === undefined ? w.noRuns : w.notYet(id);
  return r.runs.map((run) => formatRun(run, language)).join('\n');
}

function formatRun(run: AutomationRunRecord, language: Language): string {
  const w = WORDS[language];
  const ms = run.finished_at - run.started_at;
  const lines = [
    `${localTime(run.started_at)}  ${run.automation_id}  ${stateWord(run.status, language)}  ${w.ms(ms)}  ${summarizeTrigger(run.trigger)}${run.error === null ? '' : w.error(run.error)}`,
  ];
  for (const step of run.steps) {
    lines.push(w.step(step.index + 1, step.type, step.detail, stateWord(step.status, language), step.ms, step.error));
  }
  return lines.join('\n');
}

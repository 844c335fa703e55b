/**
 * `homeagentctl sequences [list]|run|delete`: the tool sequences of a running daemon (the seq
 * plugin's `seq.*` control methods). Whoever can open the CLI socket is the owner, so `run` runs a
 * sequence of any tier, dangerous steps included, as the owner's own decision. The name is the rest
 * of the words, so `sequences run good night` needs no quotes; `--args` takes the arguments as JSON.
 * The CLI may not import plugins: the answers' shapes are restated here as far as it prints them.
 */
import type { Language } from '../shared/language.js';
import { cliLanguage } from './cli-language.js';
import { runLanguage } from './cli-words.js';
import { type CommandRunOptions, withDaemon } from './command-client.js';
import { AGENT_TURN_TIMEOUT_MS, CommandUsageError, defineCommand } from './command-module.js';
import { table } from './format.js';

export const SEQUENCES_OPTIONS = { args: { type: 'string' } } as const;

export type SequencesFlags = { args?: string | undefined };

export type SequencesCommand =
  | { command: 'list' }
  | { command: 'run'; name: string; args: Record<string, unknown> }
  | { command: 'delete'; name: string };

export class SequencesUsageError extends CommandUsageError {}

/** What `seq.list` answers, as far as the CLI prints it. */
export interface SequenceListing {
  sequences: Array<{ name: string; description?: string; tier?: string; groups?: Array<{ name: string }>; broken?: string }>;
}

/** What `seq.run` answers, as far as the CLI prints it. */
export interface SequenceRunAnswer {
  sequence: string;
  tier: string;
  groups: Array<{ name: string; mode: 'parallel' | 'serial' | 'skipped'; calls: unknown[] }>;
  results: Record<string, unknown>;
}

/** `homeagentctl sequences` for the command catalogue (src/cli/commands.ts): its flags, help and parser. */
export const sequencesCommand = defineCommand<SequencesFlags>({
  name: 'sequences',
  options: SEQUENCES_OPTIONS,
  usage: [
    {
      synopsis: 'sequences [list]',
      about: 'the tool sequences ("good night") with their tier and groups',
      zh: '工具序列（如"晚安"）及其危险等级和组',
    },
    {
      synopsis: 'sequences run NAME... [--args JSON]',
      about: 'run one now, dangerous steps included (you are the owner), e.g. sequences run good night',
      zh: '立即运行一条序列，包括危险步骤（你是主人），例如 sequences run good night',
    },
    { synopsis: 'sequences delete NAME...', about: 'delete a sequence', zh: '删除一条序列' },
  ],
  // A run calls tools one after another, which may take a while.
  defaultTimeoutMs: AGENT_TURN_TIMEOUT_MS,
  parse: (args, flags) => {
    const command = parseSequencesCommand(args, flags);
    return (context) => runSequences(command, context);
  },
});

/** Reads `sequences [<sub> …]` (positionals after `sequences`); throws SequencesUsageError. No sub-command means list. */
export function parseSequencesCommand(positionals: readonly string[], flags: SequencesFlags): SequencesCommand {
  const [sub = 'list', ...rest] = positionals;
  const name = rest.join(' ').trim();
  if (sub !== 'run' && flags.args !== undefined)
    throw new SequencesUsageError(
      `--args belongs to sequences run, not sequences ${sub}`,
      `--args 是 sequences run 的选项，不属于 sequences ${sub}`,
    );
  switch (sub) {
    case 'list':
      if (rest.length > 0) throw new SequencesUsageError('sequences list takes no arguments', 'sequences list 不接受参数');
      return { command: 'list' };
    case 'run':
    case 'delete': {
      if (name === '')
        throw new SequencesUsageError(
          `sequences ${sub} needs a NAME, e.g. sequences ${sub} good night`,
          `sequences ${sub} 需要一个 NAME，例如 sequences ${sub} good night`,
        );
      if (sub === 'delete') return { command: 'delete', name };
      return { command: 'run', name, args: parseArgsFlag(flags.args) };
    }
    default:
      throw new SequencesUsageError(
        `unknown sequences command ${sub}; use list, run or delete`,
        `未知的 sequences 子命令 ${sub}；可用 list、run 或 delete`,
      );
  }
}

function parseArgsFlag(text: string | undefined): Record<string, unknown> {
  if (text === undefined) return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new SequencesUsageError(
      `--args must be a JSON object, e.g. --args '{"minutes": 20}'; got ${text}`,
      `--args 须为 JSON 对象，例如 --args '{"minutes": 20}'；收到的是 ${text}`,
    );
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new SequencesUsageError(
      `--args must be a JSON object, e.g. --args '{"minutes": 20}'; got ${text}`,
      `--args 须为 JSON 对象，例如 --args '{"minutes": 20}'；收到的是 ${text}`,
    );
  return value as Record<string, unknown>;
}

export async function runSequences(command: SequencesCommand, options: CommandRunOptions): Promise<number> {
  const language = runLanguage(options);
  return withDaemon(options, { plugin: 'seq' }, async ({ call, print }) => {
    switch (command.command) {
      case 'list':
        return print((await call('seq.list', {})) as SequenceListing, (r) => formatSequences(r, language));
      case 'run':
        return print((await call('seq.run', { name: command.name, args: command.args })) as SequenceRunAnswer, (r) =>
          formatRun(r, language),
        );
      case 'delete':
        return print((await call('seq.delete', { name: command.name })) as { deleted: string }, (r) => WORDS[language].deleted(r.deleted));
    }
  });
}

const WORDS = {
  en: {
    header: ['NAME', 'TIER', 'GROUPS', 'DESCRIPTION'],
    none: 'no sequences yet (ask the assistant to make one, e.g. "make a good night sequence")',
    tier: { read: 'read', act: 'act', dangerous: 'dangerous' } as Record<string, string>,
    broken: (why: string) => `does not read: ${why}`,
    ran: (name: string) => `ran ${name}:`,
    mode: { parallel: 'side by side', serial: 'in order', skipped: 'skipped (condition false)' },
    calls: (n: number) => `${n} call${n === 1 ? '' : 's'}`,
    results: 'results:',
    deleted: (name: string) => `deleted ${name}`,
  },
  zh: {
    header: ['名称', '等级', '组', '说明'],
    none: '还没有序列（可以让助手做一条，例如"做一个晚安序列"）',
    tier: { read: '只读', act: '操作', dangerous: '危险' } as Record<string, string>,
    broken: (why: string) => `无法读取：${why}`,
    ran: (name: string) => `已运行 ${name}：`,
    mode: { parallel: '同时', serial: '依次', skipped: '已跳过（条件不成立）' },
    calls: (n: number) => `${n} 个调用`,
    results: '结果：',
    deleted: (name: string) => `已删除 ${name}`,
  },
} as const;

export function formatSequences(listing: SequenceListing, language: Language = cliLanguage()): string {
  const w = WORDS[language];
  if (listing.sequences.length === 0) return w.none;
  return table(
    [
      [...w.header],
      ...listing.sequences.map((s) =>
        s.broken === undefined
          ? [s.name, w.tier[s.tier ?? ''] ?? s.tier ?? '', (s.groups ?? []).map((g) => g.name).join(', '), s.description ?? '']
          : [s.name, '', '', w.broken(s.broken)],
      ),
    ],
    '',
  );
}

export function formatRun(run: SequenceRunAnswer, language: Language = cliLanguage()): string {
  const w = WORDS[language];
  const lines = [w.ran(run.sequence)];
  const [colon, comma] = language === 'zh' ? ['：', '，'] : [': ', ', '];
  for (const g of run.groups)
    lines.push(`  ${g.name}${colon}${w.mode[g.mode]}${g.mode === 'skipped' ? '' : `${comma}${w.calls(g.calls.length)}`}`);
  const results = Object.entries(run.results);
  if (results.length > 0) {
    lines.push(w.results);
    for (const [name, value] of results) lines.push(`  ${name} = ${typeof value === 'string' ? value : JSON.stringify(value)}`);
  }
  return lines.join('\n');
}

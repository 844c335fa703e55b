/**
 * What a homeagentctl command that runs itself (gpio, mqtt, lists, …) declares about itself: its
 * name, its flags, its lines of the help, and how it reads its arguments. Each command module
 * exports one of these, src/cli/commands.ts lists them, and homeagentctl derives its parseArgs
 * options, its help, the refusal of another command's flag and its dispatch from that list, so a
 * new command is one line in the list instead of four or five edits to homeagentctl (issue 28).
 * The contract is its own module because both sides import it: a command module cannot import
 * homeagentctl (importing it runs the command line), and homeagentctl should not know any
 * command's flags.
 */
import type { Language } from '../shared/language.js';
import type { CommandRunOptions } from './command-client.js';
import { displayWidth } from './format.js';

/** A parsed command waiting for its connection settings; resolves with the exit code. */
export type CommandRunner = (context: CommandRunOptions) => Promise<number>;

/** One parseArgs option as the commands declare them (homeagentctl merges every command's). */
export interface OptionDefinition {
  readonly type: 'string' | 'boolean';
  readonly short?: string;
}

/** parseArgs options for exactly the flags of `Flags`: a boolean flag is a 'boolean' option, any other a 'string' one. */
export type OptionTable<Flags> = {
  readonly [K in keyof Flags]-?: OptionDefinition & { readonly type: NonNullable<Flags[K]> extends boolean ? 'boolean' : 'string' };
};

/** The flags of a command that takes none. */
export type NoFlags = Record<never, never>;

/**
 * One entry of `homeagentctl --help`: the synopsis, and what it does (more lines after a newline)
 * in English and in Chinese; the help prints the terminal's one. The synopsis is what one types,
 * so it is the same in both. A synopsis that fits the first column shares its line with the text;
 * a longer one stands alone.
 */
export interface UsageLine {
  readonly synopsis: string;
  readonly about: string;
  /** `about` in Chinese: required, so a command line without it does not compile. */
  readonly zh: string;
}

/**
 * A command line a command refuses, said in English and in Chinese: homeagentctl prints the
 * terminal's one above the command's lines of the help. Each command's usage error extends it, so
 * the compiler refuses a refusal without its Chinese.
 */
export class CommandUsageError extends Error {
  constructor(
    message: string,
    readonly zh: string,
  ) {
    super(message);
  }
}

/** An agent turn with tools (a chat, an approved action) can take minutes; other commands answer at once. */
export const AGENT_TURN_TIMEOUT_MS = 600_000;

/** A command module as it describes itself, with its own flags' type. */
export interface CommandModule<Flags> {
  /** The word after `homeagentctl`. */
  readonly name: string;
  /** Its flags: only it takes them, so one given with another command is refused before anything runs. */
  readonly options: OptionTable<Flags>;
  /** Its part of the help, in order. */
  readonly usage: readonly UsageLine[];
  /** How long it waits for the daemon unless --timeout says; 30 s when absent. */
  readonly defaultTimeoutMs?: number;
  /** Reads the arguments after the command word and its flags, throwing its own usage error. */
  readonly parse: (args: readonly string[], flags: Flags) => CommandRunner;
}

/** Values of the whole command line as parseArgs gives them (every command's options merged). */
export type ParsedFlags = Readonly<Record<string, string | boolean | undefined>>;

/** A command module with its flags' type forgotten, so commands with different flags share one catalogue. */
export interface CataloguedCommand {
  readonly name: string;
  readonly options: Readonly<Record<string, OptionDefinition>>;
  readonly usage: readonly UsageLine[];
  readonly defaultTimeoutMs?: number;
  readonly parse: (args: readonly string[], flags: ParsedFlags) => CommandRunner;
}

/** Checks a command module against its own flags' type and makes it a catalogue entry. */
export function defineCommand<Flags>(module: CommandModule<Flags>): CataloguedCommand {
  return {
    ...module,
    // The command line's one cast: parseArgs (strict) gives each of the command's flags the type
    // its option table declares, and OptionTable<Flags> ties that table to Flags.
    parse: (args, flags) => module.parse(args, flags as Flags),
  };
}

/** Width of the help's first column, the two-space indent included. */
const SYNOPSIS_COLUMN = 28;

/**
 * The commands' help lines as printed in `language`: the synopsis indented by two, the text in the
 * second column (`column` wide, the indent included). The first column is measured in terminal
 * columns (a CJK character takes two), so the text starts in the same column in both languages.
 */
export function formatUsage(
  commands: ReadonlyArray<Pick<CataloguedCommand, 'usage'>>,
  language: Language,
  column: number = SYNOPSIS_COLUMN,
): string {
  const indent = ' '.repeat(column);
  return commands
    .flatMap((command) => command.usage)
    .map(({ synopsis, about, zh }) => {
      const head = `  ${synopsis}`;
      const [first = '', ...more] = (language === 'zh' ? zh : about).split('\n');
      const text = [first, ...more].map((line) => `${indent}${line}`);
      const width = displayWidth(head);
      if (width < column) text[0] = `${head}${' '.repeat(column - width)}${first}`;
      else text.unshift(head);
      return text.join('\n');
    })
    .join('\n');
}

/**
 * The cmd policy: decides whether an argv may run and what exactly runs. Pure apart from the
 * injected {@link ProgramLookup}, so every rule is testable without touching the system.
 *
 * A program runs only if plugin.cmd.allow lists it. A bare name is looked up only in the trusted
 * directories (never $PATH, never the working directory) and its real path is what runs; an
 * absolute path runs only if it is itself listed or is the same file as a listed program. Every
 * argument must match the entry's `args` patterns (if it has any), and the built-in side-effect
 * rules (program-rules.ts) refuse `find -delete`, `sed -i`, `sort -o`... unless the entry's
 * `allow_flags` names them.
 */
import { basename } from 'node:path';
import { isMultiCallBinary, PROGRAM_RULES, type RuleInput, runsOtherPrograms } from './program-rules.js';

/** One entry of plugin.cmd.allow. */
export interface CmdAllowEntry {
  program: string;
  /** Regular expressions; every argument must fully match one. */
  args?: readonly string[];
  /** Side-effect flags (and rule names such as sed's `w`) this entry permits. */
  allow_flags?: readonly string[];
}

/** How the policy sees installed programs; the plugin passes the real file system. */
export interface ProgramLookup {
  /** The real path of the executable `name` in {@link TRUSTED_DIRS} (first match), or undefined. */
  resolveName(name: string): string | undefined;
  /** The real path of an absolute `path` when it is an executable regular file, or undefined. */
  realExecutable(path: string): string | undefined;
}

/** Where bare program names are looked up, in order. */
export const TRUSTED_DIRS: readonly string[] = ['/usr/local/bin', '/usr/bin', '/bin'];
export const MAX_ARGV_ITEMS = 128;
export const MAX_ARG_LENGTH = 4096;

/** What the runner starts: the real file, the argv[0] it sees (the listed name), and the arguments. */
export interface ApprovedCommand {
  executable: string;
  argv0: string;
  args: string[];
}

export interface CommandDenial {
  reason: 'rejected' | 'not_found';
  field: string;
  /** Starts with HA_ERR_CMD_DENIED for policy refusals. */
  detail: string;
  hint?: string;
}

export type CommandCheck = { ok: true; command: ApprovedCommand } | { ok: false; denial: CommandDenial };

const BARE_NAME = /^[A-Za-z0-9._+][A-Za-z0-9._+-]{0,63}$/;
const ABSOLUTE_PATH = /^(?:\/[A-Za-z0-9._+-]+)+$/;
/**
 * C0/C1 controls, and invisible or reordering characters (zero-width, bidi overrides, BOM) that
 * would make the command the owner is asked to confirm look different from the one that runs.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what is refused
const HIDDEN_CHARACTERS = /[\u0000-\u001f\u007f-\u009f\u00ad\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2069\ufeff]/u;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * Arguments naming these are refused for every program: another process's environment or memory
 * (the daemon's API keys live in its environment) and the daemon's SQLite files (run-time secrets).
 */
const SECRET_PATHS =
  /\/proc\/(?:self|thread-self|\d+)(?:\/task\/\d+)?\/(?:environ|mem|maps|fd|cwd|root|auxv)\b|(?:^|\/)state\.db(?:-wal|-shm|-journal)?$/;

export function checkCommand(argv: unknown, allow: readonly CmdAllowEntry[], lookup: ProgramLookup): CommandCheck {
  const shapeProblem = argvShapeProblem(argv);
  if (shapeProblem) return deny('argv', shapeProblem, 'pass argv as an array of plain strings: the program first, then each argument');
  const [program, ...args] = argv as string[];
  const name = program as string;

  const formProblem = programFormProblem(name);
  if (formProblem) return deny('argv', formProblem, allowedHint(allow));
  const secret = args.find((arg) => SECRET_PATHS.test(arg));
  if (secret !== undefined) {
    return deny(
      'argv',
      `${quote(secret)} points at process memory, environments or the daemon's databases, which hold its secrets`,
      'leave that path out',
    );
  }

  const candidates: Array<{ entry: CmdAllowEntry; executable: string | undefined }> = [];
  let executable: string | undefined;
  if (name.startsWith('/')) {
    executable = lookup.realExecutable(name);
    for (const entry of allow) {
      if (!isValidEntry(entry)) continue;
      const entryExecutable = entry.program.startsWith('/') ? lookup.realExecutable(entry.program) : lookup.resolveName(entry.program);
      if (entry.program === name || (executable !== undefined && entryExecutable === executable)) {
        candidates.push({ entry, executable });
      }
    }
  } else {
    for (const entry of allow) {
      if (isValidEntry(entry) && entry.program === name) candidates.push({ entry, executable: lookup.resolveName(name) });
    }
  }
  if (candidates.length === 0) {
    return deny('argv', `${quote(name)} is not in the cmd allowlist (plugin.cmd.allow)`, allowedHint(allow));
  }

  let firstDenial: CommandCheck | undefined;
  for (const { entry, executable: real } of candidates) {
    if (real === undefined) {
      firstDenial ??= {
        ok: false,
        denial: {
          reason: 'not_found',
          field: 'argv',
          detail: `${quote(name)} is allowed but not installed${name.startsWith('/') ? '' : ` in ${TRUSTED_DIRS.join(', ')}`}`,
        },
      };
      continue;
    }
    const problem = argumentProblem(entry, real, args);
    if (problem === undefined) return { ok: true, command: { executable: real, argv0: entry.program, args } };
    firstDenial ??= deny('argv', problem, 'run it without that argument, or ask the owner to allow it in plugin.cmd.allow');
  }
  return firstDenial as CommandCheck;
}

function argvShapeProblem(argv: unknown): string | undefined {
  if (!Array.isArray(argv)) return `argv must be an array of strings, not ${argv === null ? 'null' : typeof argv}`;
  if (argv.length === 0) return 'argv is empty: the program name comes first';
  if (argv.length > MAX_ARGV_ITEMS) return `argv has ${argv.length} items; at most ${MAX_ARGV_ITEMS} are accepted`;
  for (const [index, item] of argv.entries()) {
    if (typeof item !== 'string') return `argv[${index}] is ${item === null ? 'null' : typeof item}, not a string`;
    if (item.length > MAX_ARG_LENGTH) return `argv[${index}] is ${item.length} characters long; at most ${MAX_ARG_LENGTH} are accepted`;
    const hidden = HIDDEN_CHARACTERS.exec(item);
    if (hidden) {
      const code = (hidden[0].codePointAt(0) as number).toString(16).padStart(4, '0');
      return `argv[${index}] contains the control or invisible character U+${code.toUpperCase()}, which is never passed to a program`;
    }
    if (LONE_SURROGATE.test(item)) return `argv[${index}] contains a lone UTF-16 surrogate`;
  }
  return undefined;
}

function programFormProblem(name: string): string | undefined {
  if (name === '') return 'the program name (argv[0]) is empty';
  if (name.includes('/')) {
    if (!name.startsWith('/')) {
      return /^[A-Za-z0-9._+~/-]+$/.test(name)
        ? `${quote(name)} is a relative path; programs are named by their listed name or an absolute path`
        : `${quote(name)} is not a program name (shell syntax, spaces and lookalike characters are never interpreted)`;
    }
    if (!ABSOLUTE_PATH.test(name))
      return `${quote(name)} is not a plain absolute path (only letters, digits and . _ + - between single slashes)`;
    if (name.split('/').some((segment) => segment === '.' || segment === '..')) return `${quote(name)} contains . or .. segments`;
    return undefined;
  }
  if (!BARE_NAME.test(name) || /^\.+$/.test(name)) {
    return `${quote(name)} is not a program name (letters, digits and . _ + - only; no spaces, shell syntax or lookalike characters)`;
  }
  return undefined;
}

/** Why this entry refuses these arguments, or undefined. */
function argumentProblem(entry: CmdAllowEntry, executable: string, args: readonly string[]): string | undefined {
  const listedName = basename(entry.program);
  const realName = basename(executable);
  const names = [listedName];
  if (realName !== listedName && !isMultiCallBinary(realName)) names.push(realName);

  if (entry.args === undefined) {
    const runner = names.find(runsOtherPrograms);
    if (runner !== undefined) {
      return `${quote(entry.program)} runs other programs (${runner}); it may only be allowed with args patterns that pin what it runs`;
    }
  }

  const allowFlags = entry.allow_flags ?? [];
  const input: RuleInput = { args, allows: (flags) => flags.some((flag) => allowFlags.includes(flag)) };
  for (const ruleName of names) {
    const denial = PROGRAM_RULES.get(ruleName)?.(input);
    if (denial) {
      const permit = denial.flag === undefined ? '' : `; refused unless its allow entry lists ${quote(denial.flag)} in allow_flags`;
      return `${ruleName}: ${denial.text}${permit}`;
    }
  }

  if (entry.args !== undefined) {
    const patterns: RegExp[] = [];
    for (const source of entry.args) {
      try {
        patterns.push(new RegExp(`^(?:${source})$`));
      } catch {
        return `the allow entry for ${quote(entry.program)} has an invalid args pattern ${quote(source)}, so nothing runs under it`;
      }
    }
    for (const [index, arg] of args.entries()) {
      if (!patterns.some((pattern) => pattern.test(arg))) {
        return `${listedName}: argument ${index + 1} ${quote(arg)} matches none of the args patterns allowed for it`;
      }
    }
  }
  return undefined;
}

/** Entries the config schema would refuse are skipped here too, in case they arrive some other way. */
function isValidEntry(entry: CmdAllowEntry): boolean {
  if (typeof entry !== 'object' || entry === null || typeof entry.program !== 'string') return false;
  return entry.program.startsWith('/') ? programFormProblem(entry.program) === undefined : BARE_NAME.test(entry.program);
}

function deny(field: string, problem: string, hint: string): CommandCheck {
  return { ok: false, denial: { reason: 'rejected', field, detail: `HA_ERR_CMD_DENIED: ${problem}`, hint } };
}

function allowedHint(allow: readonly CmdAllowEntry[]): string {
  const names = [...new Set(allow.filter(isValidEntry).map((entry) => entry.program))];
  if (names.length === 0) return 'no programs are allowed (plugin.cmd.allow is empty)';
  const shown = names.slice(0, 40).join(', ');
  return `allowed programs: ${shown}${names.length > 40 ? `, and ${names.length - 40} more` : ''}; no shell is used, so pipes, redirection and $(...) do not work`;
}

function quote(text: string): string {
  return JSON.stringify(text);
}

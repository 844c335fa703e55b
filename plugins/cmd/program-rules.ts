/**
 * The built-in side-effect rules: what each known program can do besides reading and printing
 * (delete, write or edit files, run other programs, set the clock or host name, print other
 * processes' environments), found the way the program itself reads its arguments. An allowlist
 * that checks only names lets `find -delete`, `sed -i` and `sort -o` through (the original's
 * defect #10); these rules refuse them unless the owner's allow entry names the flag in
 * `allow_flags`. Pure: no I/O.
 */
import { type ArgKind, type LongOption, type OptionTable, type ParsedOption, parseArgs } from './getopt.js';
import { type SedEffect, scanSedScript } from './sed-script.js';

export interface RuleInput {
  /** The arguments after the program name. */
  args: readonly string[];
  /** True when the allow entry's allow_flags lists one of these names. */
  allows(names: readonly string[]): boolean;
}

export interface RuleDenial {
  /** What the argument would do (`-i edits files in place`). */
  text: string;
  /** The allow_flags name that would permit it; absent when nothing can (unknown options, unreadable scripts). */
  flag?: string;
}

/** Returns why the arguments are refused, or undefined when they pass. */
export type ProgramRule = (input: RuleInput) => RuleDenial | undefined;

interface SideEffect {
  /** Option names (`-i`, `--in-place`) or rule names; any of them in allow_flags permits it. */
  names: readonly string[];
  what: string;
}

interface OptionRuleSpec {
  table: OptionTable;
  effects: readonly SideEffect[];
  /**
   * Refuse options missing from the table. Needed where the option set decides which items are
   * operands (a date to set, an output file, a sed script), so a misread option cannot hide one.
   */
  strict: boolean;
  /** Further checks once options are known (operands, scripts). */
  after?: (options: readonly ParsedOption[], operands: readonly string[], input: RuleInput) => RuleDenial | undefined;
}

function optionRule(spec: OptionRuleSpec): ProgramRule {
  const effectOf = (option: ParsedOption): SideEffect | undefined => {
    if (option.known) return spec.effects.find((effect) => effect.names.includes(option.name));
    // An unknown or ambiguous long option that abbreviates a harmful one is refused with it.
    if (option.name.startsWith('--')) return spec.effects.find((effect) => effect.names.some((name) => name.startsWith(option.name)));
    return undefined;
  };
  const refuse = (option: ParsedOption, input: RuleInput, context = ''): RuleDenial | undefined => {
    const effect = effectOf(option);
    if (!effect || input.allows(effect.names)) return undefined;
    return { text: `${quote(option.written)}${context} ${effect.what}`, flag: effect.names[0] as string };
  };
  return (input) => {
    const parsed = parseArgs(input.args, spec.table);
    for (const option of parsed.options) {
      const denial = refuse(option, input);
      if (denial) return denial;
      // A value taken from the next item is read again as an option: if the table wrongly says an
      // option takes a value, the item it swallows still cannot smuggle a harmful flag past.
      if (option.separate && option.value !== undefined && option.value.length > 1 && option.value.startsWith('-')) {
        for (const inner of parseArgs([option.value], spec.table).options) {
          const innerDenial = refuse(inner, input, ` (the value of ${quote(option.written)})`);
          if (innerDenial) return innerDenial;
        }
      }
    }
    const unknown = parsed.unknown[0];
    if (spec.strict && unknown !== undefined) {
      return { text: `option ${quote(unknown)} is unknown or ambiguous here, and an option the policy cannot read is refused` };
    }
    return spec.after?.(parsed.options, parsed.operands, input);
  };
}

/** Builds an option table from a compact list: `'i::'` optional value, `'e:'` required, `'n'` none. */
function table(short: string, long: Record<string, string>): OptionTable {
  const shortTable: Record<string, ArgKind> = {};
  for (const match of short.matchAll(/(.)(::|:)?/g)) shortTable[match[1] as string] = argKind(match[2]);
  const longTable: Record<string, LongOption> = {};
  for (const [name, form] of Object.entries(long)) {
    // form: '' (no value), ':' (required), '::' (optional), optionally preceded by its short letter.
    const match = /^([^:]?)(::|:)?$/.exec(form);
    const letter = match?.[1];
    longTable[name] = letter ? { arg: argKind(match?.[2]), short: letter } : { arg: argKind(match?.[2]) };
  }
  return { short: shortTable, long: longTable };
}

function argKind(marker: string | undefined): ArgKind {
  if (marker === '::') return 'optional';
  if (marker === ':') return 'required';
  return 'none';
}

function quote(text: string): string {
  return JSON.stringify(text);
}

// ---------------------------------------------------------------------------------------------
// sed (GNU sed 4.9)

const SED_EFFECTS: Record<SedEffect, string> = {
  e: 'runs commands (the e command or the e flag of s)',
  w: 'writes files (w, W or the w flag of s)',
  r: 'reads other files into the output (r, R)',
};

const sedRule = optionRule({
  table: table('ne:f:Eri::l:suzb', {
    quiet: 'n',
    silent: 'n',
    debug: '',
    expression: 'e:',
    file: 'f:',
    'follow-symlinks': '',
    'in-place': 'i::',
    'line-length': 'l:',
    'null-data': 'z',
    'zero-terminated': 'z',
    posix: '',
    'regexp-extended': 'E',
    separate: 's',
    sandbox: '',
    unbuffered: 'u',
    binary: 'b',
    help: '',
    version: '',
  }),
  effects: [
    { names: ['-i', '--in-place'], what: 'edits files in place' },
    { names: ['-f', '--file'], what: 'reads the script from a file the policy cannot check' },
  ],
  strict: true,
  after: (options, operands, input) => {
    const scripts = options.filter((option) => option.name === '-e').map((option) => option.value ?? '');
    const fromFile = options.some((option) => option.name === '-f');
    // Without -e or -f the first operand is the script, wherever it stands among the options.
    if (scripts.length === 0 && !fromFile && operands[0] !== undefined) scripts.push(operands[0]);
    if (scripts.length === 0) return undefined;
    const scan = scanSedScript(scripts.join('\n'));
    for (const effect of ['e', 'w', 'r'] as const) {
      if (scan.effects.has(effect) && !input.allows([effect])) {
        return { text: `the script ${quote(scripts.join('; '))} ${SED_EFFECTS[effect]}`, flag: effect };
      }
    }
    if (scan.error !== undefined) return { text: `the script ${quote(scripts.join('; '))} could not be checked: ${scan.error}` };
    return undefined;
  },
});

// ---------------------------------------------------------------------------------------------
// find (GNU findutils): primaries are whole words and may follow `--` (`find -- -delete` deletes)

const FIND_PRIMARIES: Record<string, string> = {
  delete: 'deletes files',
  exec: 'runs programs',
  execdir: 'runs programs',
  ok: 'runs programs',
  okdir: 'runs programs',
  fprint: 'writes files',
  fprint0: 'writes files',
  fprintf: 'writes files',
  fls: 'writes files',
};

const findRule: ProgramRule = (input) => {
  for (const arg of input.args) {
    const primary = /^-+([a-z0-9]+)$/.exec(arg)?.[1];
    const what = primary === undefined ? undefined : FIND_PRIMARIES[primary];
    if (primary !== undefined && what !== undefined && !input.allows([`-${primary}`])) {
      return { text: `${quote(arg)} ${what}`, flag: `-${primary}` };
    }
  }
  return undefined;
};

// ---------------------------------------------------------------------------------------------
// sort, date, uniq, file (GNU coreutils 9, file 5.4x), hostname (Debian hostname 3.2x)

const sortRule = optionRule({
  table: table('bdfgiMhnRrVcCk:mo:sS:t:T:uz', {
    'ignore-leading-blanks': 'b',
    'dictionary-order': 'd',
    'ignore-case': 'f',
    'general-numeric-sort': 'g',
    'ignore-nonprinting': 'i',
    'month-sort': 'M',
    'human-numeric-sort': 'h',
    'numeric-sort': 'n',
    'random-sort': 'R',
    'random-source': ':',
    reverse: 'r',
    sort: ':',
    'version-sort': 'V',
    'batch-size': ':',
    check: '::',
    'compress-program': ':',
    debug: '',
    'files0-from': ':',
    key: 'k:',
    merge: 'm',
    output: 'o:',
    stable: 's',
    'buffer-size': 'S:',
    'field-separator': 't:',
    'temporary-directory': 'T:',
    unique: 'u',
    'zero-terminated': 'z',
    parallel: ':',
    help: '',
    version: '',
  }),
  effects: [
    { names: ['-o', '--output'], what: 'writes the result to a file' },
    { names: ['--compress-program'], what: 'runs a program to compress temporary files' },
  ],
  strict: false,
});

const dateRule = optionRule({
  table: table('d:f:I::r:Rs:u', {
    date: 'd:',
    debug: '',
    file: 'f:',
    'iso-8601': 'I::',
    reference: 'r:',
    resolution: '',
    'rfc-email': 'R',
    'rfc-822': 'R',
    'rfc-2822': 'R',
    'rfc-3339': ':',
    set: 's:',
    uct: 'u',
    utc: 'u',
    universal: 'u',
    help: '',
    version: '',
  }),
  effects: [{ names: ['-s', '--set'], what: 'sets the system clock' }],
  strict: true,
  // `date MMDDhhmm[[CC]YY][.ss]` sets the clock too; only `+FORMAT` operands just print.
  after: (_options, operands, input) => {
    const setting = operands.find((operand) => !operand.startsWith('+'));
    if (setting === undefined || input.allows(['-s', '--set'])) return undefined;
    return { text: `the operand ${quote(setting)} sets the system clock (only +FORMAT operands are read-only)`, flag: '-s' };
  },
});

const uniqRule = optionRule({
  table: table('0123456789cdDf:is:uw:z', {
    count: 'c',
    repeated: 'd',
    'all-repeated': 'D::',
    group: '::',
    'skip-fields': 'f:',
    'ignore-case': 'i',
    'skip-chars': 's:',
    unique: 'u',
    'zero-terminated': 'z',
    'check-chars': 'w:',
    help: '',
    version: '',
  }),
  effects: [],
  strict: true,
  // `uniq INPUT OUTPUT` writes OUTPUT.
  after: (_options, operands, input) => {
    const output = operands[1];
    if (output === undefined || input.allows(['output-file'])) return undefined;
    return { text: `the second operand ${quote(output)} is an output file uniq would write`, flag: 'output-file' };
  },
});

const fileRule = optionRule({
  table: table('bcCdEe:F:f:hikl0Lm:nNpP:rsSvzZ', {
    apple: '',
    brief: 'b',
    'checking-printout': 'c',
    compile: 'C',
    debug: 'd',
    exclude: 'e:',
    'exclude-quiet': ':',
    extension: '',
    'files-from': 'f:',
    separator: 'F:',
    help: '',
    mime: 'i',
    'mime-type': '',
    'mime-encoding': '',
    'keep-going': 'k',
    list: 'l',
    dereference: 'L',
    'no-dereference': 'h',
    'magic-file': 'm:',
    'no-buffer': 'n',
    'no-pad': 'N',
    print0: '0',
    parameter: 'P:',
    'preserve-date': 'p',
    raw: 'r',
    'special-files': 's',
    'no-sandbox': 'S',
    uncompress: 'z',
    'uncompress-noreport': 'Z',
    version: 'v',
  }),
  effects: [
    { names: ['-C', '--compile'], what: 'writes a compiled magic file' },
    { names: ['-S', '--no-sandbox'], what: "turns off file's own seccomp sandbox" },
  ],
  strict: false,
});

const hostnameRule = optionRule({
  table: table('aAbdfF:iIsyhV', {
    alias: 'a',
    'all-fqdns': 'A',
    boot: 'b',
    domain: 'd',
    fqdn: 'f',
    long: 'f',
    file: 'F:',
    'ip-address': 'i',
    'all-ip-addresses': 'I',
    short: 's',
    yp: 'y',
    nis: 'y',
    help: 'h',
    version: 'V',
  }),
  effects: [
    { names: ['-F', '--file'], what: 'sets the host name (or NIS domain) from a file' },
    { names: ['-b', '--boot'], what: 'sets a default host name' },
  ],
  strict: true,
  after: (_options, operands, input) => {
    const name = operands[0];
    if (name === undefined || input.allows(['set-hostname'])) return undefined;
    return { text: `the operand ${quote(name)} sets the host name (or NIS domain)`, flag: 'set-hostname' };
  },
});

// ---------------------------------------------------------------------------------------------
// ps (procps): the BSD option `e` prints every listed process's environment, the daemon's own
// included, which may carry API keys. BSD options are the items without a dash, and may carry
// values (`ewwp1234` is e, w, w and p 1234): any such item with an `e` in it is refused, unless
// it is the value of a dash option (`ps -o user` is a format, `ps o user` is refused with it).

/** ps's dash options whose value is the next item when it is not attached (`-o user`, `--sort pid`). */
const PS_VALUE_OPTIONS = new Set([
  '-C',
  '-G',
  '-g',
  '-k',
  '-O',
  '-o',
  '-p',
  '-q',
  '-s',
  '-t',
  '-U',
  '-u',
  '--cols',
  '--columns',
  '--format',
  '--group',
  '--Group',
  '--lines',
  '--pid',
  '--ppid',
  '--quick-pid',
  '--rows',
  '--sid',
  '--sort',
  '--tty',
  '--user',
  '--User',
  '--width',
]);

const psRule: ProgramRule = (input) => {
  for (let i = 0; i < input.args.length; i++) {
    const arg = input.args[i] as string;
    if (arg.startsWith('-')) {
      // `-o` or a cluster ending in it (`-eo`): the next item is its value, not a BSD option.
      const last = /^-[A-Za-z]+$/.test(arg) ? `-${arg.slice(-1)}` : arg;
      if (PS_VALUE_OPTIONS.has(arg) || PS_VALUE_OPTIONS.has(last)) i++;
      continue;
    }
    if (arg.includes('e') && !input.allows(['e'])) {
      return { text: `${quote(arg)} shows the environment of processes, secrets included (BSD option e)`, flag: 'e' };
    }
  }
  return undefined;
};

/** Rules by program name; a program is also checked under the name of the file its path resolves to. */
export const PROGRAM_RULES: ReadonlyMap<string, ProgramRule> = new Map([
  ['sed', sedRule],
  ['find', findRule],
  ['sort', sortRule],
  ['date', dateRule],
  ['uniq', uniqRule],
  ['file', fileRule],
  ['hostname', hostnameRule],
  ['ps', psRule],
  // Debian's hostname binary answers to these names too, and `domainname NAME` sets the NIS domain.
  ['domainname', hostnameRule],
  ['nisdomainname', hostnameRule],
  ['ypdomainname', hostnameRule],
  ['dnsdomainname', hostnameRule],
]);

/**
 * Programs whose job is to run other programs or arbitrary code (shells, interpreters, wrappers
 * such as env, xargs or timeout). Listed without `args` patterns they would undo the allowlist,
 * so the policy requires patterns for them.
 */
const RUNS_PROGRAMS =
  /^(?:a?sh|bash|dash|zsh|ksh|mksh|csh|tcsh|fish|busybox|toybox|env|xargs|nohup|nice|ionice|timeout|stdbuf|setsid|chroot|sudo|su|doas|runuser|pkexec|flock|watch|script|strace|ltrace|gdb|make|parallel|systemd-run|ssh|awk|gawk|mawk|nawk|perl[0-9.]*|python[0-9.]*|ruby[0-9.]*|node|nodejs|deno|bun|lua[0-9.]*|luajit|php[0-9.]*|tclsh[0-9.]*|wish[0-9.]*|expect)$/;

export function runsOtherPrograms(name: string): boolean {
  return RUNS_PROGRAMS.test(name);
}

/** Multi-call binaries pick what to be from argv[0], which the runner sets to the listed name. */
export function isMultiCallBinary(name: string): boolean {
  return name === 'busybox' || name === 'toybox' || name === 'coreutils';
}

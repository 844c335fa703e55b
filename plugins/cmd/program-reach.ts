/**
 * What a program reads beyond the paths its arguments name, for the in-process path guard
 * (path-guard.ts): whether it descends into folders (grep -r, du, find, tar, ls -R, cp -r ...),
 * whether it follows symbolic links while it does, and which arguments name files that list more
 * files to read (--files0-from, tar -T, sha256sum -c, @response files). A guard that only looks
 * at the arguments misses `grep -r X /` and `du --files0-from=LIST`; this is the rest.
 *
 * Known programs are read with their real flags (`ls -r` and `sort -r` reverse, `sed -r` is
 * extended regexps, `file -r` is raw output: none of them recurse). A program not listed here is
 * taken to recurse when it gets an `-r`/`-R`/`--recursive`/`--archive` flag, and then to follow
 * links: over-refusing an unknown program is safer than guessing. Pure: no I/O.
 */

/** How a file-list file is read: NUL-separated names, one name a line, checksum lines, or more arguments. */
export type ListFormat = 'nul' | 'lines' | 'checksums' | 'args';

export interface Reach {
  /** It descends into folders it is given (or the working directory when it is given none). */
  recursive: boolean;
  /** While descending it follows symbolic links, so whatever a link points to is read too. */
  followsLinks: boolean;
  /** Arguments (option values) that name files listing more files to read. */
  lists: Array<{ file: string; format: ListFormat }>;
}

interface ReachSpec {
  /** Recursive whatever the options. */
  always?: boolean;
  /** Options that make it recursive: `-r`, `--recursive` (long options match any abbreviation). */
  recursive?: readonly string[];
  /** Options that make it follow links while recursing; `true`: it always does. */
  follow?: readonly string[] | true;
  /** Options whose value is a file list. */
  lists?: Readonly<Record<string, ListFormat>>;
  /** Options are whole words (`find -L`, `find -files0-from F`), not clusters of letters. */
  words?: boolean;
  /** Options whose value `recurse` makes it recursive (grep -d recurse, --directories=recurse). */
  recurseValue?: readonly string[];
}

const NEVER: ReachSpec = {};
const CHECKSUMS: ReachSpec = { lists: { '-c': 'checksums', '--check': 'checksums' } };
const FILES0: ReachSpec = { lists: { '--files0-from': 'nul' } };
const GREP: ReachSpec = {
  recursive: ['-r', '-R', '--recursive', '--dereference-recursive'],
  follow: ['-R', '--dereference-recursive'],
  recurseValue: ['-d', '--directories'],
};
const TAR: ReachSpec = {
  always: true,
  follow: ['-h', '--dereference'],
  lists: { '-T': 'lines', '--files-from': 'lines' },
};
const CHANGE_OWNER: ReachSpec = { recursive: ['-R', '--recursive'], follow: ['-L'] };

/** Programs whose options are known; the default allowlist's programs are all here. */
const SPECS: ReadonlyMap<string, ReachSpec> = new Map<string, ReachSpec>([
  ['grep', GREP],
  ['egrep', GREP],
  ['fgrep', GREP],
  ['rgrep', { ...GREP, always: true }],
  ['ls', { recursive: ['-R', '--recursive'], follow: ['-L', '--dereference'] }],
  ['du', { always: true, follow: ['-L', '--dereference'], lists: { '--files0-from': 'nul' } }],
  ['find', { always: true, words: true, follow: ['-L', '-follow'], lists: { '-files0-from': 'nul' } }],
  ['tar', TAR],
  ['gtar', TAR],
  ['bsdtar', TAR],
  ['cp', { recursive: ['-r', '-R', '-a', '--recursive', '--archive'], follow: ['-L', '--dereference'] }],
  ['rm', { recursive: ['-r', '-R', '--recursive'] }],
  ['chmod', CHANGE_OWNER],
  ['chown', CHANGE_OWNER],
  ['chgrp', CHANGE_OWNER],
  [
    'rsync',
    {
      recursive: ['-r', '-a', '--recursive', '--archive'],
      follow: ['-L', '-k', '--copy-links', '--copy-dirlinks', '--copy-unsafe-links'],
      lists: { '--files-from': 'lines' },
    },
  ],
  ['zip', { recursive: ['-r', '-R', '--recurse-paths', '--recurse-patterns'], follow: true }],
  ['diff', { recursive: ['-r', '--recursive'], follow: true }],
  ['tree', { always: true, follow: ['-l'] }],
  ['rg', { always: true, follow: ['-L', '--follow'] }],
  ['ag', { always: true, follow: ['-f', '--follow'] }],
  ['ack', { always: true, follow: ['--follow'] }],
  ['fdfind', { always: true, follow: ['-L', '--follow'] }],
  ['wc', FILES0],
  ['sort', FILES0],
  ['file', { lists: { '-f': 'lines', '--files-from': 'lines' } }],
  ...['md5sum', 'sha1sum', 'sha224sum', 'sha256sum', 'sha384sum', 'sha512sum', 'b2sum', 'cksum'].map(
    (name) => [name, CHECKSUMS] as [string, ReachSpec],
  ),
  // Read only what they are named (or nothing at all); their -r means something else.
  ...[
    'cat',
    'date',
    'df',
    'echo',
    'free',
    'head',
    'hostname',
    'id',
    'ping',
    'ps',
    'sed',
    'stat',
    'tail',
    'uname',
    'uniq',
    'uptime',
    'whoami',
    'readlink',
    'realpath',
    'basename',
    'dirname',
    'printf',
    'true',
    'false',
    'sleep',
  ].map((name) => [name, NEVER] as [string, ReachSpec]),
]);

/** How an unknown program is read: the common recursion flags, and the common file-list options. */
const UNKNOWN: ReachSpec = {
  recursive: ['-r', '-R', '--recursive', '--archive'],
  follow: true,
  lists: { '--files0-from': 'nul', '--files-from': 'lines' },
};

/** The longest run of option letters read as a cluster; longer ones are refused by the guard. */
export const MAX_CLUSTER_LETTERS = 64;

/** What `args` make the program called `name` read beyond its named paths. */
export function programReach(name: string, args: readonly string[]): Reach {
  const spec = SPECS.get(name) ?? UNKNOWN;
  const options = readOptions(args, spec);
  const has = (forms: readonly string[] | undefined) => forms !== undefined && options.some((option) => matches(option.name, forms));
  const recursive =
    spec.always === true ||
    has(spec.recursive) ||
    options.some((option) => matches(option.name, spec.recurseValue ?? []) && option.value !== undefined && isRecurse(option.value));
  const follow = spec.follow;
  const followsLinks = recursive && (follow === true || has(follow));
  const lists: Reach['lists'] = [];
  for (const option of options) {
    for (const [form, format] of Object.entries(spec.lists ?? {})) {
      if (option.value !== undefined && matches(option.name, [form])) lists.push({ file: option.value, format });
    }
  }
  // Response files (gcc, ld, objdump and friends read `@FILE` as more arguments) for every program.
  for (const arg of args) if (arg.length > 1 && arg.startsWith('@')) lists.push({ file: arg.slice(1), format: 'args' });
  return { recursive, followsLinks, lists };
}

interface ReadOption {
  /** `-x` or `--name` (as written, possibly abbreviated), or the whole word for word-style programs. */
  name: string;
  /** Attached (`-Tfile`, `--files-from=file`) or the next item. */
  value?: string;
}

/** The options among the arguments, each with the value it could take; `--` ends them. */
function readOptions(args: readonly string[], spec: ReachSpec): ReadOption[] {
  const options: ReadOption[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === '--') break;
    const next = args[i + 1];
    if (spec.words) {
      if (arg.startsWith('-')) options.push(next === undefined ? { name: arg } : { name: arg, value: next });
      continue;
    }
    if (arg.startsWith('--')) {
      const eq = arg.indexOf('=');
      if (eq > 0) options.push({ name: arg.slice(0, eq), value: arg.slice(eq + 1) });
      else options.push(next === undefined ? { name: arg } : { name: arg, value: next });
      continue;
    }
    // tar's old style: a first argument without a dash is a cluster of letters too (`tar cTf LIST x`).
    const cluster = arg.startsWith('-') ? arg.slice(1) : i === 0 && spec === TAR ? arg : '';
    for (let j = 0; j < cluster.length; j++) {
      const letter = cluster[j] as string;
      if (!/[A-Za-z0-9]/.test(letter)) break;
      const value = cluster.slice(j + 1) || next;
      options.push(value === undefined ? { name: `-${letter}` } : { name: `-${letter}`, value });
    }
  }
  return options;
}

/** `--rec` abbreviates `--recursive`, as getopt_long accepts any unambiguous prefix (taken here even when ambiguous). */
function matches(written: string, forms: readonly string[]): boolean {
  return forms.some(
    (form) => form === written || (form.startsWith('--') && written.startsWith('--') && written.length >= 4 && form.startsWith(written)),
  );
}

function isRecurse(value: string): boolean {
  return value.length >= 3 && 'recurse'.startsWith(value);
}

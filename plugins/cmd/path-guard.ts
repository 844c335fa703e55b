/**
 * The in-process path guard: when cmd_run has no isolated runner (development, or a machine
 * without systemd), the command runs as the daemon's own user, so every file the daemon can read
 * the command can read too. Comparing argument text is not enough (`/proc/PID/./environ`,
 * `/proc//PID/environ`, `/proc/self/../PID/environ` and a symlink all name the same file), so
 * every argument that could be a path is resolved the way the kernel will resolve it and refused
 * when it lands in one of the daemon's protected trees:
 *
 * - what could be a path: each argument, the value after each `=` (`--files0-from=F`, `if=F`), the
 *   value attached to any letter of a short-option cluster (`-fFILE`, `-af/proc/...`), an `@FILE`
 *   response file, and every name inside files that list more files (--files0-from, tar -T,
 *   sha256sum -c, @FILE), see program-reach.ts;
 * - how it resolves: against the command's working directory, one component at a time with
 *   realpath, so `..` applies after a symlink as in the kernel, `//` and `./` vanish, and
 *   `/proc/self` is the daemon itself (the child's own /proc/self is harmless, the daemon's is not);
 *   a path that does not exist yet resolves as far as it exists and lexically after that. The
 *   route counts too: /proc's magic links (`/proc/PID/fd/N`, `cwd`, `root`) and links to them
 *   (`/dev/stdin`) lead anywhere, so a path that passes through them is refused wherever it ends;
 * - what is protected: the data folder (databases, backups, plugin data such as the web page's
 *   credentials), the runtime folder (the control socket), the configuration folder and files,
 *   every folder or file the configuration names (backup_dir, key_file, ...), and /proc/<pid> of
 *   every process of the daemon's user (environment, memory, open files, cwd and root links),
 *   except the entries that hold nothing secret (status, stat, net, mounts, ...). The cmd plugin's
 *   own folder (the default working directory) is not protected: it holds nothing of the daemon's;
 * - recursive readers (grep -r, du, find, tar, ls -R, cp -r, ...) are refused a folder that
 *   contains a protected tree (/, /var, /proc, ...), and when they follow links, a folder with a
 *   link into one (checked by a bounded walk).
 *
 * This is a best effort against a command named by its arguments; a program that opens the
 * daemon's files on its own (`ps e` reads every environment, and program-rules.ts refuses it) is
 * beyond it. Real isolation is the runner unit (runner-service.ts, homeagent-cmd.service), which
 * runs commands as another user who cannot see any of it.
 */
import { type Dirent, readdirSync, readFileSync, readlinkSync, realpathSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { type ListFormat, MAX_CLUSTER_LETTERS, programReach, type Reach } from './program-reach.js';

/** One folder or file the daemon keeps secrets in (a real path), and what it is, for messages. */
export interface ProtectedRoot {
  path: string;
  what: string;
}

export interface ProtectedTrees {
  roots: readonly ProtectedRoot[];
  /** The cmd plugin's own folder (real path): inside the data folder, but not protected. */
  exempt: string;
  /** The daemon's process and user: /proc/<pid> of every process of this user is protected. */
  pid: number;
  uid: number;
}

/** A file list larger than this is refused rather than read ahead. */
export const MAX_LIST_BYTES = 1024 * 1024;
/** Entries a link-following recursive reader's folder may have; a larger one is refused. */
export const MAX_SCAN_ENTRIES = 10_000;
/** Possible paths one command may name (arguments, option values, list entries). */
export const MAX_CANDIDATES = 20_000;

/** /proc/<pid>/ entries that hold nothing secret, whoever the process belongs to. */
const HARMLESS_PROC_ENTRIES = new Set(['net', 'mounts', 'mountinfo', 'stat', 'statm', 'status', 'comm', 'cgroup']);

/**
 * Why the command may not run in-process, or undefined. `names` are the program's names (the
 * listed name and the real file's), `cwd` its real working directory.
 */
export function guardPaths(names: readonly string[], args: readonly string[], cwd: string, trees: ProtectedTrees): string | undefined {
  return new Guard(trees, cwd).check(names, args);
}

/** The strings in `arg` that the program could take as a path. */
export function pathCandidates(arg: string): string[] | undefined {
  const out = new Set<string>([arg]);
  for (let eq = arg.indexOf('='); eq >= 0; eq = arg.indexOf('=', eq + 1)) out.add(arg.slice(eq + 1));
  if (arg.startsWith('@')) out.add(arg.slice(1));
  if (/^-[^-]/.test(arg)) {
    // Any letter of a cluster may be the option whose value is attached: -f/x, -af/x, -rf/x.
    for (let j = 1; j < arg.length && /[A-Za-z0-9]/.test(arg[j] as string); j++) {
      if (j > MAX_CLUSTER_LETTERS) return undefined;
      out.add(arg.slice(j + 1));
    }
  }
  out.delete('');
  return [...out];
}

class Guard {
  readonly #trees: ProtectedTrees;
  readonly #cwd: string;
  readonly #real = new Map<string, string | undefined>();
  #candidates = 0;
  #program = '';

  constructor(trees: ProtectedTrees, cwd: string) {
    this.#trees = trees;
    this.#cwd = cwd;
  }

  check(names: readonly string[], args: readonly string[]): string | undefined {
    this.#program = names[0] ?? 'the program';
    // A working directory set inside a protected tree (plugin.cmd.workdir) would hand the
    // command everything there by relative names and by default.
    const inside = this.#protection(this.#cwd);
    if (inside) return `the working directory ${this.#cwd} is ${inside}`;
    const reach = mergeReach(names.map((name) => programReach(name, args)));
    for (const arg of args) {
      const problem = this.#argument(arg, reach, true);
      if (problem) return problem;
    }
    // With no folder named, grep -r, du and find read the working directory.
    if (reach.recursive) {
      const problem = this.#folder(this.#cwd, reach);
      if (problem) return `the working directory ${this.#cwd} ${problem}`;
    }
    for (const list of reach.lists) {
      const problem = this.#list(list.file, list.format, reach);
      if (problem) return problem;
    }
    return undefined;
  }

  #argument(arg: string, reach: Reach, expand: boolean): string | undefined {
    const candidates = expand ? pathCandidates(arg) : [arg];
    if (candidates === undefined) {
      return `${quote(arg)} is a cluster of more than ${MAX_CLUSTER_LETTERS} option letters, too long to check for the paths it could name`;
    }
    for (const candidate of candidates) {
      this.#candidates += 1;
      if (this.#candidates > MAX_CANDIDATES) return `the command names more than ${MAX_CANDIDATES} possible paths, too many to check`;
      const { path, route } = this.#resolve(candidate);
      const via = candidate === arg ? '' : ` (as ${quote(candidate)})`;
      const hit = this.#protection(path);
      if (hit) return `${quote(arg)}${via} resolves to ${path}, ${hit}`;
      const passed = this.#passesThrough(route);
      if (passed) return `${quote(arg)}${via} goes through ${passed}`;
      if (reach.recursive) {
        const problem = this.#folder(path, reach);
        if (problem) return `${quote(arg)}${via} resolves to ${path}, which ${problem}`;
      }
    }
    return undefined;
  }

  #resolve(path: string): ResolvedPath {
    return resolvePath(path, this.#cwd, this.#real);
  }

  /**
   * The first step of a route through a process's files that are not harmless (/proc/<pid>/fd/N,
   * cwd, root, exe ...: magic links that open what the process has open, wherever that is), or
   * undefined. Passing through /proc/<pid> itself to reach its status is fine.
   */
  #passesThrough(route: readonly string[]): string | undefined {
    for (const step of route) {
      const proc = procEntry(step);
      if (proc === undefined || proc.entry === undefined || HARMLESS_PROC_ENTRIES.has(proc.entry)) continue;
      if (this.#daemonsUser(proc.id)) {
        return `${step}, the files of process ${proc.id}, which runs as the daemon's user: its environment, memory and open files hold the daemon's secrets`;
      }
    }
    return undefined;
  }

  /** What protected tree `path` (canonical) is in, as the end of a sentence, or undefined. */
  #protection(path: string): string | undefined {
    if (path.startsWith('/proc/')) {
      const proc = procEntry(path);
      if (proc === undefined || (proc.entry !== undefined && HARMLESS_PROC_ENTRIES.has(proc.entry))) return undefined;
      if (!this.#daemonsUser(proc.id)) return undefined;
      return `the files of process ${proc.id}, which runs as the daemon's user: its environment, memory and open files hold the daemon's secrets`;
    }
    const { roots, exempt } = this.#trees;
    for (const root of roots) {
      if (!isUnder(path, root.path)) continue;
      // The plugin's own folder is not protected, unless a protected tree lies inside it.
      if (isUnder(path, exempt) && !isUnder(root.path, exempt)) continue;
      return `inside ${root.what} (${root.path})`;
    }
    return undefined;
  }

  /** True unless `id` is a process of another user (whose secrets the kernel keeps from this user). */
  #daemonsUser(id: string): boolean {
    const { pid, uid } = this.#trees;
    if (!/^\d+$/.test(id) || Number(id) === pid || uid === 0) return true;
    try {
      return statSync(`/proc/${id}`).uid === uid;
    } catch {
      // Gone, or not there yet: whose it will be cannot be told.
      return true;
    }
  }

  /** Why a recursive reader may not read the folder `path` (canonical), or undefined (also for non-folders). */
  #folder(path: string, reach: Reach): string | undefined {
    if (!isDirectory(path)) return undefined;
    const inside = this.#protectedInside(path);
    if (inside) return `is a folder that contains ${inside}, and ${this.#program} reads folders recursively`;
    return reach.followsLinks ? this.#links(path) : undefined;
  }

  #protectedInside(dir: string): string | undefined {
    if (isUnder('/proc', dir)) return "/proc, with the daemon's own process files";
    const root = this.#trees.roots.find((r) => isUnder(r.path, dir));
    return root ? `${root.what} (${root.path})` : undefined;
  }

  /** A bounded walk of `dir` for links a link-following reader would take into a protected tree. */
  #links(dir: string): string | undefined {
    const queue = [dir];
    const seen = new Set(queue);
    let entries = 0;
    for (let current = queue.shift(); current !== undefined; current = queue.shift()) {
      let list: Dirent[];
      try {
        list = readdirSync(current, { withFileTypes: true });
      } catch {
        continue; // unreadable to the daemon's user, so to the command as well
      }
      for (const entry of list) {
        entries += 1;
        if (entries > MAX_SCAN_ENTRIES) {
          return `is a folder with more than ${MAX_SCAN_ENTRIES} entries, too many to check for links into the daemon's folders, and ${this.#program} follows links (leave out -R/-L, or name a smaller folder)`;
        }
        const full = join(current, entry.name);
        if (entry.isDirectory()) {
          if (!seen.has(full)) {
            seen.add(full);
            queue.push(full);
          }
          continue;
        }
        if (!entry.isSymbolicLink()) continue;
        const { path: target, route } = this.#resolve(full);
        const hit = this.#protection(target) ?? this.#passesThrough(route);
        if (hit) return `holds the link ${full} to ${target}, ${hit}, and ${this.#program} follows links`;
        if (!isDirectory(target)) continue;
        const inside = this.#protectedInside(target);
        if (inside) return `holds the link ${full} to ${target}, a folder that contains ${inside}, and ${this.#program} follows links`;
        if (!seen.has(target)) {
          seen.add(target);
          queue.push(target);
        }
      }
    }
    return undefined;
  }

  /** Checks the names inside a file that lists more files (the list file itself was checked as an argument). */
  #list(file: string, format: ListFormat, reach: Reach): string | undefined {
    const { path } = this.#resolve(file);
    let text: string;
    try {
      const stat = statSync(path);
      if (!stat.isFile()) return `${quote(file)} is a list of files that is not a regular file, so the files it names cannot be checked`;
      if (stat.size > MAX_LIST_BYTES) return `${quote(file)} is a list of files larger than ${MAX_LIST_BYTES} bytes, too long to check`;
      text = readFileSync(path, 'utf8');
    } catch {
      return undefined; // missing or unreadable: the program cannot read it either
    }
    for (const entry of listEntries(text, format)) {
      const problem = this.#argument(entry, reach, format === 'args');
      if (problem) return `${quote(file)} lists files to read, and ${problem}`;
    }
    return undefined;
  }
}

/** A path resolved like the kernel resolves it, and every path it went through on the way. */
export interface ResolvedPath {
  path: string;
  /** Each component's path as it was reached, and the routes of the symlinks followed. */
  route: string[];
}

/** Symlinks followed within one link's text at most (the kernel's limit is 40 in a whole path). */
const MAX_LINK_DEPTH = 40;

/**
 * `path` made absolute against `cwd` (a real path) and resolved like the kernel resolves it, one
 * component at a time: symlinks (and /proc's magic links) first, then `..` from where they led.
 * Components from the first one that does not exist on are taken as written. The route keeps
 * where each symlink's text points, so `/dev/stdin` is seen to go through /proc/self/fd/0 even
 * though it ends at /dev/null. `cache` keeps the realpath answers of one check.
 */
export function resolvePath(path: string, cwd: string, cache = new Map<string, string | undefined>()): ResolvedPath {
  const route: string[] = [];
  return { path: walk(path, cwd, 0, route, cache), route };
}

/** {@link resolvePath}'s destination alone. */
export function canonicalPath(path: string, cwd: string, cache = new Map<string, string | undefined>()): string {
  return resolvePath(path, cwd, cache).path;
}

function walk(path: string, cwd: string, depth: number, route: string[], cache: Map<string, string | undefined>): string {
  const parts = (path.startsWith('/') ? path : `${cwd}/${path}`).split('/');
  let current = '/';
  let exists = true;
  for (const part of parts) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      current = dirname(current);
      continue;
    }
    const next = current === '/' ? `/${part}` : `${current}/${part}`;
    route.push(next);
    if (!exists) {
      current = next;
      continue;
    }
    const link = readLink(next);
    // The link's own text, for the route; where it really leads is the kernel's answer below.
    if (link !== undefined && depth < MAX_LINK_DEPTH) walk(link, current, depth + 1, route, cache);
    const real = cachedRealpath(next, cache);
    if (real === undefined) exists = false;
    current = real ?? next;
  }
  return current;
}

function readLink(path: string): string | undefined {
  try {
    return readlinkSync(path);
  } catch {
    return undefined; // not a link, or not there
  }
}

/** `/proc/<id>/<entry>...` as id and entry (a thread's entry for `/proc/<id>/task/<tid>/<entry>`). */
function procEntry(path: string): { id: string; entry: string | undefined } | undefined {
  const match = /^\/proc\/(\d+|self|thread-self)(?:\/(.*))?$/.exec(path);
  if (!match) return undefined;
  const parts = (match[2] ?? '').split('/').filter(Boolean);
  return { id: match[1] as string, entry: parts[0] === 'task' ? parts[2] : parts[0] };
}

function cachedRealpath(path: string, cache: Map<string, string | undefined>): string | undefined {
  if (cache.has(path)) return cache.get(path);
  let real: string | undefined;
  try {
    real = realpathSync.native(path);
  } catch {
    real = undefined;
  }
  cache.set(path, real);
  return real;
}

function listEntries(text: string, format: ListFormat): string[] {
  switch (format) {
    case 'nul':
      return text.split('\0').filter(Boolean);
    case 'lines':
      return text.split('\n').filter(Boolean);
    case 'checksums':
      // GNU "HASH  NAME" / "HASH *NAME", and BSD "ALGO (NAME) = HASH".
      return text
        .split('\n')
        .filter(Boolean)
        .map((line) => /^\\?[0-9A-Fa-f]+ [ *](.*)$/.exec(line)?.[1] ?? /^[\w-]+ \((.*)\) = [0-9A-Fa-f]+$/.exec(line)?.[1] ?? line);
    case 'args':
      return text
        .split(/\s+/)
        .map((word) => word.replace(/^(['"])(.*)\1$/, '$2'))
        .filter(Boolean);
  }
}

function mergeReach(reaches: readonly Reach[]): Reach {
  return {
    recursive: reaches.some((r) => r.recursive),
    followsLinks: reaches.some((r) => r.followsLinks),
    lists: reaches
      .flatMap((r) => r.lists)
      .filter((list, i, all) => all.findIndex((l) => l.file === list.file && l.format === list.format) === i),
  };
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** `path` is `root` or inside it (both canonical). */
export function isUnder(path: string, root: string): boolean {
  return path === root || path.startsWith(root === '/' ? '/' : `${root}/`);
}

function quote(text: string): string {
  return JSON.stringify(text);
}

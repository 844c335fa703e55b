/**
 * The daemon's memory use and the limit its cgroup puts on it, for the supervisor's memory
 * component. systemd's MemoryMax= ends up in the service's own cgroup (found through
 * /proc/self/cgroup), a container's limit at the root of its cgroup namespace; both cgroup v2
 * (memory.max) and v1 (memory.limit_in_bytes) are read, because Raspberry Pi OS images still boot
 * either.
 */
import { readFileSync } from 'node:fs';

export interface MemoryUsage {
  rss_bytes: number;
  /** The cgroup's memory limit, or null when there is none (or it cannot be read). */
  cgroup_limit_bytes: number | null;
}

const CGROUP_ROOT = '/sys/fs/cgroup';
// cgroup v1 writes "no limit" as a page-rounded 2^63 - 1; anything this large means unlimited.
const UNLIMITED_FROM = 2 ** 60;

/** Reads a file, or undefined when it does not exist or cannot be read. */
export type ReadText = (path: string) => string | undefined;

const readText: ReadText = (path) => {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
};

/** The resident set size of this process and its cgroup's memory limit. */
export function readMemoryUsage(read: ReadText = readText): MemoryUsage {
  return { rss_bytes: process.memoryUsage.rss(), cgroup_limit_bytes: cgroupMemoryLimit(read) };
}

/** The memory limit of this process's cgroup in bytes, or null when unlimited or unknown. */
export function cgroupMemoryLimit(read: ReadText = readText): number | null {
  for (const file of limitFiles(read('/proc/self/cgroup') ?? '')) {
    const text = read(file);
    if (text !== undefined) return parseLimit(text);
  }
  return null;
}

/** `max`, an empty file or a huge v1 value mean no limit; otherwise the number of bytes. */
export function parseLimit(text: string): number | null {
  const value = text.trim();
  if (!/^[0-9]+$/.test(value)) return null;
  const bytes = Number(value);
  return bytes >= UNLIMITED_FROM ? null : bytes;
}

/** Where to look, most specific first: the process's own cgroup, then the namespace root. */
function limitFiles(procSelfCgroup: string): string[] {
  const files: string[] = [];
  for (const line of procSelfCgroup.split('\n')) {
    const [id, controllers, path] = splitCgroupLine(line);
    if (path === undefined) continue;
    const own = path === '/' ? '' : path;
    if (id === '0' && controllers === '') files.unshift(`${CGROUP_ROOT}${own}/memory.max`, `${CGROUP_ROOT}/memory.max`);
    else if (controllers?.split(',').includes('memory'))
      files.push(`${CGROUP_ROOT}/memory${own}/memory.limit_in_bytes`, `${CGROUP_ROOT}/memory/memory.limit_in_bytes`);
  }
  return files.length > 0 ? files : [`${CGROUP_ROOT}/memory.max`];
}

/** `hierarchy-id:controllers:path`; the path may itself contain colons. */
function splitCgroupLine(line: string): [string | undefined, string | undefined, string | undefined] {
  const first = line.indexOf(':');
  const second = line.indexOf(':', first + 1);
  if (first < 0 || second < 0) return [undefined, undefined, undefined];
  return [line.slice(0, first), line.slice(first + 1, second), line.slice(second + 1)];
}

/**
 * Where the daemon's memory goes, for `homeagentctl status --memory` (issue 32: a Pi Zero 2 W has
 * 512 MB for everything). The process's own figures come from Node (heap, external, array
 * buffers) and the kernel (/proc/self/status: anonymous and file-backed resident pages, threads);
 * V8's heap is split by space (code, old objects, new objects); the child processes HomeAgent runs
 * (pocketsphinx, arecord and aplay, process plugins, the cmd runner's commands) are found by their
 * parent pid in /proc and counted apart, since their memory is not in the daemon's RSS. Worker
 * threads share the process: their heaps are inside the RSS and the thread count says how many
 * there are. Linux only; elsewhere the /proc parts are absent rather than wrong.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { getHeapSpaceStatistics } from 'node:v8';
import type { ChildProcessMemory, MemoryReport } from '../api/daemon-memory.js';

export type { ChildProcessMemory, MemoryReport };

const KIB = 1024;

/** `VmRSS:  1234 kB` → bytes; undefined when the field is missing. */
function statusField(status: string, field: string): number | undefined {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
  return match ? Number(match[1]) * KIB : undefined;
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** pid → parent pid of every process /proc shows (empty where there is no /proc). */
function parentPids(): Map<number, number> {
  const parents = new Map<number, number>();
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return parents;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readText(`/proc/${entry}/stat`);
    // The command name (field 2) is in parentheses and may hold spaces or parentheses itself.
    const afterName = stat?.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ppid = Number(afterName?.[1]);
    if (Number.isInteger(ppid)) parents.set(Number(entry), ppid);
  }
  return parents;
}

/** The processes descended from `root`, nearest first (a shell's child is counted with it). */
export function descendantProcesses(root: number): ChildProcessMemory[] {
  const parents = parentPids();
  const found: ChildProcessMemory[] = [];
  const queue = [root];
  while (queue.length > 0) {
    const parent = queue.shift() as number;
    for (const [pid, ppid] of parents) {
      if (ppid !== parent) continue;
      queue.push(pid);
      const status = readText(`/proc/${pid}/status`);
      const commandLine = readText(`/proc/${pid}/cmdline`)?.split('\0').filter(Boolean).join(' ') ?? '';
      found.push({ pid, command: commandLine.slice(0, 120), rss_bytes: status ? (statusField(status, 'VmRSS') ?? 0) : 0 });
    }
  }
  return found;
}

export function memoryReport(): MemoryReport {
  const usage = process.memoryUsage();
  const status = readText('/proc/self/status') ?? '';
  const threads = /^Threads:\s+(\d+)/m.exec(status)?.[1];
  const children = descendantProcesses(process.pid);
  const anon = statusField(status, 'RssAnon');
  const file = statusField(status, 'RssFile');
  return {
    rss_bytes: usage.rss,
    ...(anon !== undefined && { rss_anon_bytes: anon }),
    ...(file !== undefined && { rss_file_bytes: file }),
    heap_total_bytes: usage.heapTotal,
    heap_used_bytes: usage.heapUsed,
    external_bytes: usage.external,
    array_buffers_bytes: usage.arrayBuffers,
    heap_spaces: getHeapSpaceStatistics()
      .map((space) => ({ space: space.space_name, size_bytes: space.space_size, used_bytes: space.space_used_size }))
      .filter((space) => space.size_bytes > 0)
      .sort((a, b) => b.size_bytes - a.size_bytes),
    ...(threads !== undefined && { threads: Number(threads) }),
    children,
    children_rss_bytes: children.reduce((sum, child) => sum + child.rss_bytes, 0),
  };
}

/**
 * The answer of `daemon.memory` (src/supervisor/memory-report.ts), shown by
 * `homeagentctl status --memory`: where the daemon's memory goes.
 */

export interface ChildProcessMemory {
  pid: number;
  /** The program and its first arguments, cut to 120 characters. */
  command: string;
  rss_bytes: number;
}

export interface MemoryReport {
  rss_bytes: number;
  /** Resident pages that are the process's own (heaps, stacks, native allocations). */
  rss_anon_bytes?: number;
  /** Resident pages of mapped files (node itself, native addons such as SQLite and ONNX Runtime). */
  rss_file_bytes?: number;
  heap_total_bytes: number;
  heap_used_bytes: number;
  /** Memory of C++ objects bound to JavaScript ones (buffers included). */
  external_bytes: number;
  array_buffers_bytes: number;
  /** V8's heap spaces of the main thread, largest first. */
  heap_spaces: Array<{ space: string; size_bytes: number; used_bytes: number }>;
  /** Threads of the process: the main one, libuv's pool, V8's helpers and each worker thread. */
  threads?: number;
  /** Direct child processes and theirs, each with its own RSS (not part of rss_bytes). */
  children: ChildProcessMemory[];
  children_rss_bytes: number;
}

/**
 * `homeagentctl status --memory` as text: the daemon's RSS and what it is made of, the V8 heap by
 * space, and the child processes apart (their memory is not in the daemon's RSS but is the Pi's).
 */
import type { MemoryReport } from '../api/daemon-memory.js';
import type { Language } from '../shared/language.js';
import { cliLanguage } from './cli-language.js';
import { bytes, table } from './format.js';

const WORDS = {
  en: {
    process: (rss: string) => `daemon RSS ${rss}`,
    pages: (anon: string, file: string) => `  own pages ${anon}, file-backed ${file} (node, native addons)`,
    heap: (used: string, total: string) => `  JavaScript heap ${used} used of ${total}`,
    native: (external: string, buffers: string) => `  external ${external} (array buffers ${buffers})`,
    threads: (n: number) => `  threads ${n} (main, libuv pool, V8 helpers, worker threads)`,
    spaces: ['HEAP SPACE', 'SIZE', 'USED'],
    children: (n: number, rss: string) => `child processes: ${n}, RSS together ${rss}`,
    noChildren: 'child processes: none',
    childHeader: ['PID', 'RSS', 'COMMAND'],
  },
  zh: {
    process: (rss: string) => `守护进程 RSS ${rss}`,
    pages: (anon: string, file: string) => `  自身内存页 ${anon}，文件映射 ${file}（node 和原生扩展）`,
    heap: (used: string, total: string) => `  JavaScript 堆已用 ${used}，共 ${total}`,
    native: (external: string, buffers: string) => `  外部内存 ${external}（其中 ArrayBuffer ${buffers}）`,
    threads: (n: number) => `  线程 ${n} 个（主线程、libuv 线程池、V8 辅助线程、工作线程）`,
    spaces: ['堆空间', '大小', '已用'],
    children: (n: number, rss: string) => `子进程：${n} 个，RSS 合计 ${rss}`,
    noChildren: '子进程：无',
    childHeader: ['PID', 'RSS', '命令'],
  },
} as const;

export function formatMemoryReport(report: MemoryReport, language: Language = cliLanguage()): string {
  const w = WORDS[language];
  const lines: string[] = [w.process(bytes(report.rss_bytes))];
  if (report.rss_anon_bytes !== undefined && report.rss_file_bytes !== undefined)
    lines.push(w.pages(bytes(report.rss_anon_bytes), bytes(report.rss_file_bytes)));
  lines.push(w.heap(bytes(report.heap_used_bytes), bytes(report.heap_total_bytes)));
  lines.push(w.native(bytes(report.external_bytes), bytes(report.array_buffers_bytes)));
  if (report.threads !== undefined) lines.push(w.threads(report.threads));
  lines.push(table([[...w.spaces], ...report.heap_spaces.map((s) => [s.space, bytes(s.size_bytes), bytes(s.used_bytes)])], '  '));
  if (report.children.length === 0) lines.push(w.noChildren);
  else {
    lines.push(w.children(report.children.length, bytes(report.children_rss_bytes)));
    lines.push(table([[...w.childHeader], ...report.children.map((c) => [String(c.pid), bytes(c.rss_bytes), c.command])], '  '));
  }
  return lines.join('\n');
}

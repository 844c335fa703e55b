/**
 * `homeagentctl status --memory` against an in-process daemon (this test process is the daemon,
 * so its child processes are the daemon's): the report names the RSS and its parts, the heap by
 * space, the threads, and a child process (a real `sleep`) with its pid, command and RSS, in both
 * languages and as JSON; --memory with another command is a usage error.
 */
import { spawn } from 'node:child_process';
import { Readable } from 'node:stream';
import t from 'tap';
import type { MemoryReport } from '../../src/api/daemon-memory.js';
import { runHomeagentctl } from '../../src/cli/run-homeagentctl.js';
import { startDaemon } from '../helpers/in-process-daemon.js';

async function ctl(socket: string, args: string[], lang = 'C'): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await runHomeagentctl(['--socket', socket, ...args], {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    stdin: Readable.from([]),
    cwd: '/',
    env: { LANG: lang },
  });
  return { code, stdout, stderr };
}

t.test('status --memory: the daemon, its heap and its child processes', async (t) => {
  const daemon = await startDaemon(t);
  await daemon.waitForReady();
  const sleeper = spawn('sleep', ['30'], { stdio: 'ignore' });
  t.teardown(() => {
    sleeper.kill('SIGKILL');
  });

  const json = await ctl(daemon.socketPath, ['--json', 'status', '--memory']);
  t.equal(json.code, 0, json.stderr);
  const report = JSON.parse(json.stdout) as MemoryReport;
  t.ok(report.rss_bytes > report.heap_used_bytes, 'the RSS holds the heap');
  t.ok((report.rss_anon_bytes ?? 0) > 0 && (report.rss_file_bytes ?? 0) > 0, 'own and file-backed pages from /proc');
  t.ok((report.threads ?? 0) >= 2);
  t.ok(
    report.heap_spaces.some((s) => s.space === 'old_space' && s.used_bytes > 0),
    'the heap by space',
  );
  const child = report.children.find((c) => c.pid === sleeper.pid);
  t.ok(child, 'the child process is listed');
  t.equal(child?.command, 'sleep 30');
  t.ok((child?.rss_bytes ?? 0) > 0);
  t.ok(report.children_rss_bytes >= (child?.rss_bytes ?? 0));

  const en = await ctl(daemon.socketPath, ['status', '--memory']);
  t.match(en.stdout, /^daemon RSS \d+\.\d MiB\n {2}own pages .* file-backed/);
  t.match(en.stdout, /HEAP SPACE\s+SIZE\s+USED/);
  t.match(en.stdout, new RegExp(`${sleeper.pid}\\s+\\d+\\.\\d (KiB|MiB)\\s+sleep 30`));
  const zh = await ctl(daemon.socketPath, ['status', '--memory'], 'zh_CN.UTF-8');
  t.match(zh.stdout, /^守护进程 RSS [\s\S]*子进程：\d+ 个/);

  const refused = await ctl(daemon.socketPath, ['health', '--memory']);
  t.equal(refused.code, 64);
  t.match(refused.stderr, /--memory belongs to status/);
});

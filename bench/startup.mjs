// Start-up and idle memory: node_baseline_ms, startup_ready_ms (spawn to READY=1 on a real
// notification socket) and idle_rss_mb. Needs python3 (test/helpers/notify_listener.py).
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { size } from './quick.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const MAIN = join(root, 'dist/src/main.js');
const RUNS = size(10, 1);

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const round = (x, d = 1) => Math.round(x * 10 ** d) / 10 ** d;

/** Starts the python listener; returns {path, next(predicate) → Promise<message>, close()}. */
async function notifyListener(dir) {
  const path = join(dir, 'notify.sock');
  // stdin stays open: the listener exits when it closes.
  const child = spawn('python3', [join(root, 'test/helpers/notify_listener.py'), path], { stdio: ['pipe', 'pipe', 'inherit'] });
  let bound;
  const isBound = new Promise((resolve) => {
    bound = resolve;
  });
  const waiters = [];
  const backlog = [];
  createInterface({ input: child.stdout }).on('line', (line) => {
    let record;
    try {
      record = JSON.parse(line);
    } catch {
      return;
    }
    if (record.bound) return bound();
    const msg = record.msg;
    const at = performance.now();
    const i = waiters.findIndex((w) => w.predicate(msg));
    if (i >= 0) waiters.splice(i, 1)[0].resolve({ msg, at });
    else backlog.push({ msg, at });
  });
  await isBound;
  return {
    path,
    next(predicate) {
      const i = backlog.findIndex((b) => predicate(b.msg));
      if (i >= 0) return Promise.resolve(backlog.splice(i, 1)[0]);
      return new Promise((resolve) => waiters.push({ predicate, resolve }));
    },
    drain() {
      backlog.length = 0;
    },
    close() {
      child.stdin.end();
    },
  };
}

/** The node flags of the shipped systemd unit, so the figures are those of the installed service. */
function unitNodeFlags() {
  const unit = readFileSync(join(root, 'systemd/homeagent.service'), 'utf8');
  const execStart = /^ExecStart=(.*)$/m.exec(unit)?.[1] ?? '';
  return execStart.split(/\s+/).filter((word) => word.startsWith('--'));
}

function startDaemon(dataDir, notifyPath) {
  // Port 0: the web server runs as by default, without colliding with a daemon already on 8080.
  const env = {
    ...process.env,
    HOMEAGENT_DATA_DIR: dataDir,
    HOMEAGENT_LOG_LEVEL: 'warn',
    NOTIFY_SOCKET: notifyPath,
    HOMEAGENT_PLUGIN_WEBUI_PORT: '0',
  };
  delete env.HOMEAGENT_CONFIG;
  const started = performance.now();
  const child = spawn(process.execPath, [...unitNodeFlags(), MAIN, 'run'], { env, stdio: ['ignore', 'ignore', 'inherit'] });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  return { child, started, exited };
}

/** RSS of a bare idle node:http server started with the same flags: the yardstick of the memory goal. */
async function idleHttpRssMb() {
  const script =
    "require('node:http').createServer().listen(0, '127.0.0.1', () => setTimeout(() => { console.log(process.memoryUsage().rss); process.exit(0); }, 1500));";
  const child = spawn(process.execPath, [...unitNodeFlags(), '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d) => {
    out += d;
  });
  await new Promise((resolve) => child.on('exit', resolve));
  return Number(out.trim()) / 1024 / 1024;
}

function nodeBaseline() {
  const times = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    spawnSync(process.execPath, ['-e', '0']);
    times.push(performance.now() - t0);
  }
  return median(times);
}

export async function run(emit) {
  const dir = mkdtempSync(join(tmpdir(), 'homeagent-bench-'));
  const listener = await notifyListener(dir);
  try {
    const baseline = nodeBaseline();
    emit({ name: 'node_baseline_ms', unit: 'ms', value: round(baseline), n: RUNS, what: 'node -e 0, spawn to exit, median' });

    // One warm-up start creates the database; the measured starts open an existing one, as a
    // restarting appliance does.
    const times = [];
    for (let i = 0; i <= RUNS; i++) {
      listener.drain();
      const d = startDaemon(join(dir, 'data'), listener.path);
      const ready = await listener.next((m) => /(^|\n)READY=1(\n|$)/.test(m));
      if (i > 0) times.push(ready.at - d.started);
      d.child.kill('SIGTERM');
      await d.exited;
    }
    const startup = median(times);
    const ratio = startup / baseline;
    emit({
      name: 'startup_ready_ms',
      unit: 'ms',
      value: round(startup),
      n: RUNS,
      what: 'spawn of homeagent run to READY=1 on the notify socket, median',
      ratio_to_node_baseline: round(ratio, 2),
      // Issue 32: at most 5 times node -e 0 with the default configuration (8 times is the goal
      // with every plugin configured, which this run does not configure).
      goal: 'ratio_to_node_baseline <= 5',
      goal_met: ratio <= 5,
    });

    listener.drain();
    const d = startDaemon(join(dir, 'data'), listener.path);
    await listener.next((m) => /(^|\n)READY=1(\n|$)/.test(m));
    await new Promise((r) => setTimeout(r, 5000));
    const status = readFileSync(`/proc/${d.child.pid}/status`, 'utf8');
    const rssKb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN);
    d.child.kill('SIGTERM');
    await d.exited;
    const rssMb = rssKb / 1024;
    const httpMb = await idleHttpRssMb();
    // Issue 32's goal: at most 70 MB with the default configuration (this machine has no
    // microphone, so the voice detectors stay unloaded, as on a Pi without one). The bare idle
    // http server is printed beside it as the floor any Node daemon starts from.
    emit({
      name: 'idle_rss_mb',
      unit: 'MB',
      value: round(rssMb),
      n: 1,
      what: 'VmRSS 5 s after READY=1 (web server, CLI socket and built-in plugins running), started with the node flags of systemd/homeagent.service',
      idle_http_server_mb: round(httpMb),
      ratio_to_idle_http_server: round(rssMb / httpMb, 2),
      goal: 'value <= 70',
      goal_met: rssMb <= 70,
    });
  } finally {
    listener.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

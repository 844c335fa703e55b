// Fault injection (issue 10) against the compiled daemon: each of the four kinds of bad plugin
// change in test/fixtures/fault-plugins is installed FAULT_RUNS times (default 20; half new
// plugins, half upgrades of a committed good one), one daemon per kind, all four at once. One JSON
// line per kind: how many were rolled back, how many within the trial window with the last good
// tree and plugin back, and the time from the change being recorded to the rollback (the daemon's
// finished_at → decided_at) in heartbeat intervals and ms. The run itself is the shared harness
// of test/integration/tracker-faults.test.ts.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import {
  ControlClient,
  FAULT_DEFAULTS,
  FAULT_KINDS,
  faultDaemonEnv,
  runFaultSeries,
  summarize,
} from '../test/fixtures/fault-plugins/harness.mjs';
import { size } from './quick.mjs';

const MAIN = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'src', 'main.js');
const RUNS = Number(process.env.FAULT_RUNS ?? size(20, 2));
const READY_TIMEOUT_MS = 60_000;

/** The daemon on `dataDir` with an empty config file and only these HOMEAGENT_* variables; resolves once its socket answers. */
async function startDaemon(root, dataDir, extraEnv) {
  mkdirSync(dataDir, { recursive: true });
  const config = join(root, 'empty.yaml');
  writeFileSync(config, '# defaults < environment only\n');
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('HOMEAGENT_') && k !== 'NODE_OPTIONS'));
  Object.assign(env, { HOMEAGENT_CONFIG: config, HOMEAGENT_DATA_DIR: dataDir, HOMEAGENT_PLUGIN_WEBUI_PORT: '0', ...extraEnv });
  const child = spawn(process.execPath, [MAIN, 'run'], { cwd: dataDir, env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (s) => {
    stderr = (stderr + s).slice(-4000);
  });
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  let done = false;
  void exited.then(() => {
    done = true;
  });
  const socketPath = join(dataDir, 'run', 'homeagent.sock');
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    if (done) throw new Error(`the daemon exited before it was ready: ${stderr}`);
    const client = await ControlClient.connect(socketPath, 1000).catch(() => undefined);
    const status = await client?.call('status', {}, 2000).catch(() => undefined);
    if (status?.state === 'running')
      return {
        client,
        stop: () => {
          child.kill('SIGTERM');
          return exited;
        },
      };
    client?.close();
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`the daemon was not ready within ${READY_TIMEOUT_MS} ms: ${stderr}`);
    }
    await sleep(100);
  }
}

export async function run(emit) {
  const root = mkdtempSync(join(tmpdir(), 'ha-bench-faults-'));
  try {
    const results = await Promise.all(
      FAULT_KINDS.map(async (kind) => {
        const dataDir = join(root, kind, 'data');
        const daemon = await startDaemon(root, dataDir, faultDaemonEnv());
        try {
          return await runFaultSeries({
            client: daemon.client,
            dataDir,
            archiveDir: join(root, kind, 'archives'),
            kind,
            runs: RUNS,
            heartbeatMs: FAULT_DEFAULTS.heartbeatMs,
          });
        } finally {
          daemon.client.close();
          await daemon.stop();
        }
      }),
    );
    for (const row of summarize(results.flat(), FAULT_DEFAULTS.heartbeatMs)) {
      emit({
        name: `fault_rollback_${row.kind}`,
        unit: 'intervals',
        value: row.max_intervals,
        n: row.runs,
        bench: 'faults',
        ...row,
        health_timeout_ms: FAULT_DEFAULTS.healthTimeoutMs,
        heap_mb: FAULT_DEFAULTS.heapMb,
        plugin_restart_backoff_ms: FAULT_DEFAULTS.restartBackoffMs,
        what: 'bad plugin change recorded → rolled back, slowest of n, in heartbeat intervals',
        goal: 'rolled_back == runs and passed == runs and max_intervals <= 2',
        goal_met: row.rolled_back === row.runs && row.passed === row.runs && (row.max_intervals ?? Number.POSITIVE_INFINITY) <= 2,
      });
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await run((o) => process.stdout.write(`${JSON.stringify(o)}\n`));

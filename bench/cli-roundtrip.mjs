// The command line's round trip (issue 32): `homeagentctl status` spawned against a running daemon,
// spawn to exit, against `node -e 0` measured in the same run (medians). Goal: ≤ 3× node -e 0. What
// it costs is homeagentctl's own start (its modules) plus one call on the CLI socket.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { size } from './quick.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const MAIN = join(root, 'dist/src/main.js');
const CTL = join(root, 'dist/src/cli/homeagentctl.js');
const RUNS = size(20, 2);
const GOAL_RATIO = 3;

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const round = (x) => Math.round(x * 10) / 10;

function timed(args, env) {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, args, { env, encoding: 'utf8' });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return ms;
}

export async function run(emit) {
  const dir = mkdtempSync(join(tmpdir(), 'homeagent-bench-cli-'));
  const env = { ...process.env, HOMEAGENT_DATA_DIR: dir, HOMEAGENT_LOG_LEVEL: 'warn', HOMEAGENT_PLUGIN_WEBUI_PORT: '0' };
  delete env.HOMEAGENT_CONFIG;
  delete env.NOTIFY_SOCKET;
  const daemon = spawn(process.execPath, [MAIN, 'run'], { env, stdio: ['ignore', 'ignore', 'inherit'] });
  const socket = join(dir, 'run', 'homeagent.sock');
  try {
    const deadline = Date.now() + 60_000;
    while (!existsSync(socket)) {
      if (Date.now() > deadline) throw new Error('the daemon did not open its CLI socket within 60 s');
      await sleep(50);
    }
    const ctlEnv = { ...process.env, HOMEAGENT_SOCKET: socket };
    timed([CTL, 'status'], ctlEnv); // warm the file cache as a second command would find it
    const node = [];
    const ctl = [];
    // Interleaved, so that a busy moment of the machine weighs on both alike.
    for (let i = 0; i < RUNS; i++) {
      node.push(timed(['-e', '0'], process.env));
      ctl.push(timed([CTL, 'status'], ctlEnv));
    }
    const baseline = median(node);
    const value = median(ctl);
    const ratio = value / baseline;
    emit({
      name: 'cli_status_roundtrip_ms',
      unit: 'ms',
      value: round(value),
      n: RUNS,
      node_baseline_ms: round(baseline),
      ratio_to_node: round(ratio),
      goal: `<= ${GOAL_RATIO}x node -e 0`,
      goal_met: ratio <= GOAL_RATIO,
      what: 'homeagentctl status against a running daemon, spawn to exit, median',
    });
  } finally {
    daemon.kill('SIGTERM');
    await new Promise((resolve) => daemon.on('exit', resolve));
    rmSync(dir, { recursive: true, force: true });
  }
}

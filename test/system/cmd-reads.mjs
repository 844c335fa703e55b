#!/usr/bin/env node
/**
 * The outside tester's ten reads of the daemon's environment and stored secrets, run inside the
 * installed cmd_run runner (homeagent-cmd.service) with the daemon's real pid and data paths, two
 * ways: sent straight to the runner socket with the package's own runner client (no daemon
 * policy in the way: only the runner's isolation stands between them and the secrets), and through
 * the daemon's cmd.run over the CLI socket (its policy first, then the runner). Prints one line per
 * read and way; a read "succeeds" when it exits 0 or its output shows the canary or SQLite's file
 * header. Exits 1 when any succeeded or a way failed to answer. Run as the homeagent user: the
 * runner socket is root:homeagent 0660.
 *
 * Usage: node cmd-reads.mjs PID DATA_DIR BACKUP_FILE CANARY
 */
const { runInRunner } = await import('/opt/homeagent/dist/plugins/cmd/runner-client.js');
const { RpcClient } = await import('/opt/homeagent/dist/src/cli/rpc-client.js');

const [pid, data, backup, canary] = process.argv.slice(2);
if (!pid || !data || !backup || !canary) {
  console.error('usage: cmd-reads.mjs PID DATA_DIR BACKUP_FILE CANARY');
  process.exit(2);
}
const RUNNER_SOCKET = '/run/homeagent-cmd/cmd.sock';
const CLI_SOCKET = '/run/homeagent/homeagent.sock';
const BIN = { cat: '/usr/bin/cat', ps: '/usr/bin/ps', grep: '/usr/bin/grep', du: '/usr/bin/du' };

const reads = [
  ['cat', `/proc/${pid}/./environ`],
  ['cat', `/proc//${pid}/environ`],
  ['cat', `/proc/self/../${pid}/environ`],
  ['ps', `ewwp${pid}`],
  ['grep', '-a', '-r', '--include=environ', canary, `/proc/${pid}`],
  ['grep', '-a', '-r', canary, data],
  // The repro's glob is not expanded without a shell; the file it meant is the real backup.
  ['grep', '-a', canary, backup],
  ['cat', `${data}/plugin-data/webui/credentials.json`],
  ['grep', '-f', `/proc/${pid}/./environ`, '/etc/hostname'],
  ['du', `--files0-from=/proc/${pid}/./environ`],
];

function leaked(text) {
  return text.includes(canary) || text.includes('SQLite format 3');
}

function line(way, argv, outcome) {
  console.log(`${way.padEnd(6)} ${outcome.padEnd(9)} ${JSON.stringify(argv)}`);
}

let succeeded = 0;
let broken = 0;
for (const argv of reads) {
  const [program, ...args] = argv;
  try {
    const { result } = await runInRunner(RUNNER_SOCKET, {
      executable: BIN[program],
      argv0: program,
      args,
      base: '',
      workdir: '',
      timeoutMs: 20_000,
      maxOutputBytes: 65_536,
      killGraceMs: 1000,
      signal: new AbortController().signal,
    });
    const output = `${result.stdout}${result.stderr}`;
    const ok = result.exit_code === 0 || leaked(output);
    if (ok) succeeded++;
    line('runner', argv, ok ? 'SUCCEEDED' : 'failed');
    console.log(`         exit ${result.exit_code}: ${(result.stderr.trim().split('\n')[0] ?? '').slice(0, 160) || '(no stderr)'}`);
  } catch (error) {
    broken++;
    line('runner', argv, 'NO ANSWER');
    console.log(`         ${error instanceof Error ? error.message : String(error)}`);
  }
}

const client = await RpcClient.connect(CLI_SOCKET, 10_000);
for (const argv of reads) {
  try {
    const result = await client.call('cmd.run', { argv });
    const output = `${result.stdout}${result.stderr}`;
    const ok = result.exit_code === 0 || leaked(output);
    if (ok) succeeded++;
    line('daemon', argv, ok ? 'SUCCEEDED' : 'failed');
    console.log(`         exit ${result.exit_code} in the runner: ${(result.stderr.trim().split('\n')[0] ?? '').slice(0, 160)}`);
  } catch (error) {
    // A refusal by the daemon's policy is a failed read too; anything else is a broken check.
    const code = error?.code ?? '';
    if (code !== 'HA_ERR_CMD_DENIED') broken++;
    line('daemon', argv, code === 'HA_ERR_CMD_DENIED' ? 'refused' : 'NO ANSWER');
    console.log(`         ${code}: ${(error instanceof Error ? error.message : String(error)).slice(0, 160)}`);
  }
}
client.close();
console.log(`${succeeded} of ${reads.length * 2} reads succeeded; ${broken} without an answer`);
process.exit(succeeded === 0 && broken === 0 ? 0 : 1);

import { mkdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { CmdPlugin } from '../../../../plugins/cmd/index.js';
import type { RunResult } from '../../../../plugins/cmd/runner.js';
import { ToolError } from '../../../../src/shared/tool.js';
import type { TestPluginContext } from '../../../helpers/plugin-context.js';
import { ended } from '../../../helpers/processes.js';
import { type Teardown, tempDir } from '../../fixtures/support.js';
import { daemonFixture } from './daemon-fixture.js';

const ALLOW = ['cat', 'echo', 'find', 'ls', 'sed', 'sleep', 'sort'].map((program) => ({ program }));
/** Test-only entry: node with patterns, to build programs that misbehave (ignore SIGTERM, leave children behind). */
const NODE = { program: 'node', args: ['-e', '.*'] };

interface Running {
  tc: TestPluginContext;
  plugin: CmdPlugin;
  data: string;
  run(args: Record<string, unknown>, signal?: AbortSignal): Promise<RunResult>;
}

/** In-process (the isolation tests are cmd-isolation.test.ts and cmd-runner.test.ts), over a daemon's real data folder. */
async function startCmd(t: Teardown, settings: Record<string, unknown> = {}): Promise<Running> {
  const { tc } = await daemonFixture(t, { allow: ALLOW, ...settings });
  const plugin = new CmdPlugin(tc.context, { killGraceMs: 200 });
  await plugin.start();
  t.teardown(() => plugin.stop());
  const data = realpathSync(tc.context.paths.data);
  return {
    tc,
    plugin,
    data,
    run: (args, signal) => tc.call('cmd_run', args, signal ? { signal } : {}) as Promise<RunResult>,
  };
}

/** The ToolError a call fails with. */
async function failure(promise: Promise<unknown>): Promise<ToolError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ToolError) return error;
    throw error;
  }
  throw new Error('the call succeeded');
}

t.test('tools and tiers', async (t) => {
  const { tc } = await startCmd(t);
  t.equal(tc.tools.get('cmd_run')?.tier, 'dangerous');
  t.equal(tc.tools.get('cmd_run')?.parallel_safe, false);
  t.equal(tc.tools.get('cmd_history')?.tier, 'read');
});

t.test('allowed commands really run, without a shell', async (t) => {
  const { run, data } = await startCmd(t);
  writeFileSync(join(data, 'notes.txt'), 'one\ntwo\nthree\n');
  mkdirSync(join(data, 'sub'));
  writeFileSync(join(data, 'sub', 'deep.txt'), 'x');

  const ls = await run({ argv: ['ls'] });
  t.match(ls, { exit_code: 0, signal: null, truncated: false, timed_out: false });
  t.same(ls.stdout.split('\n').filter(Boolean), ['notes.txt', 'sub'], 'ls runs in the data directory by default');

  const echo = await run({ argv: ['echo', 'hello', '$(id)', ';', 'rm', '*', '|', '`id`'] });
  t.equal(echo.stdout, 'hello $(id) ; rm * | `id`\n', 'nothing is expanded or interpreted');

  const sed = await run({ argv: ['sed', '-n', '2p', 'notes.txt'] });
  t.equal(sed.stdout, 'two\n');

  const find = await run({ argv: ['find', '.', '-name', '*.txt'] });
  t.same(find.stdout.split('\n').filter(Boolean).sort(), ['./notes.txt', './sub/deep.txt']);

  const missing = await run({ argv: ['cat', 'missing.txt'] });
  t.equal(missing.exit_code, 1);
  t.match(missing.stderr, /missing\.txt/);
  t.type(missing.duration_ms, 'number');
});

t.test('the child gets a minimal environment', async (t) => {
  const { run, data } = await startCmd(t, { allow: [...ALLOW, { program: 'env', args: [] }] });
  process.env.HA_CMD_TEST_SECRET = 'leak';
  t.teardown(() => delete process.env.HA_CMD_TEST_SECRET);
  const env = await run({ argv: ['env'] });
  // tap's process-info hook adds its own variables (some spanning lines) to every child the test process spawns.
  const variables = env.stdout
    .split('\n')
    .filter((line) => /^[A-Za-z_][A-Za-z0-9_]*=/.test(line) && !/^(_TAPJS_|NODE_OPTIONS=)/.test(line));
  t.notMatch(env.stdout, /HA_CMD_TEST_SECRET/);
  t.same(variables.sort(), [`HOME=${data}`, 'LANG=C.UTF-8', 'PATH=/usr/local/bin:/usr/bin:/bin']);
});

t.test('refusals: a ToolError naming the problem, audited, nothing runs', async (t) => {
  const { run, tc, data } = await startCmd(t);
  writeFileSync(join(data, 'keep.txt'), 'b\na\n');

  const sed = await failure(run({ argv: ['sed', '-i', 's/a/X/', 'keep.txt'] }));
  t.match(sed.info, { reason: 'rejected', field: 'argv', detail: /^HA_ERR_CMD_DENIED: sed: "-i" edits files in place/ });
  const sort = await failure(run({ argv: ['sort', '-o', 'keep.txt', 'keep.txt'] }));
  t.match(sort.info, { reason: 'rejected', detail: /writes the result to a file/ });
  const find = await failure(run({ argv: ['find', '.', '-delete'] }));
  t.match(find.info, { reason: 'rejected', detail: /deletes files/ });
  const shell = await failure(run({ argv: ['sh', '-c', 'rm keep.txt'] }));
  t.match(shell.info, { reason: 'rejected', detail: /not in the cmd allowlist/, hint: /allowed programs: cat, echo/ });
  const empty = await failure(run({ argv: [] }));
  t.match(empty.info, { reason: 'rejected', detail: /empty/ });
  t.equal(readFileSync(join(data, 'keep.txt'), 'utf8'), 'b\na\n', 'the file is untouched');

  // The tool checks its input itself, whatever reaches execute.
  const direct = await failure(
    Promise.resolve().then(() =>
      tc.tools
        .get('cmd_run')
        ?.execute(
          { argv: 'ls -l' },
          { signal: new AbortController().signal, task_id: 't', call_id: 'c', source: 's', channel: 'c', trust: 'owner' },
        ),
    ),
  );
  t.match(direct.info, { reason: 'rejected', detail: /must be an array/ });

  const denied = tc.audits.filter((a) => a.action === 'cmd.denied');
  t.equal(denied.length, 6);
  t.match(denied[0], {
    details: { argv: ['sed', '-i', 's/a/X/', 'keep.txt'], reason: /edits files in place/, task_id: 'task-1', call_id: 'call-1' },
  });
  t.match(denied[5], { details: { argv: '<string>' } });
  t.equal(tc.audits.filter((a) => a.action === 'cmd.run').length, 0);
});

t.test('workdir', async (t) => {
  const { run, data } = await startCmd(t);
  const outside = tempDir(t);
  writeFileSync(join(outside, 'secret.txt'), 's');
  mkdirSync(join(data, 'sub'));
  writeFileSync(join(data, 'sub', 'in-sub.txt'), 'x');
  symlinkSync(outside, join(data, 'escape'));
  symlinkSync(join(data, 'sub'), join(data, 'sub-link'));

  t.equal((await run({ argv: ['ls'], workdir: 'sub' })).stdout, 'in-sub.txt\n', 'relative to the default');
  t.equal((await run({ argv: ['ls'], workdir: join(data, 'sub') })).stdout, 'in-sub.txt\n', 'absolute inside');
  t.equal((await run({ argv: ['ls'], workdir: 'sub-link' })).stdout, 'in-sub.txt\n', 'a symlink that stays inside');
  t.equal((await run({ argv: ['ls'], workdir: 'sub/..' })).exit_code, 0, '.. that stays inside');

  for (const workdir of ['..', '../..', 'sub/../..', '/', '/tmp', outside, 'escape', 'escape/.', `${data}/../`]) {
    const error = await failure(run({ argv: ['ls'], workdir }));
    t.match(error.info, { reason: 'rejected', field: 'workdir', detail: /^HA_ERR_CMD_DENIED: .*outside/ }, `workdir ${workdir} refused`);
  }
  t.match((await failure(run({ argv: ['ls'], workdir: 'nope' }))).info, { reason: 'not_found', field: 'workdir' });
  t.match((await failure(run({ argv: ['ls'], workdir: 'sub/in-sub.txt' }))).info, { reason: 'rejected', detail: /not a directory/ });
  t.match((await failure(run({ argv: ['ls'], workdir: 'sub\nx' }))).info, { reason: 'rejected', detail: /control characters/ });
});

t.test('a configured workdir is the default and the boundary', async (t) => {
  const base = realpathSync(tempDir(t));
  mkdirSync(join(base, 'inner'));
  const { run, data } = await startCmd(t, { workdir: base });
  t.same((await run({ argv: ['ls'] })).stdout, 'inner\n');
  t.match((await failure(run({ argv: ['ls'], workdir: data }))).info, { reason: 'rejected', field: 'workdir' });
});

t.test('output is capped per stream with a visible marker', async (t) => {
  const { run, data } = await startCmd(t, { max_output_bytes: 256 });
  writeFileSync(join(data, 'big.txt'), 'x'.repeat(10000));
  writeFileSync(join(data, 'odd.txt'), `a${'é'.repeat(200)}`); // the cap falls inside a two-byte character

  const big = await run({ argv: ['cat', 'big.txt'] });
  t.equal(big.truncated, true);
  t.equal(big.stdout, `${'x'.repeat(256)}\n[… 9744 bytes cut]`);
  t.equal(big.stderr, '');

  const odd = await run({ argv: ['cat', 'odd.txt'] });
  t.equal(odd.stdout, `a${'é'.repeat(127)}\n[… 146 bytes cut]`, 'never half a character');

  const small = await run({ argv: ['echo', 'ok'] });
  t.equal(small.truncated, false);
});

t.test('timeout kills the process group: SIGTERM, then SIGKILL', async (t) => {
  const { run, tc } = await startCmd(t, { allow: [...ALLOW, NODE], timeout_ms: 5000 });
  const slept = await run({ argv: ['sleep', '30'], timeout_ms: 100 });
  t.match(slept, { timed_out: true, exit_code: null, signal: 'SIGTERM' });

  // A program that ignores SIGTERM and started a child of its own.
  const stubborn = await run({
    argv: [
      'node',
      '-e',
      "const c = require('child_process').spawn('sleep', ['60'], { stdio: 'ignore' }); process.on('SIGTERM', () => {}); console.log(c.pid); setInterval(() => {}, 1000);",
    ],
    timeout_ms: 1500,
  });
  t.match(stubborn, { timed_out: true, signal: 'SIGKILL' });
  const grandchild = Number(stubborn.stdout.trim());
  t.ok(grandchild > 0, 'the grandchild pid was printed');
  await ended(grandchild);
  t.pass('the grandchild is gone too');

  t.match(tc.audits.filter((a) => a.action === 'cmd.run')[0], { details: { argv: ['sleep', '30'], timed_out: true, signal: 'SIGTERM' } });
});

t.test('the timeout is capped by plugin.cmd.timeout_ms', async (t) => {
  const { run } = await startCmd(t, { timeout_ms: 100 });
  t.match(await run({ argv: ['sleep', '30'], timeout_ms: 600000 }), { timed_out: true });
});

t.test('a finished command leaves nothing behind', async (t) => {
  const { run } = await startCmd(t, { allow: [...ALLOW, NODE] });
  // The background child keeps stdout open: without the group kill the call would wait for it.
  const result = await run({
    argv: [
      'node',
      '-e',
      "const c = require('child_process').spawn('sleep', ['60'], { stdio: ['ignore', 'inherit', 'ignore'] }); c.unref(); console.log(c.pid);",
    ],
    timeout_ms: 20000,
  });
  t.match(result, { exit_code: 0, timed_out: false });
  await ended(Number(result.stdout.trim()));
  t.pass('the background child was killed');
});

t.test('the tool call signal stops the command', async (t) => {
  const { run } = await startCmd(t);
  const controller = new AbortController();
  const pending = run({ argv: ['sleep', '30'] }, controller.signal);
  controller.abort();
  t.match(await pending, { cancelled: true, timed_out: false, signal: 'SIGTERM' });

  const already = new AbortController();
  already.abort();
  t.match(await run({ argv: ['sleep', '30'] }, already.signal), { cancelled: true });
});

t.test('stop() ends running commands', async (t) => {
  const { run, plugin } = await startCmd(t);
  const pending = run({ argv: ['sleep', '30'] });
  t.match(plugin.health(), { ok: true, detail: /^1 running/ });
  await plugin.stop();
  t.match(await pending, { cancelled: true });
});

t.test('history and audit', async (t) => {
  const { run, tc } = await startCmd(t, { history: 2 });
  await run({ argv: ['echo', 'one'] });
  await run({ argv: ['echo', 'two'] });
  await run({ argv: ['echo', 'three'] });
  await failure(run({ argv: ['rm', 'x'] }));
  const history = (await tc.call('cmd_history', {})) as { runs: Array<Record<string, unknown>> };
  t.same(
    history.runs.map((r) => r.argv),
    [
      ['echo', 'three'],
      ['echo', 'two'],
    ],
    'newest first, at most plugin.cmd.history runs, refusals are not runs',
  );
  t.match(history.runs[0], {
    exit_code: 0,
    signal: null,
    timed_out: false,
    truncated: false,
    workdir: realpathSync(tc.context.paths.data),
  });
  t.same(((await tc.call('cmd_history', { limit: 1 })) as { runs: unknown[] }).runs.length, 1);

  const runs = tc.audits.filter((a) => a.action === 'cmd.run');
  t.equal(runs.length, 3);
  t.match(runs[2], {
    details: {
      argv: ['echo', 'three'],
      executable: /\/echo$/,
      exit_code: 0,
      signal: null,
      truncated: false,
      task_id: 'task-1',
      source: 'test',
    },
  });
  t.match(tc.audits.at(-1), { action: 'cmd.denied', details: { argv: ['rm', 'x'], reason: /not in the cmd allowlist/ } });

  const long = await failure(run({ argv: ['echo', ...Array.from({ length: 200 }, () => 'y'.repeat(600))] }));
  t.match(long.info, { reason: 'rejected' });
  const record = tc.audits.at(-1)?.details.argv as string[];
  t.equal(record.length, 65, 'audited argv is bounded');
  t.match(record[1], /… \(600 characters\)$/);
  t.equal(record[64], '… 137 more items');
});

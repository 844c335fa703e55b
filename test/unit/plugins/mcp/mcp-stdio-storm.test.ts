/**
 * The mcp plugin against stdio server programs that fail every way: exit at once, print garbage,
 * half a message, bytes that are no UTF-8 or a megabyte with no line end, spam stderr, kill
 * themselves, answer initialize with a JSON-RPC error or a result of the wrong shape, or close
 * their stdout. Every attempt waits its turn on the plugin's manual clock (one wait per failure,
 * doubling), health() names the failure with the program's last stderr lines, and a real MCP
 * server program afterwards is connected.
 *
 * The choices are random from one seed, printed as a comment: STORM_SEED=<seed> replays them.
 */
import { writeFileSync } from 'node:fs';
import t from 'tap';
import { Rng, stormSeed } from '../../../helpers/storm.js';
import { until } from '../../../helpers/until.js';
import { tempDir } from '../../fixtures/support.js';
import { reconnectCycles, startPlugin } from './storm-kit.js';

/** Each program twice: a spawn costs tens of milliseconds, and the backoff itself is the HTTP storm's to show at length. */
const STDIO_CYCLES = 22;

/**
 * Hostile stdio servers as sh one-liners: quick to start, each ends (or is ended) on its own. Left
 * out: a line that is JSON but no JSON-RPC message, which the SDK drops, so the request waits for
 * the set-up timeout (30 s) instead of failing at once.
 */
const PROGRAMS = [
  'exit 3',
  'exit 0',
  "printf 'this is not JSON\\n'",
  'printf \'{"jsonrpc":"2.0","id":0,\'',
  "printf '\\377\\376\\000\\n'",
  "head -c 1048576 /dev/zero | tr '\\000' x",
  'i=0; while [ $i -lt 200 ]; do echo "stderr line $i" >&2; i=$((i+1)); done; exit 1',
  'kill -9 $$',
  'read line; printf \'{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":5}}\\n\'; read line',
  'read line; printf \'{"jsonrpc":"2.0","id":0,"error":{"code":-32603,"message":"boom"}}\\n\'; read line',
  'read line; exec 1>&-; exit 0',
];

t.test(`stdio: ${STDIO_CYCLES} reconnect cycles against server programs that fail every way`, async (t) => {
  const rng = new Rng(stormSeed(t));
  const order = Array.from({ length: STDIO_CYCLES }, (_, i) => PROGRAMS[i % PROGRAMS.length] as string);
  // The command reads its program from a file the test rewrites before each attempt.
  // Not t.testdir(): the plugin's context takes that one (and a second call would empty it).
  const dir = tempDir(t, 'ha-mcp-storm-');
  const script = `${dir}/program.sh`;
  const next = (cycle: number) => writeFileSync(script, `${rng.chance(0.5) ? ': noise; ' : ''}${order[cycle] ?? 'exit 0'}\n`);
  next(0);
  const run = await startPlugin(t, { transport: 'stdio', command: '/bin/sh', args: [script] });
  const { details, lastWait: wait } = await reconnectCycles(t, run, STDIO_CYCLES, next);
  t.comment(`health details: ${[...details].join(' | ')}`);
  t.ok(
    [...details].some((d) => d.includes('stderr: stderr line')),
    "a failing program's last stderr lines are in health",
  );

  // A real MCP server program afterwards.
  const fixture = new URL('./fixtures/stdio-server.mjs', import.meta.url).pathname;
  writeFileSync(script, `exec '${process.execPath}' '${fixture}'\n`);
  await run.manual.advance(wait);
  await until('connected', () => (run.plugin.health().ok ? true : undefined), 30_000);
  t.match(
    run.plugin.health(),
    { ok: true, detail: /^server hostile: connected, \d+ tools$/ },
    'a real server is connected at the next attempt',
  );
});

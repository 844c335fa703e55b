/**
 * The CLI socket of the real daemon (built dist/) under connection storms: 500 connections opened
 * and closed every way at once, more concurrent connections than plugin.cli.max_connections
 * reset without reading, and fuzzed sessions (garbage, huge lines, half JSON, deep nesting, valid
 * requests interleaved) reset at every point. After each storm the daemon is alive, answers
 * `status` on a fresh connection, and has logged no uncaught exception; its health counters show
 * that the refusals and the client errors really happened (so the storm reached those paths).
 *
 * The storm is random from one seed, printed as a comment: STORM_SEED=<seed> replays it.
 */
import t, { type Test } from 'tap';
import { type InProcessDaemonHandle as DaemonHandle, startDaemon } from '../helpers/in-process-daemon.js';
import { RpcConnection } from '../helpers/rpc.js';
import { connectCloseStorm, type FuzzCase, fuzzStorm, garbage, overLimitStorm, Rng, type StormTally, stormSeed } from '../helpers/storm.js';
import { until } from '../helpers/until.js';

const FATAL = /uncaught exception|unhandled promise rejection/;

interface Counters {
  open: number;
  refused: number;
  clientErrors: number;
}

/** The cli plugin's health detail: "... N connections open; since start R refused over max_connections, E ended by a client error". */
async function counters(c: RpcConnection): Promise<Counters> {
  const answer = await c.request('plugins.health', { name: 'cli' });
  const detail = String((answer.result as { plugins: Array<{ detail: string }> }).plugins[0]?.detail);
  const match = /(\d+) connections open; since start (\d+) refused over max_connections, (\d+) ended by a client error/.exec(detail);
  if (!match) throw new Error(`unexpected cli health: ${detail}`);
  return { open: Number(match[1]), refused: Number(match[2]), clientErrors: Number(match[3]) };
}

const READ_ONLY: Array<[string, unknown]> = [
  ['version', {}],
  ['status', {}],
  ['health', {}],
  ['plugins.list', {}],
  ['config.get', { key: 'plugin.cli.max_connections' }],
  ['config.get', { key: 'no.such.key' }],
  ['config.get', { key: 42 }],
];

function request(rng: Rng): string {
  const [method, params] = rng.chance(0.2) ? [`fuzz.${rng.bytes(4).toString('hex')}`, {}] : rng.pick(READ_ONLY);
  const id = rng.pick([rng.int(1e9), `s-${rng.int(1e6)}`, null, { nested: true }]);
  return JSON.stringify(rng.chance(0.1) ? { id, method } : { id, method, params });
}

/** One frame of the CLI protocol, well or badly formed. */
function frame(rng: Rng): Buffer {
  switch (rng.int(10)) {
    case 0:
      return Buffer.concat([garbage(rng), Buffer.from('\n')]);
    case 1: {
      const line = request(rng);
      return Buffer.from(line.slice(0, rng.between(1, line.length - 1)) + (rng.chance(0.5) ? '\n' : ''));
    }
    case 2:
      // Over the 1 MiB frame limit, rarely: it costs a megabyte or two each time.
      return rng.chance(0.15) ? Buffer.from(`${'x'.repeat(rng.between(1_100_000, 2_000_000))}\n`) : Buffer.from('\n\r\n\n');
    case 3:
      return Buffer.from(`${'['.repeat(rng.between(1000, 200_000))}\n`);
    case 4:
      return Buffer.from(
        `${rng.pick(['[1,2]', '"text"', '42', 'null', '{"method":5}', '{"id":1,"method":"version","params":"x"}', '{}'])}\n`,
      );
    case 5:
      return Buffer.from(`${Array.from({ length: rng.between(20, 200) }, () => request(rng)).join('\n')}\n`);
    case 6:
      return Buffer.from(
        `${JSON.stringify({ id: 'wide', method: 'version', params: Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`k${i}`, i])) })}\n`,
      );
    default:
      return Buffer.from(`${request(rng)}\n`);
  }
}

/** A few frames, ending with a valid request: the daemon answers every complete line, so it answers once all are sent. */
function cliCase(rng: Rng): FuzzCase {
  const frames = Array.from({ length: rng.between(0, 5) }, () => frame(rng));
  frames.push(Buffer.from(`${request(rng)}\n`));
  return { frames, answers: true };
}

t.test('the CLI socket survives connection storms', async (t) => {
  const rng = new Rng(stormSeed(t));
  const daemon: DaemonHandle = await startDaemon(t);
  await daemon.waitForReady();
  const target = { path: daemon.socketPath };

  const fatalLines = () => daemon.logs.filter((line) => FATAL.test(line.msg ?? line.text));
  /** A fresh connection is served: `status` answers; the process is alive; nothing fatal was logged. */
  const stillServing = async (t: Test, after: string, storm: StormTally) => {
    t.comment(`${after}: ${JSON.stringify(storm)}`);
    t.same(
      fatalLines().map((line) => line.text),
      [],
      'no uncaught exception in the log',
    );
    t.equal(daemon.exit, undefined, 'the daemon process is alive');
    const c = await RpcConnection.connect(daemon.socketPath);
    t.teardown(() => c.close());
    const status = await c.request('status', {});
    t.match(status, { ok: true, result: { pid: daemon.pid, state: String } }, `status answers after ${after}`);
    c.close();
  };

  const setup = await RpcConnection.connect(daemon.socketPath);
  const max = (await setup.request('config.get', { key: 'plugin.cli.max_connections' })).result as { value: number };
  const before = await counters(setup);
  setup.close();
  const started = Date.now();

  t.test('500 connect/close storms, 40 at a time (more than max_connections)', async (t) => {
    await stillServing(t, '500 connect/close storms', await connectCloseStorm(target, rng, { count: 500, concurrency: 40 }));
  });

  t.test('over the limit: every slot taken, then 3x max_connections more, never read and reset', async (t) => {
    // Holders that proved they were accepted (each got an answer) fill every slot. One may be
    // refused while the daemon still counts a connection of the storm before: it is tried again.
    const holders: RpcConnection[] = [];
    t.teardown(() => {
      for (const holder of holders) holder.close();
    });
    const deadline = Date.now() + 20_000;
    while (holders.length < max.value) {
      if (Date.now() > deadline) throw new Error(`only ${holders.length} of ${max.value} holders were accepted`);
      const c = await RpcConnection.connect(daemon.socketPath);
      const answer = await c.request('version', {}).catch(() => undefined);
      if (answer?.ok) holders.push(c);
      else c.close();
    }
    const watcher = holders[0] as RpcConnection;
    const refusedBefore = (await counters(watcher)).refused;
    const extra = 3 * max.value;
    const storm = await overLimitStorm(target, extra, () =>
      // Reset only once the daemon has refused each of them (it answered HA_ERR_RPC_BUSY, unread).
      until(`the daemon to refuse ${extra} connections`, async () =>
        (await counters(watcher)).refused - refusedBefore >= extra ? true : undefined,
      ),
    );
    // A client over the limit that does read is told why, and the daemon closes its side.
    const refusedClient = await RpcConnection.connect(daemon.socketPath);
    refusedClient.send('version', {}, 'over-the-limit');
    t.match(
      await refusedClient.waitFor(() => true),
      { id: null, ok: false, error: { code: 'HA_ERR_RPC_BUSY', message: new RegExp(`at most ${max.value} CLI connections`) } },
      'a refused client reads HA_ERR_RPC_BUSY',
    );
    await until('the refused connection to close', () => (refusedClient.closed ? true : undefined));
    // And sessions that fuzz the full server: refused at once, reset at every point.
    const fuzz = await fuzzStorm(target, rng, cliCase, { sessions: 120, concurrency: 24 });
    t.comment(`fuzz while full: ${JSON.stringify(fuzz)}`);
    for (const holder of holders) t.match(await holder.request('version', {}), { ok: true }, 'a holder is still served');
    for (const holder of holders) holder.close();
    await until('the holders to be gone', async () => {
      const c = await RpcConnection.connect(daemon.socketPath);
      try {
        // Refused (and closed) while the daemon still counts the holders.
        const answer = await c.request('version', {}).catch(() => undefined);
        return answer?.ok ? true : undefined;
      } finally {
        c.close();
      }
    });
    await stillServing(t, 'the over-limit storm', storm);
  });

  t.test('random frames with resets at every point', async (t) => {
    await stillServing(t, 'the fuzz storm', await fuzzStorm(target, rng, cliCase, { sessions: 360, concurrency: 12 }));
  });

  t.test('afterwards: alive, counted, and the refusals logged a few times only', async (t) => {
    const c = await RpcConnection.connect(daemon.socketPath);
    t.teardown(() => c.close());
    const after = await counters(c);
    t.comment(`cli counters: ${JSON.stringify(after)} (at start ${JSON.stringify(before)})`);
    t.ok(after.refused - before.refused >= 3 * max.value, 'connections over max_connections were refused');
    t.ok(after.clientErrors - before.clientErrors > 0, 'client resets reached the daemon as connection errors');
    const refusalLines = daemon.logs.filter((line) => line.msg?.startsWith('CLI connection refused')).length;
    const windows = Math.floor((Date.now() - started) / 60_000) + 1;
    t.ok(refusalLines >= 1, 'a refusal is logged');
    t.ok(refusalLines <= 5 * windows, `refusals are rate-limited in the log (${refusalLines} lines for ${after.refused} refusals)`);
    t.match(await c.request('status', {}), { ok: true });
    t.same(fatalLines(), [], 'no uncaught exception in the whole run');
    t.equal(daemon.exit, undefined, 'the daemon process is alive');
  });
});

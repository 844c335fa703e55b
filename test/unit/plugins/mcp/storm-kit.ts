/**
 * The mcp plugin set up for reconnect storms: one configured server, a manual clock whose every
 * wait the test sees, and a loop that drives failed attempts one wait at a time.
 */
import type { Test } from 'tap';
import { McpPlugin } from '../../../../plugins/mcp/index.js';
import type { McpServerConfig } from '../../../../plugins/mcp/server-config.js';
import type { RetryClock } from '../../../../plugins/mcp/server-connection.js';
import { deferred } from '../../../helpers/deferred.js';
import { ManualTimerClock } from '../../../helpers/manual-timer-clock.js';
import { createTestPluginContext } from '../../../helpers/plugin-context.js';

export const RETRY_BASE_MS = 1000;
export const RETRY_MAX_MS = 300_000;

export type StormRun = Awaited<ReturnType<typeof startPlugin>>;

/** The plugin with one server, on a manual clock whose every wait the test sees. */
export async function startPlugin(t: Test, config: McpServerConfig) {
  const tc = createTestPluginContext({ name: 'mcp', dataDir: t.testdir(), settings: { servers: { hostile: config } } });
  const manual = new ManualTimerClock();
  const waits: number[] = [];
  let armed = deferred<number>();
  const clock: RetryClock = {
    now: () => manual.now(),
    setTimer: (fn, ms) => {
      waits.push(ms);
      armed.resolve(ms);
      return manual.setTimer(fn, ms);
    },
  };
  const plugin = new McpPlugin(tc.context, { retryBaseMs: RETRY_BASE_MS, retryMaxMs: RETRY_MAX_MS, startWaitMs: 60_000, clock });
  t.teardown(async () => {
    await plugin.stop();
    await tc.close();
  });
  await plugin.start(new AbortController().signal);
  return {
    tc,
    plugin,
    manual,
    waits,
    /** The wait armed by the next failure. */
    nextWait: async () => {
      const wait = await armed.promise;
      armed = deferred<number>();
      return wait;
    },
  };
}

/**
 * Runs `cycles` failed attempts: `prepare(cycle)` sets up the next failure, then the clock moves by
 * exactly the wait the last failure armed. Returns the health details seen and the last wait.
 */
export async function reconnectCycles(
  t: Test,
  run: StormRun,
  cycles: number,
  prepare: (cycle: number) => void,
): Promise<{ details: Set<string>; lastWait: number }> {
  const details = new Set<string>();
  let wait = 0;
  for (let cycle = 0; cycle < cycles; cycle++) {
    if (cycle > 0) {
      prepare(cycle);
      await run.manual.advance(wait);
    }
    wait = await run.nextWait();
    const health = run.plugin.health();
    if (health.ok) t.fail(`cycle ${cycle}: health ok against a hostile server`);
    details.add(health.detail.replace(/\d+/g, 'N'));
  }
  const expected = Array.from({ length: cycles }, (_, i) => Math.min(RETRY_BASE_MS * 2 ** i, RETRY_MAX_MS));
  t.same(run.waits, expected, 'one wait per failure, doubling from retry_base to retry_max');
  return { details, lastWait: wait };
}

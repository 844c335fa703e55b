import t, { type Test } from 'tap';
import { OnebotPlugin } from '../../../../plugins/onebot/onebot-plugin.js';
import { ManualTimerClock } from '../../../helpers/manual-timer-clock.js';
import { fixture, startForwardPeer } from '../../../helpers/onebot-peer.js';
import { createTestPluginContext } from '../../../helpers/plugin-context.js';
import { until } from '../../../helpers/until.js';
import { DEFAULTS } from './settings.js';

/** The plugin in forward mode against `url` on a manual clock, stopped at the end of the test. */
function forwardPlugin(t: Test, url: string, token: string) {
  const ctx = createTestPluginContext({
    name: 'onebot',
    dataDir: t.testdir(),
    settings: { ...DEFAULTS, mode: 'forward', url, access_token: token },
  });
  const clock = new ManualTimerClock();
  const plugin = new OnebotPlugin(ctx.context, { clock });
  t.teardown(async () => {
    await plugin.stop();
    await ctx.close();
  });
  return { ctx, clock, plugin };
}

t.test('forward mode: sends the token, takes events, reconnects with backoff after drops and refusals', async (t) => {
  const TOKEN = 'forward-token-abcdefghijkl';
  const server = await startForwardPeer({ token: TOKEN });
  t.teardown(() => server.close());
  const { ctx, clock, plugin } = forwardPlugin(t, server.url, TOKEN);
  await plugin.start();
  await until('connected', () => (plugin.link?.connected ? true : undefined));
  t.equal(server.handshakes[0]?.authorization, `Bearer ${TOKEN}`);
  const next = ctx.nextInjected();
  server.peer.push(fixture('private-message'));
  t.equal((await next).input.channel, 'qq:private:10001001');
  t.equal(await ctx.call('qq_send_private_msg', { user_id: 10001001, message: 'hi' }), 'ok');

  // Drops right after connecting: the waits grow, up to 1 s, 2 s, 4 s with jitter in the upper half
  // (nothing reconnects before its wait).
  const link = plugin.link as unknown as { waits: number[] };
  for (const [index, ceiling] of [1000, 2000, 4000].entries()) {
    const accepted = server.accepted;
    server.peer.drop();
    await until('disconnected', () => (plugin.link?.connected ? undefined : true));
    await until('the wait chosen', () => (link.waits.length === index + 1 ? true : undefined));
    const wait = link.waits[index] ?? 0;
    t.ok(wait >= Math.max(1000, ceiling / 2) && wait <= ceiling, `wait ${index + 1} (${wait} ms) within ${ceiling / 2}-${ceiling} ms`);
    await clock.advance(wait - 1);
    t.equal(server.accepted, accepted, `no attempt before ${wait} ms`);
    await clock.advance(1);
    await until('reconnected', () => (plugin.link?.connected ? true : undefined));
  }
  // A connection that stayed up 10 s counts as healthy: the next wait is 1 s again.
  await clock.advance(10_000);
  server.peer.drop();
  await until('the wait chosen', () => (link.waits.length === 4 ? true : undefined));
  t.equal(link.waits[3], 1000);
  await clock.advance(1000);
  await until('reconnected', () => (plugin.link?.connected ? true : undefined));
  t.ok(plugin.health().ok);
});

t.test('forward mode: a server that refuses the token is retried with growing waits', async (t) => {
  const server = await startForwardPeer({ token: 'the-right-token-0123456' });
  t.teardown(() => server.close());
  const { clock, plugin } = forwardPlugin(t, server.url, 'a-wrong-token-0123456789');
  await plugin.start();
  const link = plugin.link as unknown as { waits: number[] };
  await until('first refusal', () => (link.waits.length === 1 ? true : undefined));
  await clock.advance(1000);
  await until('second refusal', () => (link.waits.length === 2 ? true : undefined));
  t.equal(link.waits[0], 1000, 'the first wait is the minimum');
  t.ok((link.waits[1] ?? 0) >= 1000 && (link.waits[1] ?? 0) <= 2000, 'the second is up to twice that');
  t.equal(server.accepted, 0);
  t.equal(server.handshakes.length, 2);
  t.notOk(plugin.health().ok);
});

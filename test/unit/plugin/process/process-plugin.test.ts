import t from 'tap';
import type { StageContext } from '../../../../src/agent/types.js';
import { isHomeAgentError } from '../../../../src/shared/errors.js';
import { ToolError } from '../../../../src/shared/tool.js';
import { OWNER } from '../../../helpers/senders.js';
import { expectErrorAsync } from '../../fixtures/support.js';
import { processExists, processFixture, toolPlugin, watchLogs } from './fixtures/process-fixture.js';

const signal = () => new AbortController().signal;

t.test('a tool call goes to the child and back; ToolErrors come back with the same info', async (t) => {
  const f = processFixture(t, {
    // A bare factory (no definePlugin): the runtime accepts both forms.
    source: `
export default (ctx) => ({
  async start() {
    ctx.tools.register({
      name: 'demo_echo',
      description: 'echoes',
      parameters: { type: 'object', properties: { text: { type: 'string' }, mode: { type: 'string' } } },
      tier: 'read',
      execute: async (args, tool) => {
        if (args.mode === 'tool_error') {
          const error = new Error('n is too big');
          error.name = 'ToolError';
          error.info = { reason: 'range', field: 'n', detail: 'n is too big', hint: 'use at most 3' };
          throw error;
        }
        if (args.mode === 'plain_error') throw new Error('something broke');
        if (args.mode === 'nothing') return undefined;
        return { echo: args.text, pid: process.pid, task: tool.task_id, channel: tool.channel };
      },
    });
  },
  async stop() {},
});
`,
  });
  await f.plugin.start(signal());
  const answer = (await f.harness.call('demo_echo', { text: 'hi' }, { task_id: 'task-9', channel: 'kitchen' })) as Record<string, unknown>;
  t.equal(answer.echo, 'hi', 'the result comes back');
  t.equal(answer.task, 'task-9', 'the tool context reaches the child');
  t.equal(answer.channel, 'kitchen');
  t.not(answer.pid, process.pid, 'the tool ran in another process');
  t.equal(answer.pid, f.plugin.pid);
  t.equal(f.harness.tools.get('demo_echo')?.owner, 'plugin:demo', 'registered under the plugin as owner');

  const error = await f.harness.call('demo_echo', { mode: 'tool_error' }).catch((e: unknown) => e);
  t.ok(error instanceof ToolError, 'a ToolError thrown in the child is a ToolError here');
  t.same((error as ToolError).info, { reason: 'range', field: 'n', detail: 'n is too big', hint: 'use at most 3' });

  const plain = await expectErrorAsync(t, () => f.harness.call('demo_echo', { mode: 'plain_error' }), 'HA_ERR_TOOL_FAILED');
  t.match(plain.message, /something broke/);
  t.equal(await f.harness.call('demo_echo', { mode: 'nothing' }), undefined, 'nothing returned stays nothing');
  t.same((await f.plugin.health()).ok, true, 'healthy');
});

t.test('definePlugin-style modules load; a non-plugin default export fails the start with HA_ERR_PLUGIN_LOAD', async (t) => {
  const good = processFixture(t, { source: toolPlugin('return "ok";') });
  await good.plugin.start(signal());
  t.equal(await good.harness.call('demo_run', {}), 'ok');

  const bad = processFixture(t, { name: 'bad', source: 'export default 42;\n' });
  await expectErrorAsync(t, () => bad.plugin.start(signal()), 'HA_ERR_PLUGIN_LOAD');
  t.equal(bad.plugin.pid, undefined, 'no process is left behind');
});

t.test('a registration the host context refuses fails the start with its error', async (t) => {
  const f = processFixture(t, { source: toolPlugin('return 1;') });
  f.harness.tools.register({
    name: 'demo_run',
    description: 'taken',
    parameters: { type: 'object' },
    owner: 'core',
    tier: 'read',
    execute: () => 0,
  });
  await expectErrorAsync(t, () => f.plugin.start(signal()), 'HA_ERR_TOOL_DEFINITION');
  t.equal(f.harness.tools.get('demo_run')?.owner, 'core', 'the other owner keeps its tool');
  await f.plugin.stop();

  const stage = processFixture(t, {
    name: 'stagey',
    source: `export default (ctx) => ({ async start() { ctx.stages.register('no_such_stage', () => {}); }, async stop() {} });`,
  });
  await expectErrorAsync(t, () => stage.plugin.start(signal()), 'HA_ERR_STAGE_UNKNOWN');
});

t.test('settings: a snapshot at start, settings.changed keeps it current, set goes to the host', async (t) => {
  const f = processFixture(t, {
    config: { greeting: { type: 'string', default: 'hi', description: 'what to say' } },
    settings: { greeting: 'hello' },
    source: toolPlugin(
      `if (args.set) ctx.settings.set('greeting', args.set);
       return { greeting: ctx.settings.get('greeting'), changed: changed.slice() };`,
      'const changed = []; ctx.settings.onChange((key) => changed.push(key));',
    ),
  });
  await f.plugin.start(signal());
  t.same(await f.harness.call('demo_run', {}), { greeting: 'hello', changed: [] }, 'the snapshot holds the value at start');
  f.harness.context.settings.set('greeting', 'hey');
  t.same(await f.harness.call('demo_run', {}), { greeting: 'hey', changed: ['greeting'] }, 'a change reaches the child and its listeners');
  await f.harness.call('demo_run', { set: 'from the plugin' });
  t.equal(f.harness.settings.get('greeting'), 'from the plugin', 'settings.set is carried out by the host context');
  t.same(await f.harness.call('demo_run', {}), { greeting: 'from the plugin', changed: ['greeting', 'greeting'] });
});

t.test('injectInterrupt passes the level to the host context unchanged; injectInput returns the receipt', async (t) => {
  const f = processFixture(t, {
    source: toolPlugin(`
      const receipt = await ctx.io.injectInput({ channel: 'hall', payload: 'plain' });
      await ctx.io.injectInterrupt({ channel: 'hall', payload: 'urgent' }, 4);
      return receipt.status;`),
  });
  await f.plugin.start(signal());
  t.equal(await f.harness.call('demo_run', {}), 'done', 'the receipt comes back to the plugin');
  t.same(
    f.harness.injected.map((i) => [i.input.payload, i.level]),
    [
      ['plain', 0],
      ['urgent', 4],
    ],
    'level 4 reaches the host context as 4 (clamping is its job)',
  );
});

t.test('events, output channels and stage hooks are forwarded to the child', async (t) => {
  const f = processFixture(t, {
    source: `
export default (ctx) => ({
  async start() {
    ctx.events.subscribe('daemon.status', (status) => ctx.io.injectInput({ channel: 'events', payload: status.text }));
    ctx.io.registerOutputChannel({
      name: 'demo-out', description: 'a test channel', capabilities: 1, synchronous: false,
      send: async (event) => { await ctx.io.injectInput({ channel: 'sent', payload: event.payload }); },
    });
    ctx.stages.register('before_output', (sc) => {
      sc.final_text = sc.final_text.toUpperCase();
      sc.extra.seen = (sc.extra.seen ?? 0) + 1;
      delete sc.extra.drop;
      sc.errors.push('hook ran');
      if (sc.final_text === 'STOP') sc.response = 'stopped';
    });
  },
  async stop() {},
});
`,
  });
  await f.plugin.start(signal());

  const injected = f.harness.nextInjected();
  f.harness.events.emit('daemon.status', { state: 'running', text: 'all good' });
  t.equal((await injected).input.payload, 'all good', 'an event reaches the subscriber in the child');

  const channel = f.harness.channels.get('demo-out');
  t.equal(channel?.owner, 'plugin:demo', 'the channel is registered with the host');
  const sent = f.harness.nextInjected();
  await channel?.send({ id: 'o1', channel: 'demo-out', type: 'text', payload: 'to the speaker', meta: {}, created_at: 0 });
  t.equal((await sent).input.payload, 'to the speaker', 'a send runs in the child');

  const context = stageContext('hello', { drop: 1, keep: 'yes' });
  await f.stages.run('before_output', context);
  t.equal(context.final_text, 'HELLO', 'a changed field is applied back');
  t.same(context.extra, { keep: 'yes', seen: 1 }, 'extra changes are applied per key');
  t.same(context.errors, ['earlier', 'hook ran'], 'errors are appended');
  t.equal(context.response, undefined);
  const stop = stageContext('stop', {});
  t.equal(await f.stages.run('before_output', stop), true, 'a response set in the child ends the turn');
  t.equal(stop.response, 'stopped');
});

t.test('stderr and the plugin logger go to the plugin log', async (t) => {
  const watch = watchLogs();
  const f = processFixture(t, {
    logs: watch.logs,
    source: toolPlugin(`
      console.log('printed by console.log');
      console.error('printed to stderr');
      ctx.log.info({ room: 'hall', subsystem: 'store', audit: true }, 'logged through the SDK');
      return 'ok';`),
  });
  await f.plugin.start(signal());
  t.equal(await f.harness.call('demo_run', {}), 'ok', 'console.log does not corrupt the protocol');
  const stderr = await watch.waitFor((r) => r.msg === 'printed to stderr');
  t.equal(stderr.stream, 'stderr');
  t.equal(stderr.subsystem, 'plugin.demo', 'written with the plugin logger');
  t.ok(await watch.waitFor((r) => r.msg === 'printed by console.log'), 'stdout prints of the plugin end up in the log too');
  const logged = await watch.waitFor((r) => r.msg === 'logged through the SDK');
  t.equal(logged.room, 'hall', 'fields are kept');
  t.equal(logged.subsystem, 'plugin.demo', 'but not one passing the line off as another subsystem');
  t.equal(logged.audit, undefined, 'or as an audit record');
  t.equal(logged.level, 'info');
});

t.test('malformed or oversized output from the child is a protocol error: killed and restarted', async (t) => {
  const watch = watchLogs();
  const f = processFixture(t, {
    logs: watch.logs,
    source: toolPlugin(`
      const { writeSync } = await import('node:fs');
      // Straight to fd 1, past the runtime; the pipe is non-blocking, so retry until all is written.
      const writeAll = (text) => {
        let rest = Buffer.from(text);
        while (rest.length > 0) {
          try { rest = rest.subarray(writeSync(1, rest)); } catch (e) { if (e.code !== 'EAGAIN') throw e; }
        }
      };
      if (args.mode === 'garbage') writeAll('this is not json\\n');
      if (args.mode === 'huge') writeAll('x'.repeat(5 * 1024 * 1024));
      if (args.mode === 'not_rpc') writeAll('{"hello":"world"}\\n');
      await new Promise(() => {});`),
  });
  await f.plugin.start(signal());
  for (const mode of ['garbage', 'huge', 'not_rpc']) {
    const pid = f.plugin.pid;
    const restarting = f.nextState();
    const error = await expectErrorAsync(t, () => f.harness.call('demo_run', { mode }), 'HA_ERR_PLUGIN_DEAD');
    t.match(error.message, /protocol/, `${mode}: the call in flight fails with the reason`);
    t.match((await restarting).detail, /broke the protocol/, `${mode}: reported as a crash`);
    t.equal((await f.nextState()).state, 'running', `${mode}: restarted`);
    t.ok(pid !== undefined && !processExists(pid), `${mode}: the old process is gone`);
  }
  t.ok(
    watch.records.some((r) => r.level === 'error' && /broke the protocol/.test(String(r.msg))),
    'the protocol error is logged',
  );
});

t.test('stop() stops the plugin and its process; a process ignoring SIGTERM is killed', async (t) => {
  const f = processFixture(t, {
    source: toolPlugin('return "ok";', `process.on('SIGTERM', () => {}); setInterval(() => {}, 1000);`),
  });
  await f.plugin.start(signal());
  const pid = f.plugin.pid;
  t.ok(pid !== undefined && processExists(pid), 'the child runs');
  await f.plugin.stop();
  t.notOk(processExists(pid as number), 'the child is gone after stop (no orphan)');
  t.equal(f.harness.tools.get('demo_run'), undefined, 'its tools are removed');
  const health = await f.plugin.health();
  t.equal(health.ok, false, 'not healthy once stopped');
  t.match(health.detail, /stopped/, 'health says it was stopped');
  await f.plugin.stop();
  t.pass('stop twice is fine');
});

t.test('stop() during a plugin start that never finishes leaves no process', async (t) => {
  const f = processFixture(t, { source: `export default () => ({ start: () => new Promise(() => {}), stop: async () => {} });` });
  const controller = new AbortController();
  const starting = f.plugin.start(controller.signal);
  // The child is spawned synchronously by start(); its pid is known at once.
  const pid = f.plugin.pid;
  controller.abort();
  await expectErrorAsync(t, () => starting, 'HA_ERR_ABORTED');
  t.ok(pid !== undefined && !processExists(pid), 'the aborted start killed its process');
});

t.test('health() reports what the plugin says', async (t) => {
  const f = processFixture(t, {
    source: `export default () => ({ async start() {}, async stop() {}, health: () => ({ ok: false, detail: 'sensor offline' }) });`,
  });
  await f.plugin.start(signal());
  t.same(await f.plugin.health(), { ok: false, detail: 'sensor offline' });
});

t.test('an entry that throws while loading fails the start and names the problem', async (t) => {
  const f = processFixture(t, { source: `throw new Error('broken at import');\n` });
  const error = await f.plugin.start(signal()).catch((e: unknown) => e);
  t.ok(isHomeAgentError(error), 'a HomeAgentError');
  t.match((error as Error).message, /broken at import/);
});

function stageContext(finalText: string, extra: Record<string, unknown>): StageContext {
  return {
    stage: 'before_output',
    task_id: 't1',
    input: { id: 'i1', source: 'cli', channel: 'cli', sender: OWNER, type: 'text', payload: 'hi', meta: {}, received_at: 0, level: 0 },
    trust: { level: 'owner', lowered_by: [] },
    messages: [],
    llm_text: '',
    reasoning: '',
    tool_calls: [],
    tool_results: [],
    final_text: finalText,
    usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, cache_read_tokens: 0, reasoning_tokens: 0 },
    extra,
    errors: ['earlier'],
  };
}

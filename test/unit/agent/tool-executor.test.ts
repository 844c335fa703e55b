import t from 'tap';
import { StageRegistry } from '../../../src/agent/stage-registry.js';
import {
  type BatchResult,
  type ToolCallInfo,
  type ToolCallWrapper,
  ToolExecutor,
  type ToolLimits,
} from '../../../src/agent/tool-executor.js';
import { ToolRegistry } from '../../../src/agent/tool-registry.js';
import type { StageContext } from '../../../src/agent/types.js';
import type { ToolCall } from '../../../src/llm/spec/index.js';
import { isHomeAgentError } from '../../../src/shared/errors.js';
import { type ToolDefinition, ToolError, toolErrorResult } from '../../../src/shared/tool.js';
import { captureLogs } from '../fixtures/support.js';
import { call, deferred, makeContext, settle, tool } from './fixtures/helpers.js';

function setup(limits: Partial<ToolLimits> = {}, around?: ToolCallWrapper) {
  const captured = captureLogs('debug');
  const log = captured.logs.child('agent');
  const registry = new ToolRegistry({ log });
  const stages = new StageRegistry(log);
  const current: ToolLimits = { tool_timeout_ms: 5000, tool_output_max_chars: 16000, max_parallel_tools: 8, ...limits };
  const executor = new ToolExecutor({ registry, stages, limits: () => current, log, ...(around ? { around } : {}) });
  const run = (calls: ToolCall[], options: { signal?: AbortSignal; context?: StageContext } = {}): Promise<BatchResult> => {
    const context = options.context ?? makeContext();
    return executor.executeBatch(calls, {
      task_id: context.task_id,
      input: context.input,
      signal: options.signal ?? new AbortController().signal,
      stageContext: context,
    });
  };
  return { registry, stages, executor, run, captured };
}

const parallel = (name: string, execute: ToolDefinition['execute'], extra: Partial<ToolDefinition> = {}) =>
  tool(name, execute, { parallel_safe: true, ...extra });

t.test('outcomes come back in call order with compact JSON results', async (t) => {
  const { registry, run } = setup();
  const gates = [deferred(), deferred(), deferred()];
  registry.register(
    parallel('obj', async () => {
      await gates[0]?.promise;
      return { a: 1, b: [1, 2], nested: { ok: true } };
    }),
  );
  registry.register(
    parallel('str', async () => {
      await gates[1]?.promise;
      return 'plain text';
    }),
  );
  registry.register(
    parallel('nothing', async () => {
      await gates[2]?.promise;
    }),
  );
  const calls = [call('obj'), call('str'), call('nothing')];
  const batch = run(calls);
  // Finish in reverse order: the outcomes must still follow the calls.
  gates[2]?.resolve();
  await settle();
  gates[1]?.resolve();
  await settle();
  gates[0]?.resolve();
  const result = await batch;
  t.equal(result.mode, 'parallel');
  t.same(
    result.outcomes.map((o) => o.call.id),
    calls.map((c) => c.id),
  );
  t.same(
    result.outcomes.map((o) => o.content),
    ['{"a":1,"b":[1,2],"nested":{"ok":true}}', 'plain text', 'ok'],
  );
  t.ok(result.outcomes.every((o) => o.ok && o.error === undefined && o.duration_ms >= 0));
  t.equal(result.short_circuit, undefined);
});

t.test('parallel-safe tools of one batch overlap', async (t) => {
  const { registry, run } = setup();
  const events: string[] = [];
  const aStarted = deferred();
  const bStarted = deferred();
  // Each tool can only finish once the other has started: run serially, the first would time out.
  registry.register(
    parallel('a', async () => {
      events.push('a:start');
      aStarted.resolve();
      await bStarted.promise;
      events.push('a:end');
      return 'a';
    }),
  );
  registry.register(
    parallel('b', async () => {
      events.push('b:start');
      bStarted.resolve();
      await aStarted.promise;
      events.push('b:end');
      return 'b';
    }),
  );
  const result = await run([call('a'), call('b')]);
  t.equal(result.mode, 'parallel');
  t.same(
    result.outcomes.map((o) => [o.ok, o.content]),
    [
      [true, 'a'],
      [true, 'b'],
    ],
  );
  t.same(events.slice(0, 2).sort(), ['a:start', 'b:start'], 'both started before either finished');
});

t.test('max_parallel_tools bounds how many run at once', async (t) => {
  const { registry, run } = setup({ max_parallel_tools: 2 });
  let running = 0;
  let peak = 0;
  for (const name of ['p1', 'p2', 'p3', 'p4', 'p5']) {
    registry.register(
      parallel(name, async () => {
        running++;
        peak = Math.max(peak, running);
        await settle();
        running--;
        return name;
      }),
    );
  }
  const result = await run(['p1', 'p2', 'p3', 'p4', 'p5'].map((n) => call(n)));
  t.equal(result.mode, 'parallel');
  t.equal(peak, 2);
  t.same(
    result.outcomes.map((o) => o.content),
    ['p1', 'p2', 'p3', 'p4', 'p5'],
  );
});

t.test('one tool that is not parallel-safe makes the whole batch serial', async (t) => {
  const { registry, run } = setup();
  const events: string[] = [];
  registry.register(
    tool('slow_unsafe', async () => {
      events.push('unsafe:start');
      // Yield to the event loop: a wrongly concurrent second call would start now.
      await settle();
      await settle();
      events.push('unsafe:end');
      return 1;
    }),
  );
  registry.register(
    parallel('safe', async () => {
      events.push('safe:start');
      await settle();
      events.push('safe:end');
      return 2;
    }),
  );
  const result = await run([call('slow_unsafe'), call('safe')]);
  t.equal(result.mode, 'serial');
  t.same(events, ['unsafe:start', 'unsafe:end', 'safe:start', 'safe:end'], 'the second started after the first finished');
  t.same(
    result.outcomes.map((o) => o.content),
    ['1', '2'],
  );
});

t.test('two sends to the same channel run serially and in order; different channels may overlap', async (t) => {
  const { registry, run } = setup();
  const sent: string[] = [];
  const events: string[] = [];
  const send = (channel: string) =>
    parallel(
      `output_send__${channel}`,
      async (args) => {
        events.push(`${channel}:${String(args.payload)}:start`);
        await settle();
        sent.push(`${channel}:${String(args.payload)}`);
        events.push(`${channel}:${String(args.payload)}:end`);
        return 'ok';
      },
      { owner: 'io', parameters: { type: 'object', properties: { payload: { type: 'string' } }, required: ['payload'] } },
    );
  registry.addProvider({ owner: 'io', tools: () => [send('x'), send('y')] });

  const same = await run([call('output_send__x', { payload: 'first' }), call('output_send__x', { payload: 'second' })]);
  t.equal(same.mode, 'serial');
  t.same(sent, ['x:first', 'x:second']);
  t.same(events, ['x:first:start', 'x:first:end', 'x:second:start', 'x:second:end']);
  t.same(
    same.outcomes.map((o) => o.content),
    ['ok', 'ok'],
    'the receipt the model sees is "ok"',
  );

  events.length = 0;
  const different = await run([call('output_send__x', { payload: 'a' }), call('output_send__y', { payload: 'b' })]);
  t.equal(different.mode, 'parallel');
  t.same(events.slice(0, 2), ['x:a:start', 'y:b:start'], 'different channels overlap');
});

t.test('a timeout aborts the tool’s signal and answers at once even if the tool ignores it', async (t) => {
  const { registry, run, captured } = setup();
  const release = deferred<string>();
  let seen: AbortSignal | undefined;
  registry.register(
    tool(
      'stubborn',
      (_args, context) => {
        seen = context.signal;
        return release.promise; // never looks at the signal
      },
      { timeout_ms: 50 },
    ),
  );
  const result = await run([call('stubborn')]);
  const [outcome] = result.outcomes;
  t.equal(outcome?.ok, false);
  t.equal(outcome?.error?.reason, 'timeout');
  t.match(outcome?.content, /"reason":"timeout"/);
  t.equal(seen?.aborted, true, 'the tool’s signal was aborted');
  t.ok(isHomeAgentError(seen?.reason, 'HA_ERR_TOOL_TIMEOUT'), 'with a timeout error as reason');
  t.ok(
    captured.records().some((r) => r.level === 'warn' && /kept running/.test(String(r.msg))),
    'the stuck tool is logged',
  );

  release.resolve('too late');
  await release.promise;
  await settle();
  t.ok(
    captured.records().some((r) => r.level === 'warn' && /returned after it was cancelled/.test(String(r.msg))),
    'and its late return too',
  );
});

t.test('a tool that honours its signal is reported as timed out, not as stuck', async (t) => {
  const { registry, run, captured } = setup({ tool_timeout_ms: 50 });
  registry.register(
    tool(
      'polite',
      (_args, context) =>
        new Promise((_resolve, reject) => {
          context.signal.addEventListener('abort', () => reject(context.signal.reason));
        }),
    ),
  );
  const result = await run([call('polite')]);
  t.equal(result.outcomes[0]?.error?.reason, 'timeout', 'limits.tool_timeout_ms applies when the tool sets none');
  t.notOk(
    captured.records().some((r) => /kept running/.test(String(r.msg))),
    'not logged as still running',
  );
});

t.test('cancelling the task aborts a running tool', async (t) => {
  const { registry, run } = setup();
  const started = deferred<AbortSignal>();
  registry.register(
    tool('long', (_args, context) => {
      started.resolve(context.signal);
      return new Promise(() => {});
    }),
  );
  registry.register(tool('after', () => 'should not run'));
  const task = new AbortController();
  const batch = run([call('long'), call('after')], { signal: task.signal });
  const signal = await started.promise;
  task.abort(new Error('pre-empted'));
  const result = await batch;
  t.equal(signal.aborted, true);
  t.match(result.outcomes[0]?.error, { reason: 'failed', detail: /cancelled/ });
  t.match(result.outcomes[1]?.error, { reason: 'failed', detail: /cancelled/ }, 'the rest of the batch is not run');
});

t.test('long results are capped with a visible marker', async (t) => {
  const { registry, run } = setup({ tool_output_max_chars: 256 });
  registry.register(tool('chatty', () => 'x'.repeat(1000)));
  const [outcome] = (await run([call('chatty')])).outcomes;
  t.equal(outcome?.content, `${'x'.repeat(256)}…[cut: 744 more characters]`);
  t.equal(outcome?.ok, true);
});

t.test('tool failures become readable outcomes', async (t) => {
  const { registry, run } = setup();
  const info = { reason: 'capability' as const, field: 'type', detail: 'the speaker cannot show images', hint: 'send text or audio' };
  registry.register(
    tool('typed', () => {
      throw new ToolError(info);
    }),
  );
  registry.register(
    tool('plain', async () => {
      throw new Error('disk on fire');
    }),
  );
  registry.register(
    tool('cyclic', () => {
      const a: Record<string, unknown> = {};
      a.self = a;
      return a;
    }),
  );
  const { outcomes } = await run([call('typed'), call('plain'), call('cyclic')]);
  t.same(outcomes[0]?.error, info);
  t.equal(outcomes[0]?.content, toolErrorResult(info));
  t.same(outcomes[1]?.error, { reason: 'failed', detail: 'disk on fire' });
  t.match(outcomes[2]?.error, { reason: 'failed', detail: /could not be turned into JSON/ });
  t.ok(outcomes.every((o) => !o.ok));
});

t.test('invalid arguments reach the model and the tool does not run', async (t) => {
  const { registry, run } = setup();
  let ran = false;
  registry.register(
    tool(
      'dim',
      () => {
        ran = true;
      },
      { parameters: { type: 'object', properties: { level: { type: 'integer' } }, required: ['level'] } },
    ),
  );
  const [outcome] = (await run([call('dim', { lvl: 3 })])).outcomes;
  t.equal(ran, false);
  t.match(outcome?.error, { reason: 'required', field: 'level' });
  t.match(JSON.parse(outcome?.content ?? '{}'), { ok: false, error: { reason: 'required', field: 'level' } });
  const [coerced] = (await run([call('dim', '{"level":"7"}')])).outcomes;
  t.equal(coerced?.ok, true, 'a quoted integer is accepted');
});

t.test('an unknown tool points to the listing tools', async (t) => {
  const { run } = setup();
  const { outcomes } = await run([call('make_coffee'), call('output_send__qq', { payload: 'hi' })]);
  t.match(outcomes[0]?.error, { reason: 'not_found', detail: /make_coffee/, hint: /get_plugin_tools/ });
  t.notMatch(outcomes[0]?.error?.hint, /output_list_channels/);
  t.match(outcomes[1]?.error, { reason: 'not_found', hint: /output_list_channels/ });
});

t.test('before_toolcall may reject a call; own_tools hooks see only their owner’s tools', async (t) => {
  const { registry, stages, run } = setup();
  let ran = 0;
  registry.register(tool('unlock_door', () => void ran++, { owner: 'device:door' }));
  registry.register(tool('read_temp', () => 21, { owner: 'device:thermo' }));
  const seen: string[] = [];
  stages.register(
    'device:door',
    'before_toolcall',
    (ctx) => {
      seen.push(ctx.tool_call?.name ?? '?');
      ctx.reject = 'doors stay locked at night';
    },
    'own_tools',
  );
  const context = makeContext();
  const { outcomes } = await run([call('unlock_door'), call('read_temp')], { context });
  t.equal(ran, 0, 'the rejected tool did not run');
  t.same(outcomes[0]?.error, { reason: 'rejected', detail: 'doors stay locked at night' });
  t.equal(outcomes[1]?.content, '21');
  t.same(seen, ['unlock_door'], 'the own_tools hook did not see the other owner’s call');
  t.equal(context.reject, undefined, 'the turn’s context is untouched');
});

t.test('before_toolcall may rewrite the arguments (validated afterwards)', async (t) => {
  const { registry, stages, run } = setup();
  const got: unknown[] = [];
  registry.register(
    tool('dim', (args) => void got.push(args.level), {
      parameters: { type: 'object', properties: { level: { type: 'integer', maximum: 50 } }, required: ['level'] },
    }),
  );
  stages.register('plugin:nightmode', 'before_toolcall', (ctx) => {
    if (ctx.tool_call) ctx.tool_call.arguments = JSON.stringify({ level: 10 });
  });
  const original = call('dim', { level: 90 });
  const [outcome] = (await run([original])).outcomes;
  t.same(got, [10]);
  t.equal(outcome?.ok, true);
  t.equal(outcome?.call.arguments, '{"level":10}', 'the outcome records the arguments that ran');
  t.equal(original.arguments, '{"level":90}', 'the model’s call is not mutated');
});

t.test('after_toolcall may rewrite the result; a throwing hook does not hurt a read call', async (t) => {
  const { registry, stages, run } = setup();
  registry.register(tool('whoami', () => ({ name: 'Ann', phone: '+49 170 1234567' }), { tier: 'read' }));
  stages.register('plugin:privacy', 'after_toolcall', (ctx) => {
    if (ctx.tool_outcome) ctx.tool_outcome.content = ctx.tool_outcome.content.replace(/\+[\d ]+/, '[redacted]');
  });
  stages.register('plugin:flaky', 'before_toolcall', () => {
    throw new Error('hook bug');
  });
  const context = makeContext();
  const [outcome] = (await run([call('whoami')], { context })).outcomes;
  t.equal(outcome?.content, '{"name":"Ann","phone":"[redacted]"}');
  t.equal(outcome?.ok, true);
  t.match(context.errors, [/before_toolcall handler of plugin:flaky failed: hook bug/], 'the hook error is recorded on the turn');
});

t.test('a before_toolcall hook that fails or hangs: tools that change something are refused, reads run', async (t) => {
  const captured = captureLogs('debug');
  const log = captured.logs.child('agent');
  const registry = new ToolRegistry({ log });
  // A policy hook (who may switch what) that hangs must not let the call through unchecked.
  const stages = new StageRegistry(log, { timeoutMs: () => 50 });
  const executor = new ToolExecutor({
    registry,
    stages,
    limits: () => ({ tool_timeout_ms: 5000, tool_output_max_chars: 16000, max_parallel_tools: 8 }),
    log,
  });
  const ran: string[] = [];
  registry.register(tool('unlock_door', () => void ran.push('unlock_door')));
  registry.register(tool('wipe_memory', () => void ran.push('wipe_memory'), { tier: 'dangerous' }));
  registry.register(tool('read_temp', () => ran.push('read_temp') && 21, { tier: 'read' }));
  const hang = deferred();
  t.teardown(() => hang.resolve());
  stages.register('plugin:policy', 'before_toolcall', (ctx) => (ctx.tool_call?.name === 'wipe_memory' ? hang.promise : undefined));
  stages.register('plugin:buggy', 'before_toolcall', (ctx) => {
    if (ctx.tool_call?.name !== 'wipe_memory') throw new Error('policy bug');
  });
  const context = makeContext();
  const { outcomes } = await executor.executeBatch([call('unlock_door'), call('wipe_memory'), call('read_temp')], {
    task_id: context.task_id,
    input: context.input,
    signal: new AbortController().signal,
    stageContext: context,
    confirmed: true,
  });
  t.same(ran, ['read_temp'], 'only the read ran');
  t.match(outcomes[0]?.error, { reason: 'rejected', detail: /not run: a before_toolcall hook failed \(.*plugin:buggy failed: policy bug/ });
  t.match(outcomes[1]?.error, { reason: 'rejected', detail: /plugin:policy failed: .*did not finish within 50 ms/ });
  t.equal(outcomes[2]?.content, '21');
});

t.test('a hook setting the response ends the turn: no tool runs and the batch says so', async (t) => {
  const { registry, stages, run } = setup();
  let ran = 0;
  registry.register(tool('first', () => void ran++));
  registry.register(tool('second', () => void ran++));
  stages.register('plugin:guard', 'before_toolcall', (ctx) => {
    if (ctx.tool_call?.name === 'first') ctx.response = 'I will not do that.';
  });
  const result = await run([call('first'), call('second')]);
  t.equal(result.short_circuit, 'I will not do that.');
  t.equal(ran, 0);
  t.equal(result.outcomes.length, 2, 'every call still has an outcome');
  t.ok(result.outcomes.every((o) => o.error?.reason === 'rejected'));
});

t.test('a hook’s rewrite is capped too', async (t) => {
  const { registry, stages, run } = setup({ tool_output_max_chars: 256 });
  registry.register(tool('short', () => 'fine'));
  stages.register('plugin:verbose', 'after_toolcall', (ctx) => {
    if (ctx.tool_outcome) ctx.tool_outcome.content = 'y'.repeat(300);
  });
  const [outcome] = (await run([call('short')])).outcomes;
  t.equal(outcome?.content, `${'y'.repeat(256)}…[cut: 44 more characters]`);
});

t.test('the around wrapper sees each call with its origin and hands results and errors back unchanged', async (t) => {
  const seen: ToolCallInfo[] = [];
  const { registry, run } = setup({}, async (info, execute) => {
    seen.push(info);
    if (info.tool === 'refused') throw new Error('the tracker is broken');
    return execute();
  });
  registry.register(tool('write_thing', async () => ({ written: true })));
  registry.register(
    tool('failing', async () => {
      throw new ToolError({ reason: 'failed', detail: 'disk full' });
    }),
  );
  registry.register(tool('refused', async () => 'never'));
  const context = makeContext();
  const result = await run([call('write_thing'), call('failing'), call('refused')], { context });
  t.same(
    seen.map((s) => [s.tool, s.task_id, s.source, s.channel]),
    ['write_thing', 'failing', 'refused'].map((name) => [name, context.task_id, context.input.source, context.input.channel]),
  );
  t.match(result.outcomes[0], { ok: true, content: '{"written":true}' });
  t.match(result.outcomes[1], { ok: false, content: /disk full/ });
  t.match(result.outcomes[2], { ok: false, content: /the tracker is broken/ }, 'a failing wrapper fails the call, not the batch');
});

import t from 'tap';
import { StageRegistry } from '../../../src/agent/stage-registry.js';
import { STAGES } from '../../../src/agent/types.js';
import { captureLogs, expectError, silentLogs } from '../fixtures/support.js';
import { deferred, makeContext, makeInput, settle } from './fixtures/helpers.js';

const newRegistry = () => new StageRegistry(silentLogs().child('stages'));

t.test('an unknown stage name throws at registration and lists the valid ones', async (t) => {
  const stages = newRegistry();
  const error = expectError(t, () => stages.register('plugin:x', 'before_tool_call', () => {}), 'HA_ERR_STAGE_UNKNOWN');
  for (const stage of STAGES) t.match(error.message, stage, `the message names ${stage}`);
  t.match(error.message, 'before_tool_call');
  t.equal(stages.handlerCount('before_toolcall'), 0, 'nothing was registered');
});

t.test('handlers run with context.stage set, and the unregister function removes just that one', async (t) => {
  const stages = newRegistry();
  const seen: string[] = [];
  const off = stages.register('a', 'pre_action', (ctx) => void seen.push(`a:${ctx.stage}`));
  stages.register('b', 'pre_action', (ctx) => void seen.push(`b:${ctx.stage}`));
  stages.register('c', 'post_action', () => void seen.push('c'));
  const ctx = makeContext();
  t.equal(await stages.run('pre_action', ctx), false, 'no short-circuit');
  t.equal(ctx.stage, 'pre_action');
  t.same(seen.sort(), ['a:pre_action', 'b:pre_action']);
  off();
  seen.length = 0;
  await stages.run('pre_action', ctx);
  t.same(seen, ['b:pre_action']);
});

t.test('handlers of one stage run concurrently', async (t) => {
  const stages = newRegistry();
  const events: string[] = [];
  const gateA = deferred();
  const gateB = deferred();
  stages.register('a', 'on_input', async () => {
    events.push('a:start');
    await gateA.promise;
    events.push('a:end');
  });
  stages.register('b', 'on_input', async () => {
    events.push('b:start');
    await gateB.promise;
    events.push('b:end');
  });
  let done = false;
  const running = stages.run('on_input', makeContext()).then(() => {
    done = true;
  });
  await settle();
  // Run one after the other, b could not have started while a is still waiting for its gate.
  t.same(events, ['a:start', 'b:start'], 'both started before either finished');
  gateB.resolve();
  await settle();
  t.same(events, ['a:start', 'b:start', 'b:end'], 'b finished while a was still running');
  t.notOk(done, 'run waits for every handler');
  gateA.resolve();
  await running;
  t.same(events, ['a:start', 'b:start', 'b:end', 'a:end']);
});

t.test('a throwing and a rejecting handler are isolated, logged and recorded', async (t) => {
  const captured = captureLogs();
  const stages = new StageRegistry(captured.logs.child('stages'));
  const seen: string[] = [];
  stages.register('plugin:thrower', 'before_output', () => {
    throw new Error('sync boom');
  });
  stages.register('plugin:good', 'before_output', (ctx) => {
    seen.push('good');
    ctx.final_text = 'formatted';
  });
  stages.register('plugin:rejecter', 'before_output', async () => {
    await Promise.resolve();
    throw new Error('async boom');
  });
  const ctx = makeContext();
  const shortCircuit = await stages.run('before_output', ctx);
  t.equal(shortCircuit, false);
  t.same(seen, ['good'], 'the good handler ran');
  t.equal(ctx.final_text, 'formatted', 'and its change stands');
  t.equal(ctx.errors.length, 2);
  t.match(ctx.errors.join('\n'), /before_output handler of plugin:thrower failed: sync boom/);
  t.match(ctx.errors.join('\n'), /before_output handler of plugin:rejecter failed: async boom/);
  const errors = captured.records().filter((r) => r.level === 'error');
  t.equal(errors.length, 2);
  t.ok(
    errors.some((r) => r.owner === 'plugin:thrower' && r.stage === 'before_output'),
    'the throw is logged with owner and stage',
  );
  t.ok(
    errors.some((r) => r.owner === 'plugin:rejecter' && r.stage === 'before_output'),
    'the rejection is logged with owner and stage',
  );
});

t.test('own_tools handlers run only for their owner’s tools', async (t) => {
  const stages = newRegistry();
  const seen: string[] = [];
  stages.register('plugin:lights', 'before_toolcall', () => void seen.push('lights-own'), 'own_tools');
  stages.register('plugin:audit', 'before_toolcall', () => void seen.push('audit-global'));
  await stages.run('before_toolcall', makeContext(), { toolOwner: 'plugin:timer' });
  t.same(seen, ['audit-global'], 'another owner’s tool: only the global handler');
  seen.length = 0;
  await stages.run('before_toolcall', makeContext(), { toolOwner: 'plugin:lights' });
  t.same(seen.sort(), ['audit-global', 'lights-own'], 'its own tool: both');
  seen.length = 0;
  await stages.run('before_toolcall', makeContext());
  t.same(seen, ['audit-global'], 'no tool owner given: only the global handler');
});

t.test('setting the response reports a short-circuit', async (t) => {
  const stages = newRegistry();
  stages.register('plugin:blacklist', 'on_input', (ctx) => {
    if (ctx.input.source === 'spammer') ctx.response = 'not today';
  });
  const quiet = makeContext();
  t.equal(await stages.run('on_input', quiet), false);
  t.equal(quiet.response, undefined);
  const ctx = makeContext(makeInput({ source: 'spammer' }));
  t.equal(await stages.run('on_input', ctx), true);
  t.equal(ctx.response, 'not today');
});

t.test('removeOwner removes every handler of that owner in every stage', async (t) => {
  const stages = newRegistry();
  const seen: string[] = [];
  stages.register('plugin:a', 'on_input', () => void seen.push('a1'));
  stages.register('plugin:a', 'after_output', () => void seen.push('a2'));
  stages.register('plugin:b', 'on_input', () => void seen.push('b'));
  stages.removeOwner('plugin:a');
  t.equal(stages.handlerCount('after_output'), 0);
  await stages.run('on_input', makeContext());
  await stages.run('after_output', makeContext());
  t.same(seen, ['b']);
});

t.test('a stage with no handlers resolves without a short-circuit', async (t) => {
  const stages = newRegistry();
  const ctx = makeContext();
  t.equal(await stages.run('after_output', ctx), false);
  t.equal(ctx.stage, 'after_output');
  t.same(ctx.errors, []);
});

t.test('a handler still running after the stage timeout is reported and not waited for', async (t) => {
  const captured = captureLogs();
  const stages = new StageRegistry(captured.logs.child('stages'), { timeoutMs: () => 30 });
  const hang = deferred();
  t.teardown(() => hang.resolve());
  stages.register('plugin:stuck', 'pre_action', () => hang.promise);
  stages.register('plugin:quick', 'pre_action', (ctx) => {
    ctx.final_text = 'quick';
  });
  const ctx = makeContext();
  t.equal(await stages.run('pre_action', ctx), false, 'the run ended without the stuck handler');
  t.equal(ctx.final_text, 'quick', 'the other handler ran');
  t.match(ctx.errors, [/pre_action handler of plugin:stuck failed: .*did not finish within 30 ms \(core.agent.stage_timeout_ms\)/]);
  t.ok(
    captured.records().some((r) => r.msg === 'stage handler of plugin:stuck failed in pre_action'),
    'logged with its owner and stage',
  );
});

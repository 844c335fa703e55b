import t from 'tap';
import { HomeAgentError } from '../../../src/shared/errors.js';
import { deferred, drain, Harness, input, llmStep, ManualClock } from './scheduler-harness.js';

t.test('queued inputs run one at a time in FIFO order', async (t) => {
  const h = new Harness();
  const gate = deferred();
  let active = 0;
  let maxActive = 0;
  for (const id of ['a', 'b', 'c']) {
    h.behaviors.set(id, async () => {
      active++;
      maxActive = Math.max(maxActive, active);
      if (id === 'a') await gate.promise;
      await drain();
      active--;
      return { text: `answer ${id}` };
    });
  }
  await h.scheduler.start();
  const receipts = [h.submit(input('a')), h.submit(input('b')), h.submit(input('c'))];
  await drain();
  t.match(h.scheduler.stats(), { queued: 2, running: { input_id: 'a', level: 0 }, suspended: 0 });
  gate.resolve();
  const [a, b, c] = await Promise.all(receipts);
  t.same(h.trace, ['start a', 'receipt a done', 'start b', 'receipt b done', 'start c', 'receipt c done']);
  t.match(a, { input_id: 'a', status: 'done', text: 'answer a' });
  t.notOk(a && 'usage' in a, 'no usage when the task reported none');
  t.match(b, { status: 'done', text: 'answer b' });
  t.match(c, { status: 'done', text: 'answer c' });
  t.equal(maxActive, 1, 'never two tasks at once');
  t.match(h.scheduler.stats(), { queued: 0, running: null, completed: 3, failed: 0 });
});

t.test('inputs submitted before start wait for it', async (t) => {
  const h = new Harness();
  const receipt = h.submit(input('early'));
  await drain();
  t.same(h.trace, [], 'nothing runs before start');
  t.equal(h.scheduler.stats().queued, 1);
  await h.scheduler.start();
  t.equal((await receipt).status, 'done');
});

t.test('an L3 interrupt aborts an L1 task in its LLM step, runs, then the L1 task resumes and completes', async (t) => {
  const h = new Harness();
  const firstRequest = deferred();
  const secondRequest = deferred();
  const replies = [deferred<string>(), deferred<string>()];
  const seenSignals: AbortSignal[] = [];
  h.behaviors.set('background', async (control) => {
    for (let attempt = 0; ; attempt++) {
      await control.safePoint();
      const signal = control.llmSignal();
      seenSignals.push(signal);
      (attempt === 0 ? firstRequest : secondRequest).resolve();
      const reply = await llmStep(signal, (replies[attempt] ?? replies[1])?.promise ?? Promise.resolve('x'));
      if (reply === 'aborted') {
        h.trace.push('background: request aborted');
        continue;
      }
      return { text: reply };
    }
  });
  const interactiveGate = deferred();
  h.behaviors.set('interactive', async (control) => {
    await control.safePoint();
    await interactiveGate.promise;
    return { text: 'the timer fired' };
  });
  await h.scheduler.start();
  const background = h.submit(input('background', 1));
  await firstRequest.promise;
  t.match(h.scheduler.stats(), { running: { input_id: 'background', level: 1 } });

  const interactive = h.submit(input('interactive', 3));
  t.equal(seenSignals[0]?.aborted, true, 'the in-flight LLM request is aborted at once');
  t.match(seenSignals[0]?.reason, { code: 'HA_ERR_LLM_ABORTED' });
  await drain();
  t.match(h.scheduler.stats(), { running: { input_id: 'interactive', level: 3 }, suspended: 1 });
  // The late answer of the aborted request must not be used.
  replies[0]?.resolve('stale answer');
  await drain();
  t.same(h.receiptOrder(), [], 'no receipt yet');

  interactiveGate.resolve();
  t.match(await interactive, { status: 'done', text: 'the timer fired' });
  await secondRequest.promise;
  t.equal(seenSignals[1]?.aborted, false, 'the resumed task re-sends with a fresh signal');
  t.match(h.scheduler.stats(), { running: { input_id: 'background', level: 1, effective_level: 2 }, suspended: 0 });
  replies[1]?.resolve('background answer');
  t.match(await background, { status: 'done', text: 'background answer' });

  t.same(h.trace, [
    'start background',
    'background: request aborted',
    'start interactive',
    'receipt interactive done',
    'receipt background done',
  ]);
  t.equal(h.receipts.get('background')?.length, 1);
  t.equal(h.receipts.get('interactive')?.length, 1);
  t.match(h.scheduler.stats(), { running: null, suspended: 0, completed: 2 });
});

t.test('an equal or lower level does not pre-empt', async (t) => {
  const h = new Harness();
  const inRequest = deferred();
  const reply = deferred<string>();
  let signal: AbortSignal | undefined;
  h.behaviors.set('first', async (control) => {
    signal = control.llmSignal();
    inRequest.resolve();
    const text = await llmStep(signal, reply.promise);
    await control.safePoint();
    h.trace.push('first: past its safe point');
    return { text };
  });
  await h.scheduler.start();
  const first = h.submit(input('first', 2));
  await inRequest.promise;
  const same = h.submit(input('same', 2));
  const lower = h.submit(input('lower', 1));
  const queued = h.submit(input('queued', 0));
  await drain();
  t.equal(signal?.aborted, false, 'the request goes on');
  t.match(h.scheduler.stats(), { running: { input_id: 'first' }, interrupts_by_level: { 1: 1, 2: 1 }, queued: 1 });
  reply.resolve('done first');
  await Promise.all([first, same, lower, queued]);
  t.same(h.trace, [
    'start first',
    'first: past its safe point',
    'receipt first done',
    'start same',
    'receipt same done',
    'start lower',
    'receipt lower done',
    'start queued',
    'receipt queued done',
  ]);
});

t.test('a pre-emption during critical() waits until the critical section ends', async (t) => {
  const h = new Harness();
  const inCritical = deferred();
  const toolGate = deferred();
  let insideSafePointReturned = false;
  let requestSignal: AbortSignal | undefined;
  h.behaviors.set('task', async (control) => {
    await control.critical(async () => {
      inCritical.resolve();
      await toolGate.promise;
      // A safe point inside a critical section must not suspend.
      await control.safePoint();
      insideSafePointReturned = true;
      requestSignal = control.llmSignal();
      t.equal(requestSignal.aborted, false, 'a request begun inside a critical section is not aborted there');
      h.trace.push('task: tool finished');
    });
    await control.safePoint();
    h.trace.push('task: resumed after the interrupt');
    return { text: 'ok' };
  });
  await h.scheduler.start();
  const task = h.submit(input('task', 1));
  await inCritical.promise;
  const urgent = h.submit(input('urgent', 4), { origin: 'builtin' });
  await drain();
  t.match(h.scheduler.stats(), { running: { input_id: 'task' }, interrupts_by_level: { 4: 1 } });
  t.notOk(h.trace.includes('start urgent'));
  toolGate.resolve();
  await Promise.all([task, urgent]);
  t.ok(insideSafePointReturned);
  t.equal(requestSignal?.aborted, true, 'once the section ended, the pending pre-emption aborts the open request');
  t.same(h.trace, [
    'start task',
    'task: tool finished',
    'start urgent',
    'receipt urgent done',
    'task: resumed after the interrupt',
    'receipt task done',
  ]);
});

/** A task that reports it started and then waits for `release` before its safe point. */
function stepper(h: Harness, id: string) {
  const started = deferred();
  const release = deferred();
  h.behaviors.set(id, async (control) => {
    started.resolve();
    await release.promise;
    await control.safePoint();
    return { text: id };
  });
  return { started, release };
}

t.test('nested pre-emption reaches suspend depth 4 and unwinds last-in first-out', async (t) => {
  const h = new Harness();
  await h.scheduler.start();
  const ids = ['l0', 'l1', 'l2', 'l3', 'l4'] as const;
  const steps = ids.map((id) => stepper(h, id));
  const receipts = [];
  for (let level = 0; level < ids.length; level++) {
    const id = ids[level] ?? 'l0';
    receipts.push(h.submit(input(id, level as 0 | 1 | 2 | 3 | 4), { origin: 'builtin' }));
    if (level > 0) steps[level - 1]?.release.resolve();
    await steps[level]?.started.promise;
  }
  t.match(h.scheduler.stats(), { suspended: 4, running: { input_id: 'l4', level: 4 } });
  steps[4]?.release.resolve();
  await Promise.all(receipts);
  t.same(h.receiptOrder(), ['receipt l4 done', 'receipt l3 done', 'receipt l2 done', 'receipt l1 done', 'receipt l0 done']);
  t.match(h.scheduler.stats(), { suspended: 0, running: null, completed: 5 });
});

t.test('with the suspend stack full a higher interrupt waits in its queue', async (t) => {
  const h = new Harness({ maxSuspendDepth: 1 });
  await h.scheduler.start();
  const l0 = stepper(h, 'l0');
  const l1Request = deferred();
  const l1Reply = deferred<string>();
  let l1Signal: AbortSignal | undefined;
  h.behaviors.set('l1', async (control) => {
    l1Signal = control.llmSignal();
    l1Request.resolve();
    const text = await llmStep(l1Signal, l1Reply.promise);
    await control.safePoint();
    return { text };
  });
  const r0 = h.submit(input('l0', 0));
  await l0.started.promise;
  const r1 = h.submit(input('l1', 1));
  l0.release.resolve();
  await l1Request.promise;
  t.match(h.scheduler.stats(), { suspended: 1, running: { input_id: 'l1' } });
  const r2 = h.submit(input('l2', 2));
  await drain();
  t.equal(l1Signal?.aborted, false, 'no pre-emption while the stack is full');
  t.match(h.scheduler.stats(), { interrupts_by_level: { 2: 1 } });
  l1Reply.resolve('l1 answer');
  await Promise.all([r0, r1, r2]);
  t.same(
    h.receiptOrder(),
    ['receipt l1 done', 'receipt l2 done', 'receipt l0 done'],
    'l2 (higher than l0 boosted to 1) runs before l0 resumes',
  );
});

t.test('a full interrupt queue drops the oldest input of the lowest level', async (t) => {
  const h = new Harness({ limits: { interrupt_queue_size: 3 } });
  await h.scheduler.start();
  // The running task never reaches a safe point, so interrupts pile up behind it.
  const blocker = deferred();
  h.behaviors.set('busy', async () => {
    await blocker.promise;
    return { text: 'busy done' };
  });
  const busy = h.submit(input('busy', 0));
  await drain();
  const m2 = h.submit(input('m2', 2));
  const b1 = h.submit(input('b1', 1));
  const b2 = h.submit(input('b2', 1));
  const i3 = h.submit(input('i3', 3));
  const dropped = await b1;
  t.match(dropped, { input_id: 'b1', status: 'cancelled', reason: 'dropped', error: { code: 'HA_ERR_INPUT_DROPPED' } });
  t.match(h.scheduler.stats(), { dropped: 1, interrupts_by_level: { 1: 1, 2: 1, 3: 1, 4: 0 } });
  const b3 = h.submit(input('b3', 1));
  t.match(await b2, { status: 'cancelled', error: { code: 'HA_ERR_INPUT_DROPPED' } }, 'b2 was then the oldest L1');
  const b4 = h.submit(input('b4', 1));
  t.match(await b3, { status: 'cancelled' });
  // Only higher levels left but b4: a new L3 pushes b4 out; then a new L1 is itself the lowest and goes.
  const i3b = h.submit(input('i3b', 3));
  t.match(await b4, { status: 'cancelled' });
  const b5 = h.submit(input('b5', 1));
  t.match(await b5, { status: 'cancelled', error: { code: 'HA_ERR_INPUT_DROPPED' } }, 'the newcomer is dropped when it is the lowest');
  t.match(h.scheduler.stats(), { dropped: 5, interrupts_by_level: { 1: 0, 2: 1, 3: 2 } });
  blocker.resolve();
  await Promise.all([busy, m2, i3, i3b]);
  t.same(h.receiptOrder().slice(-4), ['receipt busy done', 'receipt i3 done', 'receipt i3b done', 'receipt m2 done']);
  for (const [id, list] of h.receipts) t.equal(list.length, 1, `${id} has one receipt`);
  t.match(h.scheduler.stats(), { completed: 4, cancelled: 5, dropped: 5 });
});

t.test('a full ready queue refuses the new input with HA_ERR_INPUT_QUEUE_FULL', async (t) => {
  const h = new Harness({ limits: { ready_queue_size: 2, dedupe_window_ms: 10_000 }, clock: new ManualClock() });
  await h.scheduler.start();
  const gate = deferred();
  h.behaviors.set('a', async () => {
    await gate.promise;
    return {};
  });
  const a = h.submit(input('a'));
  await drain();
  const b = h.submit(input('b'));
  const c = h.submit(input('c'));
  const d = input('d');
  const refused = await h.submit(d);
  t.match(refused, { input_id: 'd', status: 'failed', error: { code: 'HA_ERR_INPUT_QUEUE_FULL' } });
  t.match(h.scheduler.stats(), { queued: 2, refused: 1, failed: 1 });
  gate.resolve();
  await Promise.all([a, b, c]);
  t.match(await h.submit({ ...d }), { status: 'done' }, 'a refused input is not remembered as a duplicate');
  t.notOk('text' in (h.receipts.get('a')?.[0] ?? {}), 'a result without text gives a receipt without text');
});

t.test('dedupe: a retry after a failed attempt runs; repeats of one waiting, running or succeeded are skipped', async (t) => {
  const clock = new ManualClock();
  const h = new Harness({ clock, limits: { dedupe_window_ms: 10_000 } });
  await h.scheduler.start();
  const same = { source: 'cli', channel: 'cli', payload: 'turn on the kitchen light' } as const;
  h.behaviors.set('thrown', async () => {
    throw new Error('the runner broke');
  });
  h.behaviors.set('unanswered', async () => ({ text: 'I could not reach a language model', failed: true }));
  t.match(await h.submit(input('thrown', 0, same)), { status: 'failed' });
  clock.at += 1_000;
  t.match(
    await h.submit(input('unanswered', 0, same)),
    { status: 'done', text: 'I could not reach a language model' },
    'a failed attempt released its key: the retry ran',
  );
  clock.at += 1_000;
  t.match(await h.submit(input('answered', 0, same)), { status: 'done' }, 'a turn done with failed set released it too');
  clock.at += 1_000;
  t.match(await h.submit(input('repeat', 0, same)), { status: 'skipped', reason: 'duplicate' }, 'a succeeded one is not repeated');

  const other = { ...same, payload: 'open the garage' } as const;
  const gate = deferred();
  h.behaviors.set('slow', async () => {
    await gate.promise;
    return { text: 'opened' };
  });
  const slow = h.submit(input('slow', 0, other));
  await drain();
  t.match(await h.submit(input('while-running', 0, other)), { status: 'skipped', reason: 'duplicate' }, 'nor one that is running');
  gate.resolve();
  t.match(await slow, { status: 'done' });
  t.notOk(h.trace.includes('start repeat') || h.trace.includes('start while-running'), 'the skipped ones never ran');
});

t.test('an external L4 is clamped to L3; a built-in L4 pre-empts L3', async (t) => {
  const h = new Harness();
  await h.scheduler.start();
  const inRequest = deferred();
  const reply = deferred<string>();
  let signal: AbortSignal | undefined;
  h.behaviors.set('timer', async (control) => {
    for (;;) {
      await control.safePoint();
      signal = control.llmSignal();
      inRequest.resolve();
      const text = await llmStep(signal, reply.promise);
      if (text !== 'aborted') return { text };
    }
  });
  const timer = h.submit(input('timer', 3));
  await inRequest.promise;
  const external = h.submit(input('external', 4));
  const byDefault = h.submit(input('default', 4));
  await drain();
  t.equal(signal?.aborted, false, 'an external L4 (clamped to 3) does not pre-empt L3');
  t.match(h.scheduler.stats(), { interrupts_by_level: { 3: 2, 4: 0 } });
  const builtin = h.submit(input('builtin', 4), { origin: 'builtin' });
  t.equal(signal?.aborted, true, 'a built-in L4 does');
  reply.resolve('tick');
  await Promise.all([timer, external, byDefault, builtin]);
  t.equal(h.seenInputs.get('external')?.level, 3, 'the runner sees the clamped level');
  t.equal(h.seenInputs.get('default')?.level, 3, 'external is the default origin');
  t.equal(h.seenInputs.get('builtin')?.level, 4);
  t.equal(h.trace.indexOf('start builtin'), 1, 'the built-in L4 ran right after the pre-empted task began');
});

t.test('dedupe: the same input within the window is skipped, after it runs again', async (t) => {
  const clock = new ManualClock();
  const h = new Harness({ clock, limits: { dedupe_window_ms: 10_000 } });
  await h.scheduler.start();
  const same = { source: 'mqtt', channel: 'kitchen', payload: 'lights on' } as const;
  t.match(await h.submit(input('one', 0, same)), { status: 'done' });
  clock.at += 9_999;
  const skipped = await h.submit(input('two', 0, same));
  t.match(skipped, { input_id: 'two', status: 'skipped', reason: 'duplicate' });
  t.equal(skipped.finished_at, clock.at);
  t.match(await h.submit(input('other-payload', 0, { ...same, payload: 'lights off' })), { status: 'done' });
  t.match(await h.submit(input('other-source', 0, { ...same, source: 'webui' })), { status: 'done' });
  t.match(await h.submit(input('other-channel', 0, { ...same, channel: 'hall' })), { status: 'done' });
  t.match(await h.submit(input('other-type', 0, { ...same, type: 'structured' })), { status: 'done' });
  t.match(await h.submit(input('structured', 0, { ...same, payload: { a: [1, 2] } })), { status: 'done' });
  t.match(await h.submit(input('structured-again', 0, { ...same, payload: { a: [1, 2] } })), { status: 'skipped' });
  const asked = { ...same, payload: 'and then?', meta: { history: [{ role: 'user', content: 'first' }] } };
  t.match(await h.submit(input('history-1', 0, asked)), { status: 'done' });
  t.match(
    await h.submit(input('history-2', 0, { ...asked, meta: { history: [{ role: 'user', content: 'second' }] } })),
    { status: 'done' },
    'the same question after another client-kept conversation is a new request',
  );
  t.match(await h.submit(input('history-3', 0, asked)), { status: 'skipped' }, 'the same conversation again is a duplicate');
  clock.at += 1;
  t.match(await h.submit(input('three', 0, same)), { status: 'done' }, 'the window is measured from the accepted input');
  h.limits.dedupe_window_ms = 0;
  t.match(await h.submit(input('four', 0, same)), { status: 'done' }, '0 turns dedupe off');
  t.equal(h.scheduler.stats().skipped, 3);
  t.notOk(h.trace.includes('start two'));
});

t.test('a failing runner gives a failed receipt and the next task still runs', async (t) => {
  const h = new Harness();
  await h.scheduler.start();
  h.behaviors.set('boom', async () => {
    throw new HomeAgentError('HA_ERR_LLM_ALL_FAILED', 'every model failed');
  });
  h.behaviors.set('plain', async () => {
    throw new Error('plain error');
  });
  h.behaviors.set('sync', () => {
    throw new TypeError('thrown before any promise');
  });
  const receipts = await Promise.all([h.submit(input('boom')), h.submit(input('plain')), h.submit(input('sync')), h.submit(input('next'))]);
  t.match(receipts[0], { status: 'failed', error: { code: 'HA_ERR_LLM_ALL_FAILED', message: 'every model failed' } });
  t.match(receipts[1], { status: 'failed', error: { code: 'HA_ERR_INTERNAL', message: 'plain error' } });
  t.match(receipts[2], { status: 'failed', error: { message: 'thrown before any promise' } });
  t.match(receipts[3], { status: 'done', text: 'answer next' });
  t.match(h.scheduler.stats(), { failed: 3, completed: 1, running: null });
});

t.test('malformed inputs get a failed receipt', async (t) => {
  const h = new Harness();
  await h.scheduler.start();
  const bad = [
    { ...input('x'), level: 7 },
    { ...input('y'), type: 'video' },
    { ...input('z'), source: '' },
    { ...input('w'), level: 1.5 },
  ];
  for (const event of bad) {
    // biome-ignore lint/suspicious/noExplicitAny: deliberately malformed input from an untyped plugin
    t.match(await h.submit(event as any), { status: 'failed', error: { code: 'HA_ERR_INPUT_INVALID' } });
  }
  t.same(
    h.trace.filter((l) => l.startsWith('start')),
    [],
  );
});

t.test('stop() cancels queued, running and suspended tasks with exactly one receipt each', async (t) => {
  const h = new Harness();
  await h.scheduler.start();
  const baseRequest = deferred();
  h.behaviors.set('base', async (control) => {
    for (;;) {
      await control.safePoint();
      const signal = control.llmSignal();
      baseRequest.resolve();
      const text = await llmStep(signal, new Promise<string>(() => {}));
      if (text !== 'aborted') return { text };
    }
  });
  const interruptStarted = deferred();
  let interruptSignal: AbortSignal | undefined;
  h.behaviors.set('interrupt', async (control) => {
    interruptSignal = control.signal;
    interruptStarted.resolve();
    // A long tool that honours its signal.
    await control.critical(
      () =>
        new Promise<void>((_, reject) => {
          control.signal.addEventListener('abort', () => reject(control.signal.reason), { once: true });
        }),
    );
    return { text: 'never' };
  });
  const base = h.submit(input('base', 0));
  await baseRequest.promise;
  const interrupt = h.submit(input('interrupt', 2));
  await interruptStarted.promise;
  const waitingInterrupt = h.submit(input('waiting', 1));
  const queued = h.submit(input('queued', 0));
  await drain();
  t.match(h.scheduler.stats(), { suspended: 1, running: { input_id: 'interrupt' }, queued: 1, interrupts_by_level: { 1: 1 } });

  await h.scheduler.stop();
  t.equal(interruptSignal?.aborted, true);
  const all = await Promise.all([base, interrupt, waitingInterrupt, queued]);
  for (const receipt of all) t.match(receipt, { status: 'cancelled', reason: 'shutdown' }, `${receipt.input_id} cancelled`);
  for (const id of ['base', 'interrupt', 'waiting', 'queued']) t.equal(h.receipts.get(id)?.length, 1, `${id}: one receipt`);
  t.match(h.scheduler.stats(), { running: null, suspended: 0, queued: 0, cancelled: 4 });
  t.notOk(h.trace.includes('start waiting'));
  t.notOk(h.trace.includes('start queued'));
  t.match(await h.submit(input('late')), { status: 'cancelled', reason: 'shutdown' }, 'inputs after stop are cancelled');
});

t.test('stop() answers for a task that ignores cancellation, after the timeout', async (t) => {
  const h = new Harness({ stopTimeoutMs: 20 });
  await h.scheduler.start();
  const started = deferred();
  const never = deferred<{ text: string }>();
  h.behaviors.set('stubborn', async () => {
    started.resolve();
    return never.promise;
  });
  const stubborn = h.submit(input('stubborn'));
  await started.promise;
  await h.scheduler.stop();
  t.match(await stubborn, { status: 'cancelled', error: { code: 'HA_ERR_ABORTED' } });
  never.resolve({ text: 'too late' });
  await drain();
  t.equal(h.receipts.get('stubborn')?.length, 1, 'the late result does not produce a second receipt');
  t.equal(h.scheduler.stats().completed, 0);
});

t.test('the scheduler can start again after stop', async (t) => {
  const h = new Harness();
  await h.scheduler.start();
  await h.scheduler.stop();
  await h.scheduler.stop();
  await h.scheduler.start();
  t.match(await h.submit(input('again')), { status: 'done' });
});

t.test('a throwing or broken limits source still gives every input a receipt', async (t) => {
  const h = new Harness();
  await h.scheduler.start();
  t.match(await h.submit(input('before')), { status: 'done' });
  const good = h.limits;
  Object.defineProperty(h, 'limits', {
    get: () => {
      throw new Error('settings store closed');
    },
  });
  t.match(await h.submit(input('throwing')), { status: 'done' }, 'the previous limits apply');
  Object.defineProperty(h, 'limits', { value: { ...good, ready_queue_size: -1 }, writable: true });
  t.match(await h.submit(input('nonsense')), { status: 'done' });
});

t.test("a task's token usage reaches its receipt", async (t) => {
  const h = new Harness();
  h.behaviors.set('counted', async () => ({ text: 'ok', usage: { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 } }));
  await h.scheduler.start();
  t.match(await h.submit(input('counted')), {
    status: 'done',
    text: 'ok',
    usage: { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 },
  });
});

t.test(
  "cancelRunning stops one input's task in its LLM step (barge-in); other plugins' inputs and finished ones are refused",
  async (t) => {
    const h = new Harness();
    const requested = deferred();
    const signals: AbortSignal[] = [];
    h.behaviors.set('spoken', async (control) => {
      await control.safePoint();
      const signal = control.llmSignal();
      signals.push(signal);
      requested.resolve();
      const reply = await llmStep(signal, new Promise<string>(() => {}));
      if (reply === 'aborted') await control.safePoint();
      return { text: 'never' };
    });
    h.behaviors.set('next', async () => ({ text: 'next one runs' }));
    await h.scheduler.start();
    const spoken = h.submit(input('spoken', 0, { meta: { plugin: 'voice' } }));
    const next = h.submit(input('next'));
    await requested.promise;
    t.equal(h.scheduler.cancelRunning('spoken', 'barge-in', 'webui'), false, 'another plugin may not cancel it');
    t.equal(signals[0]?.aborted, false);
    t.equal(h.scheduler.cancelRunning('spoken', 'barge-in', 'voice'), true);
    t.equal(signals[0]?.aborted, true, 'the LLM request is aborted at once');
    t.match(await spoken, { status: 'cancelled', reason: 'barge-in', error: { code: 'HA_ERR_ABORTED' } });
    t.match(await next, { status: 'done', text: 'next one runs' }, 'the queue goes on');
    t.equal(h.scheduler.cancelRunning('spoken', 'barge-in', 'voice'), false, 'a finished input cannot be cancelled again');
    t.equal(h.receipts.get('spoken')?.length, 1, 'one receipt');
  },
);

import t from 'tap';
import { EventBus, type EventMap } from '../../../src/events/event-bus.js';
import { HomeAgentError } from '../../../src/shared/errors.js';
import type { Service } from '../../../src/shared/service.js';
import { ServiceRunner } from '../../../src/supervisor/service-runner.js';
import { expectErrorAsync, silentLogs } from '../fixtures/support.js';

interface FakeOptions {
  failStart?: unknown;
  failStop?: boolean;
  hangStop?: boolean;
}

function fake(name: string, log: string[], options: FakeOptions = {}): Service {
  return {
    name,
    async start() {
      log.push(`start ${name}`);
      if (options.failStart !== undefined) throw options.failStart;
    },
    stop() {
      log.push(`stop ${name}`);
      if (options.hangStop) return new Promise<void>(() => {});
      if (options.failStop) return Promise.reject(new Error(`${name} stop broke`));
      return Promise.resolve();
    },
  };
}

function runner(stopTimeoutMs = 5000) {
  const logs = silentLogs();
  const events = new EventBus(logs.child('events'));
  const states: Array<EventMap['service.state']> = [];
  events.on('test', 'service.state', (s) => void states.push(s));
  return { runner: new ServiceRunner({ events, log: logs.child('supervisor'), stopTimeoutMs: () => stopTimeoutMs }), states };
}

t.test('starts in order, stops in reverse, reports states', async (t) => {
  const log: string[] = [];
  const { runner: r, states } = runner();
  for (const name of ['store', 'settings', 'plugins']) r.add(fake(name, log));
  t.same(
    r.status().map((s) => s.state),
    ['created', 'created', 'created'],
  );
  await r.startAll(new AbortController().signal);
  t.same(log, ['start store', 'start settings', 'start plugins']);
  t.same(r.status(), [
    { name: 'store', state: 'running' },
    { name: 'settings', state: 'running' },
    { name: 'plugins', state: 'running' },
  ]);
  const result = await r.stopAll();
  t.same(result, { clean: true, timedOut: [], failed: [] });
  t.same(log.slice(3), ['stop plugins', 'stop settings', 'stop store']);
  t.ok(r.status().every((s) => s.state === 'stopped'));
  t.same(
    states.filter((s) => s.name === 'store').map((s) => s.state),
    ['starting', 'running', 'stopping', 'stopped'],
    'service.state events for every transition',
  );
  t.ok(states.every((s) => s.kind === 'service'));

  const again = await r.stopAll();
  t.same(again, { clean: true, timedOut: [], failed: [] });
  t.equal(log.length, 6, 'stopped services are not stopped twice');
});

t.test('a failing start stops the started services and throws HA_ERR_SERVICE_START', async (t) => {
  const log: string[] = [];
  const { runner: r } = runner();
  r.add(fake('a', log));
  r.add(fake('b', log));
  r.add(fake('c', log, { failStart: new Error('port in use') }));
  r.add(fake('d', log));
  const error = await expectErrorAsync(t, () => r.startAll(new AbortController().signal), 'HA_ERR_SERVICE_START');
  t.match(error.message, 'c failed to start: port in use');
  t.ok(error.cause instanceof Error);
  t.same(
    log,
    ['start a', 'start b', 'start c', 'stop c', 'stop b', 'stop a'],
    'reverse order; the failed one may clean up; d never started',
  );
  t.same(r.status(), [
    { name: 'a', state: 'stopped' },
    { name: 'b', state: 'stopped' },
    { name: 'c', state: 'failed', error: 'port in use' },
    { name: 'd', state: 'created' },
  ]);
});

t.test('a HomeAgentError from start keeps its code', async (t) => {
  const log: string[] = [];
  const { runner: r } = runner();
  r.add(fake('a', log));
  r.add(fake('store', log, { failStart: new HomeAgentError('HA_ERR_STORE_TOO_NEW', 'too new') }));
  const error = await expectErrorAsync(t, () => r.startAll(new AbortController().signal), 'HA_ERR_STORE_TOO_NEW');
  t.equal(error.message, 'too new');
  t.same(log, ['start a', 'start store', 'stop store', 'stop a']);
});

t.test('an aborted start stops before the next service', async (t) => {
  const log: string[] = [];
  const { runner: r } = runner();
  const controller = new AbortController();
  r.add({ name: 'first', start: async () => void controller.abort(), stop: async () => void log.push('stop first') });
  r.add(fake('second', log));
  await expectErrorAsync(t, () => r.startAll(controller.signal), 'HA_ERR_ABORTED');
  t.notOk(log.includes('start second'));
  await r.stopAll();
  t.same(log, ['stop first']);
});

t.test('a stop that hangs is cut off at the deadline', async (t) => {
  const log: string[] = [];
  const { runner: r } = runner();
  r.add(fake('first', log));
  r.add(fake('hung', log, { hangStop: true }));
  r.add(fake('broken', log, { failStop: true }));
  r.add(fake('last', log));
  await r.startAll(new AbortController().signal);
  const result = await r.stopAll(100);
  t.same(result, { clean: false, timedOut: ['hung'], failed: ['broken'] });
  t.same(log.slice(4), ['stop last', 'stop broken', 'stop hung', 'stop first'], 'the services after the hung one are still stopped');
  t.same(r.status(), [
    { name: 'first', state: 'stopped' },
    { name: 'hung', state: 'failed', error: 'did not stop in time' },
    { name: 'broken', state: 'failed', error: 'stop failed' },
    { name: 'last', state: 'stopped' },
  ]);
});

t.test('the stop timeout comes from the options when not given', async (t) => {
  const log: string[] = [];
  const { runner: r } = runner(50);
  r.add(fake('hung', log, { hangStop: true }));
  await r.startAll(new AbortController().signal);
  const result = await r.stopAll();
  t.same(result.timedOut, ['hung']);
});

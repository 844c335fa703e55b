import t from 'tap';
import { EventBus, type EventMap } from '../../../src/events/event-bus.js';
import { captureLogs, silentLogs } from '../fixtures/support.js';

const change = (key: string): EventMap['settings.changed'] => ({ key, actor: 'cli', requires_restart: false, reset: false });

t.test('listeners run in registration order with the payload', async (t) => {
  const bus = new EventBus(silentLogs().child('events'));
  const seen: string[] = [];
  bus.on('a', 'settings.changed', (p) => void seen.push(`a:${p.key}`));
  bus.on('b', 'settings.changed', (p) => void seen.push(`b:${p.key}`));
  bus.on('c', 'daemon.status', (p) => void seen.push(`c:${p.text}`));
  bus.emit('settings.changed', change('core.name'));
  t.same(seen, ['a:core.name', 'b:core.name'], 'only listeners of that event');
  t.equal(bus.listenerCount('settings.changed'), 2);
  t.equal(bus.listenerCount('service.state'), 0);
});

t.test('a throwing listener is logged and the others still run', async (t) => {
  const captured = captureLogs();
  const bus = new EventBus(captured.logs.child('events'));
  const seen: string[] = [];
  bus.on('first', 'settings.changed', () => void seen.push('first'));
  bus.on('thrower', 'settings.changed', () => {
    throw new Error('listener exploded');
  });
  bus.on('last', 'settings.changed', () => void seen.push('last'));
  t.doesNotThrow(() => bus.emit('settings.changed', change('k')));
  t.same(seen, ['first', 'last']);
  const errors = captured.records().filter((r) => r.level === 'error');
  t.equal(errors.length, 1);
  t.match(errors[0], { owner: 'thrower', event: 'settings.changed', err: { message: 'listener exploded' } });
});

t.test('a rejecting async listener is logged and the others still run', async (t) => {
  const captured = captureLogs();
  const bus = new EventBus(captured.logs.child('events'));
  const seen: string[] = [];
  let rejected: Promise<void> | undefined;
  bus.on('async', 'service.state', () => {
    rejected = Promise.reject(new Error('async listener failed'));
    return rejected;
  });
  bus.on('after', 'service.state', (p) => void seen.push(p.name));
  t.doesNotThrow(() => bus.emit('service.state', { name: 'store', kind: 'service', state: 'running' }));
  t.same(seen, ['store'], 'the next listener ran without waiting');
  // The bus attaches its handler synchronously; once the rejection has been delivered it has logged.
  await rejected?.catch(() => {});
  await Promise.resolve();
  const errors = captured.records().filter((r) => r.level === 'error');
  t.equal(errors.length, 1);
  t.match(errors[0], { owner: 'async', event: 'service.state', err: { message: 'async listener failed' } });
});

t.test('the unsubscribe function removes just that listener', async (t) => {
  const bus = new EventBus(silentLogs().child('events'));
  const seen: string[] = [];
  const offA = bus.on('same', 'settings.changed', () => void seen.push('a'));
  bus.on('same', 'settings.changed', () => void seen.push('b'));
  offA();
  offA();
  bus.emit('settings.changed', change('k'));
  t.same(seen, ['b']);
  t.equal(bus.listenerCount('settings.changed'), 1);
});

t.test('the same function registered twice is two registrations', async (t) => {
  const bus = new EventBus(silentLogs().child('events'));
  let calls = 0;
  const listener = () => void calls++;
  const off = bus.on('x', 'settings.changed', listener);
  bus.on('x', 'settings.changed', listener);
  off();
  bus.emit('settings.changed', change('k'));
  t.equal(calls, 1);
});

t.test('removeOwner removes every listener of that owner only', async (t) => {
  const bus = new EventBus(silentLogs().child('events'));
  const seen: string[] = [];
  bus.on('plugin:a', 'settings.changed', () => void seen.push('a1'));
  bus.on('plugin:a', 'daemon.status', () => void seen.push('a2'));
  bus.on('plugin:b', 'settings.changed', () => void seen.push('b'));
  bus.removeOwner('plugin:a');
  bus.emit('settings.changed', change('k'));
  bus.emit('daemon.status', { state: 'running', text: 'Running' });
  t.same(seen, ['b']);
  t.equal(bus.listenerCount('daemon.status'), 0);
  bus.removeOwner('nobody');
  t.equal(bus.listenerCount('settings.changed'), 1);
});

t.test('a listener added or removed during emit does not change that emit', async (t) => {
  const bus = new EventBus(silentLogs().child('events'));
  const seen: string[] = [];
  let offSecond: () => void = () => {};
  bus.on('x', 'settings.changed', () => {
    seen.push('first');
    offSecond();
    bus.on('x', 'settings.changed', () => void seen.push('added'));
  });
  offSecond = bus.on('x', 'settings.changed', () => void seen.push('second'));
  bus.emit('settings.changed', change('k'));
  t.same(seen, ['first', 'second'], 'the listener list is fixed when emit begins');
  seen.length = 0;
  bus.emit('settings.changed', change('k'));
  t.same(seen, ['first', 'added']);
});

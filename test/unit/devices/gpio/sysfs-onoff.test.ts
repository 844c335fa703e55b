/**
 * The sysfs back end's onoff path in process, against the fake tree, with a stand-in for onoff's
 * Gpio that behaves like onoff 6.0.3 (export unless exported, then active_low, direction, edge;
 * write errors ignored on a pin that was already exported; watch() keeps its listener when epoll
 * refuses the file). The real package against /sys/class/gpio is in sysfs-namespace.test.ts.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import type { EdgeEvent } from '../../../../devices/gpio/gpio-backend.js';
import { ManualClock } from '../../../../devices/gpio/gpio-clock.js';
import { SysfsGpioBackend } from '../../../../devices/gpio/sysfs-backend.js';
import {
  loadOnoff,
  type OnoffGpio,
  type OnoffGpioClass,
  onoffEdgeSource,
  type SysfsEdgeSource,
} from '../../../../devices/gpio/sysfs-edge-source.js';
import { expectErrorAsync, tempDir } from '../../fixtures/support.js';
import { FakeSysfs, PI4_CHIPS } from './fixtures/fake-sysfs.js';

type T = Parameters<typeof tempDir>[0];
type WatchCallback = (error: Error | null | undefined, value: 0 | 1) => void;

function fake(t: T): FakeSysfs {
  return new FakeSysfs(join(tempDir(t, 'ha-gpio-onoff-'), 'gpio'), PI4_CHIPS).start((fn) => t.teardown(fn));
}

interface OnoffBehaviour {
  /** Thrown by the constructor before anything is written. */
  openFails?: Error;
  /** Thrown by watch(), as epoll_ctl does for a file that cannot be polled. */
  watchFails?: Error;
  /** The attribute files of an already exported pin are not writable (onoff ignores that). */
  preExportedReadOnly?: boolean;
}

/** A stand-in for onoff's Gpio on the fake tree; the fake kernel answers the export at once. */
function fakeOnoff(sys: FakeSysfs, behaviour: OnoffBehaviour = {}) {
  const made: unknown[][] = [];
  const calls: string[] = [];
  const watchers = new Map<number, WatchCallback>();
  class Gpio implements OnoffGpio {
    readonly #n: number;
    readonly #dir: string;
    #listeners = 0;
    #watchRegistered = false;

    constructor(gpio: number, direction: string, edge?: string, options?: { activeLow?: boolean }) {
      made.push([gpio, direction, edge, options]);
      if (behaviour.openFails) throw behaviour.openFails;
      this.#n = gpio;
      this.#dir = join(sys.root, `gpio${gpio}`);
      const previously = existsSync(this.#dir);
      if (!previously) {
        writeFileSync(join(sys.root, 'export'), String(gpio));
        sys.step();
      }
      const attempt = (name: string, text: string) => {
        try {
          if (previously && behaviour.preExportedReadOnly) throw new Error(`EACCES: permission denied, open '${name}'`);
          writeFileSync(join(this.#dir, name), text);
        } catch (error) {
          if (!previously) throw error;
        }
      };
      if (typeof options?.activeLow === 'boolean') attempt('active_low', options.activeLow ? '1' : '0');
      attempt('direction', direction);
      if (edge && direction === 'in') attempt('edge', edge);
    }
    async read(): Promise<0 | 1> {
      calls.push(`read ${this.#n}`);
      return this.#file('value') === '1' ? 1 : 0;
    }
    async write(value: 0 | 1): Promise<void> {
      calls.push(`write ${this.#n} ${value}`);
      writeFileSync(join(this.#dir, 'value'), String(value));
    }
    direction(): string {
      return this.#file('direction');
    }
    edge(): string {
      return this.#file('edge');
    }
    activeLow(): boolean {
      return this.#file('active_low') === '1';
    }
    watch(callback: WatchCallback): void {
      this.#listeners++;
      calls.push(`watch ${this.#n}`);
      if (behaviour.watchFails) throw behaviour.watchFails;
      this.#watchRegistered = true;
      watchers.set(this.#n, callback);
    }
    unwatchAll(): void {
      if (this.#listeners === 0) return;
      this.#listeners = 0;
      calls.push(`unwatchAll ${this.#n}`);
      watchers.delete(this.#n);
      if (!this.#watchRegistered) throw new Error('No such file or directory'); // epoll_ctl(DEL) of an fd it never had
      this.#watchRegistered = false;
    }
    unexport(): void {
      this.unwatchAll();
      calls.push(`unexport ${this.#n}`);
      writeFileSync(join(sys.root, 'unexport'), String(this.#n));
      sys.step();
    }
    #file(name: string): string {
      return readFileSync(join(this.#dir, name), 'utf8').trim();
    }
  }
  return { Gpio: Gpio as OnoffGpioClass, made, calls, watchers };
}

function nextEdge(pin: { onEdge(l: (e: EdgeEvent) => void): () => void }): Promise<EdgeEvent> {
  return new Promise((resolve) => {
    const off = pin.onEdge((e) => {
      off();
      resolve(e);
    });
  });
}

t.test('an active-low relay through onoff: new Gpio(base + BCM, high, {activeLow}); reads and writes go through it', async (t) => {
  const sys = fake(t);
  const onoff = fakeOnoff(sys);
  const backend = new SysfsGpioBackend({ root: sys.root, onoff: onoff.Gpio });
  const relay = await backend.open(17, { direction: 'out', active_low: true, initial: 0 });
  t.same(onoff.made, [[529, 'high', undefined, { activeLow: true }]], 'the kernel number, and off on an active-low board is physical high');
  t.same(sys.log, ['export 529'], 'onoff exported base + BCM, and nothing else did');
  t.equal(sys.attr(529, 'active_low'), '1');
  t.equal(sys.attr(529, 'direction'), 'high');
  t.match(backend.describe(), /^sysfs .*, pins through onoff, 1 pin\(s\) open$/);
  await relay.write(1);
  t.equal(sys.attr(529, 'value'), '1');
  t.equal(await relay.read(), 1);
  t.same(onoff.calls, ['write 529 1', 'read 529']);
  await relay.close();
  t.same(onoff.calls.slice(2), ['unexport 529'], 'released through onoff, which closes its value file');
  t.same(sys.log, ['export 529', 'unexport 529'], 'exactly one unexport reached the kernel');
  t.match(sys.atUnexport.get(529), { value: '1' }, 'close does not switch');
  await expectErrorAsync(t, () => relay.write(0), 'HA_ERR_GPIO_UNAVAILABLE');
});

t.test('an input through onoff: in with both edges; levels from watch() go through the debouncer', async (t) => {
  const sys = fake(t);
  const onoff = fakeOnoff(sys);
  const clock = new ManualClock();
  const backend = new SysfsGpioBackend({ root: sys.root, onoff: onoff.Gpio, clock });
  const button = await backend.open(27, { direction: 'in', active_low: true, edge: 'falling', bias: 'pull-up', debounce_ms: 20 });
  t.same(onoff.made, [[539, 'in', 'both', { activeLow: true }]], 'both edges: releases must reach the debouncer');
  t.same([sys.attr(539, 'direction'), sys.attr(539, 'edge'), sys.attr(539, 'active_low')], ['in', 'both', '1']);
  t.match(button.warnings, [/cannot set bias pull-up.*config\.txt/]);
  t.match(backend.describe(), /pins through onoff, 1 pin\(s\) open, edges via onoff \(epoll\)$/);
  const events: string[] = [];
  const t0 = clock.now();
  button.onEdge((e) => events.push(`${e.edge}@${e.at - t0}`));
  const push = onoff.watchers.get(539);
  push?.(null, 1);
  push?.(null, 0);
  clock.advance(5);
  push?.(null, 1);
  clock.advance(50);
  push?.(null, 0);
  t.same(events, ['falling@55'], 'rising edges are not selected; the bounce inside the window is dropped');
  const errors: string[] = [];
  button.onError((e) => errors.push(e.code));
  push?.(new Error('epoll failed'), 0);
  t.same(errors, ['HA_ERR_GPIO_IO'], 'an error from the watcher reaches onError');
  await backend.close();
  t.same(onoff.calls.slice(-2), ['unwatchAll 539', 'unexport 539']);
  t.notOk(sys.isExported(539));
});

t.test('epoll refused (EPERM on the value file): inputs are polled, with one warning for all of them', async (t) => {
  const sys = fake(t);
  const onoff = fakeOnoff(sys, { watchFails: new Error('Operation not permitted') });
  const warnings: string[] = [];
  const backend = new SysfsGpioBackend({
    root: sys.root,
    onoff: onoff.Gpio,
    pollIntervalMs: 2,
    onWarning: (message) => warnings.push(message),
  });
  const door = await backend.open(5, { direction: 'in', edge: 'both' });
  const window = await backend.open(6, { direction: 'in', edge: 'both' });
  t.same(warnings, [
    `onoff could not watch ${join(sys.root, 'gpio517', 'value')} with epoll (Operation not permitted); inputs are polled every 2 ms instead`,
  ]);
  t.same(onoff.calls, ['read 517', 'watch 517', 'unwatchAll 517', 'read 518'], 'the second input does not try epoll again');
  t.match(backend.describe(), /pins through onoff, 2 pin\(s\) open, edges by polling every 2 ms$/);
  const rising = nextEdge(window);
  sys.setAttr(518, 'value', '1');
  t.match(await rising, { bcm: 6, edge: 'rising', value: 1 }, 'edges still arrive');
  const doorOpened = nextEdge(door);
  sys.setAttr(517, 'value', '1');
  t.match(await doorOpened, { bcm: 5, edge: 'rising', value: 1 });
  await backend.close();
  t.same(
    onoff.calls.filter((c) => c.startsWith('unexport')),
    ['unexport 517', 'unexport 518'],
    'onoff still releases both pins',
  );
  t.notOk(sys.isExported(517) || sys.isExported(518));
});

t.test('onoff failing on a pin leaves it to the files, and says why', async (t) => {
  const sys = fake(t);
  const onoff = fakeOnoff(sys, { openFails: new Error("EACCES: permission denied, open '/sys/class/gpio/gpio529/value'") });
  const warnings: string[] = [];
  const backend = new SysfsGpioBackend({ root: sys.root, onoff: onoff.Gpio, onWarning: (message) => warnings.push(message) });
  const relay = await backend.open(17, { direction: 'out', active_low: true, initial: 0 });
  const expected =
    "onoff could not open gpio529 (EACCES: permission denied, open '/sys/class/gpio/gpio529/value'); GPIO 17 uses the sysfs files directly";
  t.same(relay.warnings, [expected]);
  t.same(warnings, [expected]);
  t.same([sys.attr(529, 'active_low'), sys.attr(529, 'direction')], ['1', 'high'], 'configured by the file path, same order and values');
  await relay.write(1);
  t.equal(sys.attr(529, 'value'), '1');
  await relay.close();
  t.same(sys.log, ['export 529', 'unexport 529']);
  t.same(onoff.calls, [], 'nothing went through onoff');
});

t.test('a pin exported before onoff that kept its old setup is refused at open and released', async (t) => {
  const sys = fake(t);
  sys.exported(529, { direction: 'in', active_low: '0' });
  const stuck = fakeOnoff(sys, { preExportedReadOnly: true });
  const backend = new SysfsGpioBackend({ root: sys.root, onoff: stuck.Gpio });
  const error = await expectErrorAsync(t, () => backend.open(17, { direction: 'out', active_low: true, initial: 0 }), 'HA_ERR_GPIO_IO');
  t.equal(
    error.message,
    'GPIO 17: gpio529 kept active_low 0, direction in after onoff configured it (onoff ignores write errors on a pin that was already exported)',
  );
  t.same(sys.log, ['unexport 529'], 'released, not left half-configured');
  t.same(stuck.calls, ['unexport 529']);
  const working = fakeOnoff(sys);
  const retry = new SysfsGpioBackend({ root: sys.root, onoff: working.Gpio });
  await retry.open(17, { direction: 'out', active_low: true, initial: 0 });
  t.equal(sys.attr(529, 'direction'), 'high', 'a fresh export works');
  await retry.close();
});

t.test('edgeSource poll keeps onoff for the pin but never calls watch()', async (t) => {
  const sys = fake(t);
  const onoff = fakeOnoff(sys);
  const backend = new SysfsGpioBackend({ root: sys.root, onoff: onoff.Gpio, edgeSource: 'poll', pollIntervalMs: 2 });
  const pin = await backend.open(22, { direction: 'in', edge: 'both' });
  const rising = nextEdge(pin);
  sys.setAttr(534, 'value', '1');
  t.match(await rising, { bcm: 22, edge: 'rising' });
  t.notOk(
    onoff.calls.some((c) => c.startsWith('watch')),
    'no epoll',
  );
  t.match(backend.describe(), /pins through onoff, 1 pin\(s\) open, edges by polling every 2 ms$/);
  await backend.close();
});

t.test('where onoff is not used, describe() says why', async (t) => {
  const sys = fake(t);
  const other = new SysfsGpioBackend({ root: sys.root, edgeSource: 'poll' });
  await other.open(17, { direction: 'out' });
  t.match(other.describe(), /pins through the files \(onoff only works on \/sys\/class\/gpio\)/);
  await other.close();
  const off = new SysfsGpioBackend({ root: sys.root, onoff: 'off' });
  await off.open(17, { direction: 'out' });
  t.match(off.describe(), /pins through the files \(onoff switched off\)/);
  await off.close();
});

t.test('onoffEdgeSource: a refused watch starts the fallback once, and stop() stops it', async (t) => {
  let unwatched = 0;
  const gpio = {
    watch() {
      throw new Error('Operation not permitted');
    },
    unwatchAll() {
      unwatched++;
      throw new Error('No such file or directory');
    },
  } as unknown as OnoffGpio;
  const started: string[] = [];
  const fallback: SysfsEdgeSource = {
    kind: 'poll',
    start: () => started.push('start'),
    stop: async () => {
      started.push('stop');
    },
  };
  const reasons: unknown[] = [];
  const source = onoffEdgeSource(
    gpio,
    () => fallback,
    (error) => reasons.push(error),
  );
  t.equal(source.kind, 'onoff');
  source.start(
    () => {},
    () => {},
  );
  t.equal(source.kind, 'poll');
  t.equal(unwatched, 1, 'the listener onoff kept is dropped');
  t.match(reasons, [{ message: 'Operation not permitted' }]);
  await source.stop();
  t.same(started, ['start', 'stop']);
  t.equal(unwatched, 1, 'stop does not touch epoll it never had');
});

t.test('the onoff package is installed: loadOnoff gives its Gpio class; a missing package gives undefined', async (t) => {
  const Gpio = await loadOnoff();
  t.type(Gpio, 'function');
  t.type((Gpio as unknown as { accessible: unknown }).accessible, 'boolean', "onoff's own static, so this is the real class");
  t.equal(await loadOnoff('definitely-not-a-package-ha'), undefined);
});

import { join } from 'node:path';
import t from 'tap';
import {
  checkI2cDevice,
  type I2cBusModuleLike,
  LinuxI2cBus,
  mapI2cBusError,
  type PromisifiedI2cBusLike,
} from '../../../../devices/i2c/linux-bus.js';
import { openI2cBus } from '../../../../devices/i2c/sensor-factory.js';
import { SimulatedI2cBus } from '../../../../devices/i2c/simulated-bus.js';
import { ManualClock } from './manual-clock.js';

/** /dev/null is a character device anyone may read and write: it stands in for /dev/i2c-N. */
const CHAR_DEVICE = '/dev/null';

function errno(code: string, message = `${code}, i2c operation failed`): NodeJS.ErrnoException {
  return Object.assign(new Error(message), { code, errno: -1, syscall: 'ioctl' });
}

/** A fake i2c-bus module: records calls, answers from `reply`, or fails with `fail`. */
function fakeModule(behaviour: { fail?: NodeJS.ErrnoException; short?: boolean; openFails?: NodeJS.ErrnoException } = {}) {
  const calls: string[] = [];
  const opened: number[] = [];
  const act = <T>(name: string, value: T): Promise<T> => {
    calls.push(name);
    return behaviour.fail ? Promise.reject(behaviour.fail) : Promise.resolve(value);
  };
  const bus: PromisifiedI2cBusLike = {
    i2cRead: (_a, length, buffer) => act('i2cRead', { bytesRead: behaviour.short ? length - 1 : length, buffer: buffer.fill(0xab) }),
    i2cWrite: (_a, length, buffer) => act('i2cWrite', { bytesWritten: length, buffer }),
    readI2cBlock: (_a, command, length, buffer) => act('readI2cBlock', { bytesRead: length, buffer: buffer.fill(command) }),
    readByte: (_a, command) => act('readByte', command + 1),
    writeByte: () => act('writeByte', undefined),
    close: () => act('close', undefined),
  };
  const module: I2cBusModuleLike = {
    openPromisified: async (n, options) => {
      opened.push(n);
      calls.push(`open forceAccess=${options?.forceAccess}`);
      if (behaviour.openFails) throw behaviour.openFails;
      return bus;
    },
  };
  return { module, calls, opened };
}

t.test('a missing /dev/i2c-N is HA_ERR_I2C_UNAVAILABLE naming the path, before i2c-bus is even loaded', async (t) => {
  const dir = t.testdir({});
  const path = join(dir, 'i2c-1');
  let loaded = false;
  await t.rejects(
    LinuxI2cBus.open({
      bus: 1,
      devicePath: path,
      loadModule: async () => {
        loaded = true;
        return fakeModule().module;
      },
    }),
    {
      code: 'HA_ERR_I2C_UNAVAILABLE',
      message: new RegExp(`I2C bus i2c-1: ${path.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} does not exist: I2C is not enabled`),
      details: { bus: 'i2c-1', path },
    },
  );
  t.equal(loaded, false, 'scan() would have returned [] here; the check never gets that far');
});

t.test('the default path is /dev/i2c-N, which does not exist on this machine', async (t) => {
  await t.rejects(LinuxI2cBus.open({ bus: 7, loadModule: async () => fakeModule().module }), {
    code: 'HA_ERR_I2C_UNAVAILABLE',
    message: /\/dev\/i2c-7 does not exist/,
    details: { path: '/dev/i2c-7' },
  });
});

t.test('a regular file or a directory in place of the device node is refused', async (t) => {
  const dir = t.testdir({ 'i2c-1': 'not a device', sub: {} });
  await t.rejects(checkI2cDevice(join(dir, 'i2c-1'), 'i2c-1'), { code: 'HA_ERR_I2C_UNAVAILABLE', message: /is not a character device/ });
  await t.rejects(checkI2cDevice(join(dir, 'sub'), 'i2c-1'), { code: 'HA_ERR_I2C_UNAVAILABLE', message: /is not a character device/ });
  await t.rejects(checkI2cDevice(join(dir, 'i2c-1', 'x'), 'i2c-1'), { code: 'HA_ERR_I2C_UNAVAILABLE', message: /does not exist/ });
});

t.test(
  'a device node this user may not open names the i2c group',
  { skip: process.getuid?.() === 0 ? 'root may open anything' : false },
  async (t) => {
    // /dev/mem is a character device ordinary users cannot open.
    await t.rejects(checkI2cDevice('/dev/mem', 'i2c-1'), {
      code: 'HA_ERR_I2C_UNAVAILABLE',
      message: /no permission to open \/dev\/mem: the service user must be in the i2c group/,
    });
  },
);

t.test('a bus number outside 0..255 is a configuration error', async (t) => {
  await t.rejects(LinuxI2cBus.open({ bus: -1 }), { code: 'HA_ERR_CONFIG_INVALID' });
  await t.rejects(LinuxI2cBus.open({ bus: 1.5 }), { code: 'HA_ERR_CONFIG_INVALID' });
});

t.test('without the i2c-bus package (not installed here) the bus is unavailable, with the reason', async (t) => {
  await t.rejects(LinuxI2cBus.open({ bus: 1, devicePath: CHAR_DEVICE }), {
    code: 'HA_ERR_I2C_UNAVAILABLE',
    message: /the i2c-bus package could not be loaded \(an optional dependency/,
  });
});

t.test('with the device present, the module is opened with the bus number and calls pass through', async (t) => {
  const fake = fakeModule();
  const bus = await LinuxI2cBus.open({ bus: 1, devicePath: CHAR_DEVICE, loadModule: async () => fake.module });
  t.equal(bus.name, 'i2c-1');
  t.same(fake.opened, [1]);
  t.same([...(await bus.readI2cBlock(0x76, 0x88, 3))], [0x88, 0x88, 0x88]);
  t.equal(await bus.readByte(0x76, 0xd0), 0xd1);
  t.same([...(await bus.i2cRead(0x38, 2))], [0xab, 0xab]);
  await bus.i2cWrite(0x38, Uint8Array.of(0xac, 0x33, 0x00));
  await bus.writeByte(0x76, 0xf4, 0x25);
  await bus.close();
  t.same(fake.calls, ['open forceAccess=false', 'readI2cBlock', 'readByte', 'i2cRead', 'i2cWrite', 'writeByte', 'close']);
  await t.rejects(bus.readByte(0x76, 0xd0), { code: 'HA_ERR_I2C_UNAVAILABLE', message: /closed/ });
});

t.test('errno errors map to the catalogue: EREMOTEIO and ENXIO are NACKs', async (t) => {
  const cases: Array<[string, string]> = [
    ['EREMOTEIO', 'HA_ERR_I2C_NACK'],
    ['ENXIO', 'HA_ERR_I2C_NACK'],
    ['ETIMEDOUT', 'HA_ERR_I2C_NACK'],
    ['EIO', 'HA_ERR_I2C_NACK'],
    ['ENOENT', 'HA_ERR_I2C_UNAVAILABLE'],
    ['ENODEV', 'HA_ERR_I2C_UNAVAILABLE'],
    ['EACCES', 'HA_ERR_I2C_UNAVAILABLE'],
    ['EBUSY', 'HA_ERR_I2C_DEVICE'],
    ['EINVAL', 'HA_ERR_I2C_DEVICE'],
  ];
  for (const [code, expected] of cases) {
    const fake = fakeModule({ fail: errno(code) });
    const bus = await LinuxI2cBus.open({ bus: 1, devicePath: CHAR_DEVICE, loadModule: async () => fake.module });
    const error = await bus.readByte(0x44, 0).then(
      () => undefined,
      (e: unknown) => e,
    );
    t.match(error, { code: expected, cause: { code } }, `${code} → ${expected}`);
  }
  t.match(mapI2cBusError(errno('EREMOTEIO'), { bus: 'i2c-1', address: 0x76, op: 'readI2cBlock' }), {
    code: 'HA_ERR_I2C_NACK',
    message: 'I2C device 0x76 on i2c-1 did not answer readI2cBlock (EREMOTEIO)',
    details: { bus: 'i2c-1', address: '0x76', op: 'readI2cBlock' },
  });
  t.match(mapI2cBusError(errno('EBUSY'), { bus: 'i2c-1', address: 0x76, op: 'readByte' }), { message: /claimed by a kernel driver/ });
  t.match(mapI2cBusError(new Error('odd'), { bus: 'i2c-1', address: 0x76, op: 'readByte' }), {
    code: 'HA_ERR_I2C_DEVICE',
    message: /transfer failed: odd/,
  });
});

t.test('a short read is an HA_ERR_I2C_DEVICE, never a buffer with stale bytes', async (t) => {
  const fake = fakeModule({ short: true });
  const bus = await LinuxI2cBus.open({ bus: 1, devicePath: CHAR_DEVICE, loadModule: async () => fake.module });
  await t.rejects(bus.i2cRead(0x38, 7), { code: 'HA_ERR_I2C_DEVICE', message: /short read: 6 of 7 bytes/ });
});

t.test('an open that fails is unavailable; forceAccess is passed on', async (t) => {
  const fake = fakeModule({ openFails: errno('EACCES') });
  await t.rejects(LinuxI2cBus.open({ bus: 1, devicePath: CHAR_DEVICE, forceAccess: true, loadModule: async () => fake.module }), {
    code: 'HA_ERR_I2C_UNAVAILABLE',
  });
  t.same(fake.calls, ['open forceAccess=true']);
});

t.test('bad arguments are refused before reaching i2c-bus', async (t) => {
  const fake = fakeModule();
  const bus = await LinuxI2cBus.open({ bus: 1, devicePath: CHAR_DEVICE, loadModule: async () => fake.module });
  await t.rejects(bus.readByte(0x80, 0), { code: 'HA_ERR_CONFIG_INVALID' });
  await t.rejects(bus.readI2cBlock(0x76, 0x88, 33), { code: 'HA_ERR_INTERNAL' });
  t.same(fake.calls, ['open forceAccess=false']);
});

t.test('openI2cBus: linux fails loudly, auto falls back to a simulated bus and says why', async (t) => {
  const dir = t.testdir({});
  const clock = new ManualClock();
  const devicePath = join(dir, 'i2c-1');
  await t.rejects(openI2cBus({ bus: 1, backend: 'linux', clock, devicePath }), { code: 'HA_ERR_I2C_UNAVAILABLE' });
  const opened = await openI2cBus({
    bus: 1,
    backend: 'auto',
    clock,
    devicePath,
    sensors: [{ driver: 'bme280' }, { driver: 'bh1750', address: 0x5c }],
  });
  t.equal(opened.simulated, true);
  t.match(opened.fallback_reason, /does not exist/);
  t.ok(opened.bus instanceof SimulatedI2cBus);
  t.same((opened.bus as SimulatedI2cBus).scan(), [0x5c, 0x76], 'the configured chips are on the simulated bus');

  const fake = fakeModule();
  const real = await openI2cBus({ bus: 1, backend: 'auto', clock, devicePath: CHAR_DEVICE, loadModule: async () => fake.module });
  t.equal(real.simulated, false);
  t.equal(real.bus.name, 'i2c-1');
  const sim = await openI2cBus({ bus: 2, backend: 'simulated', clock });
  t.equal(sim.bus.name, 'sim-2');
  t.equal(sim.fallback_reason, undefined);
});

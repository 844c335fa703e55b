import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import {
  checkI2cDevice,
  type I2cBusModuleLike,
  LinuxI2cBus,
  loadI2cBusPackage,
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
function fakeModule(
  behaviour: { fail?: NodeJS.ErrnoException; short?: boolean; openFails?: NodeJS.ErrnoException; funcsFail?: NodeJS.ErrnoException } = {},
) {
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
    i2cFuncs: () => {
      calls.push('i2cFuncs');
      return behaviour.funcsFail ? Promise.reject(behaviour.funcsFail) : Promise.resolve({ i2c: true });
    },
    writeByte: () => act('writeByte', undefined),
    close: () => {
      calls.push('close');
      return Promise.resolve();
    },
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

t.test('without the i2c-bus package the bus is unavailable, with the reason', async (t) => {
  const missing = 'definitely-not-a-package-ha';
  await t.rejects(LinuxI2cBus.open({ bus: 1, devicePath: CHAR_DEVICE, loadModule: () => import(missing) }), {
    code: 'HA_ERR_I2C_UNAVAILABLE',
    message: /the i2c-bus package could not be loaded \(an optional dependency.*Cannot find package 'definitely-not-a-package-ha'/,
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
  t.same(fake.calls, ['open forceAccess=false', 'i2cFuncs', 'readI2cBlock', 'readByte', 'i2cRead', 'i2cWrite', 'writeByte', 'close']);
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

t.test('a device node that takes no I2C ioctls fails at open, and what was opened is closed', async (t) => {
  const fake = fakeModule({ funcsFail: errno('ENOTTY', 'ENOTTY, Inappropriate ioctl for device') });
  await t.rejects(LinuxI2cBus.open({ bus: 1, devicePath: CHAR_DEVICE, loadModule: async () => fake.module }), {
    code: 'HA_ERR_I2C_UNAVAILABLE',
    message: 'I2C bus i2c-1: /dev/i2c-1 is not an I2C adapter (ENOTTY during open)',
  });
  t.same(fake.calls, ['open forceAccess=false', 'i2cFuncs', 'close']);
  t.match(mapI2cBusError(errno('ENOTTY'), { bus: 'i2c-3', address: 0x40, op: 'readByte' }), {
    code: 'HA_ERR_I2C_UNAVAILABLE',
    message: /\/dev\/i2c-3 is not an I2C adapter \(ENOTTY during readByte\)/,
  });
});

t.test('bad arguments are refused before reaching i2c-bus', async (t) => {
  const fake = fakeModule();
  const bus = await LinuxI2cBus.open({ bus: 1, devicePath: CHAR_DEVICE, loadModule: async () => fake.module });
  await t.rejects(bus.readByte(0x80, 0), { code: 'HA_ERR_CONFIG_INVALID' });
  await t.rejects(bus.readI2cBlock(0x76, 0x88, 33), { code: 'HA_ERR_INTERNAL' });
  t.same(fake.calls, ['open forceAccess=false', 'i2cFuncs']);
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

// ---- the real i2c-bus package (an optional dependency with a native addon, installed by npm ci) ----

t.test('the real i2c-bus package loads', async (t) => {
  const module = await loadI2cBusPackage();
  t.type(module.openPromisified, 'function');
});

t.test('with the real package, a missing /dev/i2c-N is refused by the check before i2c-bus is loaded', async (t) => {
  let loads = 0;
  const loadModule = () => {
    loads++;
    return loadI2cBusPackage();
  };
  const dir = t.testdir({});
  await t.rejects(LinuxI2cBus.open({ bus: 1, devicePath: join(dir, 'i2c-1'), loadModule }), {
    code: 'HA_ERR_I2C_UNAVAILABLE',
    message: /i2c-1 does not exist: I2C is not enabled/,
  });
  await t.rejects(LinuxI2cBus.open({ bus: 7, loadModule }), { code: 'HA_ERR_I2C_UNAVAILABLE', message: /\/dev\/i2c-7 does not exist/ });
  t.equal(loads, 0, 'i2c-bus never saw the missing bus (its scan() would have answered [])');
});

t.test(
  'with the real package, a node that passes the check but cannot be opened by i2c-bus fails at open, not at the first read',
  { skip: existsSync('/dev/i2c-7') ? '/dev/i2c-7 exists on this machine' : false },
  async (t) => {
    // The check looks at devicePath; i2c-bus itself always opens /dev/i2c-7, which is missing.
    await t.rejects(LinuxI2cBus.open({ bus: 7, devicePath: CHAR_DEVICE }), {
      code: 'HA_ERR_I2C_UNAVAILABLE',
      message: 'I2C bus i2c-7: the bus failed during open (ENOENT)',
      cause: { code: 'ENOENT', syscall: 'open' },
    });
  },
);

const DIST_LINUX_BUS = fileURLToPath(new URL('../../../../dist/devices/i2c/linux-bus.js', import.meta.url));

function whyNoNamespace(): string | undefined {
  if (process.getuid?.() !== 0) return 'not running as root (unshare -m, mount and mknod need it)';
  try {
    execFileSync('unshare', ['-m', '--propagation', 'private', 'sh', '-c', 'mount -t tmpfs ha-probe /mnt'], { stdio: 'pipe' });
  } catch (error) {
    return `unshare -m with a mount is not permitted here (${String(error).split('\n')[0]})`;
  }
  if (!existsSync(DIST_LINUX_BUS)) return 'dist/ is not built (npm run build)';
  return undefined;
}

// In a private mount namespace, a tmpfs over /dev holds /dev/i2c-1 as a copy of the null device
// (major 1, minor 3): a character device anyone may open that answers every ioctl with ENOTTY.
const FAKE_DEV = [
  'set -e',
  'mount -t tmpfs ha-dev /dev',
  'mknod -m 666 /dev/null c 1 3',
  'mknod -m 666 /dev/i2c-1 c 1 3',
  'exec "$@"',
].join('\n');
const OPEN_BUS_1 = [
  'const { LinuxI2cBus } = await import(process.argv[1]);',
  'try { await LinuxI2cBus.open({ bus: 1 }); console.log(JSON.stringify({ opened: true })); }',
  'catch (e) { console.log(JSON.stringify({ code: e.code, message: e.message, cause: e.cause?.code })); }',
].join('\n');

const noNamespace = whyNoNamespace();
t.test(
  'with the real package, /dev/i2c-1 that is some other character device is HA_ERR_I2C_UNAVAILABLE at open (private mount namespace)',
  noNamespace !== undefined ? { skip: noNamespace } : existsSync('/dev/i2c-1') ? { skip: 'this machine has a real /dev/i2c-1' } : {},
  async (t) => {
    const run = spawnSync(
      'unshare',
      [
        '-m',
        '--propagation',
        'private',
        'sh',
        '-c',
        FAKE_DEV,
        'sh',
        process.execPath,
        '--input-type=module',
        '-e',
        OPEN_BUS_1,
        DIST_LINUX_BUS,
      ],
      { encoding: 'utf8' },
    );
    t.equal(run.status, 0, `the child ran (stderr: ${run.stderr.trim().slice(-500)})`);
    t.same(JSON.parse(run.stdout.trim()), {
      code: 'HA_ERR_I2C_UNAVAILABLE',
      message: 'I2C bus i2c-1: /dev/i2c-1 is not an I2C adapter (ENOTTY during open)',
      cause: 'ENOTTY',
    });
    t.notOk(existsSync('/dev/i2c-1'), 'nothing leaked out of the namespace');
  },
);

/** The bus number and chip address of an i2c-stub adapter the machine already has, if any. */
function findI2cStub(): { bus: number; address: number } | string {
  const adapters = '/sys/class/i2c-adapter';
  const names = existsSync(adapters) ? readdirSync(adapters) : [];
  const stub = names.find((n) => readFileSync(join(adapters, n, 'name'), 'utf8').trim() === 'SMBus stub driver');
  const param = '/sys/module/i2c_stub/parameters/chip_addr';
  if (stub === undefined || !existsSync(param)) {
    return 'no i2c-stub adapter (as root: modprobe i2c-dev; modprobe i2c-stub chip_addr=0x76; this test does not load kernel modules itself)';
  }
  const address = Number(readFileSync(param, 'utf8').split(',')[0]);
  const bus = Number(stub.replace('i2c-', ''));
  if (!existsSync(`/dev/i2c-${bus}`)) return `i2c-stub is ${stub} but /dev/i2c-${bus} is missing (modprobe i2c-dev)`;
  return { bus, address };
}

const stub = findI2cStub();
t.test(
  'with the real package against the kernel i2c-stub: a register written is read back',
  typeof stub === 'string' ? { skip: stub } : {},
  async (t) => {
    if (typeof stub === 'string') return;
    const bus = await LinuxI2cBus.open({ bus: stub.bus });
    try {
      // i2c-stub emulates a chip with 256 byte registers; 0xf4 is free on every emulated address.
      await bus.writeByte(stub.address, 0xf4, 0x25);
      t.equal(await bus.readByte(stub.address, 0xf4), 0x25);
      await bus.writeByte(stub.address, 0xf4, 0x00);
      t.equal(await bus.readByte(stub.address, 0xf4), 0x00);
    } finally {
      await bus.close();
    }
  },
);
if (noNamespace !== undefined) t.comment(`namespace test skipped: ${noNamespace}`);
if (typeof stub === 'string') t.comment(`i2c-stub test skipped: ${stub}`);

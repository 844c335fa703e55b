import t from 'tap';
import { EmulatorNack, type I2cDeviceEmulator, RegisterMapEmulator, SimulatedI2cBus } from '../../../../devices/i2c/simulated-bus.js';
import { ManualClock } from './manual-clock.js';

/** A register chip whose registers hold their own address, so reads show where the pointer was. */
class EchoRegisters extends RegisterMapEmulator {
  constructor() {
    super();
    for (let i = 0; i < 256; i++) this.registers[i] = i;
  }
  get(register: number): number {
    return this.registers[register] ?? 0;
  }
}

t.test('a missing device NACKs every kind of transfer, naming bus, address and operation', async (t) => {
  const bus = new SimulatedI2cBus({ bus: 3 });
  t.equal(bus.name, 'sim-3');
  const expected = { code: 'HA_ERR_I2C_NACK', details: { bus: 'sim-3', address: '0x40' } };
  await t.rejects(bus.readByte(0x40, 0), { ...expected, message: /0x40 on sim-3 did not answer readByte/ });
  await t.rejects(bus.writeByte(0x40, 0, 1), expected);
  await t.rejects(bus.i2cRead(0x40, 2), expected);
  await t.rejects(bus.i2cWrite(0x40, Uint8Array.of(1)), expected);
  await t.rejects(bus.readI2cBlock(0x40, 0, 4), expected);
  t.same(
    bus.transfers().map((r) => r.nack),
    [
      'no device at this address',
      'no device at this address',
      'no device at this address',
      'no device at this address',
      'no device at this address',
    ],
  );
});

t.test('register reads auto-increment; writes go to consecutive registers', async (t) => {
  const bus = new SimulatedI2cBus();
  const chip = new EchoRegisters();
  bus.attach(0x50, chip);
  t.same([...(await bus.readI2cBlock(0x50, 0x10, 4))], [0x10, 0x11, 0x12, 0x13]);
  t.equal(await bus.readByte(0x50, 0xfe), 0xfe);
  await bus.i2cWrite(0x50, Uint8Array.of(0x20, 0xaa, 0xbb));
  t.equal(chip.get(0x20), 0xaa);
  t.equal(chip.get(0x21), 0xbb);
  t.same([...(await bus.i2cRead(0x50, 2))], [0x22, 0x23], 'a plain read continues after the last written register');
});

t.test('injected NACKs hit the next matching transfers only', async (t) => {
  const bus = new SimulatedI2cBus();
  bus.attach(0x50, new EchoRegisters());
  bus.injectNack(0x50, { count: 2, kind: 'read' });
  await bus.i2cWrite(0x50, Uint8Array.of(0x01));
  await t.rejects(bus.i2cRead(0x50, 1), { code: 'HA_ERR_I2C_NACK', message: /injected NACK/ });
  await t.rejects(bus.i2cRead(0x50, 1), { code: 'HA_ERR_I2C_NACK' });
  t.same([...(await bus.i2cRead(0x50, 1))], [0x01], 'the third read is answered');
});

t.test('an offline device NACKs until it comes back; scan lists only answering devices', async (t) => {
  const bus = new SimulatedI2cBus();
  bus.attach(0x50, new EchoRegisters());
  bus.attach(0x23, new EchoRegisters());
  t.same(bus.scan(), [0x23, 0x50]);
  bus.setOffline(0x50, true);
  t.same(bus.scan(), [0x23]);
  await t.rejects(bus.readByte(0x50, 0), { code: 'HA_ERR_I2C_NACK', message: /device offline/ });
  bus.setOffline(0x50, false);
  t.equal(await bus.readByte(0x50, 7), 7);
  bus.detach(0x23);
  await t.rejects(bus.readByte(0x23, 0), { code: 'HA_ERR_I2C_NACK' });
});

t.test('corruption flips the chosen byte of the next reads and is logged as received', async (t) => {
  const bus = new SimulatedI2cBus();
  bus.attach(0x50, new EchoRegisters());
  bus.corruptReads(0x50, { byte: 1, mask: 0x80 });
  t.same([...(await bus.readI2cBlock(0x50, 0x10, 3))], [0x10, 0x91, 0x12]);
  t.same([...(await bus.readI2cBlock(0x50, 0x10, 3))], [0x10, 0x11, 0x12], 'only once');
  t.same(bus.transfers(0x50).at(-3)?.bytes, [0x10, 0x91, 0x12]);
});

t.test('an emulator refusing a transfer becomes an HA_ERR_I2C_NACK with the bus context', async (t) => {
  const bus = new SimulatedI2cBus();
  const busy: I2cDeviceEmulator = {
    write: () => {},
    read: () => {
      throw new EmulatorNack('measurement in progress');
    },
  };
  bus.attach(0x44, busy);
  await t.rejects(bus.i2cRead(0x44, 6), {
    code: 'HA_ERR_I2C_NACK',
    message: /measurement in progress/,
    details: { address: '0x44', op: 'i2cRead' },
  });
});

t.test('a short answer is padded with 0xFF, as an idle SDA line reads', async (t) => {
  const bus = new SimulatedI2cBus();
  bus.attach(0x10, { write: () => {}, read: () => Uint8Array.of(1) });
  t.same([...(await bus.i2cRead(0x10, 3))], [1, 0xff, 0xff]);
});

t.test('bad addresses, registers and lengths are refused before anything is sent', async (t) => {
  const bus = new SimulatedI2cBus();
  bus.attach(0x50, new EchoRegisters());
  await t.rejects(bus.readByte(0x78, 0), { code: 'HA_ERR_CONFIG_INVALID', message: /0x78 is outside the 7-bit range 0x03..0x77/ });
  await t.rejects(bus.readByte(0x02, 0), { code: 'HA_ERR_CONFIG_INVALID' });
  await t.rejects(bus.readByte(0x50, 256), { code: 'HA_ERR_INTERNAL' });
  await t.rejects(bus.readI2cBlock(0x50, 0, 33), { code: 'HA_ERR_INTERNAL', message: /1\.\.32/ });
  await t.rejects(bus.i2cWrite(0x50, Uint8Array.of()), { code: 'HA_ERR_INTERNAL' });
  t.throws(() => bus.attach(0x80, new EchoRegisters()), { code: 'HA_ERR_CONFIG_INVALID' });
  t.same(bus.transfers(), [], 'nothing reached the wire');
});

t.test('a closed bus is unavailable', async (t) => {
  const bus = new SimulatedI2cBus();
  bus.attach(0x50, new EchoRegisters());
  await bus.close();
  await t.rejects(bus.readByte(0x50, 0), { code: 'HA_ERR_I2C_UNAVAILABLE', message: /closed/ });
});

t.test('the transfer log is timestamped and bounded', async (t) => {
  const clock = new ManualClock();
  const bus = new SimulatedI2cBus({ clock, logLimit: 3 });
  bus.attach(0x50, new EchoRegisters());
  for (let i = 0; i < 5; i++) {
    await clock.advance(10);
    await bus.i2cWrite(0x50, Uint8Array.of(i));
  }
  t.same(
    bus.transfers().map((r) => [r.at, r.bytes[0]]),
    [
      [30, 2],
      [40, 3],
      [50, 4],
    ],
  );
  bus.clearTransfers();
  t.same(bus.transfers(), []);
});

/**
 * The simulated I2C back end: the default where no /dev/i2c-N exists, and what the tests drive.
 * Chip emulators plug in per address and see the same transfers the real chip would; the bus adds
 * what real wiring does wrong: missing devices (NACK), devices that drop off and come back, and
 * bytes corrupted on the wire (caught by the chips' CRCs, silently wrong on chips without one).
 */
import { HomeAgentError, isHomeAgentError } from '../../src/sdk/index.js';
import type { DeviceClock } from './device-clock.js';
import {
  assertAddress,
  assertByte,
  assertLength,
  type I2cBus,
  type I2cErrorContext,
  MAX_BLOCK_LENGTH,
  nackError,
  unavailableError,
} from './i2c-bus.js';

/** Longest plain read accepted; i2c-dev takes up to 8192 bytes, no sensor here needs more than 32. */
const MAX_READ_LENGTH = 8192;
/** The transfer log keeps the newest entries only: a simulated bus may run for the daemon's life. */
const DEFAULT_LOG_LIMIT = 1000;

/**
 * One chip on the simulated bus. `write` gets the bytes of a write transfer (register pointer or
 * command first), `read` produces the bytes of a read transfer. To refuse a transfer the way the
 * chip would (busy, no data yet), throw {@link EmulatorNack}.
 */
export interface I2cDeviceEmulator {
  write(data: Uint8Array): void;
  read(length: number): Uint8Array;
}

/** Thrown by an emulator that does not acknowledge; the bus turns it into HA_ERR_I2C_NACK. */
export class EmulatorNack extends HomeAgentError {
  constructor(why: string) {
    super('HA_ERR_I2C_NACK', why);
  }
}

export type TransferKind = 'write' | 'read';

export interface TransferRecord {
  /** Monotonic time of the transfer (0 when the bus has no clock). */
  at: number;
  address: number;
  kind: TransferKind;
  /** Bytes written, or bytes returned (after any injected corruption). Empty when NACKed. */
  bytes: number[];
  /** Set when the transfer was not acknowledged. */
  nack?: string;
}

export interface NackInjection {
  /** How many transfers to refuse (default 1). */
  count?: number;
  /** Which transfers count (default any). */
  kind?: TransferKind | 'any';
}

export interface CorruptionInjection {
  /** How many read transfers to corrupt (default 1). */
  count?: number;
  /** Index of the byte to damage (default 0); reads shorter than that pass unharmed. */
  byte?: number;
  /** XOR mask applied to that byte (default 0x01, a single flipped bit). */
  mask?: number;
}

export interface SimulatedI2cBusOptions {
  /** Bus number, used in the name (`sim-1`). */
  bus?: number;
  /** Timestamps the transfer log; without it every record has `at` 0. */
  clock?: Pick<DeviceClock, 'monotonic'>;
  logLimit?: number;
}

interface PendingNack {
  remaining: number;
  kind: TransferKind | 'any';
}

interface PendingCorruption {
  remaining: number;
  byte: number;
  mask: number;
}

export class SimulatedI2cBus implements I2cBus {
  readonly name: string;
  readonly #clock: Pick<DeviceClock, 'monotonic'> | undefined;
  readonly #logLimit: number;
  readonly #devices = new Map<number, I2cDeviceEmulator>();
  readonly #offline = new Set<number>();
  readonly #nacks = new Map<number, PendingNack[]>();
  readonly #corruptions = new Map<number, PendingCorruption[]>();
  readonly #log: TransferRecord[] = [];
  #closed = false;

  constructor(options: SimulatedI2cBusOptions = {}) {
    this.name = `sim-${options.bus ?? 1}`;
    this.#clock = options.clock;
    this.#logLimit = options.logLimit ?? DEFAULT_LOG_LIMIT;
  }

  /** Puts a chip at an address (replacing any other). */
  attach(address: number, device: I2cDeviceEmulator): void {
    assertAddress(address);
    this.#devices.set(address, device);
  }

  /** Unplugs the chip: every later transfer to the address is NACKed. */
  detach(address: number): void {
    this.#devices.delete(address);
  }

  /** A chip that stays wired but stops answering (power lost, loose wire) until set back online. */
  setOffline(address: number, offline: boolean): void {
    if (offline) this.#offline.add(address);
    else this.#offline.delete(address);
  }

  /** Refuses the next transfers to an address, as a glitch on the wire would. */
  injectNack(address: number, injection: NackInjection = {}): void {
    const list = this.#nacks.get(address) ?? [];
    list.push({ remaining: injection.count ?? 1, kind: injection.kind ?? 'any' });
    this.#nacks.set(address, list);
  }

  /** Damages a byte of the next reads from an address, as noise on SDA would. */
  corruptReads(address: number, injection: CorruptionInjection = {}): void {
    const list = this.#corruptions.get(address) ?? [];
    list.push({ remaining: injection.count ?? 1, byte: injection.byte ?? 0, mask: injection.mask ?? 0x01 });
    this.#corruptions.set(address, list);
  }

  /** Addresses that acknowledge, as i2cdetect would list them. */
  scan(): number[] {
    return [...this.#devices.keys()].filter((address) => !this.#offline.has(address)).sort((a, b) => a - b);
  }

  /** The newest transfers, oldest first. */
  transfers(address?: number): TransferRecord[] {
    return address === undefined ? [...this.#log] : this.#log.filter((record) => record.address === address);
  }

  clearTransfers(): void {
    this.#log.length = 0;
  }

  async i2cWrite(address: number, data: Uint8Array): Promise<void> {
    const context = this.#context(address, 'i2cWrite');
    assertLength(data.length, MAX_READ_LENGTH);
    for (const byte of data) assertByte(byte, 'data byte');
    this.#write(context, Uint8Array.from(data));
  }

  async i2cRead(address: number, length: number): Promise<Uint8Array> {
    const context = this.#context(address, 'i2cRead');
    assertLength(length, MAX_READ_LENGTH);
    return this.#read(context, length);
  }

  async readI2cBlock(address: number, register: number, length: number): Promise<Uint8Array> {
    const context = this.#context(address, 'readI2cBlock');
    assertByte(register, 'register');
    assertLength(length, MAX_BLOCK_LENGTH);
    this.#write(context, Uint8Array.of(register));
    return this.#read(context, length);
  }

  async readByte(address: number, register: number): Promise<number> {
    const context = this.#context(address, 'readByte');
    assertByte(register, 'register');
    this.#write(context, Uint8Array.of(register));
    return this.#read(context, 1)[0] ?? 0;
  }

  async writeByte(address: number, register: number, value: number): Promise<void> {
    const context = this.#context(address, 'writeByte');
    assertByte(register, 'register');
    assertByte(value, 'value');
    this.#write(context, Uint8Array.of(register, value));
  }

  async close(): Promise<void> {
    this.#closed = true;
  }

  #context(address: number, op: I2cErrorContext['op']): I2cErrorContext {
    if (this.#closed) throw unavailableError(this.name, 'the bus is closed');
    assertAddress(address);
    return { bus: this.name, address, op };
  }

  #write(context: I2cErrorContext, data: Uint8Array): void {
    const device = this.#answering(context, 'write');
    try {
      device.write(data);
    } catch (error) {
      throw this.#refused(context, 'write', error);
    }
    this.#record(context.address, 'write', [...data]);
  }

  #read(context: I2cErrorContext, length: number): Uint8Array {
    const device = this.#answering(context, 'read');
    let data: Uint8Array;
    try {
      data = device.read(length);
    } catch (error) {
      throw this.#refused(context, 'read', error);
    }
    // A chip that has fewer bytes to give leaves SDA high: the master reads 0xFF.
    const out = new Uint8Array(length).fill(0xff);
    out.set(data.subarray(0, length));
    this.#corrupt(context.address, out);
    this.#record(context.address, 'read', [...out]);
    return out;
  }

  #answering(context: I2cErrorContext, kind: TransferKind): I2cDeviceEmulator {
    const device = this.#devices.get(context.address);
    let why: string | undefined;
    if (device === undefined) why = 'no device at this address';
    else if (this.#offline.has(context.address)) why = 'device offline';
    else if (this.#takeNack(context.address, kind)) why = 'injected NACK';
    if (why !== undefined || device === undefined) {
      this.#record(context.address, kind, [], why ?? 'no device at this address');
      throw nackError(context, why);
    }
    return device;
  }

  #refused(context: I2cErrorContext, kind: TransferKind, error: unknown): unknown {
    if (!isHomeAgentError(error, 'HA_ERR_I2C_NACK')) return error;
    this.#record(context.address, kind, [], error.message);
    return nackError(context, error.message);
  }

  #takeNack(address: number, kind: TransferKind): boolean {
    const list = this.#nacks.get(address);
    const pending = list?.find((entry) => entry.kind === 'any' || entry.kind === kind);
    if (list === undefined || pending === undefined) return false;
    pending.remaining -= 1;
    if (pending.remaining <= 0) list.splice(list.indexOf(pending), 1);
    return true;
  }

  #corrupt(address: number, data: Uint8Array): void {
    const list = this.#corruptions.get(address);
    const pending = list?.[0];
    if (list === undefined || pending === undefined) return;
    pending.remaining -= 1;
    if (pending.remaining <= 0) list.shift();
    if (pending.byte < data.length) data[pending.byte] = (data[pending.byte] ?? 0) ^ (pending.mask & 0xff);
  }

  #record(address: number, kind: TransferKind, bytes: number[], nack?: string): void {
    const record: TransferRecord = { at: this.#clock?.monotonic() ?? 0, address, kind, bytes };
    if (nack !== undefined) record.nack = nack;
    this.#log.push(record);
    if (this.#log.length > this.#logLimit) this.#log.splice(0, this.#log.length - this.#logLimit);
  }
}

/**
 * A chip with a register file and an auto-incrementing register pointer (BME280 style): a write
 * sets the pointer and writes any further bytes to consecutive registers, a read returns
 * consecutive registers from the pointer. Subclasses hook register reads and writes.
 */
export class RegisterMapEmulator implements I2cDeviceEmulator {
  protected readonly registers = new Uint8Array(256);
  protected pointer = 0;
  /**
   * Bosch chips take multi-byte writes as (register, value) pairs and auto-increment only on
   * reads; most other register chips auto-increment on writes too.
   */
  protected pairedWrites = false;

  write(data: Uint8Array): void {
    if (data.length === 0) return;
    this.pointer = data[0] ?? 0;
    if (this.pairedWrites) {
      for (let i = 0; i + 1 < data.length; i += 2) this.writeRegister(data[i] ?? 0, data[i + 1] ?? 0);
      return;
    }
    for (const value of data.subarray(1)) {
      this.writeRegister(this.pointer, value);
      this.pointer = (this.pointer + 1) & 0xff;
    }
  }

  read(length: number): Uint8Array {
    this.beforeRead(this.pointer, length);
    const out = new Uint8Array(length);
    for (let i = 0; i < length; i++) {
      out[i] = this.readRegister(this.pointer);
      this.pointer = (this.pointer + 1) & 0xff;
    }
    return out;
  }

  /** Called once per read transfer, before any byte is produced (to latch finished conversions). */
  protected beforeRead(_register: number, _length: number): void {}

  protected readRegister(register: number): number {
    return this.registers[register] ?? 0;
  }

  protected writeRegister(register: number, value: number): void {
    this.registers[register] = value;
  }
}

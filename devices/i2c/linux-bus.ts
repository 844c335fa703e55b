/**
 * The real I2C back end: /dev/i2c-N through the i2c-bus package (an optional dependency with a
 * native addon). i2c-bus opens lazily and its scan() returns [] on a bus that does not exist, so
 * the device node is checked here before anything else: a missing bus is a clear
 * HA_ERR_I2C_UNAVAILABLE naming the path, never an empty sensor list. Opening then asks the
 * adapter what it supports (I2C_FUNCS, no bus traffic), so a node that exists but is no I2C
 * adapter fails at open too, not at the first sensor read.
 */
import { constants as fsConstants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { HomeAgentError } from '../../src/sdk/index.js';
import {
  assertAddress,
  assertByte,
  assertLength,
  deviceError,
  type I2cBus,
  type I2cErrorContext,
  type I2cOperation,
  MAX_BLOCK_LENGTH,
  nackError,
  unavailableError,
} from './i2c-bus.js';

/** The part of i2c-bus's promisified API used here (declared locally: the package may be absent). */
export interface PromisifiedI2cBusLike {
  i2cRead(address: number, length: number, buffer: Buffer): Promise<{ bytesRead: number; buffer: Buffer }>;
  i2cWrite(address: number, length: number, buffer: Buffer): Promise<{ bytesWritten: number; buffer: Buffer }>;
  readI2cBlock(address: number, command: number, length: number, buffer: Buffer): Promise<{ bytesRead: number; buffer: Buffer }>;
  readByte(address: number, command: number): Promise<number>;
  /** The adapter's functionality bits; an ioctl only, nothing goes over the wires. */
  i2cFuncs(): Promise<object>;
  writeByte(address: number, command: number, byte: number): Promise<void>;
  close(): Promise<void>;
}

export interface I2cBusModuleLike {
  openPromisified(busNumber: number, options?: { forceAccess?: boolean }): Promise<PromisifiedI2cBusLike>;
}

export interface LinuxI2cBusOptions {
  /** N of /dev/i2c-N; 1 is the header pins (GPIO 2/3) on every Pi since the B+. */
  bus: number;
  /**
   * Access addresses a kernel driver has claimed (I2C_SLAVE_FORCE). Off by default: two drivers
   * talking to one chip corrupt each other's transfers.
   */
  forceAccess?: boolean;
  /** The device node checked before opening. Tests only: i2c-bus itself always opens /dev/i2c-N. */
  devicePath?: string;
  /** Loads i2c-bus; tests inject a fake module. */
  loadModule?: () => Promise<I2cBusModuleLike>;
}

/** A string variable, so TypeScript does not need the package's types and it may be missing. */
const I2C_BUS_PACKAGE = 'i2c-bus';

/** The installed i2c-bus package (throws when it is missing or its addon does not load). */
export async function loadI2cBusPackage(): Promise<I2cBusModuleLike> {
  const specifier = I2C_BUS_PACKAGE;
  const loaded = (await import(specifier)) as { default?: I2cBusModuleLike } & Partial<I2cBusModuleLike>;
  // A CommonJS package: its exports arrive as `default`.
  const module = loaded.default ?? (loaded as I2cBusModuleLike);
  if (typeof module.openPromisified !== 'function') throw new TypeError('i2c-bus has no openPromisified()');
  return module;
}

/** Throws HA_ERR_I2C_UNAVAILABLE unless `path` is a character device this process may read and write. */
export async function checkI2cDevice(path: string, bus: string): Promise<void> {
  let info: Awaited<ReturnType<typeof stat>>;
  try {
    info = await stat(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') {
      throw unavailableError(
        bus,
        `${path} does not exist: I2C is not enabled (raspi-config → Interface Options → I2C, or dtparam=i2c_arm=on in config.txt, then reboot)`,
        { path },
        error,
      );
    }
    throw unavailableError(bus, `${path} cannot be inspected (${code ?? String(error)})`, { path }, error);
  }
  if (!info.isCharacterDevice()) throw unavailableError(bus, `${path} is not a character device`, { path });
  try {
    await access(path, fsConstants.R_OK | fsConstants.W_OK);
  } catch (error) {
    throw unavailableError(
      bus,
      `no permission to open ${path}: the service user must be in the i2c group (udev/99-homeagent.rules)`,
      { path },
      error,
    );
  }
}

const NACK_ERRNOS = new Set(['ENXIO', 'EREMOTEIO', 'ETIMEDOUT', 'EIO']);
// ENOTTY: the node takes no I2C ioctls, so it is some other character device.
const GONE_ERRNOS = new Set(['ENOENT', 'ENODEV', 'EACCES', 'EPERM', 'EBADF']);

/**
 * Turns an i2c-bus (errno) error into the catalogue. A NACK shows up as EREMOTEIO on the Pi's
 * i2c-bcm2835 adapter and as ENXIO on others; a stretched-too-long clock as ETIMEDOUT; a bare EIO
 * is what several adapters report for a failed transfer. All mean the device did not answer.
 */
export function mapI2cBusError(error: unknown, context: I2cErrorContext): HomeAgentError {
  if (error instanceof HomeAgentError) return error;
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code !== undefined && NACK_ERRNOS.has(code)) return nackError(context, code, error);
  if (code === 'ENOTTY') {
    return unavailableError(context.bus, `/dev/${context.bus} is not an I2C adapter (ENOTTY during ${context.op})`, { errno: code }, error);
  }
  if (code !== undefined && GONE_ERRNOS.has(code)) {
    return unavailableError(context.bus, `the bus failed during ${context.op} (${code})`, { address: context.address, errno: code }, error);
  }
  if (code === 'EBUSY') {
    return deviceError(context, 'the address is claimed by a kernel driver (EBUSY); unbind it or set force_access', { errno: code }, error);
  }
  const message = error instanceof Error ? error.message : String(error);
  return deviceError(context, `transfer failed: ${message}`, code === undefined ? {} : { errno: code }, error);
}

export class LinuxI2cBus implements I2cBus {
  readonly name: string;
  readonly #bus: PromisifiedI2cBusLike;
  #closed = false;

  private constructor(name: string, bus: PromisifiedI2cBusLike) {
    this.name = name;
    this.#bus = bus;
  }

  static async open(options: LinuxI2cBusOptions): Promise<LinuxI2cBus> {
    const number = options.bus;
    if (!Number.isInteger(number) || number < 0 || number > 255) {
      throw new HomeAgentError('HA_ERR_CONFIG_INVALID', `I2C bus number ${number} is not an integer in 0..255`);
    }
    const name = `i2c-${number}`;
    await checkI2cDevice(options.devicePath ?? `/dev/i2c-${number}`, name);
    let module: I2cBusModuleLike;
    try {
      module = await (options.loadModule ?? loadI2cBusPackage)();
    } catch (error) {
      throw unavailableError(
        name,
        `the i2c-bus package could not be loaded (an optional dependency with a native addon: install build tools and run npm install): ${error instanceof Error ? error.message : String(error)}`,
        {},
        error,
      );
    }
    let bus: PromisifiedI2cBusLike | undefined;
    try {
      bus = await module.openPromisified(number, { forceAccess: options.forceAccess ?? false });
      // i2c-bus opens the node lazily; this makes it open now and proves it is an adapter.
      await bus.i2cFuncs();
      return new LinuxI2cBus(name, bus);
    } catch (error) {
      await bus?.close().catch(() => {});
      const mapped = mapI2cBusError(error, { bus: name, address: 0, op: 'open' });
      throw mapped.code === 'HA_ERR_I2C_UNAVAILABLE' ? mapped : unavailableError(name, `opening failed: ${mapped.message}`, {}, error);
    }
  }

  async i2cWrite(address: number, data: Uint8Array): Promise<void> {
    const context = this.#context(address, 'i2cWrite');
    assertLength(data.length, 8192);
    const buffer = Buffer.from(data);
    const result = await this.#call(context, () => this.#bus.i2cWrite(address, buffer.length, buffer));
    if (result.bytesWritten !== buffer.length) throw deviceError(context, `short write: ${result.bytesWritten} of ${buffer.length} bytes`);
  }

  async i2cRead(address: number, length: number): Promise<Uint8Array> {
    const context = this.#context(address, 'i2cRead');
    assertLength(length, 8192);
    const result = await this.#call(context, () => this.#bus.i2cRead(address, length, Buffer.alloc(length)));
    if (result.bytesRead !== length) throw deviceError(context, `short read: ${result.bytesRead} of ${length} bytes`);
    return Uint8Array.from(result.buffer.subarray(0, length));
  }

  async readI2cBlock(address: number, register: number, length: number): Promise<Uint8Array> {
    const context = this.#context(address, 'readI2cBlock');
    assertByte(register, 'register');
    assertLength(length, MAX_BLOCK_LENGTH);
    const result = await this.#call(context, () => this.#bus.readI2cBlock(address, register, length, Buffer.alloc(length)));
    if (result.bytesRead !== length) throw deviceError(context, `short read: ${result.bytesRead} of ${length} bytes`);
    return Uint8Array.from(result.buffer.subarray(0, length));
  }

  async readByte(address: number, register: number): Promise<number> {
    const context = this.#context(address, 'readByte');
    assertByte(register, 'register');
    return this.#call(context, () => this.#bus.readByte(address, register));
  }

  async writeByte(address: number, register: number, value: number): Promise<void> {
    const context = this.#context(address, 'writeByte');
    assertByte(register, 'register');
    assertByte(value, 'value');
    await this.#call(context, () => this.#bus.writeByte(address, register, value));
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    try {
      await this.#bus.close();
    } catch (error) {
      throw mapI2cBusError(error, { bus: this.name, address: 0, op: 'close' });
    }
  }

  #context(address: number, op: I2cOperation): I2cErrorContext {
    if (this.#closed) throw unavailableError(this.name, 'the bus is closed');
    assertAddress(address);
    return { bus: this.name, address, op };
  }

  async #call<T>(context: I2cErrorContext, operation: () => Promise<T>): Promise<T> {
    try {
      return await operation();
    } catch (error) {
      throw mapI2cBusError(error, context);
    }
  }
}

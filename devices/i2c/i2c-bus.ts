/**
 * The I2C bus contract every sensor driver talks to, modelled on the promisified API of the
 * i2c-bus package (SMBus block reads, byte writes and plain I2C transfers). The Linux back end
 * (linux-bus.ts) and the simulated one (simulated-bus.ts) both implement it, so a driver never
 * knows which one it runs on.
 */
import { HomeAgentError } from '../../src/sdk/index.js';

/** The kernel's SMBus block transfers carry at most 32 bytes (I2C_SMBUS_BLOCK_MAX). */
export const MAX_BLOCK_LENGTH = 32;
/** i2cdetect's range: 0x00–0x02 and 0x78–0x7F are reserved addresses on every I2C bus. */
export const MIN_ADDRESS = 0x03;
export const MAX_ADDRESS = 0x77;

export type I2cOperation = 'i2cWrite' | 'i2cRead' | 'readI2cBlock' | 'readByte' | 'writeByte';

/**
 * One I2C bus. Every method rejects with a {@link HomeAgentError}: HA_ERR_I2C_NACK when the device
 * does not answer, HA_ERR_I2C_UNAVAILABLE when the bus itself is gone, HA_ERR_I2C_DEVICE for
 * anything else the device or adapter reports.
 */
export interface I2cBus {
  /** `i2c-1` for /dev/i2c-1, `sim-1` for a simulated bus; used in errors and logs. */
  readonly name: string;
  /** A plain write transfer: START, address+W, the bytes, STOP. Command-style chips (AHT20, SHT3x, BH1750) take their commands this way. */
  i2cWrite(address: number, data: Uint8Array): Promise<void>;
  /** A plain read transfer of `length` bytes: START, address+R, bytes, STOP. */
  i2cRead(address: number, length: number): Promise<Uint8Array>;
  /** Register read: the register pointer is written, then `length` bytes are read after a repeated start (SMBus I2C block read, at most 32 bytes). */
  readI2cBlock(address: number, register: number, length: number): Promise<Uint8Array>;
  /** Reads one register (SMBus read byte data). */
  readByte(address: number, register: number): Promise<number>;
  /** Writes one register (SMBus write byte data). */
  writeByte(address: number, register: number, value: number): Promise<void>;
  /** Releases the bus; later calls fail with HA_ERR_I2C_UNAVAILABLE. */
  close(): Promise<void>;
}

/** `0x76`, the way addresses appear in datasheets, i2cdetect and the configuration. */
export function formatAddress(address: number): string {
  return `0x${address.toString(16).padStart(2, '0')}`;
}

/** Addresses come from the configuration; a bad one is a configuration mistake, not a bus failure. */
export function assertAddress(address: number): void {
  if (!Number.isInteger(address) || address < MIN_ADDRESS || address > MAX_ADDRESS) {
    throw new HomeAgentError(
      'HA_ERR_CONFIG_INVALID',
      `I2C address ${Number.isInteger(address) && address >= 0 ? formatAddress(address) : String(address)} is outside the 7-bit range ${formatAddress(MIN_ADDRESS)}..${formatAddress(MAX_ADDRESS)}`,
    );
  }
}

/** Register numbers, data bytes and lengths are fixed by the drivers; a bad one is a bug in the driver. */
export function assertByte(value: number, what: string): void {
  if (!Number.isInteger(value) || value < 0 || value > 0xff) throw new HomeAgentError('HA_ERR_INTERNAL', `${what} ${value} is not a byte`);
}

export function assertLength(length: number, max: number): void {
  if (!Number.isInteger(length) || length < 1 || length > max) {
    throw new HomeAgentError('HA_ERR_INTERNAL', `I2C transfer length ${length} is outside 1..${max}`);
  }
}

/** Where a failure happened, attached to every I2C error so a log line names the device. */
export interface I2cErrorContext {
  bus: string;
  address: number;
  op: I2cOperation | string;
}

function contextDetails(context: I2cErrorContext, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { bus: context.bus, address: formatAddress(context.address), op: context.op, ...extra };
}

/** The device did not acknowledge its address or a byte. */
export function nackError(context: I2cErrorContext, why = 'no acknowledge', cause?: unknown): HomeAgentError {
  return new HomeAgentError(
    'HA_ERR_I2C_NACK',
    `I2C device ${formatAddress(context.address)} on ${context.bus} did not answer ${context.op} (${why})`,
    {
      details: contextDetails(context),
      ...(cause !== undefined && { cause }),
    },
  );
}

/** A checksum the device sent does not match the data it sent with it. */
export function crcError(context: I2cErrorContext, what: string, expected: number, actual: number): HomeAgentError {
  return new HomeAgentError(
    'HA_ERR_I2C_CRC',
    `I2C device ${formatAddress(context.address)} on ${context.bus}: bad CRC on ${what} (computed ${formatAddress(expected)}, received ${formatAddress(actual)})`,
    { details: contextDetails(context, { what, expected, actual }) },
  );
}

/** The device answered, but it is not the chip expected or it reported a failure. */
export function deviceError(context: I2cErrorContext, why: string, extra: Record<string, unknown> = {}, cause?: unknown): HomeAgentError {
  return new HomeAgentError('HA_ERR_I2C_DEVICE', `I2C device ${formatAddress(context.address)} on ${context.bus}: ${why}`, {
    details: contextDetails(context, extra),
    ...(cause !== undefined && { cause }),
  });
}

export function unavailableError(bus: string, why: string, extra: Record<string, unknown> = {}, cause?: unknown): HomeAgentError {
  return new HomeAgentError('HA_ERR_I2C_UNAVAILABLE', `I2C bus ${bus}: ${why}`, {
    details: { bus, ...extra },
    ...(cause !== undefined && { cause }),
  });
}

/**
 * Which addresses answer on a bus, for `i2c.scan`: the first question when a sensor stays
 * unavailable ("is it wired, and at which address?"). A simulated bus knows its chips; a real one
 * is probed like `i2cdetect -r`, one single-byte read per address, because the bus contract has no
 * SMBus quick write and a written byte is a command to some chips (0x00 powers a BH1750 down).
 * A read has its own blind spot: an idle SHT3x refuses reads until it is given a command, so it
 * shows up only while it is being polled.
 */
import type { I2cBusScan } from '../../src/sdk/api.js';
import { isHomeAgentError } from '../../src/sdk/index.js';
import { formatAddress, type I2cBus, MAX_ADDRESS, MIN_ADDRESS } from './i2c-bus.js';
import { SimulatedI2cBus } from './simulated-bus.js';

/** Rejects with HA_ERR_I2C_UNAVAILABLE when the bus itself fails, never with an empty answer. */
export async function scanBus(bus: I2cBus): Promise<I2cBusScan> {
  if (bus instanceof SimulatedI2cBus) return { addresses: bus.scan().map(formatAddress), busy: [] };
  const found: I2cBusScan = { addresses: [], busy: [] };
  for (let address = MIN_ADDRESS; address <= MAX_ADDRESS; address++) {
    try {
      await bus.i2cRead(address, 1);
      found.addresses.push(formatAddress(address));
    } catch (error) {
      if (isHomeAgentError(error, 'HA_ERR_I2C_NACK')) continue;
      if (isHomeAgentError(error, 'HA_ERR_I2C_UNAVAILABLE')) throw error;
      found.busy.push({ address: formatAddress(address), error: error instanceof Error ? error.message : String(error) });
    }
  }
  return found;
}

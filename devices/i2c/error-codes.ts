/**
 * The error codes the I2C sensor drivers throws: part of the one catalogue (src/shared/errors.ts composes
 * every such file through the generated src/shared/plugin-error-codes.ts), declared here so that the
 * folder holds everything about it. Plain data, importing nothing; codes are never reused.
 */
export const errorCodes = {
  HA_ERR_I2C_UNAVAILABLE: 'the I2C bus does not exist on this machine',
  HA_ERR_I2C_NACK: 'the I2C device did not answer (no acknowledge)',
  HA_ERR_I2C_CRC: 'the I2C device answered with a bad checksum',
  HA_ERR_I2C_DEVICE: 'the I2C device is not the sensor expected or reported an error',
} as const;

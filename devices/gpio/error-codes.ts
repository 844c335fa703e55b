/**
 * The error codes the GPIO driver throws: part of the one catalogue (src/shared/errors.ts composes
 * every such file through the generated src/shared/plugin-error-codes.ts), declared here so that the
 * folder holds everything about it. Plain data, importing nothing; codes are never reused.
 */
export const errorCodes = {
  HA_ERR_GPIO_CONFIG: 'a GPIO pin configuration is invalid',
  HA_ERR_GPIO_UNAVAILABLE: 'the GPIO back end or chip is not available on this machine',
  HA_ERR_GPIO_IO: 'reading or writing a GPIO pin failed',
  HA_ERR_GPIO_DIRECTION: 'the GPIO pin is not configured for that (an input cannot be written)',
} as const;

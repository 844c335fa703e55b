/**
 * The error codes the microphone driver throws: part of the one catalogue (src/shared/errors.ts composes
 * every such file through the generated src/shared/plugin-error-codes.ts), declared here so that the
 * folder holds everything about it. Plain data, importing nothing; codes are never reused.
 */
export const errorCodes = {
  HA_ERR_MICROPHONE_UNAVAILABLE:
    'the microphone cannot record: arecord is missing, or the ALSA capture device is missing, busy or refused the format',
} as const;

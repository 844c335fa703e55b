/**
 * The error codes the speaker driver throws: part of the one catalogue (src/shared/errors.ts composes
 * every such file through the generated src/shared/plugin-error-codes.ts), declared here so that the
 * folder holds everything about it. Plain data, importing nothing; codes are never reused.
 */
export const errorCodes = {
  HA_ERR_SPEAKER_UNAVAILABLE: 'the speaker cannot play: aplay is missing, or the ALSA device is missing, busy or refused the audio',
} as const;

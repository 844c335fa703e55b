/**
 * The error codes of the ai_image plugin: part of the one catalogue (src/shared/errors.ts composes
 * every such file through the generated src/shared/plugin-error-codes.ts). Each names one way an
 * images endpoint can fail, so the model (and the log) can tell a wrong key from a slow server.
 * Plain data, importing nothing; codes are never reused.
 */
export const errorCodes = {
  HA_ERR_AI_IMAGE_NOT_CONFIGURED: 'image generation has no images endpoint configured (plugin.ai_image.base_url)',
  HA_ERR_AI_IMAGE_UNREACHABLE: 'the images endpoint could not be reached',
  HA_ERR_AI_IMAGE_HTTP: 'the images endpoint answered with an HTTP error',
  HA_ERR_AI_IMAGE_TIMEOUT: 'the images endpoint did not answer within plugin.ai_image.timeout_ms',
  HA_ERR_AI_IMAGE_TOO_LARGE: 'the images endpoint sent more than plugin.ai_image.max_bytes',
  HA_ERR_AI_IMAGE_BAD_RESPONSE: 'the images endpoint answered with something that is not an images API answer',
  HA_ERR_AI_IMAGE_NOT_IMAGE: 'the images endpoint sent bytes that are not a png, jpeg, gif or webp picture',
  HA_ERR_AI_IMAGE_URL_REFUSED: 'the picture address the images endpoint gave is not one HomeAgent fetches',
} as const;

/**
 * The error codes the camera driver throws: part of the one catalogue (src/shared/errors.ts composes
 * every such file through the generated src/shared/plugin-error-codes.ts), declared here so that the
 * folder holds everything about it. Plain data, importing nothing; codes are never reused.
 */
export const errorCodes = {
  HA_ERR_CAMERA_OPTION: 'a camera capture option is invalid (device, resolution, JPEG quality or frames to skip)',
  HA_ERR_CAMERA_UNAVAILABLE: 'the camera or the fswebcam program is not available on this machine',
  HA_ERR_CAMERA_TIMEOUT: 'the camera did not deliver a picture within the time limit (fswebcam was stopped)',
  HA_ERR_CAMERA_IMAGE: 'the camera produced data that is not a complete JPEG image',
} as const;

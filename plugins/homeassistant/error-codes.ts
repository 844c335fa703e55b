/**
 * The error codes the Home Assistant plugin throws: part of the one catalogue (src/shared/errors.ts composes
 * every such file through the generated src/shared/plugin-error-codes.ts), declared here so that the
 * folder holds everything about it. Plain data, importing nothing; codes are never reused.
 */
export const errorCodes = {
  HA_ERR_HOMEASSISTANT_CONFIG: 'the Home Assistant settings are incomplete (no ws:// or wss:// url, no token)',
  HA_ERR_HOMEASSISTANT_AUTH:
    'Home Assistant refused the access token (auth_invalid): HomeAgent stops reconnecting until plugin.homeassistant.token changes',
  HA_ERR_HOMEASSISTANT_CONNECTION: 'Home Assistant is not connected, or its connection closed while a command was pending',
  HA_ERR_HOMEASSISTANT_TIMEOUT: 'Home Assistant did not answer a command within plugin.homeassistant.command_timeout_ms',
  HA_ERR_HOMEASSISTANT_COMMAND: 'Home Assistant answered a command with an error (its code and message say why)',
} as const;

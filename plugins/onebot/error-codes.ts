/**
 * The error codes the OneBot (QQ) plugin throws: part of the one catalogue (src/shared/errors.ts composes
 * every such file through the generated src/shared/plugin-error-codes.ts), declared here so that the
 * folder holds everything about it. Plain data, importing nothing; codes are never reused.
 */
export const errorCodes = {
  HA_ERR_ONEBOT_CONFIG: 'the OneBot (QQ) settings are incomplete or unsafe (no url in forward mode, no access_token off loopback)',
  HA_ERR_ONEBOT_CONNECTION: 'no OneBot implementation is connected, or its connection closed while an action was pending',
  HA_ERR_ONEBOT_TIMEOUT: 'the OneBot implementation did not answer an action within plugin.onebot.action_timeout_ms',
  HA_ERR_ONEBOT_ACTION: 'the OneBot implementation answered an action with status failed (its retcode and wording say why)',
} as const;

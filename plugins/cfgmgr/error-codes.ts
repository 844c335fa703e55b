/**
 * The error codes the cfgmgr plugin's tools answer with: part of the one catalogue (src/shared/errors.ts
 * composes every such file through the generated src/shared/plugin-error-codes.ts). The settings
 * registry's own codes (HA_ERR_SETTINGS_UNKNOWN_KEY, HA_ERR_SETTINGS_INVALID_VALUE, ...) pass
 * through unchanged. Plain data, importing nothing; codes are never reused.
 */
export const errorCodes = {
  HA_ERR_CFGMGR_PROTECTED:
    "the setting guards the house (a secret, security, a network address, a file or a restart): changing it needs the owner's approval",
  HA_ERR_CFGMGR_MASKED_VALUE: 'the value holds the mask a secret is shown as, which would replace the secret with asterisks',
} as const;

/**
 * The error codes the MCP client plugin throws: part of the one catalogue (src/shared/errors.ts composes
 * every such file through the generated src/shared/plugin-error-codes.ts), declared here so that the
 * folder holds everything about it. Plain data, importing nothing; codes are never reused.
 */
export const errorCodes = {
  HA_ERR_MCP: 'an MCP server failed or is unreachable',
} as const;

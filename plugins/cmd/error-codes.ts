/**
 * The error codes the cmd plugin and its isolated runner throws: part of the one catalogue (src/shared/errors.ts composes
 * every such file through the generated src/shared/plugin-error-codes.ts), declared here so that the
 * folder holds everything about it. Plain data, importing nothing; codes are never reused.
 */
export const errorCodes = {
  HA_ERR_CMD_DENIED: 'the command is not allowed by the cmd policy',
  HA_ERR_CMD_FAILED: 'the command could not be run (not installed, no such working directory, or it could not be started)',
  HA_ERR_CMD_RUNNER_UNAVAILABLE: 'the isolated cmd runner (homeagent-cmd.socket) is missing or does not answer',
  HA_ERR_CMD_RUNNER_PROTOCOL: 'the isolated cmd runner and the daemon did not understand each other',
} as const;

/**
 * The error codes the subagents plugin's tools and control methods answer with: part of the one
 * catalogue (src/shared/errors.ts composes every such file through the generated
 * src/shared/plugin-error-codes.ts), declared here so that the folder holds everything about it.
 * Plain data, importing nothing; codes are never reused.
 */
export const errorCodes = {
  HA_ERR_SUBAGENT_LIMIT: 'as many sub-agents run as plugin.subagents.max_concurrent allows',
  HA_ERR_SUBAGENT_NOT_FOUND: 'no sub-agent has that task id (or it finished so long ago that it is forgotten)',
  HA_ERR_SUBAGENT_UNAVAILABLE: 'this daemon cannot run sub-agents (no bounded agent turns in the plugin context)',
} as const;

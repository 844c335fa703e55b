/**
 * The error codes the seq plugin's tools answer with: part of the one catalogue (src/shared/errors.ts
 * composes every such file through the generated src/shared/plugin-error-codes.ts), declared here so
 * that the folder holds everything about it. Plain data, importing nothing; codes are never reused.
 */
export const errorCodes = {
  HA_ERR_SEQ_INVALID: 'the sequence definition is invalid (its name, groups, calls, arguments, results or conditions)',
  HA_ERR_SEQ_FORBIDDEN_TOOL:
    'a sequence may not call this tool (it sends messages, spawns agents, changes plugins or runs whole sequences)',
  HA_ERR_SEQ_CYCLE: 'the sequence would call itself, directly or through other sequences',
  HA_ERR_SEQ_NOT_FOUND: 'no sequence (or group of it) has that name',
  HA_ERR_SEQ_ARGS: "the arguments do not match the sequence's declared arguments",
  HA_ERR_SEQ_DEPTH: 'sequences calling sequences went deeper than plugin.seq.max_call_depth',
  HA_ERR_SEQ_STEP_FAILED: 'a call of the sequence failed, so the groups after it did not run',
  HA_ERR_SEQ_LIMIT: 'a limit of the seq plugin was reached (sequences kept, groups, calls)',
  HA_ERR_SEQ_CHANGED: 'the sequence was changed after the owner was asked to approve it, so it did not run',
} as const;

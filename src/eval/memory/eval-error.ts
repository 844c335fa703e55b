import { type ErrorCode, HomeAgentError } from '../../shared/errors.js';

/**
 * The catalogue has no code for evaluation data yet; every evaluation error goes through here so
 * that a dedicated code (e.g. HA_ERR_EVAL_DATA) replaces this one in one place.
 */
export const EVAL_ERROR_CODE: ErrorCode = 'HA_ERR_EVAL_DATA';

/** An error about evaluation data or options; the message names the file and field at fault. */
export function evalError(message: string, details?: Record<string, unknown>): HomeAgentError {
  return new HomeAgentError(EVAL_ERROR_CODE, message, details === undefined ? {} : { details });
}

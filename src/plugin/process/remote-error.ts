/**
 * Turns an error answer from a plugin process into what the daemon throws: a ToolError the model
 * reads (same reason, field, detail and hint as the plugin threw), or a HomeAgentError with the
 * plugin's catalogue code, else `fallback`. The child is untrusted, so a malformed tool error
 * becomes a plain `failed` one and an unknown code becomes `fallback`.
 */
import { Value } from '@sinclair/typebox/value';
import { ERROR_CODES, type ErrorCode, HomeAgentError } from '../../shared/errors.js';
import { ToolError, type ToolErrorInfo } from '../../shared/tool.js';
import { ToolErrorInfoSchema } from './protocol.js';
import { RemoteError } from './rpc-peer.js';

export function errorFromChild(error: unknown, fallback: ErrorCode): Error {
  if (!(error instanceof RemoteError)) {
    // Raised on this side (timeout, dead plugin, cancelled): already the daemon's own error.
    return error instanceof Error ? error : new HomeAgentError(fallback, String(error));
  }
  const info = error.data?.tool_error;
  if (info !== undefined) {
    return new ToolError(Value.Check(ToolErrorInfoSchema, info) ? (info as ToolErrorInfo) : { reason: 'failed', detail: error.message });
  }
  const code = error.data?.ha_code;
  return new HomeAgentError(isErrorCode(code) ? code : fallback, error.message);
}

function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === 'string' && Object.hasOwn(ERROR_CODES, code);
}

import { isHomeAgentError } from '../../src/sdk/index.js';

/** One line for events and logs; `describeError` lives in the kernel and is not part of the SDK. */
export function describeErrorOf(error: unknown): string {
  if (isHomeAgentError(error)) return `${error.code}: ${error.message}`;
  if (error instanceof Error) return error.message;
  return String(error);
}

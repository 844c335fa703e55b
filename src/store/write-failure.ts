/**
 * What a failed write means, for every database and data file HomeAgent keeps: a full disk
 * (SQLITE_FULL, ENOSPC, EDQUOT) becomes HA_ERR_STORE_FULL and a file system that refuses writes
 * (read-only, I/O errors) HA_ERR_STORE_WRITE, each naming what could not be written. Callers up
 * the stack (the agent's turn, `config set`, `kb add`, the health check) then see one stable code
 * instead of a driver's error text, and can tell the person that nothing was stored.
 */
import { HomeAgentError, isHomeAgentError } from '../shared/errors.js';

const FULL_ERRNO = new Set(['ENOSPC', 'EDQUOT']);
const WRITE_ERRNO = new Set(['EROFS', 'EIO']);

/** True for an error that says the disk (or the user's quota on it) is full. */
export function isDiskFull(error: unknown): boolean {
  if (isHomeAgentError(error, 'HA_ERR_STORE_FULL')) return true;
  const code = codeOf(error);
  return code === 'SQLITE_FULL' || (code !== undefined && FULL_ERRNO.has(code));
}

function isWriteRefused(error: unknown): boolean {
  const code = codeOf(error);
  if (code === undefined) return false;
  return code.startsWith('SQLITE_READONLY') || code.startsWith('SQLITE_IOERR') || WRITE_ERRNO.has(code);
}

/**
 * The coded error for a failed write of `what` (e.g. `the memory database /var/lib/homeagent/memory.db`),
 * or undefined when `error` is something else (a constraint, a bug), which callers rethrow as it is.
 */
export function writeFailure(error: unknown, what: string): HomeAgentError | undefined {
  if (isHomeAgentError(error)) return undefined;
  const cause = error instanceof Error ? error.message : String(error);
  const code = codeOf(error);
  if (isDiskFull(error)) {
    return new HomeAgentError(
      'HA_ERR_STORE_FULL',
      `the disk is full: ${what} could not be written, nothing of this change was kept (${code}: ${cause})`,
      {
        cause: error,
        details: { what, cause_code: code },
      },
    );
  }
  if (isWriteRefused(error)) {
    const why = code?.startsWith('SQLITE_READONLY') || code === 'EROFS' ? 'it is read-only' : 'the disk reported an error';
    return new HomeAgentError('HA_ERR_STORE_WRITE', `${what} could not be written, ${why} (${code}: ${cause})`, {
      cause: error,
      details: { what, cause_code: code },
    });
  }
  return undefined;
}

/** Runs `fn`; a disk-full or refused write comes out as {@link writeFailure}, anything else unchanged. */
export function mapWriteFailure<T>(what: string, fn: () => T): T {
  try {
    return fn();
  } catch (error) {
    throw writeFailure(error, what) ?? error;
  }
}

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

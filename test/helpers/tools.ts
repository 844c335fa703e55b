/**
 * External programs some tests need (python3 for the notification listener, later mosquitto,
 * sqlite3, ...). Locally a missing tool skips the test with a message saying what to install; on
 * CI (env CI set) it fails instead, because CI must never pass by skipping.
 */
import { findOnPath } from '../../src/shared/find-on-path.js';

/** The parts of a tap test these helpers use. */
export interface ToolTest {
  plan(n: number, comment?: string): void;
  fail(message: string): boolean;
}

/** Absolute path of an executable on $PATH, or undefined. */
export const findTool = (name: string, path = process.env.PATH ?? ''): string | undefined => findOnPath(name, path);

/** The skip message for a missing tool, or undefined when it is there. */
export function missingTool(name: string, install = name): string | undefined {
  return findTool(name) === undefined ? `${name} not found: install ${install}` : undefined;
}

/**
 * True when `name` is on $PATH. Otherwise the current test is skipped (locally) or failed (when
 * $CI is set) and false is returned; the caller returns at once:
 *
 *   if (!requireTool(t, 'python3')) return;
 */
export function requireTool(t: ToolTest, name: string, install = name): boolean {
  const missing = missingTool(name, install);
  if (missing === undefined) return true;
  if (process.env.CI) t.fail(`${missing} (CI never skips a test for a missing tool)`);
  else t.plan(0, missing);
  return false;
}

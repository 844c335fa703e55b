/**
 * Reads a Lua plugin's entry script (main.lua). Only a regular file inside the plugin's own
 * folder is read: a name or symlink that leads out of it is refused, and so is anything larger
 * than {@link MAX_LUA_ENTRY_BYTES}. The file is opened by its resolved path without following a
 * final symlink, so swapping the file for a link after the check does not help either.
 */
import { constants } from 'node:fs';
import { open, realpath } from 'node:fs/promises';
import { resolve, sep } from 'node:path';
import { describeError, HomeAgentError } from '../../shared/errors.js';

/** Largest main.lua accepted (the same bound as adapter scripts). */
export const MAX_LUA_ENTRY_BYTES = 1024 * 1024;

/** The entry's text (a leading byte-order mark removed); throws HA_ERR_PLUGIN_LOAD saying why not. */
export async function readLuaEntry(dir: string, entry: string, maxBytes: number = MAX_LUA_ENTRY_BYTES): Promise<string> {
  const refuse = (why: string, cause?: unknown): never => {
    throw new HomeAgentError('HA_ERR_PLUGIN_LOAD', `${entry} in ${dir}: ${why}`, cause === undefined ? {} : { cause });
  };
  let base: string;
  try {
    base = await realpath(dir);
  } catch (error) {
    return refuse(`the plugin folder cannot be read (${describeError(error)})`, error);
  }
  const named = resolve(base, entry);
  if (!named.startsWith(base + sep)) return refuse('the entry is outside the plugin folder');
  let real: string;
  try {
    real = await realpath(named);
  } catch (error) {
    const missing = (error as NodeJS.ErrnoException).code === 'ENOENT';
    return refuse(missing ? 'the file does not exist' : `the file cannot be read (${describeError(error)})`, error);
  }
  if (!real.startsWith(base + sep)) return refuse('the entry is a link that leads outside the plugin folder');
  let file: Awaited<ReturnType<typeof open>>;
  try {
    file = await open(real, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (error) {
    return refuse(`the file cannot be opened (${describeError(error)})`, error);
  }
  try {
    const stat = await file.stat();
    if (!stat.isFile()) return refuse('the entry is not a regular file');
    if (stat.size > maxBytes) return refuse(`the file is larger than ${maxBytes} bytes`);
    const buffer = Buffer.alloc(maxBytes + 1);
    const { bytesRead } = await file.read(buffer, 0, maxBytes + 1, 0);
    if (bytesRead > maxBytes) return refuse(`the file is larger than ${maxBytes} bytes`);
    const text = buffer.subarray(0, bytesRead).toString('utf8');
    return text.startsWith('\uFEFF') ? text.slice(1) : text;
  } finally {
    await file.close();
  }
}

/**
 * The files plugin: list, stat, read and write files inside the plugin's data directory and the
 * roots the owner configured (plugin.files.roots). Paths are checked by file-roots.ts; reads and
 * appends open with O_NOFOLLOW, and a write goes to a fresh temporary file (O_EXCL) in the target's
 * directory that is then renamed over the target, so a symlink there is replaced, never followed.
 */
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  fchmodSync,
  fstatSync,
  fsyncSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readSync,
  realpathSync,
  renameSync,
  type Stats,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { definePlugin, type PluginContext, type PluginInstance, type ToolContext, ToolError } from '../../src/sdk/index.js';
import { checkOpened, containingRoot, type FileRoot, MAX_PATH_LENGTH, rejected, resolvePath, resolveRoots } from './file-roots.js';
import type { FilesSettings } from './settings-schema.js';

/** Entries files_list returns at most. */
const MAX_LIST_ENTRIES = 1000;
const READ_CHUNK_BYTES = 65536;

const PATH_PARAMETER = {
  type: 'string',
  maxLength: MAX_PATH_LENGTH,
  description: 'Absolute, or relative to the plugin data directory.',
};

export class FilesPlugin implements PluginInstance {
  readonly #ctx: PluginContext<FilesSettings>;
  readonly #unregister: Array<() => void> = [];
  /** Skipped roots already logged, so a missing root is reported once, not on every call. */
  readonly #warned = new Set<string>();

  constructor(ctx: PluginContext<FilesSettings>) {
    this.#ctx = ctx;
  }

  async start(): Promise<void> {
    mkdirSync(this.#ctx.paths.data, { recursive: true });
    const tools = this.#ctx.tools;
    this.#unregister.push(
      tools.register<{ path?: string }>({
        name: 'files_list',
        tier: 'read',
        parallel_safe: true,
        description: `Lists a directory (name, type, size; at most ${MAX_LIST_ENTRIES} entries). Without a path, lists the roots the files tools may use.`,
        parameters: { type: 'object', properties: { path: PATH_PARAMETER }, additionalProperties: false },
        execute: ({ path }) => this.#list(path),
      }),
      tools.register<{ path: string }>({
        name: 'files_stat',
        tier: 'read',
        parallel_safe: true,
        description: 'Type, size, permissions and modification time of a file or directory, and whether its root is writable.',
        parameters: { type: 'object', properties: { path: PATH_PARAMETER }, required: ['path'], additionalProperties: false },
        execute: ({ path }) => this.#stat(path),
      }),
      tools.register<{ path: string; offset?: number; max_bytes?: number }>({
        name: 'files_read',
        tier: 'read',
        parallel_safe: true,
        description:
          'Reads a file from a byte offset, at most plugin.files.max_read_bytes at a time. Text comes back as utf8; other content as base64. When truncated, call again with next_offset.',
        parameters: {
          type: 'object',
          properties: {
            path: PATH_PARAMETER,
            offset: { type: 'integer', minimum: 0, description: 'Byte offset to start at (default 0).' },
            max_bytes: {
              type: 'integer',
              minimum: 1,
              description: 'Read at most this many bytes (capped by plugin.files.max_read_bytes).',
            },
          },
          required: ['path'],
          additionalProperties: false,
        },
        execute: (args) => this.#read(args),
      }),
      tools.register<{ path: string; content: string; append?: boolean }>({
        name: 'files_write',
        tier: 'dangerous',
        parallel_safe: false,
        description:
          'Writes text to a file in a writable root, replacing it atomically (or appending); missing parent directories are created.',
        parameters: {
          type: 'object',
          properties: {
            path: PATH_PARAMETER,
            content: { type: 'string', description: 'UTF-8 text, at most plugin.files.max_write_bytes bytes.' },
            append: { type: 'boolean', description: 'Add to the end instead of replacing (default false).' },
          },
          required: ['path', 'content'],
          additionalProperties: false,
        },
        execute: (args, context) => this.#write(args, context),
      }),
    );
  }

  async stop(): Promise<void> {
    for (const unregister of this.#unregister.splice(0)) unregister();
  }

  #roots(): FileRoot[] {
    const { roots, skipped } = resolveRoots(this.#ctx.paths.data, this.#ctx.settings.get('roots'));
    for (const why of skipped) {
      if (this.#warned.has(why)) continue;
      this.#warned.add(why);
      this.#ctx.log.warn({ root: why }, `files root skipped: ${why}`);
    }
    return roots;
  }

  #list(requested: string | undefined): unknown {
    const roots = this.#roots();
    if (requested === undefined) return { roots: roots.map((root) => ({ path: root.path, mode: root.mode })) };
    const target = existing(resolvePath(requested, roots, 'read'), requested);
    if (!lstatSync(target.path).isDirectory()) {
      throw new ToolError({
        reason: 'rejected',
        field: 'path',
        detail: `${target.path} is not a directory`,
        hint: 'use files_read or files_stat',
      });
    }
    const names = readdirSync(target.path).sort();
    const entries = names.slice(0, MAX_LIST_ENTRIES).map((name) => {
      try {
        const stats = lstatSync(join(target.path, name));
        return stats.isFile() ? { name, type: 'file', size: stats.size } : { name, type: typeOf(stats) };
      } catch {
        return { name, type: 'gone' };
      }
    });
    return { path: target.path, mode: target.root.mode, entries, truncated: names.length > MAX_LIST_ENTRIES };
  }

  #stat(requested: string): unknown {
    const target = existing(resolvePath(requested, this.#roots(), 'read'), requested);
    const stats = lstatSync(target.path);
    return {
      path: target.path,
      type: typeOf(stats),
      size: stats.size,
      permissions: (stats.mode & 0o7777).toString(8).padStart(4, '0'),
      modified: stats.mtime.toISOString(),
      root: target.root.path,
      writable: target.root.mode === 'rw',
    };
  }

  #read(args: { path: string; offset?: number; max_bytes?: number }): unknown {
    const target = existing(resolvePath(args.path, this.#roots(), 'read'), args.path);
    const limit = Math.min(args.max_bytes ?? Number.POSITIVE_INFINITY, this.#ctx.settings.get('max_read_bytes'));
    const offset = args.offset ?? 0;
    // O_NONBLOCK: opening a FIFO must not hang the tool (it is refused below as not a regular file).
    const fd = openFile(target.path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    try {
      checkOpened(fd, target.root);
      const stats = fstatSync(fd);
      if (stats.isDirectory())
        throw new ToolError({ reason: 'rejected', field: 'path', detail: `${target.path} is a directory`, hint: 'use files_list' });
      if (!stats.isFile()) throw new ToolError({ reason: 'rejected', field: 'path', detail: `${target.path} is not a regular file` });
      // One byte more than the limit tells whether anything is left, even where st_size lies (/proc).
      const chunks: Buffer[] = [];
      let filled = 0;
      while (filled <= limit) {
        const chunk = Buffer.alloc(Math.min(READ_CHUNK_BYTES, limit + 1 - filled));
        const count = readSync(fd, chunk, 0, chunk.length, offset + filled);
        if (count === 0) break;
        chunks.push(chunk.subarray(0, count));
        filled += count;
      }
      let data = Buffer.concat(chunks).subarray(0, Math.min(filled, limit));
      let truncated = filled > limit;
      const text = decodeText(data, truncated);
      if (text !== undefined && text.bytes < data.length) {
        data = data.subarray(0, text.bytes);
        truncated = true;
      }
      const result = {
        path: target.path,
        size: stats.size,
        offset,
        bytes: data.length,
        encoding: text === undefined ? 'base64' : 'utf8',
        content: text === undefined ? data.toString('base64') : text.text,
        truncated,
      };
      return truncated ? { ...result, next_offset: offset + data.length } : result;
    } finally {
      closeSync(fd);
    }
  }

  #write(args: { path: string; content: string; append?: boolean }, context: ToolContext): unknown {
    const who = { task_id: context.task_id, call_id: context.call_id, source: context.source };
    const data = Buffer.from(args.content, 'utf8');
    const limit = this.#ctx.settings.get('max_write_bytes');
    const append = args.append === true;
    let target: ReturnType<typeof resolvePath>;
    try {
      if (data.length > limit) {
        throw new ToolError({
          reason: 'range',
          field: 'content',
          detail: `content is ${data.length} bytes; at most ${limit} may be written at once`,
        });
      }
      target = resolvePath(args.path, this.#roots(), 'write');
      if (target.exists && lstatSync(target.path).isDirectory()) {
        throw new ToolError({ reason: 'rejected', field: 'path', detail: `${target.path} is a directory` });
      }
      this.#ensureParent(target.path, target.root);
    } catch (error) {
      if (error instanceof ToolError) this.#ctx.audit('files.denied', { path: args.path, append, reason: error.info.detail, ...who });
      throw error;
    }
    if (append) appendTo(target.path, target.root, data);
    else replace(target.path, target.root, data);
    this.#ctx.audit('files.write', { path: target.path, bytes: data.length, append, created: !target.exists, ...who });
    return { path: target.path, bytes: data.length, append, created: !target.exists };
  }

  /** Creates missing parent directories, then checks they really are inside the root. */
  #ensureParent(path: string, root: FileRoot): void {
    const parent = dirname(path);
    try {
      mkdirSync(parent, { recursive: true });
    } catch (error) {
      throw rejected('path', `the directory ${parent} cannot be created (${(error as NodeJS.ErrnoException).code})`);
    }
    if (containingRoot(realpathSync(parent), [root]) === undefined) {
      throw rejected('path', `the directory ${parent} changed while it was being created and now leads outside ${root.path}`);
    }
  }
}

function existing<T extends { exists: boolean; path: string }>(target: T, requested: string): T {
  if (!target.exists)
    throw new ToolError({ reason: 'not_found', field: 'path', detail: `${JSON.stringify(requested)} does not exist (${target.path})` });
  return target;
}

function openFile(path: string, flags: number, mode?: number): number {
  try {
    return openSync(path, flags, mode);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') throw rejected('path', `${path} became a symlink; symlinks are not followed here`);
    if (code === 'ENOENT') throw new ToolError({ reason: 'not_found', field: 'path', detail: `${path} does not exist` });
    throw new ToolError({ reason: 'failed', field: 'path', detail: `${path} cannot be opened (${code})` });
  }
}

function appendTo(path: string, root: FileRoot, data: Buffer): void {
  const fd = openFile(path, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW, 0o644);
  try {
    checkOpened(fd, root);
    if (!fstatSync(fd).isFile()) throw rejected('path', `${path} is not a regular file`);
    writeAll(fd, data);
  } finally {
    closeSync(fd);
  }
}

/** Writes a temporary file next to the target and renames it over the target. */
function replace(path: string, root: FileRoot, data: Buffer): void {
  const temporary = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
  const fd = openFile(temporary, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o644);
  let open = true;
  try {
    checkOpened(fd, root);
    writeAll(fd, data);
    // A replaced file keeps its permissions.
    const previous = statOrUndefined(path);
    if (previous?.isFile()) fchmodSync(fd, previous.mode & 0o7777);
    fsyncSync(fd);
    closeSync(fd);
    open = false;
    renameSync(temporary, path);
  } catch (error) {
    if (open) closeSync(fd);
    try {
      unlinkSync(temporary);
    } catch {
      // nothing left to clean up
    }
    if (error instanceof ToolError) throw error;
    throw new ToolError({
      reason: 'failed',
      field: 'path',
      detail: `${path} could not be written (${(error as NodeJS.ErrnoException).code})`,
    });
  }
}

function writeAll(fd: number, data: Buffer): void {
  let written = 0;
  while (written < data.length) written += writeSync(fd, data, written, data.length - written);
}

function statOrUndefined(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch {
    return undefined;
  }
}

function typeOf(stats: Stats): string {
  if (stats.isFile()) return 'file';
  if (stats.isDirectory()) return 'directory';
  if (stats.isSymbolicLink()) return 'symlink';
  return 'other';
}

/**
 * The bytes as text when they are UTF-8 without NULs, else undefined (base64 then). A read that
 * stopped at the limit may end inside a character; that partial character is left for the next read.
 */
function decodeText(data: Buffer, mayBeCut: boolean): { text: string; bytes: number } | undefined {
  if (data.includes(0)) return undefined;
  const whole = mayBeCut ? completeUtf8Length(data) : data.length;
  try {
    return { text: new TextDecoder('utf-8', { fatal: true }).decode(data.subarray(0, whole)), bytes: whole };
  } catch {
    return undefined;
  }
}

function completeUtf8Length(buffer: Buffer): number {
  for (let back = 1; back <= Math.min(4, buffer.length); back++) {
    const byte = buffer[buffer.length - back] as number;
    if ((byte & 0xc0) === 0x80) continue;
    const needed = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return needed > back ? buffer.length - back : buffer.length;
  }
  return buffer.length;
}

export default definePlugin<FilesSettings>((ctx) => new FilesPlugin(ctx));

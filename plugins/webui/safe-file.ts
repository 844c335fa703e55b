/**
 * Serves uploaded and agent-produced files (knowledge media, later camera pictures) so that no file
 * can run script in the page's origin: a file somebody else wrote must never become a page of
 * ours. Only images, audio and video of a few known types are shown inline; everything else, SVG
 * and HTML included, is a download. Every answer carries nosniff (the browser may not guess a
 * type) and a sandboxing CSP (even a file opened directly runs in an opaque origin without
 * script). The file must lie inside the given root after resolving symlinks, and be a regular file
 * (a FIFO or device would hang or leak).
 */
import { constants, createReadStream } from 'node:fs';
import { open, realpath, stat } from 'node:fs/promises';
import { basename, extname, isAbsolute, relative, resolve, sep } from 'node:path';
import type { FastifyReply } from 'fastify';
import { HomeAgentError } from '../../src/sdk/index.js';

/** Types shown inline: none of them can carry script. */
export const INLINE_TYPES: Readonly<Record<string, string>> = {
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.mp3': 'audio/mpeg',
  '.ogg': 'audio/ogg',
  '.wav': 'audio/wav',
  '.mp4': 'video/mp4',
  '.webm': 'video/webm',
};

export const SANDBOX_CSP = "sandbox; default-src 'none'";

export interface SafeFile {
  /** The directory the file must be in (after resolving symlinks). */
  root: string;
  /** The file: relative to `root`, or absolute. */
  path: string;
  /** The name offered for saving; the file's own name by default. */
  downloadName?: string;
}

/** Checks the file and sends it; throws HA_ERR_FILES_DENIED (outside the root, not a regular file) or HA_ERR_HTTP_NOT_FOUND. */
export async function sendSafeFile(reply: FastifyReply, file: SafeFile): Promise<FastifyReply> {
  const real = await resolveInside(file.root, file.path);
  const before = await stat(real);
  if (!before.isFile()) throw new HomeAgentError('HA_ERR_FILES_DENIED', `${JSON.stringify(file.path)} is not a regular file`);
  // O_NOFOLLOW: the last component cannot have been swapped for a symlink since it was resolved.
  const handle = await open(real, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    const opened = await handle.stat();
    if (!opened.isFile() || opened.ino !== before.ino || opened.dev !== before.dev) {
      throw new HomeAgentError('HA_ERR_FILES_DENIED', `${JSON.stringify(file.path)} changed while it was opened`);
    }
    const name = file.downloadName ?? basename(real);
    const inline = INLINE_TYPES[extname(name).toLowerCase()];
    reply.headers({
      'content-type': inline ?? 'application/octet-stream',
      'content-length': String(opened.size),
      'content-disposition': contentDisposition(inline ? 'inline' : 'attachment', name),
      'x-content-type-options': 'nosniff',
      'content-security-policy': SANDBOX_CSP,
      'cache-control': 'private, no-cache',
    });
    const stream = createReadStream('', { fd: handle.fd, autoClose: false });
    stream.once('close', () => void handle.close());
    return reply.send(stream);
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/** The real path of `path` (relative to `root`, or absolute), refused unless it lies inside `root`. */
export async function resolveInside(root: string, path: string): Promise<string> {
  if (path.includes('\0')) throw new HomeAgentError('HA_ERR_FILES_DENIED', 'the file name contains a NUL character');
  let realRoot: string;
  let real: string;
  try {
    realRoot = await realpath(root);
    real = await realpath(resolve(realRoot, path));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ENOTDIR') {
      throw new HomeAgentError('HA_ERR_HTTP_NOT_FOUND', `no file ${JSON.stringify(path)}`);
    }
    throw error;
  }
  const inside = relative(realRoot, real);
  if (inside === '' || inside === '..' || inside.startsWith(`..${sep}`) || isAbsolute(inside)) {
    throw new HomeAgentError('HA_ERR_FILES_DENIED', `${JSON.stringify(path)} is outside the folder files are served from`);
  }
  return real;
}

/** `attachment; filename="..."; filename*=UTF-8''...`: an ASCII name for old clients, the real one for the rest. */
export function contentDisposition(kind: 'inline' | 'attachment', name: string): string {
  const ascii = name.replace(/[^A-Za-z0-9._-]/g, '_') || 'file';
  const encoded = encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `${kind}; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}

/**
 * Unpacks an untrusted archive (.tar.gz/.tgz or .zip) into an empty staging folder, for plugin and
 * model installs. Every entry is checked before anything is written: only regular files and
 * folders, no absolute paths, no `..`, no links or devices, no control characters, at most
 * `maxEntries` entries and `maxBytes` unpacked (from the headers, and again while writing zip
 * entries whose header lies). The archive libraries load on first use: nothing needs them to run.
 * Problems are reported through the caller's `fail`, so each installer keeps its own error code.
 */
import { closeSync, createWriteStream, mkdirSync, openSync, readSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Entry as ZipEntry, ZipFile } from 'yauzl';
import { describeError } from './errors.js';

export type ArchiveFormat = 'tgz' | 'zip';

export interface ExtractOptions {
  maxBytes: number;
  maxEntries: number;
  /** Keep the executable bits of zip entries (scripts of skills); tar entries keep theirs under umask 022. */
  keepExecutable: boolean;
  /** Builds the error thrown for a problem (`why` is a sentence about the archive). */
  fail: (why: string, cause?: unknown) => Error;
}

/** The format from the first bytes, or undefined when it is neither gzip nor zip. */
export function sniffArchive(file: string): ArchiveFormat | undefined {
  const head = Buffer.alloc(4);
  const fd = openSync(file, 'r');
  try {
    readSync(fd, head, 0, 4, 0);
  } finally {
    closeSync(fd);
  }
  if (head[0] === 0x50 && head[1] === 0x4b && head[2] === 0x03 && head[3] === 0x04) return 'zip';
  if (head[0] === 0x1f && head[1] === 0x8b) return 'tgz';
  return undefined;
}

export async function extractArchive(file: string, format: ArchiveFormat, staging: string, options: ExtractOptions): Promise<void> {
  if (format === 'zip') await unzip(file, staging, options);
  else await untar(file, staging, options);
}

/** The safe relative path of an entry, or undefined for the archive root itself. */
function checkEntry(rawPath: string, type: string, fail: ExtractOptions['fail']): string | undefined {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters in entry names are what is refused
  if (/[\u0000-\u001f]/.test(rawPath)) throw fail(`entry ${JSON.stringify(rawPath)} has control characters`);
  const path = rawPath.replace(/\\/g, '/');
  if (path.startsWith('/') || /^[A-Za-z]:/.test(path)) throw fail(`entry ${JSON.stringify(rawPath)} has an absolute path`);
  if (path.split('/').includes('..')) throw fail(`entry ${JSON.stringify(rawPath)} leaves the archive (..)`);
  if (type !== 'file' && type !== 'directory')
    throw fail(`entry ${JSON.stringify(rawPath)} is a ${type}; only files and folders are allowed`);
  const clean = normalize(path).replace(/\/+$/, '');
  return clean === '.' || clean === '' ? undefined : clean;
}

function tarType(type: string): string {
  switch (type) {
    case 'File':
    case 'OldFile':
    case 'ContiguousFile':
      return 'file';
    case 'Directory':
      return 'directory';
    case 'SymbolicLink':
      return 'symbolic link';
    case 'Link':
      return 'hard link';
    default:
      return type.toLowerCase();
  }
}

async function untar(file: string, staging: string, { maxBytes, maxEntries, fail }: ExtractOptions): Promise<void> {
  const tar = await import('tar');
  let total = 0;
  let count = 0;
  let problem: unknown;
  try {
    await tar.t({
      file,
      onReadEntry: (entry) => {
        if (problem) return;
        try {
          // pax/global headers carry metadata, not files.
          if (entry.type === 'GlobalExtendedHeader' || entry.type === 'ExtendedHeader') return;
          checkEntry(entry.path, tarType(entry.type), fail);
          total += entry.size ?? 0;
          if (++count > maxEntries) throw fail(`it has more than ${maxEntries} entries`);
          if (total > maxBytes) throw fail(`it unpacks to more than ${maxBytes} bytes`);
        } catch (error) {
          problem = error;
        }
      },
    });
  } catch (error) {
    throw fail(`not a readable tar.gz: ${describeError(error)}`, error);
  }
  if (problem) throw problem;
  await tar.x({
    file,
    cwd: staging,
    strict: true,
    preservePaths: false,
    preserveOwner: false,
    // Executable bits survive; nothing group- or world-writable.
    umask: 0o022,
    filter: (_path, entry) => 'type' in entry && (entry.type === 'File' || entry.type === 'OldFile' || entry.type === 'Directory'),
  });
}

async function unzip(file: string, staging: string, { maxBytes, maxEntries, keepExecutable, fail }: ExtractOptions): Promise<void> {
  const { default: yauzl } = await import('yauzl');
  const zip = await new Promise<ZipFile>((resolve, reject) =>
    yauzl.open(file, { lazyEntries: true, validateEntrySizes: true, strictFileNames: false }, (error, handle) =>
      error ? reject(fail(describeError(error), error)) : resolve(handle),
    ),
  );
  let total = 0;
  let count = 0;
  try {
    await new Promise<void>((resolve, reject) => {
      zip.on('error', (error) => reject(fail(describeError(error), error)));
      zip.on('end', resolve);
      zip.on('entry', (entry: ZipEntry) => {
        void (async () => {
          const mode = (entry.externalFileAttributes >>> 16) & 0o170000;
          const isDir = entry.fileName.endsWith('/');
          const type = isDir
            ? 'directory'
            : mode === 0 || mode === 0o100000
              ? 'file'
              : mode === 0o120000
                ? 'symbolic link'
                : 'special file';
          const path = checkEntry(entry.fileName, type, fail);
          if (++count > maxEntries) throw fail(`it has more than ${maxEntries} entries`);
          total += entry.uncompressedSize;
          if (total > maxBytes) throw fail(`it unpacks to more than ${maxBytes} bytes`);
          if (path) {
            const target = join(staging, path);
            if (isDir) mkdirSync(target, { recursive: true, mode: 0o755 });
            else await writeEntry(zip, entry, target, keepExecutable, fail);
          }
          zip.readEntry();
        })().catch(reject);
      });
      zip.readEntry();
    });
  } finally {
    zip.close();
  }
}

async function writeEntry(
  zip: ZipFile,
  entry: ZipEntry,
  target: string,
  keepExecutable: boolean,
  fail: ExtractOptions['fail'],
): Promise<void> {
  mkdirSync(dirname(target), { recursive: true, mode: 0o755 });
  const stream = await new Promise<NodeJS.ReadableStream>((ok, ko) => zip.openReadStream(entry, (error, s) => (error ? ko(error) : ok(s))));
  let written = 0;
  const limit = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      written += chunk.length;
      if (written > entry.uncompressedSize) callback(fail(`entry ${entry.fileName} is larger than its header says`));
      else callback(null, chunk);
    },
  });
  const executable = keepExecutable && ((entry.externalFileAttributes >>> 16) & 0o111) !== 0;
  await pipeline(stream, limit, createWriteStream(target, { flags: 'wx', mode: executable ? 0o755 : 0o644 }));
}

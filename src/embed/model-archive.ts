/**
 * Unpacks a model archive (.tar.gz/.tgz or .zip) into an empty staging folder. Only regular files
 * and folders are written; absolute paths, `..`, links and devices are refused, and so is an
 * archive that unpacks to more than the byte limit (checked from the headers before writing, and
 * again while writing for zip entries whose header lies).
 */
import { closeSync, createWriteStream, mkdirSync, openSync, readSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import * as tar from 'tar';
import yauzl from 'yauzl';
import { describeError, HomeAgentError } from '../shared/errors.js';

/** A model has a handful of files; anything far beyond that is not a model archive. */
const MAX_ENTRIES = 1000;

export type ArchiveFormat = 'tgz' | 'zip';

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

/** `label` names the archive in errors (a download's URL rather than its temporary file). */
export async function extractArchive(file: string, format: ArchiveFormat, staging: string, maxBytes: number, label = file): Promise<void> {
  if (format === 'zip') await unzip(file, label, staging, maxBytes);
  else await untar(file, label, staging, maxBytes);
}

function fail(file: string, why: string, cause?: unknown): HomeAgentError {
  return new HomeAgentError('HA_ERR_EMBED_INSTALL', `cannot unpack ${file}: ${why}`, cause === undefined ? {} : { cause });
}

/** The safe relative path of an entry, or undefined for the archive root itself. */
function checkEntry(file: string, rawPath: string, type: string): string | undefined {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters in entry names are what is refused
  if (/[\u0000-\u001f]/.test(rawPath)) throw fail(file, `entry ${JSON.stringify(rawPath)} has control characters`);
  const path = rawPath.replace(/\\/g, '/');
  if (path.startsWith('/') || /^[A-Za-z]:/.test(path)) throw fail(file, `entry ${JSON.stringify(rawPath)} has an absolute path`);
  if (path.split('/').includes('..')) throw fail(file, `entry ${JSON.stringify(rawPath)} leaves the archive (..)`);
  if (type !== 'file' && type !== 'directory')
    throw fail(file, `entry ${JSON.stringify(rawPath)} is a ${type}; only files and folders are allowed`);
  const clean = normalize(path).replace(/\/+$/, '');
  return clean === '.' || clean === '' ? undefined : clean;
}

async function untar(file: string, label: string, staging: string, maxBytes: number): Promise<void> {
  let total = 0;
  let count = 0;
  let problem: HomeAgentError | undefined;
  try {
    await tar.t({
      file,
      onReadEntry: (entry) => {
        if (problem) return;
        try {
          if (entry.type === 'GlobalExtendedHeader' || entry.type === 'ExtendedHeader') return;
          const type =
            entry.type === 'File' || entry.type === 'OldFile' ? 'file' : entry.type === 'Directory' ? 'directory' : `${entry.type} entry`;
          checkEntry(label, entry.path, type);
          total += entry.size ?? 0;
          if (++count > MAX_ENTRIES) throw fail(label, `it has more than ${MAX_ENTRIES} entries`);
          if (total > maxBytes) throw fail(label, `it unpacks to more than ${maxBytes} bytes`);
        } catch (error) {
          problem = error as HomeAgentError;
        }
      },
    });
  } catch (error) {
    throw fail(label, `not a readable tar.gz: ${describeError(error)}`, error);
  }
  if (problem) throw problem;
  await tar.x({
    file,
    cwd: staging,
    strict: true,
    preservePaths: false,
    preserveOwner: false,
    umask: 0o022,
    filter: (_path, entry) => 'type' in entry && (entry.type === 'File' || entry.type === 'OldFile' || entry.type === 'Directory'),
  });
}

async function unzip(file: string, label: string, staging: string, maxBytes: number): Promise<void> {
  const zip = await new Promise<yauzl.ZipFile>((resolve, reject) =>
    yauzl.open(file, { lazyEntries: true, validateEntrySizes: true, strictFileNames: false }, (error, handle) =>
      error ? reject(fail(label, describeError(error), error)) : resolve(handle),
    ),
  );
  let total = 0;
  let count = 0;
  try {
    await new Promise<void>((resolve, reject) => {
      zip.on('error', (error) => reject(fail(label, describeError(error), error)));
      zip.on('end', resolve);
      zip.on('entry', (entry: yauzl.Entry) => {
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
          const path = checkEntry(label, entry.fileName, type);
          if (++count > MAX_ENTRIES) throw fail(label, `it has more than ${MAX_ENTRIES} entries`);
          total += entry.uncompressedSize;
          if (total > maxBytes) throw fail(label, `it unpacks to more than ${maxBytes} bytes`);
          if (path) {
            const target = join(staging, path);
            if (isDir) mkdirSync(target, { recursive: true, mode: 0o755 });
            else {
              mkdirSync(dirname(target), { recursive: true, mode: 0o755 });
              const stream = await new Promise<NodeJS.ReadableStream>((ok, ko) =>
                zip.openReadStream(entry, (error, s) => (error ? ko(error) : ok(s))),
              );
              let written = 0;
              const limit = new Transform({
                transform(chunk: Buffer, _encoding, callback) {
                  written += chunk.length;
                  if (written > entry.uncompressedSize) callback(fail(label, `entry ${entry.fileName} is larger than its header says`));
                  else callback(null, chunk);
                },
              });
              await pipeline(stream, limit, createWriteStream(target, { flags: 'wx', mode: 0o644 }));
            }
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

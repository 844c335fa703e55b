/**
 * The content-addressed media store: images and audio kept once per content under
 * `<data>/media/sha256/<first two hex digits>/<sha256>`, whatever name or entry they were attached
 * under. Files are written atomically (temporary name, fsync, rename, directory fsync), so a
 * digest's file is either complete or absent. The type is read from the bytes (magic numbers), not
 * from the file name; only the formats below are accepted.
 */
import { createHash, randomBytes } from 'node:crypto';
import {
  closeSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmdirSync,
  statSync,
  unlinkSync,
  utimesSync,
  writeSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { HomeAgentError } from '../shared/errors.js';

export type MediaKind = 'image' | 'audio';

export interface SniffedType {
  kind: MediaKind;
  mime: string;
}

export interface StoredMedia extends SniffedType {
  /** sha256 of the bytes, lower-case hex. */
  digest: string;
  bytes: number;
  /** False when the same bytes were already stored (nothing was written). */
  written: boolean;
}

export interface MediaStoreOptions {
  /** The store's directory, `<data>/media`. */
  dir: string;
  /** Largest file accepted, in bytes, read at each write. */
  maxBytes: () => number;
}

export const MEDIA_FORMATS = 'png, jpeg, gif, webp, wav, mp3, ogg, flac';

export interface MediaSweepOptions {
  /** Digests something still refers to (knowledge entries): never removed. */
  keep: ReadonlySet<string>;
  /** Other files last written before this time (ms since the epoch) are removed. */
  removeBefore: number;
  /** Then, while the store holds more than this many bytes, the oldest other files go first. */
  maxTotalBytes: number;
}

export interface MediaSweepResult {
  removed: number;
  freed_bytes: number;
  /** What stays, and how much of it is kept because something refers to it. */
  files: number;
  bytes: number;
  kept_files: number;
  kept_bytes: number;
}

const DIGEST = /^[0-9a-f]{64}$/;
/** Files younger than this are not removed to bring the store under its size cap. */
export const SWEEP_GRACE_MS = 10 * 60 * 1000;

/** The image or audio type of `data` from its first bytes, or undefined when it is neither. */
export function sniffMedia(data: Uint8Array): SniffedType | undefined {
  const at = (i: number): number => data[i] ?? -1;
  const ascii = (offset: number, text: string): boolean => [...text].every((c, i) => at(offset + i) === c.charCodeAt(0));
  if ([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a].every((b, i) => at(i) === b)) return { kind: 'image', mime: 'image/png' };
  if (at(0) === 0xff && at(1) === 0xd8 && at(2) === 0xff) return { kind: 'image', mime: 'image/jpeg' };
  if (ascii(0, 'GIF87a') || ascii(0, 'GIF89a')) return { kind: 'image', mime: 'image/gif' };
  if (ascii(0, 'RIFF') && ascii(8, 'WEBP')) return { kind: 'image', mime: 'image/webp' };
  if (ascii(0, 'RIFF') && ascii(8, 'WAVE')) return { kind: 'audio', mime: 'audio/wav' };
  if (ascii(0, 'OggS')) return { kind: 'audio', mime: 'audio/ogg' };
  if (ascii(0, 'fLaC')) return { kind: 'audio', mime: 'audio/flac' };
  if (ascii(0, 'ID3')) return { kind: 'audio', mime: 'audio/mpeg' };
  // An MPEG audio frame header: 11 sync bits, a version other than "reserved" (01) and a layer
  // other than "reserved" (00; AAC's ADTS header has 00 there and is not MP3).
  const b1 = at(1);
  if (at(0) === 0xff && (b1 & 0xe0) === 0xe0 && ((b1 >> 3) & 0x03) !== 0x01 && ((b1 >> 1) & 0x03) !== 0x00) {
    return { kind: 'audio', mime: 'audio/mpeg' };
  }
  return undefined;
}

/** The picture type of `data` (png, jpeg, gif, webp), or undefined for a sound or anything else. */
export function pictureMime(data: Uint8Array): string | undefined {
  const type = sniffMedia(data);
  return type?.kind === 'image' ? type.mime : undefined;
}

export class MediaStore {
  readonly #o: MediaStoreOptions;
  #stats: { files: number; bytes: number } | undefined;

  constructor(options: MediaStoreOptions) {
    this.#o = options;
  }

  /**
   * Stores `data` (once per content) and returns what it is. Throws HA_ERR_MEDIA_TOO_LARGE over
   * the size limit and HA_ERR_MEDIA_TYPE when the bytes are not one of {@link MEDIA_FORMATS}, or
   * when `declaredMime` is given and is not image/* or audio/*.
   */
  put(data: Uint8Array, options: { declaredMime?: string; fileName?: string } = {}): StoredMedia {
    const label = options.fileName ?? 'the file';
    this.checkSize(data.byteLength, label);
    const declared = options.declaredMime?.toLowerCase().trim();
    if (declared !== undefined && declared !== '' && !/^(image|audio)\//.test(declared)) {
      throw new HomeAgentError('HA_ERR_MEDIA_TYPE', `${label} is declared as ${declared}; only image/* and audio/* files can be attached`);
    }
    const type = sniffMedia(data);
    if (!type) {
      throw new HomeAgentError('HA_ERR_MEDIA_TYPE', `${label} is not a recognised image or audio file (accepted: ${MEDIA_FORMATS})`);
    }
    const digest = createHash('sha256').update(data).digest('hex');
    const file = this.path(digest);
    if (sizeOf(file) === data.byteLength) {
      // Stored again: it counts as new for the sweep, which goes by modification time.
      touch(file);
      return { ...type, digest, bytes: data.byteLength, written: false };
    }
    const dir = join(this.#o.dir, 'sha256', digest.slice(0, 2));
    const createdDir = mkdirSync(dir, { recursive: true });
    try {
      writeFileAtomically(file, data);
    } catch (error) {
      // A full disk leaves nothing behind: no half file (writeFileAtomically) and no empty folder.
      if (createdDir !== undefined) removeEmptyDirs(createdDir, dir);
      throw error;
    }
    if (this.#stats) this.#stats = { files: this.#stats.files + 1, bytes: this.#stats.bytes + data.byteLength };
    return { ...type, digest, bytes: data.byteLength, written: true };
  }

  /**
   * Removes a digest's file; for a caller taking back a put() that wrote it (written: true) when
   * the rest of its change failed. False when there was no such file.
   */
  remove(digest: string): boolean {
    const file = this.path(digest);
    const bytes = sizeOf(file);
    if (bytes < 0) return false;
    unlinkSync(file);
    if (this.#stats) this.#stats = { files: this.#stats.files - 1, bytes: this.#stats.bytes - bytes };
    try {
      rmdirSync(dirname(file));
    } catch {
      // Other files share the prefix folder.
    }
    return true;
  }

  /** Throws HA_ERR_MEDIA_TOO_LARGE when `bytes` is over the limit (check before reading a big file). */
  checkSize(bytes: number, label = 'the file'): void {
    const max = this.#o.maxBytes();
    if (bytes > max) {
      throw new HomeAgentError(
        'HA_ERR_MEDIA_TOO_LARGE',
        `${label} has ${bytes} bytes; media files may have at most ${max} bytes (${Math.floor(max / 1048576)} MiB)`,
      );
    }
  }

  /** The store's directory, `<data>/media`. */
  get dir(): string {
    return this.#o.dir;
  }

  /** Where a digest's bytes are (whether or not they exist). */
  path(digest: string): string {
    if (!DIGEST.test(digest)) throw new HomeAgentError('HA_ERR_MEDIA_TYPE', `${JSON.stringify(digest)} is not a sha256 digest`);
    return join(this.#o.dir, 'sha256', digest.slice(0, 2), digest);
  }

  has(digest: string): boolean {
    return DIGEST.test(digest) && sizeOf(this.path(digest)) >= 0;
  }

  /** The stored bytes, or undefined when the digest is not stored. */
  read(digest: string): Buffer | undefined {
    if (!this.has(digest)) return undefined;
    return readFileSync(this.path(digest));
  }

  /** Files and bytes in the store (counted once, then kept up to date by {@link MediaStore.put} and {@link MediaStore.sweep}). */
  stats(): { files: number; bytes: number } {
    if (!this.#stats) {
      const files = this.#files();
      this.#stats = { files: files.length, bytes: files.reduce((sum, f) => sum + f.bytes, 0) };
    }
    return { ...this.#stats };
  }

  /**
   * Removes what nothing refers to: camera snapshots and other pictures plugins stored, once older
   * than `removeBefore`, and the oldest of them sooner while the store is over `maxTotalBytes` (an
   * SD card must not fill up with snapshots). Files in `keep` are never touched, even over the cap,
   * nor files stored in the last {@link SWEEP_GRACE_MS} (one may be about to be referenced). The
   * time is the file's modification time, renewed when put() is given the same bytes again.
   */
  sweep(options: MediaSweepOptions, now = Date.now()): MediaSweepResult {
    const files = this.#files();
    let bytes = files.reduce((sum, f) => sum + f.bytes, 0);
    const loose = files.filter((f) => !options.keep.has(f.digest)).sort((a, b) => a.mtimeMs - b.mtimeMs);
    let removed = 0;
    let freed = 0;
    for (const file of loose) {
      if (file.mtimeMs >= options.removeBefore && (bytes <= options.maxTotalBytes || file.mtimeMs > now - SWEEP_GRACE_MS)) break;
      try {
        unlinkSync(file.path);
      } catch {
        continue; // Gone already, or not ours to remove: counted again next time.
      }
      removed++;
      freed += file.bytes;
      bytes -= file.bytes;
    }
    const kept = files.filter((f) => options.keep.has(f.digest));
    this.#stats = { files: files.length - removed, bytes };
    return {
      removed,
      freed_bytes: freed,
      files: files.length - removed,
      bytes,
      kept_files: kept.length,
      kept_bytes: kept.reduce((sum, f) => sum + f.bytes, 0),
    };
  }

  #files(): Array<{ digest: string; path: string; bytes: number; mtimeMs: number }> {
    const out: Array<{ digest: string; path: string; bytes: number; mtimeMs: number }> = [];
    for (const prefix of listDir(join(this.#o.dir, 'sha256'))) {
      for (const name of listDir(join(this.#o.dir, 'sha256', prefix))) {
        if (!DIGEST.test(name)) continue;
        const path = join(this.#o.dir, 'sha256', prefix, name);
        try {
          const stat = statSync(path);
          if (stat.isFile()) out.push({ digest: name, path, bytes: stat.size, mtimeMs: stat.mtimeMs });
        } catch {
          // Removed while listing.
        }
      }
    }
    return out;
  }
}

/**
 * Writes `file` so that it is either the old or the complete new content, also across power loss:
 * a temporary file next to it, flushed, renamed over it, the directory flushed.
 */
export function writeFileAtomically(file: string, data: Uint8Array | string): void {
  // A hidden name in the same directory: the rename stays on one filesystem, and walkers skip it.
  const tmp = join(dirname(file), `.${basename(file)}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`);
  try {
    const fd = openSync(tmp, 'wx', 0o640);
    try {
      const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
      let offset = 0;
      while (offset < bytes.byteLength) offset += writeSync(fd, bytes, offset);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, file);
  } catch (error) {
    try {
      unlinkSync(tmp);
    } catch {
      // Already renamed or never created.
    }
    throw error;
  }
  fsyncDir(dirname(file));
}

/** Makes a rename durable; some filesystems refuse fsync on a directory, which changes nothing here. */
export function fsyncDir(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, 'r');
    fsyncSync(fd);
  } catch {
    // See above.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Removes `deepest` and the folders above it up to `top` (the first one mkdirSync created) while empty. */
function removeEmptyDirs(top: string, deepest: string): void {
  for (let dir = deepest; ; dir = dirname(dir)) {
    try {
      rmdirSync(dir);
    } catch {
      return;
    }
    if (dir === top || dirname(dir) === dir) return;
  }
}

function touch(file: string): void {
  try {
    const now = new Date();
    utimesSync(file, now, now);
  } catch {
    // A read-only store still serves its files; the sweep then sees the first time.
  }
}

function sizeOf(file: string): number {
  try {
    const stat = statSync(file);
    return stat.isFile() ? stat.size : -1;
  } catch {
    return -1;
  }
}

function listDir(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

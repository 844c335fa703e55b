/**
 * The library on disk, which is the source of truth: `<root>/<category>/.../<leaf>/content.md`
 * (plus `media.json` listing the entry's attachments); a directory without content.md is a
 * category. Writes are atomic, can be undone until the index has taken them (so a failed write,
 * a full disk say, leaves no phantom category and no half entry), and refuse locations that a
 * symbolic link takes outside the library; the scan follows links only while they stay inside
 * it and reports everything it passes over with the reason.
 */
import { createHash, randomBytes } from 'node:crypto';
import {
  type Dirent,
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmdirSync,
  type Stats,
  statSync,
  unlinkSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { describeError, HomeAgentError } from '../shared/errors.js';
import { fsyncDir, writeFileAtomically } from '../store/media-store.js';
import {
  assertWritableInside,
  CONTENT_FILE,
  entryName,
  isCanonicalSegment,
  isInside,
  type KnowledgeName,
  MAX_DEPTH,
  MEDIA_FILE,
  pathOf,
} from './knowledge-paths.js';
import type { MediaRef } from './types.js';

/** A file or directory the scan or an import passed over, and why. */
export interface Skipped {
  file: string;
  reason: string;
}

/** An entry directory found by the scan. */
export interface LeafOnDisk {
  name: string;
  category: string;
  /** Real path of the entry's directory. */
  dir: string;
  /** Changes whenever content.md or media.json is rewritten or edited. */
  signature: string;
}

export interface LibraryScan {
  leaves: LeafOnDisk[];
  /** Every category directory, intermediate and empty ones included, sorted. */
  categories: string[];
  skipped: Skipped[];
}

export interface EntryText {
  content: string;
  /** sha256 of the bytes. */
  hash: string;
  bytes: number;
}

const DIGEST = /^[0-9a-f]{64}$/;

function isHidden(name: string): boolean {
  return name.startsWith('.');
}

/**
 * mtime (ns), size and inode of content.md and media.json: an atomic rewrite changes the inode
 * even when size and time agree.
 */
export function signatureOf(dir: string): string {
  const part = (file: string): string => {
    try {
      const s = statSync(join(dir, file), { bigint: true });
      return `${s.mtimeNs}:${s.size}:${s.ino}`;
    } catch {
      return '-';
    }
  };
  return `${part(CONTENT_FILE)}|${part(MEDIA_FILE)}`;
}

/** Walks the library under `realRoot` (an already resolved path). */
export function scanLibrary(realRoot: string): LibraryScan {
  const out: LibraryScan = { leaves: [], categories: [], skipped: [] };
  walk(realRoot, realRoot, [], out, new Set([realRoot]));
  out.categories.sort();
  out.leaves.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return out;
}

/** `ancestors`: real paths of the directories above, to stop at a link pointing back up (a loop). */
function walk(realRoot: string, dir: string, segments: string[], out: LibraryScan, ancestors: ReadonlySet<string>): void {
  const here = segments.join('/');
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch (error) {
    out.skipped.push({ file: here || '.', reason: `cannot read the directory: ${describeError(error)}` });
    return;
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const content = entries.find((e) => e.name === CONTENT_FILE);
  if (content && segments.length > 0) {
    const target = resolveInside(realRoot, join(dir, CONTENT_FILE), `${here}/${CONTENT_FILE}`, out);
    if (!target) return;
    if (!target.stat.isFile()) {
      out.skipped.push({ file: `${here}/${CONTENT_FILE}`, reason: 'content.md is not a regular file' });
      return;
    }
    out.leaves.push({ name: here, category: segments.slice(0, -1).join('/'), dir, signature: signatureOf(dir) });
    for (const e of entries) {
      if (isHidden(e.name) || e.name === CONTENT_FILE || e.name === MEDIA_FILE) continue;
      if (e.isDirectory() || e.isSymbolicLink()) {
        out.skipped.push({ file: `${here}/${e.name}`, reason: `inside the entry ${here}, which cannot hold other entries or categories` });
      }
    }
    return;
  }
  if (segments.length > 0) out.categories.push(here);
  for (const e of entries) {
    if (isHidden(e.name)) continue;
    const shown = here === '' ? e.name : `${here}/${e.name}`;
    const path = join(dir, e.name);
    let isDir = e.isDirectory();
    let real = path;
    if (e.isSymbolicLink()) {
      const target = resolveInside(realRoot, path, shown, out);
      if (!target) continue;
      isDir = target.stat.isDirectory();
      real = target.real;
    }
    if (!isDir) {
      out.skipped.push({
        file: shown,
        reason:
          e.name === CONTENT_FILE
            ? 'content.md directly in the knowledge directory belongs to no entry'
            : 'a loose file: entries are directories holding content.md (import loose files with knowledge_import_dir)',
      });
      continue;
    }
    if (!isCanonicalSegment(e.name)) {
      out.skipped.push({ file: shown, reason: badNameReason(e.name) });
      continue;
    }
    if (segments.length + 1 > MAX_DEPTH) {
      out.skipped.push({ file: shown, reason: `deeper than ${MAX_DEPTH} levels` });
      continue;
    }
    if (ancestors.has(real)) {
      out.skipped.push({ file: shown, reason: 'a symbolic link to a directory above it (a loop)' });
      continue;
    }
    walk(realRoot, real, [...segments, e.name], out, new Set([...ancestors, real]));
  }
}

function badNameReason(name: string): string {
  try {
    const fixed = entryName(name).name;
    return `"${name}" is not in the form names take (lower case, "_" for spaces): rename it to "${fixed}"`;
  } catch (error) {
    return error instanceof HomeAgentError ? error.message : describeError(error);
  }
}

/** Follows a symbolic link; records a skip and returns undefined when it is broken or leaves the library. */
function resolveInside(realRoot: string, path: string, shown: string, out: LibraryScan): { real: string; stat: Stats } | undefined {
  let real: string;
  try {
    real = realpathSync(path);
  } catch (error) {
    out.skipped.push({ file: shown, reason: `a broken symbolic link: ${describeError(error)}` });
    return undefined;
  }
  if (!isInside(realRoot, real)) {
    out.skipped.push({ file: shown, reason: `a symbolic link to ${real}, outside the knowledge directory` });
    return undefined;
  }
  try {
    return { real, stat: statSync(real) };
  } catch (error) {
    out.skipped.push({ file: shown, reason: `cannot read it: ${describeError(error)}` });
    return undefined;
  }
}

/**
 * Reads an entry's content.md: at most `maxBytes`, valid UTF-8 (a byte-order mark is dropped).
 * Throws HA_ERR_KNOWLEDGE_TOO_LARGE over the limit; other problems throw a plain Error whose
 * message is the reason.
 */
export function readEntryText(dir: string, maxBytes: number): EntryText {
  const file = join(dir, CONTENT_FILE);
  const size = statSync(file).size;
  if (size > maxBytes) throw tooLarge(size, maxBytes);
  const bytes = readFileSync(file);
  if (bytes.byteLength > maxBytes) throw tooLarge(bytes.byteLength, maxBytes);
  let content: string;
  try {
    content = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new Error('content.md is not valid UTF-8 text');
  }
  return { content: content.replace(/^\uFEFF/, ''), hash: createHash('sha256').update(bytes).digest('hex'), bytes: bytes.byteLength };
}

export function tooLarge(bytes: number, maxBytes: number): HomeAgentError {
  return new HomeAgentError(
    'HA_ERR_KNOWLEDGE_TOO_LARGE',
    `the content has ${Math.ceil(bytes / 1024)} KiB; entries may have at most ${Math.floor(maxBytes / 1024)} KiB (core.knowledge.max_entry_kb)`,
  );
}

/** The attachments listed in an entry's media.json ([] when there is none); throws when it is malformed. */
export function readMediaList(dir: string): MediaRef[] {
  let text: string;
  try {
    text = readFileSync(join(dir, MEDIA_FILE), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const parsed: unknown = JSON.parse(text);
  if (!Array.isArray(parsed)) throw new Error('media.json is not a JSON array');
  return parsed.map((item, i) => {
    const m = item as Partial<MediaRef> | null;
    if (
      !m ||
      typeof m.digest !== 'string' ||
      !DIGEST.test(m.digest) ||
      (m.kind !== 'image' && m.kind !== 'audio') ||
      typeof m.mime !== 'string' ||
      typeof m.bytes !== 'number' ||
      typeof m.file_name !== 'string'
    ) {
      throw new Error(`media.json item ${i} is not {digest, kind, mime, bytes, file_name}`);
    }
    return { digest: m.digest, kind: m.kind, mime: m.mime, bytes: m.bytes, file_name: m.file_name };
  });
}

/**
 * Refuses a name that would put an entry inside another entry, or onto a category that holds
 * something; `existing` says whether the entry itself is there.
 */
export function checkPlace(realRoot: string, n: KnowledgeName): { existing: boolean } {
  for (let i = 1; i < n.segments.length; i++) {
    const prefix = n.segments.slice(0, i).join('/');
    const dir = pathOf(realRoot, prefix);
    const stat = statOrUndefined(dir);
    if (!stat) break;
    if (!stat.isDirectory()) throw placeError(n.name, `${prefix} is a file, not a category`);
    if (existsSync(join(dir, CONTENT_FILE))) throw placeError(n.name, `${prefix} is an entry, and entries cannot hold other entries`);
  }
  const dir = pathOf(realRoot, n.name);
  const stat = statOrUndefined(dir);
  if (!stat) return { existing: false };
  if (!stat.isDirectory()) throw placeError(n.name, `${n.name} is a file, not an entry directory`);
  if (existsSync(join(dir, CONTENT_FILE))) return { existing: true };
  if (readdirSync(dir).some((f) => !isHidden(f))) throw placeError(n.name, `${n.name} is a category with things in it`);
  return { existing: false };
}

function placeError(name: string, problem: string): HomeAgentError {
  return new HomeAgentError('HA_ERR_KNOWLEDGE_NAME', `knowledge name ${JSON.stringify(name)} is refused: ${problem}`);
}

function statOrUndefined(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}

/**
 * A write of an entry's files that can still be taken back: until {@link EntryWrite.done}, the
 * previous version of each replaced file is kept under a hidden name (a hard link, so keeping it
 * costs no space), and {@link EntryWrite.undo} puts the library back as it was: previous files
 * restored, new files and new category directories removed. The caller undoes when the index
 * write that follows fails, so a failed write leaves neither a phantom category nor half an entry.
 */
export interface EntryWrite {
  /** The entry's directory. */
  dir: string;
  /** Never throws; false when something could not be put back (the files are then as the undo left them). */
  undo(): boolean;
  /** The write stands: the kept previous versions go. */
  done(): void;
}

/** What one replaced (or removed) file was: `previous` holds the old version, undefined when there was none. */
interface Replaced {
  file: string;
  previous: string | undefined;
}

/**
 * Writes an entry's files atomically (media.json first when given, then content.md). Missing
 * category directories are created; every location is checked against links leading out of the
 * library before and after. A write that fails part way is undone before the error is thrown.
 */
export function writeEntryFiles(realRoot: string, n: KnowledgeName, content: string, media: MediaRef[] | undefined): EntryWrite {
  const dir = pathOf(realRoot, n.name);
  assertWritableInside(realRoot, dir, n.name);
  // Deepest first, the order they are removed in by an undo.
  const created: string[] = [];
  for (let p = dir; !existsSync(p) && isInside(realRoot, p) && p !== realRoot; p = dirname(p)) created.push(p);
  const replaced: Replaced[] = [];
  const write = entryWrite(dir, created, replaced);
  try {
    mkdirSync(dir, { recursive: true });
    assertWritableInside(realRoot, dir, n.name);
    if (media !== undefined) {
      if (media.length > 0) replaceFile(join(dir, MEDIA_FILE), `${JSON.stringify(media, null, 2)}\n`, replaced);
      else setAside(join(dir, MEDIA_FILE), replaced);
    }
    replaceFile(join(dir, CONTENT_FILE), content, replaced);
    // New directories are durable once their parents' entries are.
    for (const p of created) fsyncDir(dirname(p));
  } catch (error) {
    write.undo();
    throw error;
  }
  return write;
}

/** Rewrites media.json alone (attach), undoably like {@link writeEntryFiles}. */
export function writeMediaList(dir: string, media: readonly MediaRef[]): EntryWrite {
  const replaced: Replaced[] = [];
  const write = entryWrite(dir, [], replaced);
  try {
    replaceFile(join(dir, MEDIA_FILE), `${JSON.stringify(media, null, 2)}\n`, replaced);
  } catch (error) {
    write.undo();
    throw error;
  }
  return write;
}

function entryWrite(dir: string, created: readonly string[], replaced: Replaced[]): EntryWrite {
  return {
    dir,
    undo: () => {
      let complete = true;
      for (const { file, previous } of [...replaced].reverse()) {
        try {
          if (previous === undefined) removeIfPresent(file);
          else {
            renameSync(previous, file);
            // A rename onto another link of the same file does nothing; the kept name must go too.
            removeIfPresent(previous);
          }
        } catch {
          complete = false;
        }
      }
      for (const p of created) if (existsSync(p) && !tryRmdir(p)) complete = false;
      // The removals are durable once the directory above the highest new one is.
      const top = created[created.length - 1];
      fsyncDir(top === undefined ? dir : dirname(top));
      return complete;
    },
    done: () => {
      for (const { previous } of replaced) if (previous !== undefined) removeIfPresent(previous);
    },
  };
}

/** The hidden name a file's previous version is kept under while a write can still be undone. */
function previousName(file: string): string {
  return join(dirname(file), `.${basename(file)}${PREVIOUS_MARK}${randomBytes(4).toString('hex')}`);
}

const PREVIOUS_MARK = '.prev-';

/** Keeps the current version (if any) under a hidden name, then writes the new one atomically. */
function replaceFile(file: string, data: string, replaced: Replaced[]): void {
  let previous: string | undefined;
  if (existsSync(file)) {
    previous = previousName(file);
    linkSync(file, previous);
  }
  replaced.push({ file, previous });
  writeFileAtomically(file, data);
}

/** Removes a file so that an undo can bring it back. */
function setAside(file: string, replaced: Replaced[]): void {
  if (!existsSync(file)) return;
  const previous = previousName(file);
  renameSync(file, previous);
  replaced.push({ file, previous });
}

export interface RemovedEntry {
  /** Category directories removed because the delete emptied them. */
  pruned: string[];
  /** The entry directory still holds files people put there: it is now a category. */
  leftAsCategory: boolean;
}

/**
 * Removes an entry's files and its directory, then every category directory above it that this
 * left empty (up to the library root). Files other than the entry's own stay where they are; the
 * directory then counts as a category.
 */
export function removeEntryFiles(realRoot: string, n: KnowledgeName): RemovedEntry {
  const dir = pathOf(realRoot, n.name);
  assertWritableInside(realRoot, dir, n.name);
  if (lstatSync(dir).isSymbolicLink()) {
    // An alias made with a link: removing it removes the alias, not the entry it points to.
    unlinkSync(dir);
    return { pruned: pruneEmptied(realRoot, n), leftAsCategory: false };
  }
  removeIfPresent(join(dir, CONTENT_FILE));
  removeIfPresent(join(dir, MEDIA_FILE));
  for (const f of readdirSync(dir)) {
    // Temporary files of an interrupted atomic write, and previous versions an interrupted write kept.
    const own = [CONTENT_FILE, MEDIA_FILE].some((name) => f.startsWith(`.${name}.tmp-`) || f.startsWith(`.${name}${PREVIOUS_MARK}`));
    if (own) removeIfPresent(join(dir, f));
  }
  if (!tryRmdir(dir)) {
    fsyncDir(dir);
    return { pruned: [], leftAsCategory: true };
  }
  return { pruned: pruneEmptied(realRoot, n), leftAsCategory: false };
}

/** Removes the category directories above a removed entry that are now empty, nearest first. */
function pruneEmptied(realRoot: string, n: KnowledgeName): string[] {
  const pruned: string[] = [];
  for (let i = n.segments.length - 1; i >= 1; i--) {
    const category = n.segments.slice(0, i).join('/');
    if (!tryRmdir(pathOf(realRoot, category))) break;
    pruned.push(category);
  }
  const top = n.segments.length - 1 - pruned.length;
  fsyncDir(pathOf(realRoot, n.segments.slice(0, top).join('/')));
  return pruned;
}

function tryRmdir(dir: string): boolean {
  try {
    rmdirSync(dir);
    return true;
  } catch {
    return false;
  }
}

function removeIfPresent(file: string): void {
  try {
    unlinkSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}

/** The modification time of content.md (ms), for KnowledgeEntry.updated_at. */
export function contentTime(dir: string): number {
  return Math.round(statSync(join(dir, CONTENT_FILE)).mtimeMs);
}

/**
 * The real directory of an existing entry, or undefined when there is no content.md there.
 * Throws HA_ERR_KNOWLEDGE_NAME when a link takes the entry outside the library.
 */
export function entryDir(realRoot: string, n: KnowledgeName): string | undefined {
  const dir = pathOf(realRoot, n.name);
  let real: string;
  try {
    real = realpathSync(dir);
  } catch {
    return undefined;
  }
  const file = join(real, CONTENT_FILE);
  let contentReal: string;
  try {
    contentReal = realpathSync(file);
  } catch {
    return undefined;
  }
  if (!isInside(realRoot, real) || !isInside(realRoot, contentReal)) {
    throw placeError(n.name, 'a symbolic link takes it outside the knowledge directory');
  }
  return lstatSync(contentReal).isFile() ? real : undefined;
}

/**
 * Names of knowledge entries and categories, and where they live on disk. A name is a path of
 * segments separated by "/" (`recipes/soup/tomato_soup`): lower-cased, Unicode kept (NFC), runs of
 * white space and backslashes turned into "_". What cannot be made safe is refused, never guessed
 * at: traversal (`..`, `.`), absolute paths, empty segments, NUL and other control characters,
 * hidden names (a leading "."), the file names an entry directory uses, and over-long names.
 */
import { existsSync, realpathSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { HomeAgentError } from '../shared/errors.js';

/** Characters per segment (a Chinese title of 100 characters is plenty). */
export const MAX_SEGMENT_CHARS = 100;
/** Bytes per segment in UTF-8: Linux refuses file names over 255 bytes (100 CJK characters are 300). */
export const MAX_SEGMENT_BYTES = 255;
/** Segments of a name, the leaf included. */
export const MAX_DEPTH = 8;
/** The entry's text. */
export const CONTENT_FILE = 'content.md';
/** The entry's attachments (references into the media store). */
export const MEDIA_FILE = 'media.json';

const RESERVED = new Set([CONTENT_FILE, MEDIA_FILE]);
// C0/C1 controls, and the line/paragraph separators that would break a listing.
const CONTROL = /[\p{Cc}\u2028\u2029]/u;
const BLANKS = /[\s\\]+/gu;

export interface KnowledgeName {
  /** The sanitised full path: `recipes/soup/tomato_soup`. */
  name: string;
  segments: string[];
  /** The parent path: `recipes/soup`; empty at the top. */
  category: string;
  /** The last segment. */
  leaf: string;
}

function refuse(input: string, problem: string): never {
  throw new HomeAgentError('HA_ERR_KNOWLEDGE_NAME', `knowledge name ${quoted(input)} is refused: ${problem}`);
}

/** JSON-quoted with the line separators escaped too: messages end up in one-line logs and terminals. */
export function quoted(text: string): string {
  return JSON.stringify(text)
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

/**
 * Sanitises an entry name (`Recipes/Soup/Tomato Soup` → `recipes/soup/tomato_soup`); throws
 * HA_ERR_KNOWLEDGE_NAME naming the problem.
 */
export function entryName(input: string): KnowledgeName {
  const segments = sanitizeSegments(input, false);
  const leaf = segments[segments.length - 1] as string;
  return { name: segments.join('/'), segments, category: segments.slice(0, -1).join('/'), leaf };
}

/** Sanitises a category path; the empty string (or "/") is the whole library. */
export function categoryPath(input: string): string {
  return sanitizeSegments(input, true).join('/');
}

function sanitizeSegments(input: string, allowRoot: boolean): string[] {
  if (typeof input !== 'string') refuse(String(input), 'it is not a string');
  if (CONTROL.test(input)) refuse(input, 'it contains NUL or other control characters');
  const trimmed = input.trim();
  const absolute = 'absolute paths are not names; give it relative to the library, e.g. recipes/soup';
  if (/^[a-z]:[\\/]/i.test(trimmed) || trimmed.startsWith('\\')) refuse(input, absolute);
  if (allowRoot && (trimmed === '' || trimmed === '/')) return [];
  if (trimmed === '') refuse(input, 'it is empty');
  if (trimmed.startsWith('/')) refuse(input, absolute);
  // "tech/" names the category tech; an entry name with a trailing "/" is a mistake worth saying.
  const raw = (allowRoot ? trimmed.replace(/\/$/, '') : trimmed).split('/');
  if (raw.length > MAX_DEPTH) refuse(input, `it has ${raw.length} levels; at most ${MAX_DEPTH} are allowed`);
  return raw.map((part) => {
    const segment = part.trim().normalize('NFC').toLowerCase().replace(BLANKS, '_');
    if (segment === '') refuse(input, 'it has an empty level (two "/" in a row, or a trailing "/")');
    if (segment === '.' || segment === '..') refuse(input, `"${segment}" levels are not allowed`);
    if (segment.startsWith('.')) refuse(input, `"${segment}" starts with "." (hidden names are not entries)`);
    if (RESERVED.has(segment)) refuse(input, `"${segment}" is the name of an entry's own file`);
    if ([...segment].length > MAX_SEGMENT_CHARS) refuse(input, `a level is longer than ${MAX_SEGMENT_CHARS} characters`);
    if (Buffer.byteLength(segment, 'utf8') > MAX_SEGMENT_BYTES) refuse(input, `a level is longer than ${MAX_SEGMENT_BYTES} bytes`);
    return segment;
  });
}

/** True when `name` is already in the form {@link entryName} gives (on-disk names must be). */
export function isCanonicalSegment(segment: string): boolean {
  try {
    const [only, ...rest] = sanitizeSegments(segment, false);
    return rest.length === 0 && only === segment;
  } catch {
    return false;
  }
}

/** True when `path` is `root` or inside it (both absolute, already resolved). */
export function isInside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !rel.startsWith(sep));
}

/** The directory of a name inside the library root. */
export function pathOf(root: string, name: string): string {
  return name === '' ? root : join(root, ...name.split('/'));
}

/**
 * Refuses a write location whose nearest existing ancestor resolves (through symbolic links)
 * outside the library; `realRoot` is the library's own realpath.
 */
export function assertWritableInside(realRoot: string, path: string, name: string): void {
  let probe = path;
  while (!existsSync(probe)) {
    const up = dirname(probe);
    if (up === probe) break;
    probe = up;
  }
  const real = realpathSync(probe);
  if (!isInside(realRoot, real)) {
    throw new HomeAgentError(
      'HA_ERR_KNOWLEDGE_NAME',
      `knowledge name ${JSON.stringify(name)} is refused: ${probe} is a link to ${real}, outside the knowledge directory`,
    );
  }
}

/**
 * Control methods for the knowledge library (`kb.tree`, `kb.search`, `kb.get`, `kb.media`,
 * `kb.add`, `kb.rm`, `kb.import`, `kb.reindex`, `kb.stats`), used by `homeagentctl kb` and the web
 * page. Every change is audited with the caller as actor. `kb.media` only ever names a file inside
 * the media store, so the web server can serve what it answers without a path check of its own. `kb.import` reads a folder the caller names on the daemon's machine with the
 * daemon's rights: the caller is the box's administrator (the CLI socket is for the service group),
 * so any absolute folder is accepted (the service refuses one overlapping the library, and follows
 * no symlinks inside it); the audit record names the real folder, also when the service refused it.
 */
import { closeSync, openSync, readSync, realpathSync, statSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import { Type } from '@sinclair/typebox';
import type { KbAddResult, KbGetResult, KbMediaRef, KbMediaResult, KbRemoveResult, KbSearchResult } from '../api/knowledge.js';
import type { AuditRecord } from '../log/logger.js';
import type { ControlMethodRegistrar } from '../shared/control-method.js';
import { describeError, HomeAgentError } from '../shared/errors.js';
import { type MediaStore, sniffMedia } from '../store/media-store.js';
import { isInside } from './knowledge-paths.js';
import type { ImportSummary, KnowledgeBase, KnowledgeStats, ReindexSummary, TreeNode } from './types.js';

export type { KbAddResult, KbGetResult, KbMediaRef, KbMediaResult, KbRemoveResult, KbSearchResult };

/** The control registry, as far as these methods need it. */
export type KnowledgeControl = ControlMethodRegistrar;

export interface KnowledgeMethodOptions {
  /** The LogManager: every change writes an audit record. */
  logs: { audit(record: AuditRecord): void };
  /** Milliseconds, for the duration kb.import reports; Date.now by default. */
  now?: () => number;
  /** The media store: kb.media answers paths inside it only. Without it kb.media is unavailable. */
  media?: MediaStore;
}

export const DEFAULT_SEARCH_LIMIT = 10;
export const MAX_SEARCH_LIMIT = 100;
/** The largest entry core.knowledge.max_entry_kb allows (64 MiB); the service applies the configured one. */
const MAX_CONTENT_CHARS = 64 * 1024 * 1024;
const MAX_PATH_CHARS = 4096;

const Name = Type.String({ minLength: 1, maxLength: 1000 });

/** A media file as kb.get names it: the sha256 of its bytes, with the extension of its type. */
const MEDIA_FILE = /^([0-9a-f]{64})(?:\.[a-z0-9]{1,8})?$/;
/** Extensions of the types the media store accepts (store/media-store.ts sniffMedia). */
const MEDIA_EXTENSIONS: Readonly<Record<string, string>> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/gif': 'gif',
  'image/webp': 'webp',
  'audio/wav': 'wav',
  'audio/ogg': 'ogg',
  'audio/flac': 'flac',
  'audio/mpeg': 'mp3',
};

/** The answer of `kb.import`. */
export interface KbImportResult extends ImportSummary {
  /** The real folder that was read. */
  dir: string;
  category: string | null;
  ms: number;
}

export type KbTreeResult = TreeNode;
export type KbStatsResult = KnowledgeStats;
export type KbReindexResult = ReindexSummary;

export function registerKnowledgeMethods(control: KnowledgeControl, kb: KnowledgeBase, options: KnowledgeMethodOptions): void {
  const now = options.now ?? Date.now;

  control.register({
    name: 'kb.tree',
    description:
      'The category tree of the knowledge library from a category (or the top): per category its entries directly in it and in all, optionally the entries with a preview; depth limits the levels shown.',
    params: Type.Object({
      category: Type.Optional(Name),
      depth: Type.Optional(Type.Integer({ minimum: 0, maximum: 64 })),
      items: Type.Optional(Type.Boolean()),
      preview: Type.Optional(Type.Integer({ minimum: 1, maximum: 2000 })),
    }),
    handler: ({ category, depth, items, preview }): KbTreeResult =>
      kb.tree({
        ...(category !== undefined && { category }),
        ...(depth !== undefined && { max_depth: depth }),
        ...(items !== undefined && { include_items: items }),
        ...(preview !== undefined && { preview_limit: preview }),
      }),
  });

  control.register({
    name: 'kb.search',
    description: `Hybrid search of the knowledge library (by meaning and by words), optionally within a category; limit 1–${MAX_SEARCH_LIMIT}, default ${DEFAULT_SEARCH_LIMIT}.`,
    params: Type.Object({
      q: Type.String({ minLength: 1, maxLength: 1000 }),
      category: Type.Optional(Name),
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_SEARCH_LIMIT })),
    }),
    handler: async ({ q, category, limit }): Promise<KbSearchResult> => {
      const query = q.trim();
      if (query === '') throw new HomeAgentError('HA_ERR_RPC_INVALID_PARAMS', 'kb.search: q has nothing to look for');
      const hits = await kb.search(query, { top_k: limit ?? DEFAULT_SEARCH_LIMIT, ...(category !== undefined && { category }) });
      return { query, category: category ?? null, hits };
    },
  });

  control.register({
    name: 'kb.get',
    description: 'One entry by name: its category, content (markdown) and attachments (file, name, type, bytes; kb.media locates a file).',
    params: Type.Object({ name: Name }),
    handler: ({ name }): KbGetResult => {
      const entry = kb.get(name);
      if (entry === undefined) throw notFound(name);
      return {
        name: entry.name,
        category: entry.category,
        content: entry.content,
        media: entry.media.map((m) => ({
          file: MEDIA_EXTENSIONS[m.mime] === undefined ? m.digest : `${m.digest}.${MEDIA_EXTENSIONS[m.mime]}`,
          name: m.file_name,
          type: m.mime,
          bytes: m.bytes,
        })),
        updated_at: new Date(entry.updated_at).toISOString(),
      };
    },
  });

  control.register({
    name: 'kb.media',
    description:
      'Where a media file kb.get lists (<sha256>.<ext>) is: its absolute path inside the media store, its type read from its bytes, and its size; anything that is not such a name is refused.',
    params: Type.Object({ file: Type.String({ minLength: 1, maxLength: 200 }) }),
    handler: ({ file }): KbMediaResult => locateMedia(options.media, file),
  });

  control.register({
    name: 'kb.add',
    description: 'Write an entry (markdown) under a name like recipes/soup/tomato_soup; an existing entry is replaced only with overwrite.',
    params: Type.Object({
      name: Name,
      content: Type.String({ minLength: 1, maxLength: MAX_CONTENT_CHARS }),
      overwrite: Type.Optional(Type.Boolean()),
    }),
    handler: async ({ name, content, overwrite }, caller): Promise<KbAddResult> => {
      if (content.trim() === '') throw new HomeAgentError('HA_ERR_RPC_INVALID_PARAMS', 'kb.add: the content is empty');
      // An existing entry without overwrite is refused by the service (HA_ERR_KNOWLEDGE_EXISTS).
      const before = kb.get(name);
      const entry = await kb.create(name, content, { overwrite: overwrite === true });
      const result: KbAddResult = {
        name: entry.name,
        category: entry.category,
        replaced: before !== undefined,
        bytes: Buffer.byteLength(entry.content),
        media: entry.media.length,
      };
      options.logs.audit({ actor: caller.actor, action: 'kb.add', name: entry.name, replaced: result.replaced, bytes: result.bytes });
      return result;
    },
  });

  control.register({
    name: 'kb.rm',
    description: 'Delete an entry and its attachments (the media files stay in the media store while other entries use them).',
    params: Type.Object({ name: Name }),
    handler: async ({ name }, caller): Promise<KbRemoveResult> => {
      const entry = kb.get(name);
      if (entry === undefined || !(await kb.delete(entry.name))) throw notFound(name);
      options.logs.audit({ actor: caller.actor, action: 'kb.rm', name: entry.name, bytes: Buffer.byteLength(entry.content) });
      return { name: entry.name, removed: true, media: entry.media.length };
    },
  });

  control.register({
    name: 'kb.import',
    description:
      "Import the markdown and text files of a folder on the daemon's machine (an absolute path), each file an entry named after its path there, optionally under a category; returns what was imported and what was skipped and why.",
    params: Type.Object({
      dir: Type.String({ minLength: 1, maxLength: MAX_PATH_CHARS }),
      category: Type.Optional(Name),
    }),
    handler: async ({ dir, category }, caller): Promise<KbImportResult> => {
      const real = importFolder(dir);
      const started = now();
      const audit = { actor: caller.actor, action: 'kb.import', dir: real, category: category ?? null };
      let summary: ImportSummary;
      try {
        summary = await kb.importDir(real, category === undefined ? {} : { category });
      } catch (error) {
        options.logs.audit({ ...audit, error: describeError(error) });
        throw error;
      }
      options.logs.audit({ ...audit, imported: summary.imported.length, skipped: summary.skipped.length });
      return { dir: real, category: category ?? null, imported: summary.imported, skipped: summary.skipped, ms: now() - started };
    },
  });

  control.register({
    name: 'kb.reindex',
    description: 'Re-read the files under <data>/knowledge and bring the index in line (new, changed and vanished entries).',
    params: Type.Object({}),
    handler: async (_params, caller): Promise<KbReindexResult> => {
      const summary = await kb.reindex();
      options.logs.audit({ actor: caller.actor, action: 'kb.reindex', indexed: summary.indexed, removed: summary.removed });
      return summary;
    },
  });

  control.register({
    name: 'kb.stats',
    description:
      'What the knowledge library holds: entries, categories, media files and bytes, the index state and the vector (dense) path: enabled, ready, total.',
    params: Type.Object({}),
    handler: (): KbStatsResult => kb.stats(),
  });
}

/** The real path of the folder kb.import is asked to read (the service checks it is a folder outside the library). */
function importFolder(dir: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what is refused
  if (/[\u0000-\u001f\u007f]/.test(dir)) throw invalid('the folder contains NUL or control characters');
  if (!isAbsolute(dir)) throw invalid(`${JSON.stringify(dir)} is not an absolute path (homeagentctl sends one)`);
  try {
    return realpathSync(dir);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw invalid(code === 'ENOENT' ? `${dir} does not exist on the daemon's machine` : `${dir} cannot be read by the daemon (${code})`);
  }
}

function invalid(problem: string): HomeAgentError {
  return new HomeAgentError('HA_ERR_RPC_INVALID_PARAMS', `kb.import: ${problem}`);
}

function notFound(name: string): HomeAgentError {
  return new HomeAgentError('HA_ERR_KNOWLEDGE_NOT_FOUND', `the knowledge library has no entry named ${JSON.stringify(name)}`);
}

/**
 * The media file named `file` (as kb.get lists it), checked to be a regular file whose real path
 * is inside the media store: a name that is not a digest (a path, "..", another directory) is
 * refused before the file system is touched, and a link leading out of the store is refused.
 */
function locateMedia(media: MediaStore | undefined, file: string): KbMediaResult {
  if (media === undefined) throw new HomeAgentError('HA_ERR_UNAVAILABLE', 'kb.media: this daemon has no media store');
  const digest = MEDIA_FILE.exec(file)?.[1];
  if (digest === undefined) {
    throw new HomeAgentError(
      'HA_ERR_RPC_INVALID_PARAMS',
      `kb.media: ${JSON.stringify(file.slice(0, 100))} is not a media file name; give one as kb.get lists it (<sha256>.<ext>), never a path`,
    );
  }
  const missing = () => new HomeAgentError('HA_ERR_KNOWLEDGE_NOT_FOUND', `the media store has no file ${file}`);
  let path: string;
  let root: string;
  try {
    root = realpathSync(media.dir);
    path = realpathSync(media.path(digest));
  } catch {
    throw missing();
  }
  if (!isInside(root, path)) {
    throw new HomeAgentError('HA_ERR_FILES_DENIED', `kb.media: ${file} is a link to ${path}, outside the media store; it is not served`);
  }
  const stat = statSync(path, { throwIfNoEntry: false });
  if (!stat?.isFile()) throw missing();
  return { path, type: sniffMedia(head(path))?.mime ?? 'application/octet-stream', bytes: stat.size };
}

/** The first bytes of a file, enough to tell its type. */
function head(path: string): Uint8Array {
  const buffer = Buffer.alloc(16);
  const fd = openSync(path, 'r');
  try {
    return buffer.subarray(0, readSync(fd, buffer, 0, buffer.length, 0));
  } finally {
    closeSync(fd);
  }
}

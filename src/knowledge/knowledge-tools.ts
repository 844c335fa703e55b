/**
 * The knowledge tools the model uses: search, browse and read the household library, add entries,
 * attach images or audio, delete, and import a folder of notes.
 *
 * What the model may destroy is bounded by what it can give back. Replacing an entry (overwrite)
 * is an `act` only while the old text comes back whole in the result (so "put the old version
 * back" works from the conversation); a larger entry can only be replaced by the owner. Deleting
 * is `dangerous`: it takes the attachments too and a long manual cannot be echoed back, so the
 * owner confirms it (an instruction hidden in an imported page can ask for a delete, never run one).
 *
 * Files the model names (attach, import) are read only from the source roots the daemon gives
 * (by default <data>/inbox: put files there to hand them over). A path is resolved to its real
 * path and must lie inside a root, so `..`, other absolute paths and symlinks leading out are
 * refused; a file is opened without following a final symlink and re-checked after opening.
 */
import { closeSync, constants, fstatSync, openSync, readlinkSync, readSync, realpathSync, statSync } from 'node:fs';
import { basename, isAbsolute, join, resolve, sep } from 'node:path';
import { describeError, HomeAgentError } from '../shared/errors.js';
import { type ToolContext, type ToolDefinition, ToolError, type ToolErrorReason } from '../shared/tool.js';
import { cut, integerArg, isoDate, optionalText, requiredText, type ToolArgs } from '../shared/tool-args.js';
import type { ImportSummary, KnowledgeBase, KnowledgeEntry, TreeNode } from './types.js';

export const KNOWLEDGE_OWNER = 'knowledge';

/** Most hits knowledge_search returns, whatever core.knowledge.top_k says (results stay compact). */
export const MAX_SEARCH_HITS = 20;
/** Characters of the best hit's text given with the search result, so one call often suffices. */
export const TOP_HIT_CHARS = 2000;
/** Characters knowledge_read returns per call; longer entries are read in pages. */
export const READ_PAGE_CHARS = 6000;
/** Entries whose text is longer cannot be replaced by the model (their old text would not come back whole). */
export const REPLACEABLE_CHARS = 8000;
/** Text of a deleted entry given back in the result. */
const DELETED_CHARS = 4000;
/** Categories and entries knowledge_list shows at most. */
export const LIST_CATEGORIES = 100;
export const LIST_ENTRIES = 50;
const LIST_PREVIEW_CHARS = 100;
/** Names and skip reasons an import result lists at most (the counts are always complete). */
export const IMPORT_LISTED = 30;
/** Importing a large folder embeds every file: far longer than an ordinary tool call. */
export const IMPORT_TIMEOUT_MS = 600_000;
const MAX_NAME_CHARS = 900;
const MAX_CONTENT_CHARS = 200_000;
const MAX_PATH_CHARS = 4096;

/** The part of core.knowledge the tools read (on every call, so changes apply at once). */
export interface KnowledgeToolSettings {
  top_k: number;
  max_entry_kb: number;
  max_media_mb: number;
}

export interface KnowledgeToolOptions {
  settings: () => KnowledgeToolSettings;
  /**
   * Absolute folders knowledge_attach and knowledge_import_dir may read from, the first also the
   * base of relative paths (main.ts: <data>/inbox). Resolved on every call; missing ones are skipped.
   */
  sourceRoots: () => readonly string[];
}

export function knowledgeTools(kb: KnowledgeBase, options: KnowledgeToolOptions): ToolDefinition[] {
  const NAME = {
    type: 'string',
    minLength: 1,
    maxLength: MAX_NAME_CHARS,
    description: 'Entry name: categories and the entry separated by "/", e.g. "recipes/soup/tomato_soup".',
  };
  const CATEGORY = {
    type: 'string',
    minLength: 1,
    maxLength: MAX_NAME_CHARS,
    description: 'A category path such as "recipes" or "appliances/kitchen"; only entries in it and below it.',
  };
  const roots = () => sourceRoots(options);
  return [
    {
      name: 'knowledge_search',
      owner: KNOWLEDGE_OWNER,
      tier: 'read',
      parallel_safe: true,
      // The library keeps its own text; memory would only distil copies of manuals into facts.
      no_memory: true,
      description:
        'Search the household knowledge base (manuals, recipes, house notes) by meaning and by words. Returns the best ' +
        'entries with a snippet each and the text of the best one; use knowledge_read for the rest of an entry.',
      parameters: {
        type: 'object',
        properties: {
          query: { type: 'string', minLength: 1, maxLength: 500, description: 'What to look for, in any language.' },
          top_k: { type: 'integer', minimum: 1, maximum: MAX_SEARCH_HITS, description: 'Most entries returned (default from settings).' },
          category: CATEGORY,
        },
        required: ['query'],
        additionalProperties: false,
      },
      execute: async (args: ToolArgs) => {
        const query = requiredText(args, 'query', 'pass words to look for, e.g. "descale the coffee machine"', 500);
        const fallback = Math.min(Math.max(options.settings().top_k, 1), MAX_SEARCH_HITS);
        const topK = integerArg(args, 'top_k', { min: 1, max: MAX_SEARCH_HITS, fallback });
        const category = optionalText(args, 'category', 'pass a category path from knowledge_list, or leave it out', MAX_NAME_CHARS);
        const hits = await guarded(() => kb.search(query, { top_k: topK, ...(category !== undefined && { category }) }), 'category');
        if (hits.length === 0) {
          return {
            hits: [],
            no_record: true,
            hint: 'nothing in the knowledge base matches; try other words, or knowledge_list to browse the categories',
          };
        }
        const best = guardedSync(() => kb.get(hits[0]?.name ?? ''), 'name');
        return {
          hits: hits.map((hit, i) => ({
            name: hit.name,
            category: hit.category,
            score: Math.round(hit.score * 1000) / 1000,
            snippet: hit.snippet,
            ...(i === 0 && best !== undefined && bestText(best)),
          })),
        };
      },
    },
    {
      name: 'knowledge_list',
      owner: KNOWLEDGE_OWNER,
      tier: 'read',
      parallel_safe: true,
      no_memory: true,
      description:
        'Browse the knowledge base: the categories below a category (or the whole library) with their entry counts, ' +
        'and the entries directly in it with a short preview.',
      parameters: {
        type: 'object',
        properties: {
          category: CATEGORY,
          depth: { type: 'integer', minimum: 1, maximum: 8, default: 2, description: 'Category levels shown below it (default 2).' },
        },
        additionalProperties: false,
      },
      execute: (args: ToolArgs) => {
        const category = optionalText(args, 'category', 'pass a category path, or leave it out for the whole library', MAX_NAME_CHARS);
        const depth = integerArg(args, 'depth', { min: 1, max: 8, fallback: 2 });
        const start = category === undefined ? {} : { category };
        const tree = guardedSync(() => kb.tree({ ...start, max_depth: depth }), 'category');
        const here = guardedSync(
          () => kb.tree({ ...start, max_depth: 0, include_items: true, preview_limit: LIST_PREVIEW_CHARS }),
          'category',
        );
        return listing(tree, here);
      },
    },
    {
      name: 'knowledge_read',
      owner: KNOWLEDGE_OWNER,
      tier: 'read',
      parallel_safe: true,
      no_memory: true,
      description: `The text of one knowledge entry (${READ_PAGE_CHARS} characters per call; pass offset for the next part) and its attachments.`,
      parameters: {
        type: 'object',
        properties: {
          name: NAME,
          offset: { type: 'integer', minimum: 0, default: 0, description: 'Character to start at (next_offset of the previous call).' },
        },
        required: ['name'],
        additionalProperties: false,
      },
      execute: (args: ToolArgs) => {
        const name = requiredText(args, 'name', 'pass an entry name from knowledge_search or knowledge_list', MAX_NAME_CHARS);
        const offset = integerArg(args, 'offset', { min: 0, max: Number.MAX_SAFE_INTEGER, fallback: 0 });
        const entry = existing(kb, name);
        const end = Math.min(entry.content.length, offset + READ_PAGE_CHARS);
        return {
          name: entry.name,
          category: entry.category,
          updated: isoDate(entry.updated_at),
          total_chars: entry.content.length,
          content: entry.content.slice(offset, end),
          ...(end < entry.content.length && { next_offset: end }),
          media: entry.media.map((m) => ({ file_name: m.file_name, kind: m.kind, mime: m.mime, bytes: m.bytes })),
        };
      },
    },
    {
      name: 'knowledge_create',
      owner: KNOWLEDGE_OWNER,
      tier: 'act',
      description:
        'Add an entry to the knowledge base (markdown text), e.g. a recipe, how to reset the router, where the fuse box is. ' +
        `An existing entry is replaced only with overwrite: true, and only when it is at most ${REPLACEABLE_CHARS} characters; ` +
        'its old text comes back in the result.',
      parameters: {
        type: 'object',
        properties: {
          name: NAME,
          content: { type: 'string', minLength: 1, maxLength: MAX_CONTENT_CHARS, description: 'The entry text (markdown).' },
          overwrite: { type: 'boolean', default: false, description: 'Replace an entry of that name.' },
        },
        required: ['name', 'content'],
        additionalProperties: false,
      },
      // The replaced text is for undoing in this conversation; memory keeps what was done.
      cleaner: withoutField('previous_content'),
      execute: async (args: ToolArgs) => {
        const name = requiredText(args, 'name', 'pass a name like "garden/roses/pruning"', MAX_NAME_CHARS);
        // Checked like other text, but stored as given: markdown keeps its trailing newline.
        requiredText(args, 'content', 'pass the text of the entry', MAX_CONTENT_CHARS);
        const content = args.content as string;
        const overwrite = args.overwrite === true;
        const maxBytes = options.settings().max_entry_kb * 1024;
        if (Buffer.byteLength(content) > maxBytes) {
          throw new ToolError({
            reason: 'range',
            field: 'content',
            detail: `content is larger than ${options.settings().max_entry_kb} KiB`,
            hint: 'split it into several entries',
          });
        }
        const before = guardedSync(() => kb.get(name), 'name');
        if (before !== undefined) replaceable(before, overwrite);
        const entry = await guarded(() => kb.create(name, content, { overwrite: before !== undefined }), 'name');
        return {
          name: entry.name,
          category: entry.category,
          ...(before === undefined ? { created: true } : { replaced: true, previous_content: before.content }),
          ...(entry.media.length > 0 && { media: entry.media.length }),
        };
      },
    },
    {
      name: 'knowledge_attach',
      owner: KNOWLEDGE_OWNER,
      tier: 'act',
      description:
        'Attach an image or audio file to an existing knowledge entry (e.g. a photo of the wiring, a voice note). ' +
        'The file must be in the folder files are handed over in (its path as given there, or absolute).',
      parameters: {
        type: 'object',
        properties: {
          name: NAME,
          path: {
            type: 'string',
            minLength: 1,
            maxLength: MAX_PATH_CHARS,
            description: 'The file, relative to the hand-over folder or absolute.',
          },
        },
        required: ['name', 'path'],
        additionalProperties: false,
      },
      execute: async (args: ToolArgs) => {
        const name = requiredText(args, 'name', 'pass the name of an existing entry', MAX_NAME_CHARS);
        const requested = requiredText(args, 'path', 'pass the path of an image or audio file', MAX_PATH_CHARS);
        const entry = existing(kb, name);
        const file = readSourceFile(requested, roots(), options.settings().max_media_mb * 1024 * 1024, 'path');
        const media = await guarded(() => kb.attach(entry.name, { file_name: basename(file.path), data: file.data }), 'path');
        return {
          attached: true,
          name: entry.name,
          media: { file_name: media.file_name, kind: media.kind, mime: media.mime, bytes: media.bytes, digest: media.digest },
        };
      },
    },
    {
      name: 'knowledge_delete',
      owner: KNOWLEDGE_OWNER,
      tier: 'dangerous',
      description: 'Delete an entry from the knowledge base with its attachments (the owner confirms first).',
      parameters: {
        type: 'object',
        properties: { name: NAME },
        required: ['name'],
        additionalProperties: false,
      },
      execute: async (args: ToolArgs) => {
        const name = requiredText(args, 'name', 'pass the name of the entry to delete', MAX_NAME_CHARS);
        const entry = existing(kb, name);
        const deleted = await guarded(() => kb.delete(entry.name), 'name');
        if (!deleted) throw notFound(name);
        return {
          deleted: true,
          name: entry.name,
          total_chars: entry.content.length,
          content: cut(entry.content, DELETED_CHARS),
          ...(entry.media.length > 0 && { media_removed: entry.media.map((m) => m.file_name) }),
        };
      },
    },
    {
      name: 'knowledge_import_dir',
      owner: KNOWLEDGE_OWNER,
      tier: 'act',
      timeout_ms: IMPORT_TIMEOUT_MS,
      description:
        'Import a folder of markdown and text files into the knowledge base, each file an entry named after its path in the ' +
        'folder. The folder must be in the hand-over folder. Returns what was imported and what was skipped and why.',
      parameters: {
        type: 'object',
        properties: {
          dir: {
            type: 'string',
            minLength: 1,
            maxLength: MAX_PATH_CHARS,
            description: 'The folder, relative to the hand-over folder or absolute.',
          },
          category: { ...CATEGORY, description: 'Category to put the entries under, e.g. "manuals".' },
        },
        required: ['dir'],
        additionalProperties: false,
      },
      execute: async (args: ToolArgs, context?: ToolContext) => {
        const requested = requiredText(args, 'dir', 'pass the folder to import', MAX_PATH_CHARS);
        const category = optionalText(args, 'category', 'pass a category such as "manuals", or leave it out', MAX_NAME_CHARS);
        const dir = resolveSourceDir(requested, roots(), 'dir');
        const summary = await guarded(
          () =>
            kb.importDir(dir, {
              ...(category !== undefined && { category }),
              ...(context?.signal !== undefined && { signal: context.signal }),
            }),
          'category',
        );
        return importResult(summary);
      },
    },
  ];
}

// ---- results ----

function bestText(entry: KnowledgeEntry): Record<string, unknown> {
  return {
    content: cut(entry.content, TOP_HIT_CHARS),
    ...(entry.content.length > TOP_HIT_CHARS && { total_chars: entry.content.length }),
    ...(entry.media.length > 0 && { media: entry.media.map((m) => `${m.kind}: ${m.file_name}`) }),
  };
}

interface ListingResult {
  category: string;
  total_entries: number;
  categories: Array<{ path: string; entries: number }>;
  entries: Array<{ name: string; preview: string; media?: number }>;
  more_categories?: number;
  more_entries?: number;
  hint?: string;
}

/** The categories below `tree`'s root (depth first, as a tree reads) and the entries directly in it, both capped. */
function listing(tree: TreeNode, here: TreeNode): ListingResult {
  const categories: Array<{ path: string; entries: number }> = [];
  let hidden = 0;
  const visit = (node: TreeNode) => {
    for (const child of node.children) {
      if (categories.length < LIST_CATEGORIES) categories.push({ path: child.path, entries: child.total_count });
      else hidden++;
      visit(child);
    }
  };
  visit(tree);
  const items = here.items ?? [];
  const result: ListingResult = {
    category: tree.path,
    total_entries: tree.total_count,
    categories,
    entries: items.slice(0, LIST_ENTRIES).map((item) => ({
      name: item.path,
      preview: item.preview,
      ...(item.media > 0 && { media: item.media }),
    })),
  };
  const moreEntries = items.length - result.entries.length;
  if (hidden > 0) result.more_categories = hidden;
  if (moreEntries > 0) result.more_entries = moreEntries;
  if (hidden > 0 || moreEntries > 0) result.hint = 'list a category below this one, or use knowledge_search, to see the rest';
  if (tree.total_count === 0) result.hint = 'the knowledge base has no entries here yet';
  return result;
}

function importResult(summary: ImportSummary): Record<string, unknown> {
  return {
    imported: summary.imported.length,
    skipped: summary.skipped.length,
    ...(summary.imported.length > 0 && { names: summary.imported.slice(0, IMPORT_LISTED) }),
    ...(summary.skipped.length > 0 && { skipped_files: summary.skipped.slice(0, IMPORT_LISTED) }),
    ...((summary.imported.length > IMPORT_LISTED || summary.skipped.length > IMPORT_LISTED) && {
      note: `only the first ${IMPORT_LISTED} names and skipped files are listed; the counts are complete`,
    }),
  };
}

function withoutField(field: string): (text: string) => string {
  return (text) => {
    try {
      const value = JSON.parse(text) as unknown;
      if (value === null || typeof value !== 'object' || Array.isArray(value)) return text;
      const { [field]: _dropped, ...rest } = value as Record<string, unknown>;
      return JSON.stringify(rest);
    } catch {
      return text;
    }
  };
}

// ---- entries and errors ----

function existing(kb: KnowledgeBase, name: string): KnowledgeEntry {
  const entry = guardedSync(() => kb.get(name), 'name');
  if (entry === undefined) throw notFound(name);
  return entry;
}

function notFound(name: string): ToolError {
  return new ToolError({
    reason: 'not_found',
    field: 'name',
    detail: `the knowledge base has no entry named ${JSON.stringify(name)}`,
    hint: 'find the exact name with knowledge_search or knowledge_list',
  });
}

function replaceable(before: KnowledgeEntry, overwrite: boolean): void {
  if (!overwrite) {
    throw new ToolError({
      reason: 'rejected',
      field: 'name',
      detail: `an entry named ${JSON.stringify(before.name)} already exists`,
      hint: 'read it with knowledge_read; pass overwrite: true to replace it, or choose another name',
    });
  }
  if (before.content.length > REPLACEABLE_CHARS) {
    throw new ToolError({
      reason: 'rejected',
      field: 'overwrite',
      detail: `${JSON.stringify(before.name)} holds ${before.content.length} characters, too much to give back if replacing it was a mistake`,
      hint:
        'create the new text under another name, or ask the owner to replace it ' +
        `(homeagentctl kb add ${before.name} --overwrite --file FILE) or to confirm knowledge_delete first`,
    });
  }
}

/** The reason the model reads for an error of the knowledge base, by the code's last part. */
function reasonOf(code: string): ToolErrorReason {
  if (code === 'HA_ERR_UNAVAILABLE' || code.endsWith('_UNAVAILABLE')) return 'unavailable';
  if (code.endsWith('_NOT_FOUND')) return 'not_found';
  if (code.endsWith('_NAME')) return 'format';
  if (code.endsWith('_TOO_LARGE')) return 'range';
  if (code.endsWith('_EXISTS') || code.endsWith('_TYPE') || code.endsWith('_DENIED')) return 'rejected';
  if (code === 'HA_ERR_ABORTED') return 'timeout';
  return 'failed';
}

function hintFor(code: string, reason: ToolErrorReason): string {
  switch (reason) {
    case 'unavailable':
      return 'the knowledge base is not running; tell the person (homeagentctl status shows why)';
    case 'not_found':
      return 'call knowledge_list to see the categories and entries';
    case 'format':
      return 'use words, digits, spaces or _ in each part and "/" between parts, e.g. "recipes/soup/tomato_soup"';
    case 'range':
      return 'make it smaller, or split it';
    case 'timeout':
      return 'it was cancelled; try a smaller folder';
    case 'rejected':
      if (code.endsWith('_TYPE')) return 'only images (png, jpeg, gif, webp) and audio (wav, mp3, ogg, flac) can be attached';
      if (code.endsWith('_EXISTS')) return 'pass overwrite: true to replace it, or choose another name';
      return 'choose something inside the knowledge base';
    default:
      if (code === 'HA_ERR_STORE_FULL')
        return "the device's disk is full and nothing was saved; tell the person, space has to be freed first";
      return 'try again later';
  }
}

/** A ToolError the model can act on for anything the knowledge base throws; `field` is the argument concerned. */
export function knowledgeToolError(error: unknown, field: string): ToolError {
  if (error instanceof ToolError) return error;
  if (error instanceof HomeAgentError) {
    const reason = reasonOf(error.code);
    return new ToolError({
      reason,
      ...(reason !== 'unavailable' && reason !== 'failed' && reason !== 'timeout' && { field }),
      detail: `${error.code}: ${error.message}`,
      hint: hintFor(error.code, reason),
    });
  }
  return new ToolError({ reason: 'failed', detail: `the knowledge base failed: ${describeError(error)}`, hint: 'try again later' });
}

async function guarded<T>(run: () => Promise<T>, field: string): Promise<T> {
  try {
    return await run();
  } catch (error) {
    throw knowledgeToolError(error, field);
  }
}

function guardedSync<T>(run: () => T, field: string): T {
  try {
    return run();
  } catch (error) {
    throw knowledgeToolError(error, field);
  }
}

// ---- source paths ----

interface SourceRoot {
  /** As configured. */
  given: string;
  /** Real path, when it exists. */
  real: string | undefined;
}

/** The configured roots (relative ones ignored); an import overlapping the library is refused by the service. */
function sourceRoots(options: KnowledgeToolOptions): SourceRoot[] {
  return options.sourceRoots().flatMap((given) => (isAbsolute(given) ? [{ given, real: realOrUndefined(given) }] : []));
}

function realOrUndefined(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}

function inside(path: string, root: string): boolean {
  return path === root || path.startsWith(root === sep ? sep : root + sep);
}

function rejected(field: string, detail: string, hint: string): ToolError {
  return new ToolError({ reason: 'rejected', field, detail, hint });
}

function rootsHint(roots: readonly SourceRoot[]): string {
  const usable = roots.filter((r) => r.real !== undefined).map((r) => r.given);
  return usable.length > 0
    ? `put the files in ${usable.join(' or ')} and pass the path there`
    : `no hand-over folder exists yet: the owner creates ${roots[0]?.given ?? '<data>/inbox'} and puts the files in it`;
}

/**
 * The real path of `requested` (absolute, or relative to the first root) if it exists inside a
 * source root; a ToolError saying why otherwise. Returns the containing root's real path too.
 */
function resolveSource(requested: string, rootList: readonly SourceRoot[], field: string): { path: string; root: string } {
  if (requested.length > MAX_PATH_CHARS) throw rejected(field, `the path is longer than ${MAX_PATH_CHARS} characters`, rootsHint(rootList));
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what is refused
  if (/[\u0000-\u001f\u007f]/.test(requested)) throw rejected(field, 'the path contains NUL or control characters', rootsHint(rootList));
  if (requested.split(/[/\\]/).includes('..')) {
    throw rejected(field, `${JSON.stringify(requested)} contains ".."`, rootsHint(rootList));
  }
  const base = rootList[0];
  if (base === undefined) {
    throw new ToolError({
      reason: 'unavailable',
      detail: 'no folder is set up to take files from',
      hint: 'tell the person; files cannot be handed over',
    });
  }
  const absolute = isAbsolute(requested) ? resolve(requested) : resolve(join(base.real ?? base.given, requested));
  let real: string;
  try {
    real = realpathSync(absolute);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new ToolError({
      reason: 'not_found',
      field,
      detail: code === 'ENOENT' ? `${JSON.stringify(requested)} does not exist` : `${JSON.stringify(requested)} cannot be opened (${code})`,
      hint: rootsHint(rootList),
    });
  }
  const root = rootList.find((r) => r.real !== undefined && inside(real, r.real));
  if (root?.real === undefined) {
    const via = real === absolute ? '' : ` (it leads to ${real})`;
    throw rejected(field, `${JSON.stringify(requested)} is outside the folders files may be taken from${via}`, rootsHint(rootList));
  }
  return { path: real, root: root.real };
}

function resolveSourceDir(requested: string, rootList: readonly SourceRoot[], field: string): string {
  const { path } = resolveSource(requested, rootList, field);
  if (!statSync(path).isDirectory()) {
    throw new ToolError({
      reason: 'type',
      field,
      detail: `${JSON.stringify(requested)} is not a folder`,
      hint: 'pass the folder the files are in',
    });
  }
  return path;
}

/** Reads a file inside the roots, at most `maxBytes`; never through a symlink swapped in after the check. */
function readSourceFile(
  requested: string,
  rootList: readonly SourceRoot[],
  maxBytes: number,
  field: string,
): { path: string; data: Uint8Array } {
  const { path, root } = resolveSource(requested, rootList, field);
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    throw rejected(field, `${JSON.stringify(requested)} cannot be opened (${(error as NodeJS.ErrnoException).code})`, rootsHint(rootList));
  }
  try {
    try {
      // /proc/self/fd shows what was really opened; where /proc is missing, O_NOFOLLOW still guards the name.
      const opened = readlinkSync(`/proc/self/fd/${fd}`);
      if (!inside(opened, root))
        throw rejected(field, `${JSON.stringify(requested)} changed while it was opened and now leads out`, rootsHint(rootList));
    } catch (error) {
      if (error instanceof ToolError) throw error;
    }
    const stat = fstatSync(fd);
    if (!stat.isFile())
      throw new ToolError({
        reason: 'type',
        field,
        detail: `${JSON.stringify(requested)} is not a file`,
        hint: 'pass an image or audio file',
      });
    if (stat.size > maxBytes) {
      throw new ToolError({
        reason: 'range',
        field,
        detail: `${JSON.stringify(requested)} is ${stat.size} bytes, more than the ${maxBytes / 1024 / 1024} MiB an attachment may have`,
        hint: 'attach a smaller file',
      });
    }
    const data = Buffer.alloc(stat.size);
    let read = 0;
    while (read < data.length) {
      const n = readSync(fd, data, read, data.length - read, read);
      if (n === 0) break;
      read += n;
    }
    return { path, data: data.subarray(0, read) };
  } finally {
    closeSync(fd);
  }
}

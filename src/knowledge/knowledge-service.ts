/**
 * The knowledge library as one service. The files under <data>/knowledge are the source of truth;
 * knowledge.db (component `knowledge`) indexes them for hybrid search and the tree, and media live
 * in the content-addressed store under <data>/media. Writes (create, attach, delete, import,
 * reindex) run one at a time; reads use the index as it is. A reindex runs in the background at
 * start, after edits on disk (when core.knowledge.watch is on) and on request; it reads only files
 * whose signature changed, and fills in vectors that are missing or from another embedder.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { basename, isAbsolute, join, resolve } from 'node:path';
import { defaultConfig } from '../config/loader.js';
import type { Config } from '../config/schema.js';
import type { Embedder } from '../embed/embedder.js';
import { HashEmbedder } from '../embed/hash-embedder.js';
import type { Logger } from '../log/logger.js';
import { createTextAnalyzer } from '../nlp/text-analyzer.js';
import type { TextAnalyzer } from '../nlp/types.js';
import type { Clock } from '../shared/clock.js';
import { describeError, HomeAgentError, isHomeAgentError } from '../shared/errors.js';
import type { Service } from '../shared/service.js';
import type { ManagedDatabase } from '../store/database.js';
import { MediaStore } from '../store/media-store.js';
import { writeFailure } from '../store/write-failure.js';
import {
  checkPlace,
  contentTime,
  type EntryWrite,
  entryDir,
  type LeafOnDisk,
  readEntryText,
  readMediaList,
  removeEntryFiles,
  type Skipped,
  scanLibrary,
  signatureOf,
  tooLarge,
  writeEntryFiles,
  writeMediaList,
} from './knowledge-files.js';
import { capSkipped, planImport } from './knowledge-import.js';
import { type IndexedEntry, KnowledgeIndex } from './knowledge-index.js';
import { categoryPath, entryName, isInside, type KnowledgeName } from './knowledge-paths.js';
import { openKnowledgeDatabase } from './knowledge-schema.js';
import { type FusionWeights, searchKnowledge, weightsFor } from './knowledge-search.js';
import { DEFAULT_PREVIEW_CHARS, MAX_PREVIEW_CHARS, plainText } from './knowledge-text.js';
import { allCategories, buildTree, countCategories } from './knowledge-tree.js';
import { DEFAULT_DEBOUNCE_MS, KnowledgeWatcher } from './knowledge-watcher.js';
import type {
  ImportSummary,
  KnowledgeBase,
  KnowledgeEntry,
  KnowledgeHit,
  KnowledgeSearchOptions,
  KnowledgeStats,
  MediaInput,
  MediaRef,
  ReindexSummary,
  TreeNode,
  TreeOptions,
} from './types.js';

/** core.knowledge. */
export type KnowledgeSettings = Config['core']['knowledge'];

/** Results one search returns at most, whatever is asked. */
export const MAX_TOP_K = 100;
/** Entries read, analysed and embedded together by a reindex (one transaction each). */
const REINDEX_BATCH = 32;
const KIB = 1024;
const MIB = 1024 * 1024;

export interface KnowledgeServiceOptions {
  /** knowledge.db, opened by the Store. */
  database: () => ManagedDatabase;
  /** The library is <dataDir>/knowledge, media <dataDir>/media. */
  dataDir: string;
  /**
   * The text analyzer (FTS tokens, snippet terms), or a getter read at start (e.g. memory's,
   * shared). Default: a new one with the rule parser.
   */
  analyzer?: TextAnalyzer | (() => TextAnalyzer);
  /**
   * The embedder of the vector path, or a getter read at start (e.g. memory's embedder once memory
   * runs); a getter returning undefined turns the vector path off. The service only borrows what
   * it is given; without the option it creates (and closes) a hash embedder of its own.
   */
  embedder?: Embedder | (() => Embedder | undefined);
  /** core.knowledge, read when used. Default: the schema defaults. */
  settings?: () => KnowledgeSettings;
  /** Fusion weights of the two search paths; default by embedder (see knowledge-search.ts). */
  weights?: FusionWeights;
  /** The media store (<dataDir>/media) shared with the rest of the daemon; default: one of its own. */
  media?: MediaStore;
  /** Quiet time after an edit on disk before the reindex (default 500 ms). */
  debounceMs?: number;
  clock: Clock;
  log: Logger;
}

interface Running {
  realRoot: string;
  index: KnowledgeIndex;
  media: MediaStore;
  analyzer: TextAnalyzer;
  embedder: Embedder | undefined;
  ownedEmbedder: Embedder | undefined;
  watcher: KnowledgeWatcher | undefined;
  stop: AbortController;
}

type IndexState = KnowledgeStats['index']['state'];

/** A media file a write stored, and whether this write is the one that put it in the store. */
interface StoredRef {
  ref: MediaRef;
  written: boolean;
}

export class KnowledgeService implements Service, KnowledgeBase {
  readonly name = 'knowledge';
  readonly #o: KnowledgeServiceOptions;
  readonly #defaults: KnowledgeSettings;
  #run: Running | undefined;
  /** The write queue: each write starts when the one before it settled. */
  #tail: Promise<unknown> = Promise.resolve();
  #state: IndexState = 'stale';
  /** Something changed on disk since the running or last reindex began. */
  #changed = false;
  /** A background reindex is queued and has not begun. */
  #queued = false;
  #reindexWaiters: Array<(summary: ReindexSummary) => void> = [];

  constructor(options: KnowledgeServiceOptions) {
    this.#o = options;
    this.#defaults = defaultConfig().core.knowledge;
  }

  async start(signal?: AbortSignal): Promise<void> {
    if (this.#run) return;
    const { dataDir, log } = this.#o;
    const settings = this.#settings();
    const root = join(dataDir, 'knowledge');
    mkdirSync(root, { recursive: true, mode: 0o750 });
    const realRoot = realpathSync(root);
    const index = openKnowledgeDatabase(this.#o.database());
    const analyzer = typeof this.#o.analyzer === 'function' ? this.#o.analyzer() : (this.#o.analyzer ?? createTextAnalyzer());
    let embedder: Embedder | undefined;
    let ownedEmbedder: Embedder | undefined;
    if (this.#o.embedder === undefined) {
      ownedEmbedder = new HashEmbedder({ tokens: (text) => analyzer.tokens(text) });
      embedder = ownedEmbedder;
    } else {
      embedder = typeof this.#o.embedder === 'function' ? this.#o.embedder() : this.#o.embedder;
    }
    signal?.throwIfAborted();
    const run: Running = {
      realRoot,
      index: new KnowledgeIndex(index, embedder),
      media: this.#o.media ?? new MediaStore({ dir: join(dataDir, 'media'), maxBytes: () => this.#settings().max_media_mb * MIB }),
      analyzer,
      embedder,
      ownedEmbedder,
      watcher: undefined,
      stop: new AbortController(),
    };
    this.#run = run;
    this.#state = 'stale';
    if (settings.watch) {
      const watcher = new KnowledgeWatcher({
        root: realRoot,
        debounceMs: this.#o.debounceMs ?? DEFAULT_DEBOUNCE_MS,
        onDirty: () => {
          this.#changed = true;
          if (this.#state === 'ready') this.#state = 'stale';
        },
        onSettled: () => this.#queueReindex(),
        onFailed: () => {
          run.watcher = undefined;
        },
        log,
      });
      if (watcher.start()) run.watcher = watcher;
    }
    log.info({ root: realRoot, watch: run.watcher !== undefined, dense: embedder?.fingerprint ?? null }, 'knowledge library open');
    this.#queueReindex();
  }

  async stop(): Promise<void> {
    const run = this.#run;
    if (!run) return;
    // New calls are refused from here on; the write in progress sees the abort and ends.
    this.#run = undefined;
    run.watcher?.stop();
    run.stop.abort();
    await this.whenIdle();
    await run.ownedEmbedder?.close();
    this.#queued = false;
    this.#state = 'stale';
  }

  /** True while the library is open (kbtree refuses to start otherwise). */
  available(): boolean {
    return this.#run !== undefined;
  }

  /** True while edits on disk are being watched. */
  get watching(): boolean {
    return this.#run?.watcher?.watching === true;
  }

  /** Resolves with the summary of the next reindex to finish (background or requested). */
  nextReindex(): Promise<ReindexSummary> {
    return new Promise((resolve) => this.#reindexWaiters.push(resolve));
  }

  /** Resolves once every write and reindex queued so far has finished. */
  async whenIdle(): Promise<void> {
    for (let tail = this.#tail; ; tail = this.#tail) {
      await tail;
      if (tail === this.#tail) return;
    }
  }

  async create(name: string, content: string, options: { overwrite?: boolean; media?: MediaInput[] } = {}): Promise<KnowledgeEntry> {
    const n = entryName(name);
    if (typeof content !== 'string') throw new HomeAgentError('HA_ERR_KNOWLEDGE_NAME', `the content of ${n.name} must be text`);
    const maxBytes = this.#settings().max_entry_kb * KIB;
    const bytes = Buffer.byteLength(content, 'utf8');
    if (bytes > maxBytes) throw tooLarge(bytes, maxBytes);
    return this.#exclusive(async (run) => {
      const { existing } = checkPlace(run.realRoot, n);
      if (existing && options.overwrite !== true) {
        throw new HomeAgentError(
          'HA_ERR_KNOWLEDGE_EXISTS',
          `the entry ${n.name} already exists; overwrite it explicitly to replace its content`,
        );
      }
      const oldDir = existing ? entryDir(run.realRoot, n) : undefined;
      const oldMedia = oldDir ? this.#mediaOf(oldDir, n.name) : [];
      // Attachments first: if one is refused, nothing of the entry was written. Whatever this write
      // adds (media files, folders, files, index rows) is taken back when a later step fails.
      const stored: StoredRef[] = [];
      try {
        for (const input of options.media ?? []) stored.push(this.#storeMedia(run, input));
        const added = stored.map((s) => s.ref);
        const media = added.length > 0 ? mergeMedia(oldMedia, added) : undefined;
        const prepared = await this.#prepare(run, [{ name: n.name, content }], run.stop.signal);
        const write = writeEntryFiles(run.realRoot, n, content, media);
        const entry = prepared[0] as Omit<IndexedEntry, 'signature' | 'updated_at' | 'media'>;
        const updatedAt = contentTime(write.dir);
        const finalMedia = media ?? oldMedia;
        this.#indexOrUndo(write, () =>
          run.index.transaction(() => {
            run.index.put({ ...entry, signature: signatureOf(write.dir), updated_at: updatedAt, media: finalMedia });
            run.index.addCategory(n.category);
          }),
        );
        this.#o.log.info({ entry: n.name, bytes, media: finalMedia.length, overwrite: existing }, 'knowledge entry written');
        return { name: n.name, category: n.category, content, media: finalMedia, updated_at: updatedAt };
      } catch (error) {
        this.#discardMedia(run, stored);
        throw this.#writeError(error, `the knowledge entry ${n.name}`);
      }
    });
  }

  get(name: string): KnowledgeEntry | undefined {
    const run = this.#require();
    const n = entryName(name);
    const dir = entryDir(run.realRoot, n);
    if (!dir) return undefined;
    const text = readEntryText(dir, this.#settings().max_entry_kb * KIB);
    return { name: n.name, category: n.category, content: text.content, media: this.#mediaOf(dir, n.name), updated_at: contentTime(dir) };
  }

  /**
   * The index forgets the entry first, then its files go: when the index cannot be written (a
   * full disk) the entry stays whole. Files that cannot be removed after that are indexed again
   * by the reindex this queues, since they are the truth.
   */
  async delete(name: string): Promise<boolean> {
    const n = entryName(name);
    return this.#exclusive(async (run) => {
      const dir = entryDir(run.realRoot, n);
      if (!dir) {
        run.index.remove(n.name);
        return false;
      }
      try {
        run.index.transaction(() => run.index.remove(n.name));
      } catch (error) {
        throw this.#writeError(error, `the knowledge entry ${n.name}`);
      }
      let removed: ReturnType<typeof removeEntryFiles>;
      try {
        removed = removeEntryFiles(run.realRoot, n);
      } catch (error) {
        this.#indexBehind();
        throw error;
      }
      try {
        run.index.transaction(() => {
          run.index.removeCategories(removed.pruned);
          if (removed.leftAsCategory) run.index.addCategory(n.name);
        });
      } catch (error) {
        // The entry is gone; only the category list is behind, which the reindex corrects.
        this.#o.log.warn({ entry: n.name, error: describeError(error) }, 'knowledge categories not updated after a delete; a reindex will');
        this.#indexBehind();
      }
      this.#o.log.info({ entry: n.name, pruned: removed.pruned }, 'knowledge entry deleted');
      return true;
    });
  }

  async attach(name: string, input: MediaInput): Promise<MediaRef> {
    const n = entryName(name);
    return this.#exclusive(async (run) => {
      const dir = entryDir(run.realRoot, n);
      if (!dir) throw this.#notFoundEntry(n.name);
      let list: MediaRef[];
      try {
        list = readMediaList(dir);
      } catch (error) {
        throw new HomeAgentError(
          'HA_ERR_INTERNAL',
          `media.json of ${n.name} is malformed (${describeError(error)}); fix or remove it first`,
        );
      }
      const stored: StoredRef[] = [];
      try {
        stored.push(this.#storeMedia(run, input));
        const ref = (stored[0] as StoredRef).ref;
        const same = list.find((m) => m.digest === ref.digest);
        if (same) return same;
        list.push(ref);
        const write = writeMediaList(dir, list);
        this.#indexOrUndo(write, () => run.index.touch(n.name, signatureOf(dir), contentTime(dir), list));
        this.#o.log.info({ entry: n.name, digest: ref.digest, mime: ref.mime, bytes: ref.bytes }, 'media attached to knowledge entry');
        return ref;
      } catch (error) {
        this.#discardMedia(run, stored);
        throw this.#writeError(error, `an attachment of ${n.name}`);
      }
    });
  }

  list(category?: string): Array<{ name: string; category: string }> {
    const run = this.#require();
    const path = this.#category(run, category);
    return run.index.list(path).map((e) => ({ name: e.name, category: e.category }));
  }

  async search(query: string, options: KnowledgeSearchOptions = {}): Promise<KnowledgeHit[]> {
    const run = this.#require();
    const category = this.#category(run, options.category);
    const topK = Math.min(MAX_TOP_K, Math.max(0, Math.trunc(options.top_k ?? this.#settings().top_k)));
    return searchKnowledge(
      {
        index: run.index,
        indexText: (text) => run.analyzer.indexText(text),
        tokens: (text) => run.analyzer.tokens(text),
        embedder: run.embedder,
        weights: this.#o.weights ?? weightsFor(run.embedder?.fingerprint),
        signal: run.stop.signal,
      },
      { query: String(query ?? ''), topK, category, paths: options.paths ?? ['lexical', 'vector'] },
    );
  }

  tree(options: TreeOptions = {}): TreeNode {
    const run = this.#require();
    const category = this.#category(run, options.category);
    const previewLimit = Math.min(MAX_PREVIEW_CHARS, Math.max(1, Math.trunc(options.preview_limit ?? DEFAULT_PREVIEW_CHARS)));
    const includeItems = options.include_items === true;
    const maxDepth = options.max_depth === undefined ? Number.POSITIVE_INFINITY : Math.max(0, Math.trunc(options.max_depth));
    const entries = run.index.list(category, includeItems ? previewLimit + 1 : 0);
    return buildTree(run.index.categories(), entries, { category, maxDepth, includeItems, previewLimit });
  }

  categories(): string[] {
    const run = this.#require();
    return allCategories(run.index.categories(), run.index.list());
  }

  categoryCounts(): Array<{ category: string; count: number }> {
    const run = this.#require();
    return countCategories(run.index.categories(), run.index.list());
  }

  async importDir(
    dir: string,
    options: { category?: string; onProgress?: (done: number, total: number) => void; signal?: AbortSignal } = {},
  ): Promise<ImportSummary> {
    const run = this.#require();
    const target = categoryPath(options.category ?? '');
    const source = this.#importSource(run, dir);
    const settings = this.#settings();
    const plan = planImport(source, settings.import_max_files);
    const summary: ImportSummary = { imported: [], skipped: [...plan.skipped] };
    const total = plan.files.length;
    const maxBytes = settings.max_entry_kb * KIB;
    let done = 0;
    for (const file of plan.files) {
      if (options.signal?.aborted || run.stop.signal.aborted) {
        throw new HomeAgentError('HA_ERR_ABORTED', `import of ${source} cancelled after ${done} of ${total} files`);
      }
      let reason: string | undefined;
      try {
        reason = await this.#importOne(file.path, target === '' ? file.stem : `${target}/${file.stem}`, maxBytes, summary);
      } catch (error) {
        if (!isHomeAgentError(error, 'HA_ERR_STORE_FULL')) throw error;
        // Each file is its own write: the ones imported are whole and stay; the failed one left nothing.
        const kept = summary.imported.length === 0 ? 'none was imported' : `the ${summary.imported.length} imported stay`;
        throw new HomeAgentError(
          'HA_ERR_STORE_FULL',
          `import of ${source} stopped at ${file.rel} (${done} of ${total} files done, ${kept}): ${error.message}`,
          {
            cause: error,
            details: { imported: summary.imported, ...error.details },
          },
        );
      }
      if (reason !== undefined) summary.skipped.push({ file: file.rel, reason });
      done++;
      options.onProgress?.(done, total);
    }
    summary.skipped = capSkipped(summary.skipped);
    this.#o.log.info({ dir: source, imported: summary.imported.length, skipped: summary.skipped.length }, 'knowledge import finished');
    return summary;
  }

  async reindex(options: { signal?: AbortSignal } = {}): Promise<ReindexSummary> {
    return this.#exclusive((run) => this.#reindexNow(run, options.signal));
  }

  /**
   * The digests of the media entries refer to, or undefined while that is not known for sure (not
   * running, or the index is behind the files on disk): nothing may be swept then.
   */
  referencedMedia(): Set<string> | undefined {
    const run = this.#run;
    if (run === undefined || this.#state !== 'ready') return undefined;
    return run.index.mediaDigests();
  }

  stats(): KnowledgeStats {
    const run = this.#require();
    const entries = run.index.count();
    const current = run.index.currentVectorCount();
    return {
      entries,
      categories: this.categories().length,
      media: run.index.mediaStats(),
      index: { state: this.#state, indexed: entries },
      dense: {
        enabled: run.embedder !== undefined,
        ready: run.embedder !== undefined && run.index.staleVectorCount() === 0,
        total: current,
      },
    };
  }

  async #importOne(path: string, name: string, maxBytes: number, summary: ImportSummary): Promise<string | undefined> {
    let n: KnowledgeName;
    try {
      n = entryName(name);
    } catch (error) {
      return describeError(error);
    }
    try {
      const size = statSync(path).size;
      if (size > maxBytes) return tooLarge(size, maxBytes).message;
      const bytes = readFileSync(path);
      let content: string;
      try {
        content = new TextDecoder('utf-8', { fatal: true }).decode(bytes).replace(/^\uFEFF/, '');
      } catch {
        return 'not valid UTF-8 text';
      }
      await this.create(n.name, content);
      summary.imported.push(n.name);
      return undefined;
    } catch (error) {
      if (error instanceof HomeAgentError && error.code === 'HA_ERR_KNOWLEDGE_EXISTS')
        return `an entry named ${n.name} already exists (not replaced)`;
      if (error instanceof HomeAgentError && error.code === 'HA_ERR_KNOWLEDGE_UNAVAILABLE') throw error;
      // A full disk fails every file after this one too: the import stops (see importDir).
      if (isHomeAgentError(error, 'HA_ERR_STORE_FULL')) throw error;
      return describeError(error);
    }
  }

  #importSource(run: Running, dir: string): string {
    const abs = isAbsolute(dir) ? dir : resolve(dir);
    let real: string;
    try {
      real = realpathSync(abs);
      if (!statSync(real).isDirectory()) throw new Error('not a directory');
    } catch (error) {
      throw new HomeAgentError(
        'HA_ERR_KNOWLEDGE_NOT_FOUND',
        `cannot import ${abs}: it is not a readable directory (${describeError(error)})`,
      );
    }
    if (isInside(run.realRoot, real) || isInside(real, run.realRoot)) {
      throw new HomeAgentError('HA_ERR_KNOWLEDGE_NAME', `cannot import ${abs}: it overlaps the knowledge directory itself`);
    }
    return real;
  }

  async #reindexNow(run: Running, signal: AbortSignal | undefined): Promise<ReindexSummary> {
    const started = this.#o.clock.monotonic();
    const abort = signal ? AbortSignal.any([signal, run.stop.signal]) : run.stop.signal;
    this.#state = 'indexing';
    this.#changed = false;
    let summary: ReindexSummary | undefined;
    try {
      const scan = scanLibrary(run.realRoot);
      const skipped: Skipped[] = [...scan.skipped];
      const known = run.index.signatures();
      const seen = new Set<string>();
      const changed: LeafOnDisk[] = [];
      for (const leaf of scan.leaves) {
        if (known.get(leaf.name)?.signature === leaf.signature) seen.add(leaf.name);
        else changed.push(leaf);
      }
      let indexed = 0;
      const maxBytes = this.#settings().max_entry_kb * KIB;
      for (let i = 0; i < changed.length; i += REINDEX_BATCH) {
        abort.throwIfAborted();
        indexed += await this.#reindexBatch(run, changed.slice(i, i + REINDEX_BATCH), known, maxBytes, seen, skipped, abort);
      }
      let removed = 0;
      run.index.transaction(() => {
        for (const name of known.keys()) if (!seen.has(name) && run.index.remove(name)) removed++;
        run.index.replaceCategories(scan.categories);
      });
      await this.#refreshVectors(run, abort);
      run.index.warm();
      summary = { indexed, removed, ms: Math.round(this.#o.clock.monotonic() - started), skipped: capSkipped(skipped) };
      const level = indexed + removed > 0 || skipped.length > 0 ? 'info' : 'debug';
      this.#o.log[level]({ indexed, removed, skipped: skipped.length, ms: summary.ms }, 'knowledge reindex finished');
      return summary;
    } finally {
      this.#state = this.#changed || summary === undefined ? 'stale' : 'ready';
      if (summary) {
        const waiters = this.#reindexWaiters;
        this.#reindexWaiters = [];
        for (const resolve of waiters) resolve(summary);
      }
    }
  }

  /** Reads, analyses and embeds a batch of changed entries and writes them in one transaction; returns how many were (re)indexed. */
  async #reindexBatch(
    run: Running,
    leaves: readonly LeafOnDisk[],
    known: ReadonlyMap<string, { signature: string; hash: string }>,
    maxBytes: number,
    seen: Set<string>,
    skipped: Skipped[],
    signal: AbortSignal,
  ): Promise<number> {
    const touched: Array<{ leaf: LeafOnDisk; media: MediaRef[]; updatedAt: number }> = [];
    const fresh: Array<{ leaf: LeafOnDisk; media: MediaRef[]; updatedAt: number; content: string; hash: string; bytes: number }> = [];
    for (const leaf of leaves) {
      let text: { content: string; hash: string; bytes: number };
      let updatedAt: number;
      try {
        text = readEntryText(leaf.dir, maxBytes);
        updatedAt = contentTime(leaf.dir);
      } catch (error) {
        skipped.push({ file: `${leaf.name}/content.md`, reason: error instanceof HomeAgentError ? error.message : describeError(error) });
        continue;
      }
      let media: MediaRef[] = [];
      try {
        media = readMediaList(leaf.dir);
      } catch (error) {
        skipped.push({ file: `${leaf.name}/media.json`, reason: `ignored: ${describeError(error)}` });
      }
      seen.add(leaf.name);
      if (known.get(leaf.name)?.hash === text.hash) touched.push({ leaf, media, updatedAt });
      else fresh.push({ leaf, media, updatedAt, ...text });
    }
    const prepared = await this.#prepare(
      run,
      fresh.map((f) => ({ name: f.leaf.name, content: f.content })),
      signal,
    );
    run.index.transaction(() => {
      for (const { leaf, media, updatedAt } of touched) run.index.touch(leaf.name, leaf.signature, updatedAt, media);
      fresh.forEach((f, i) => {
        const entry = prepared[i] as Omit<IndexedEntry, 'signature' | 'updated_at' | 'media'>;
        run.index.put({ ...entry, signature: f.leaf.signature, updated_at: f.updatedAt, media: f.media });
      });
    });
    return fresh.length;
  }

  /** Analyses and embeds entries; a failing embedder leaves vectors null (filled in by a later reindex). */
  async #prepare(
    run: Running,
    items: ReadonlyArray<{ name: string; content: string }>,
    signal: AbortSignal,
  ): Promise<Array<Omit<IndexedEntry, 'signature' | 'updated_at' | 'media'>>> {
    const prepared = items.map(({ name, content }) => {
      const plain = plainText(content);
      const bytes = Buffer.byteLength(content, 'utf8');
      return {
        name,
        category: name.includes('/') ? name.slice(0, name.lastIndexOf('/')) : '',
        hash: createHash('sha256').update(content, 'utf8').digest('hex'),
        bytes,
        plain,
        title: run.analyzer.indexText(titleWords(name)),
        body: run.analyzer.indexText(plain),
        vector: null as Float32Array | null,
      };
    });
    if (run.embedder && prepared.length > 0) {
      try {
        const vectors = await run.embedder.embed(
          prepared.map((p) => vectorText(p.name, p.plain)),
          signal,
        );
        prepared.forEach((p, i) => {
          p.vector = vectors[i] ?? null;
        });
      } catch (error) {
        if (signal.aborted) throw error;
        this.#o.log.warn({ error: describeError(error), entries: prepared.length }, 'embedding failed; indexed without vectors for now');
      }
    }
    return prepared;
  }

  /** Embeds entries whose vector is missing or from another embedder (a model change), in batches. */
  async #refreshVectors(run: Running, signal: AbortSignal): Promise<void> {
    if (!run.embedder) return;
    for (;;) {
      signal.throwIfAborted();
      const stale = run.index.staleVectors(REINDEX_BATCH);
      if (stale.length === 0) return;
      let vectors: Float32Array[];
      try {
        vectors = await run.embedder.embed(
          stale.map((s) => vectorText(s.name, s.plain)),
          signal,
        );
      } catch (error) {
        if (signal.aborted) throw error;
        this.#o.log.warn(
          { error: describeError(error), entries: stale.length },
          'embedding failed; vectors are filled in at the next reindex',
        );
        return;
      }
      const updated = run.index.setVectors(stale.flatMap((s, i) => (vectors[i] ? [{ id: s.id, vector: vectors[i] }] : [])));
      if (updated === 0) return;
    }
  }

  #queueReindex(): void {
    if (this.#queued || !this.#run) return;
    this.#queued = true;
    void this.#exclusive((run) => {
      this.#queued = false;
      return this.#reindexNow(run, undefined);
    }).catch((error) => {
      this.#queued = false;
      if (isAbort(error) || (error instanceof HomeAgentError && error.code === 'HA_ERR_KNOWLEDGE_UNAVAILABLE')) return;
      this.#o.log.warn({ error: describeError(error) }, 'knowledge reindex failed; the index stays as it was');
    });
  }

  #storeMedia(run: Running, input: MediaInput): StoredRef {
    const fileName = displayName(input.file_name);
    let data = input.data;
    if (data === undefined) {
      if (typeof input.path !== 'string' || input.path === '') {
        throw new HomeAgentError('HA_ERR_MEDIA_TYPE', `${fileName}: give the file's bytes or its path`);
      }
      const stat = statSync(input.path);
      if (!stat.isFile()) throw new HomeAgentError('HA_ERR_MEDIA_TYPE', `${input.path} is not a regular file`);
      run.media.checkSize(stat.size, fileName);
      data = readFileSync(input.path);
    }
    const stored = run.media.put(data, { ...(input.mime !== undefined && { declaredMime: input.mime }), fileName });
    return {
      ref: { digest: stored.digest, kind: stored.kind, mime: stored.mime, bytes: stored.bytes, file_name: fileName },
      written: stored.written,
    };
  }

  /**
   * Takes back the media files a failed write stored (only those it wrote: bytes that were in the
   * store before belong to whoever put them there).
   */
  #discardMedia(run: Running, stored: readonly StoredRef[]): void {
    for (const { ref, written } of stored) {
      if (!written) continue;
      try {
        run.media.remove(ref.digest);
      } catch (error) {
        // The sweep removes it in time (core.knowledge.media_keep_days): nothing refers to it.
        this.#o.log.warn({ digest: ref.digest, error: describeError(error) }, 'media file of a failed knowledge write not removed');
      }
    }
  }

  /** Runs the index write of files just written; when it fails the files are undone and the error rethrown. */
  #indexOrUndo(write: EntryWrite, index: () => void): void {
    try {
      index();
    } catch (error) {
      if (!write.undo()) {
        this.#o.log.error({ dir: write.dir }, 'a failed knowledge write could not be undone completely; the reindex follows the files');
        this.#indexBehind();
      }
      throw error;
    }
    write.done();
  }

  /** The files changed in a way the index does not know: it is stale until the reindex this queues. */
  #indexBehind(): void {
    this.#changed = true;
    this.#state = 'stale';
    this.#queueReindex();
  }

  /** A full disk or a refused write of the files (ENOSPC, EROFS) gets its store code, naming what was written. */
  #writeError(error: unknown, what: string): unknown {
    return writeFailure(error, what) ?? error;
  }

  #mediaOf(dir: string, name: string): MediaRef[] {
    try {
      return readMediaList(dir);
    } catch (error) {
      this.#o.log.warn({ entry: name, error: describeError(error) }, 'media.json is malformed; the entry is shown without media');
      return [];
    }
  }

  /** A sanitised category that exists ('' for the whole library); HA_ERR_KNOWLEDGE_NOT_FOUND otherwise. */
  #category(run: Running, input: string | undefined): string {
    const path = categoryPath(input ?? '');
    if (path === '' || run.index.hasCategory(path)) return path;
    // Entries' categories are in the table too; this only guards an index written before them.
    if (run.index.list(path).length > 0) return path;
    const top = run.index.categories().filter((c) => !c.includes('/'));
    throw new HomeAgentError(
      'HA_ERR_KNOWLEDGE_NOT_FOUND',
      top.length > 0
        ? `no category "${path}"; the top-level categories are: ${top.join(', ')}`
        : `no category "${path}"; the knowledge library has no categories yet`,
      { details: { category: path, top_level: top } },
    );
  }

  #notFoundEntry(name: string): HomeAgentError {
    return new HomeAgentError('HA_ERR_KNOWLEDGE_NOT_FOUND', `no knowledge entry named ${name}`);
  }

  #exclusive<T>(fn: (run: Running) => Promise<T>): Promise<T> {
    const result = this.#tail.then(() => fn(this.#require()));
    this.#tail = result.catch(() => undefined);
    return result;
  }

  #require(): Running {
    if (!this.#run) throw new HomeAgentError('HA_ERR_KNOWLEDGE_UNAVAILABLE', 'the knowledge library is not running');
    return this.#run;
  }

  #settings(): KnowledgeSettings {
    return this.#o.settings?.() ?? this.#defaults;
  }
}

/** The words of an entry's name: `recipes/soup/tomato_soup` → `recipes soup tomato soup`. */
function titleWords(name: string): string {
  return name.replace(/[/_]+/g, ' ');
}

function vectorText(name: string, plain: string): string {
  return `${titleWords(name)}\n${plain}`;
}

function mergeMedia(existing: readonly MediaRef[], added: readonly MediaRef[]): MediaRef[] {
  const out = [...existing];
  for (const m of added) if (!out.some((o) => o.digest === m.digest)) out.push(m);
  return out;
}

/** The name an attachment is shown under: the last path part, without control characters, at most 255 characters. */
function displayName(fileName: string | undefined): string {
  const cleaned = basename(String(fileName ?? ''))
    .replace(/[\p{Cc}\u2028\u2029]/gu, '')
    .trim();
  return Array.from(cleaned).slice(0, 255).join('') || 'attachment';
}

function isAbort(error: unknown): boolean {
  return (
    (error as { name?: unknown } | null)?.name === 'AbortError' || (error instanceof HomeAgentError && error.code === 'HA_ERR_ABORTED')
  );
}

/**
 * The knowledge library's contract: what the agent's tools, the control methods (`homeagentctl
 * kb`), the plugin SDK and the kbtree service use. The files under <data>/knowledge are the
 * source of truth (<category>/<...>/<leaf>/content.md); the index is derived from them and can
 * always be rebuilt.
 */

/** An image or audio file attached to an entry, stored once in the content-addressed media store. */
export interface MediaRef {
  /** sha256 of the bytes, lower-case hex. */
  digest: string;
  kind: 'image' | 'audio';
  mime: string;
  bytes: number;
  /** The name it was attached under (shown to people; the store is keyed by digest). */
  file_name: string;
}

/** A file to attach: its bytes or a path to read them from. */
export interface MediaInput {
  file_name: string;
  /** Guessed from the file name when absent; only image/* and audio/* are accepted. */
  mime?: string;
  data?: Uint8Array;
  path?: string;
}

export interface KnowledgeEntry {
  /** Full sanitised path of the leaf: `recipes/soup/tomato_soup`. */
  name: string;
  /** Its category path: `recipes/soup` (empty for a leaf at the top). */
  category: string;
  content: string;
  media: MediaRef[];
  /** Last change of content.md (ms since the epoch). */
  updated_at: number;
}

export interface KnowledgeHit {
  name: string;
  category: string;
  /** Fused score, higher is better; comparable within one query only. */
  score: number;
  /** A short piece of the content around what matched. */
  snippet: string;
}

export interface KnowledgeSearchOptions {
  /** Default 5. */
  top_k?: number;
  /** Only entries in this category or below it. */
  category?: string;
  /** The paths used (both by default); `lexical` alone for the evaluation's comparison. */
  paths?: ReadonlyArray<'lexical' | 'vector'>;
}

/** One level of the category tree. */
export interface TreeNode {
  /** This level's segment (`go`); empty for the root. */
  name: string;
  /** Full path (`tech/go`); empty for the root. */
  path: string;
  /** Entries directly in this category. */
  item_count: number;
  /** Entries in this category and below. */
  total_count: number;
  /** Present when items were asked for. */
  items?: Array<{ name: string; path: string; preview: string; media: number }>;
  children: TreeNode[];
}

export interface TreeOptions {
  /** Start at this category (the whole library by default). */
  category?: string;
  /** Levels below the start that are expanded; default unlimited. */
  max_depth?: number;
  include_items?: boolean;
  /** Characters of each item's preview; default 120. */
  preview_limit?: number;
}

export interface KnowledgeStats {
  entries: number;
  categories: number;
  media: { files: number; bytes: number };
  index: {
    /** `ready`: every file is indexed; `indexing`: a reindex is running; `stale`: files changed and wait for it. */
    state: 'ready' | 'indexing' | 'stale';
    indexed: number;
  };
  /** The vector path: enabled when an embedder is configured, ready when every entry has a current vector. */
  dense: { enabled: boolean; ready: boolean; total: number };
}

export interface ImportSummary {
  imported: string[];
  skipped: Array<{ file: string; reason: string }>;
}

export interface ReindexSummary {
  indexed: number;
  removed: number;
  ms: number;
  /** Files and directories passed over (too large, not UTF-8, a link leaving the library, a bad name, ...) and why. */
  skipped?: Array<{ file: string; reason: string }>;
}

export interface KnowledgeBase {
  /** Writes (or, with overwrite, replaces) an entry and indexes it; stale index rows go first. */
  create(name: string, content: string, options?: { overwrite?: boolean; media?: MediaInput[] }): Promise<KnowledgeEntry>;
  get(name: string): KnowledgeEntry | undefined;
  /** False when there is no such entry. */
  delete(name: string): Promise<boolean>;
  attach(name: string, media: MediaInput): Promise<MediaRef>;
  list(category?: string): Array<{ name: string; category: string }>;
  search(query: string, options?: KnowledgeSearchOptions): Promise<KnowledgeHit[]>;
  tree(options?: TreeOptions): TreeNode;
  /** Every category path, intermediate levels included, sorted. */
  categories(): string[];
  /** Entries per category (including those below it), most first, ties by name. */
  categoryCounts(): Array<{ category: string; count: number }>;
  importDir(
    dir: string,
    options?: { category?: string; onProgress?: (done: number, total: number) => void; signal?: AbortSignal },
  ): Promise<ImportSummary>;
  /** Re-reads the files and brings the index in line (what changed on disk since). */
  reindex(options?: { signal?: AbortSignal }): Promise<ReindexSummary>;
  stats(): KnowledgeStats;
}

/**
 * The wire shapes of the knowledge library's control methods (kb.*) and of what plugins read from
 * it: hits, entries, attachments and the category tree, as the CLI and the web page read them.
 */

/** One search result from the knowledge library. */
export interface KnowledgeHit {
  /** Full path of the entry: `recipes/soup/tomato_soup`. */
  name: string;
  /** Its category path (`recipes/soup`; empty for an entry at the top). */
  category: string;
  /** Fused score, higher is better; comparable within one query only. */
  score: number;
  /** A short piece of the content around what matched. */
  snippet: string;
}

/** An entry as the category tree lists it. */
export interface KnowledgeTreeItem {
  /** The entry's own segment (`tomato_soup`). */
  name: string;
  /** Its full path (`recipes/soup/tomato_soup`). */
  path: string;
  /** The first characters of its content, without markdown noise. */
  preview: string;
  /** Attached image and audio files. */
  media: number;
}

/** One level of the knowledge library's category tree. */
export interface KnowledgeTreeNode {
  /** This level's segment (`go`); empty for the root. */
  name: string;
  /** Full path (`tech/go`); empty for the root. */
  path: string;
  /** Entries directly in this category. */
  item_count: number;
  /** Entries in this category and below. */
  total_count: number;
  /** Present when items were asked for. */
  items?: KnowledgeTreeItem[];
  children: KnowledgeTreeNode[];
}

/** The answer of `kb.search`. */
export interface KbSearchResult {
  query: string;
  category: string | null;
  hits: KnowledgeHit[];
}

/** The answer of `kb.add`. */
export interface KbAddResult {
  name: string;
  category: string;
  replaced: boolean;
  bytes: number;
  media: number;
}

/** The answer of `kb.rm`. */
export interface KbRemoveResult {
  name: string;
  removed: true;
  media: number;
}

/** An attachment as kb.get lists it. */
export interface KbMediaRef {
  /** What kb.media and GET /api/v1/knowledge/media/<file> take: `<sha256>.<ext>`. */
  file: string;
  /** The name it was attached under. */
  name: string;
  /** Its MIME type, read from the bytes when it was stored. */
  type: string;
  bytes: number;
}

/** The answer of `kb.get`. */
export interface KbGetResult {
  name: string;
  category: string;
  content: string;
  media: KbMediaRef[];
  updated_at: string;
}

/** The answer of `kb.media`. */
export interface KbMediaResult {
  /** The file's real absolute path, inside the media store. */
  path: string;
  /** The MIME type read from its first bytes; application/octet-stream when they are no known type. */
  type: string;
  bytes: number;
}

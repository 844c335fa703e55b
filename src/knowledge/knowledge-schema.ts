/**
 * The knowledge index (component `knowledge` in `<data>/knowledge.db`). Everything here is derived
 * from the files under <data>/knowledge and can be rebuilt from them by a reindex; the database
 * only makes search, the tree and change detection fast.
 */
import type { ManagedDatabase } from '../store/database.js';
import type { Migration, SqlDatabase } from '../store/types.js';

export const KNOWLEDGE_COMPONENT = 'knowledge';

export const KNOWLEDGE_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'entries, full-text index, categories',
    up(db) {
      db.exec(`
        CREATE TABLE knowledge_entries (
          id          INTEGER PRIMARY KEY AUTOINCREMENT,
          name        TEXT    NOT NULL UNIQUE,
          category    TEXT    NOT NULL,
          -- mtime and size of content.md and media.json: unchanged means not re-read by a reindex.
          signature   TEXT    NOT NULL,
          -- sha256 of content.md: a touched but unchanged file is not re-embedded.
          hash        TEXT    NOT NULL,
          updated_at  INTEGER NOT NULL,
          bytes       INTEGER NOT NULL,
          -- The content without markdown noise, for snippets and previews.
          plain       TEXT    NOT NULL,
          media       TEXT    NOT NULL,
          vector      BLOB,
          fingerprint TEXT
        ) STRICT;
        CREATE INDEX knowledge_entries_by_category ON knowledge_entries (category, name);
        CREATE INDEX knowledge_entries_by_fingerprint ON knowledge_entries (fingerprint);
        -- Analyser tokens (jieba words, English stems) of the name and of the content.
        CREATE VIRTUAL TABLE knowledge_fts USING fts5(title, body, tokenize = 'unicode61 remove_diacritics 2');
        -- Every directory without content.md, intermediate levels and empty ones included.
        CREATE TABLE knowledge_categories (
          path TEXT PRIMARY KEY
        ) STRICT, WITHOUT ROWID;
      `);
    },
  },
];

/** Applies the knowledge migrations and returns the connection. */
export function openKnowledgeDatabase(managed: ManagedDatabase): SqlDatabase {
  managed.migrate(KNOWLEDGE_COMPONENT, KNOWLEDGE_MIGRATIONS);
  return managed.db;
}

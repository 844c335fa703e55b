/**
 * The memory database schema (component `memory` in `<data>/memory.db`): the context window,
 * the document store and the knowledge graph share one SQLite file so that moving an event from
 * the window into a document, or a document into the graph, is one transaction.
 *
 * Times are integer milliseconds since the Unix epoch; lists are JSON arrays in TEXT columns.
 */
import type { ManagedDatabase } from '../store/database.js';
import type { Migration, SqlDatabase } from '../store/types.js';

export const MEMORY_COMPONENT = 'memory';

export const MEMORY_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'context window, documents and knowledge graph',
    up(db) {
      db.exec(`
        CREATE TABLE context_events (
          seq          INTEGER PRIMARY KEY AUTOINCREMENT,
          id           TEXT    NOT NULL UNIQUE,
          timestamp    INTEGER NOT NULL,
          source       TEXT    NOT NULL,
          channel      TEXT    NOT NULL,
          peer         TEXT    NOT NULL,
          branch       TEXT    NOT NULL,
          input        TEXT    NOT NULL,
          response     TEXT    NOT NULL,
          tools_used   TEXT    NOT NULL,
          tool_results TEXT    NOT NULL,
          media_refs   TEXT    NOT NULL,
          revision     INTEGER NOT NULL DEFAULT 0
        ) STRICT;
        CREATE INDEX context_events_by_time ON context_events (timestamp, seq);

        CREATE TABLE documents (
          id               INTEGER PRIMARY KEY AUTOINCREMENT,
          content          TEXT    NOT NULL,
          summary          TEXT    NOT NULL,
          tags             TEXT    NOT NULL,
          source           TEXT    NOT NULL,
          source_event_ids TEXT    NOT NULL,
          media_refs       TEXT    NOT NULL,
          origin           TEXT,
          created_at       INTEGER NOT NULL,
          stored_at        INTEGER NOT NULL,
          last_access_at   INTEGER,
          access_count     INTEGER NOT NULL DEFAULT 0,
          vector           BLOB,
          fingerprint      TEXT
        ) STRICT;
        CREATE INDEX documents_by_touch ON documents (coalesce(last_access_at, stored_at));
        CREATE INDEX documents_by_fingerprint ON documents (fingerprint);
        CREATE INDEX documents_by_time ON documents (created_at, id);
        CREATE VIRTUAL TABLE documents_fts USING fts5(content, tokenize = 'unicode61 remove_diacritics 2');
        -- Exact symbols (numbers, versions, identifiers) whatever the analyser did to them.
        CREATE VIRTUAL TABLE documents_trigram USING fts5(text, tokenize = 'trigram');

        CREATE TABLE graph_entities (
          id            INTEGER PRIMARY KEY AUTOINCREMENT,
          name          TEXT    NOT NULL,
          norm_name     TEXT    NOT NULL UNIQUE,
          type          TEXT    NOT NULL,
          mention_count INTEGER NOT NULL,
          vector        BLOB,
          fingerprint   TEXT,
          created_at    INTEGER NOT NULL,
          updated_at    INTEGER NOT NULL
        ) STRICT;
        CREATE INDEX graph_entities_by_fingerprint ON graph_entities (fingerprint);
        CREATE INDEX graph_entities_by_mentions ON graph_entities (mention_count);

        CREATE TABLE graph_aliases (
          norm_alias TEXT    PRIMARY KEY,
          alias      TEXT    NOT NULL,
          entity_id  INTEGER NOT NULL REFERENCES graph_entities (id) ON DELETE CASCADE
        ) STRICT;
        CREATE INDEX graph_aliases_by_entity ON graph_aliases (entity_id);

        -- document_id has no foreign key on purpose: a sentence keeps naming the document it was
        -- distilled from after that document has been removed.
        CREATE TABLE graph_sentences (
          id              INTEGER PRIMARY KEY AUTOINCREMENT,
          text            TEXT    NOT NULL,
          source_event_id TEXT    NOT NULL,
          document_id     INTEGER,
          created_at      INTEGER NOT NULL
        ) STRICT;
        CREATE INDEX graph_sentences_by_origin ON graph_sentences (source_event_id, document_id);
        CREATE INDEX graph_sentences_by_document ON graph_sentences (document_id);
        -- Trigram index: LIKE '%13010%' uses it, so exact numbers, versions and identifiers are
        -- found even where word tokenisation would have split or merged them.
        CREATE VIRTUAL TABLE graph_sentences_trigram USING fts5(text, tokenize = 'trigram');

        CREATE TABLE graph_relations (
          id             INTEGER PRIMARY KEY AUTOINCREMENT,
          source_id      INTEGER NOT NULL REFERENCES graph_entities (id) ON DELETE CASCADE,
          target_id      INTEGER NOT NULL REFERENCES graph_entities (id) ON DELETE CASCADE,
          type           TEXT    NOT NULL,
          confidence     REAL    NOT NULL,
          session        TEXT    NOT NULL,
          sentence_id    INTEGER REFERENCES graph_sentences (id) ON DELETE SET NULL,
          evidence_count INTEGER NOT NULL,
          -- Written as a single-valued fact (lives_in, age, person traits): a new value supersedes it.
          single_valued  INTEGER NOT NULL,
          valid_from     INTEGER NOT NULL,
          valid_to       INTEGER,
          reviewed_at    INTEGER,
          created_at     INTEGER NOT NULL,
          updated_at     INTEGER NOT NULL
        ) STRICT;
        -- One current relation per (source, type, target); history rows (valid_to set) may repeat.
        CREATE UNIQUE INDEX graph_relations_current ON graph_relations (source_id, type, target_id) WHERE valid_to IS NULL;
        CREATE INDEX graph_relations_by_source ON graph_relations (source_id, valid_to);
        CREATE INDEX graph_relations_by_target ON graph_relations (target_id, valid_to);
        CREATE INDEX graph_relations_by_confidence ON graph_relations (confidence) WHERE valid_to IS NULL;

        CREATE TABLE graph_relation_evidence (
          relation_id INTEGER NOT NULL REFERENCES graph_relations (id) ON DELETE CASCADE,
          sentence_id INTEGER NOT NULL REFERENCES graph_sentences (id) ON DELETE CASCADE,
          PRIMARY KEY (relation_id, sentence_id)
        ) STRICT, WITHOUT ROWID;
        CREATE INDEX graph_evidence_by_sentence ON graph_relation_evidence (sentence_id);

        CREATE TABLE graph_no_merge (
          entity_a   INTEGER NOT NULL REFERENCES graph_entities (id) ON DELETE CASCADE,
          entity_b   INTEGER NOT NULL REFERENCES graph_entities (id) ON DELETE CASCADE,
          expires_at INTEGER NOT NULL,
          reason     TEXT    NOT NULL,
          PRIMARY KEY (entity_a, entity_b),
          CHECK (entity_a < entity_b)
        ) STRICT;
      `);
    },
  },
  {
    version: 2,
    name: 'distilled documents stay as evidence; documents by event',
    up(db) {
      db.exec(`
        -- A distilled document is kept as the evidence of the facts read from it (removing it lost
        -- most of what recall finds, see docs/decisions/0003-memory-distillation.md); only
        -- undistilled ones are cold candidates.
        ALTER TABLE documents ADD COLUMN distilled_at INTEGER;
        DROP INDEX documents_by_touch;
        CREATE INDEX documents_cold ON documents (coalesce(last_access_at, stored_at)) WHERE distilled_at IS NULL;
        -- Which document holds an event: graph facts point at events, recall ranks documents.
        CREATE TABLE document_events (
          event_id    TEXT    NOT NULL,
          document_id INTEGER NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
          PRIMARY KEY (event_id, document_id)
        ) STRICT, WITHOUT ROWID;
        CREATE INDEX document_events_by_document ON document_events (document_id);
        INSERT OR IGNORE INTO document_events (event_id, document_id)
          SELECT e.value, d.id FROM documents d, json_each(d.source_event_ids) e;
      `);
    },
  },
  {
    version: 3,
    name: 'how far each remembered event may be trusted',
    up(db) {
      db.exec(`
        -- Who said it, as the transport knew (src/shared/trust.ts), lowered to what entered the
        -- turn (a web page a tool read): recall trusts a turn no further than what it brings back.
        -- Events from before this table have no row and count as untrusted.
        CREATE TABLE event_trust (
          event_id TEXT NOT NULL PRIMARY KEY,
          trust    TEXT NOT NULL CHECK (trust IN ('owner', 'household', 'untrusted'))
        ) STRICT, WITHOUT ROWID;
      `);
    },
  },
  {
    version: 4,
    name: 'facts say who said them and are searchable by word',
    up(db) {
      db.exec(`
        -- Who said the sentence a fact was read from (core.home.people; 'someone' when unknown;
        -- '' for sentences from before this column): recall's prompt lines name the speaker.
        ALTER TABLE graph_sentences ADD COLUMN speaker TEXT NOT NULL DEFAULT '';
        -- The date a sentence's time words point at ("next Tuesday" said on a Friday), ms; null
        -- when it names none.
        ALTER TABLE graph_sentences ADD COLUMN refers_to INTEGER;
        -- BM25 over the analyser's tokens of each sentence (rowid = graph_sentences.id), so recall
        -- finds a fact by the words of a question, not only by an exact entity name. Existing
        -- sentences are indexed by FactIndex.sync() on first use (the tokens need the analyser).
        CREATE VIRTUAL TABLE graph_sentences_fts USING fts5(content, tokenize = 'unicode61 remove_diacritics 2');
      `);
    },
  },
  {
    version: 5,
    name: 'fact search knows how common a word is, and finds superseded facts directly',
    up(db) {
      db.exec(`
        -- How many sentences hold each word (FactIndex leaves out words in so many sentences that
        -- ranking all of them costs more than they tell). A view of graph_sentences_fts, no data.
        CREATE VIRTUAL TABLE graph_sentences_vocab USING fts5vocab(graph_sentences_fts, 'row');
        -- The superseded facts (a minority that grows with corrections): recall checks its
        -- candidates against these instead of joining every fact of every candidate turn.
        CREATE INDEX graph_relations_superseded ON graph_relations (id) WHERE valid_to IS NOT NULL;
      `);
    },
  },
  {
    version: 6,
    name: 'scenes: recurring situations as an extra index of events',
    up(db) {
      db.exec(`
        -- A scene exists from its second occurrence (src/memory/scene-store.ts); features is the
        -- fingerprint it was made from (JSON), compared with each new turn of the same channel.
        CREATE TABLE scenes (
          key          TEXT    NOT NULL PRIMARY KEY,
          channel      TEXT    NOT NULL,
          features     TEXT    NOT NULL,
          occurrences  INTEGER NOT NULL,
          created_at   INTEGER NOT NULL,
          last_seen_at INTEGER NOT NULL
        ) STRICT, WITHOUT ROWID;
        CREATE INDEX scenes_by_channel ON scenes (channel, last_seen_at);
        -- Turns seen once, waiting for a second one like them (bounded by core.memory.scene_sightings).
        CREATE TABLE scene_sightings (
          event_id TEXT    NOT NULL PRIMARY KEY,
          channel  TEXT    NOT NULL,
          features TEXT    NOT NULL,
          seen_at  INTEGER NOT NULL
        ) STRICT, WITHOUT ROWID;
        CREATE INDEX scene_sightings_by_channel ON scene_sightings (channel, seen_at);
        CREATE INDEX scene_sightings_by_time ON scene_sightings (seen_at);
        -- Which events belong to which scene; no foreign key to events: an event forgotten leaves
        -- a row no recall asks for (recall looks rows up by the ids of what it found).
        CREATE TABLE scene_refs (
          event_id  TEXT NOT NULL,
          scene_key TEXT NOT NULL REFERENCES scenes (key) ON DELETE CASCADE,
          PRIMARY KEY (event_id, scene_key)
        ) STRICT, WITHOUT ROWID;
        CREATE INDEX scene_refs_by_scene ON scene_refs (scene_key);
      `);
    },
  },
];

/** Applies the memory migrations and returns the connection the memory stores share. */
export function openMemoryDatabase(managed: ManagedDatabase): SqlDatabase {
  managed.migrate(MEMORY_COMPONENT, MEMORY_MIGRATIONS);
  return managed.db;
}

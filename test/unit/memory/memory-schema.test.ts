import t from 'tap';
import { MEMORY_COMPONENT, MEMORY_MIGRATIONS, openMemoryDatabase } from '../../../src/memory/memory-schema.js';
import { tempDir } from '../fixtures/support.js';
import { openTestMemoryDb } from './fixtures/memory-fixture.js';

t.test('the memory schema migrates once and is idempotent', async (t) => {
  const { managed, db } = openTestMemoryDb(t, tempDir(t));
  t.equal(managed.schemaVersion(MEMORY_COMPONENT), MEMORY_MIGRATIONS.length);
  openMemoryDatabase(managed);
  t.equal(managed.schemaVersion(MEMORY_COMPONENT), MEMORY_MIGRATIONS.length, 'a second open applies nothing');
  const tables = (
    db
      .prepare(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '%\\_%' ESCAPE '\\' OR name IN ('context_events', 'documents', 'documents_fts', 'graph_entities', 'graph_aliases', 'graph_sentences', 'graph_sentences_trigram', 'graph_relations', 'graph_relation_evidence', 'graph_no_merge')",
      )
      .all() as Array<{ name: string }>
  ).map((r) => r.name);
  for (const name of [
    'context_events',
    'documents',
    'documents_fts',
    'graph_entities',
    'graph_aliases',
    'graph_sentences',
    'graph_sentences_trigram',
    'graph_relations',
    'graph_relation_evidence',
    'graph_no_merge',
  ]) {
    t.ok(tables.includes(name), name);
  }
  t.equal(db.pragma('foreign_keys', { simple: true }), 1, 'foreign keys are on (relations cascade with entities)');
});

/**
 * Corrections the agent or the owner makes to the graph: merge two entities, delete one, purge
 * relations by criteria (soft keeps history, hard deletes), replace one relation.
 */
import { ToolError } from '../shared/tool.js';
import { clampConfidence, type EntityKey, type GraphCore } from './graph-core.js';
import { normalizeName, normalizeRelationType } from './graph-names.js';
import type { GraphEntity, GraphRelation, TripleRef } from './graph-types.js';
import { escapeLike } from './sql-lists.js';

export type { TripleRef } from './graph-types.js';

export type MergeResult =
  | { merged: true; target: GraphEntity; relations_moved: number; relations_folded: number; relations_dropped: number }
  | { merged: false; reason: 'not_found' | 'same_entity' };

export interface PurgeCriteria {
  /** Substring of the subject's normalised name. */
  subject_contains?: string;
  relation_type?: string;
  /** Substring of the object's normalised name. */
  target_contains?: string;
}

/**
 * Replaces one current relation (memory_edit): the old one is deleted and the new one written
 * with its evidence, session and valid_from; confidence as given or kept. Undefined when no
 * such current relation exists.
 */
export async function editRelation(
  core: GraphCore,
  old: TripleRef,
  next: Partial<TripleRef> & { confidence?: number },
): Promise<GraphRelation | undefined> {
  const subject = next.subject ?? old.subject;
  const object = next.object ?? old.object;
  if (normalizeName(subject) === normalizeName(object)) {
    throw new ToolError({ reason: 'format', field: 'new_object', detail: 'a relation cannot link an entity to itself' });
  }
  const vectors = await core.embedNewNames([subject, object]);
  return core.write(() => {
    const found = core.findCurrent(old);
    if (!found) return undefined;
    const evidence = (
      core.sql.get('SELECT sentence_id FROM graph_relation_evidence WHERE relation_id = ?').all(found.id) as Array<{
        sentence_id: number;
      }>
    ).map((r) => r.sentence_id);
    core.sql.get('DELETE FROM graph_relations WHERE id = ?').run(found.id);
    const now = core.options.clock.now();
    const s = core.upsertEntity(subject, undefined, now, vectors, undefined, 0);
    const o = core.upsertEntity(object, undefined, now, vectors, undefined, 0);
    const type = core.checkedType(next.relation ?? old.relation);
    const written = core.writeRelation({
      sourceId: s,
      targetId: o,
      type,
      confidence: clampConfidence(next.confidence ?? found.confidence),
      session: found.session,
      sentenceId: found.sentence?.id,
      validFrom: found.valid_from,
      now,
      singleValued: found.single_valued || core.singleValued.has(type),
    });
    for (const sentenceId of evidence) core.linkEvidence(written.id, sentenceId);
    return core.relationsById([written.id])[0];
  });
}

/**
 * Folds `source` into `target` (memory_merge): relations are redirected (a duplicate of one of
 * the target's current relations is folded into it, a relation between the two is dropped),
 * the source's name and aliases become aliases of the target, mention counts add up, and the
 * source is deleted. Single-valued types keep only the newest current value.
 */
export function mergeEntities(core: GraphCore, source: EntityKey, target: EntityKey): MergeResult {
  return core.write((): MergeResult => {
    const from = core.resolveRow(source);
    const into = core.resolveRow(target);
    if (!from || !into) return { merged: false, reason: 'not_found' };
    if (from.id === into.id) return { merged: false, reason: 'same_entity' };
    const now = core.options.clock.now();
    let moved = 0;
    let folded = 0;
    let dropped = 0;
    const rows = core.sql
      .get('SELECT id, source_id, target_id, type, valid_to FROM graph_relations WHERE source_id = @id OR target_id = @id')
      .all({ id: from.id }) as Array<{ id: number; source_id: number; target_id: number; type: string; valid_to: number | null }>;
    for (const rel of rows) {
      const newSource = rel.source_id === from.id ? into.id : rel.source_id;
      const newTarget = rel.target_id === from.id ? into.id : rel.target_id;
      if (newSource === newTarget) {
        core.sql.get('DELETE FROM graph_relations WHERE id = ?').run(rel.id);
        dropped++;
        continue;
      }
      const twin =
        rel.valid_to === null
          ? (core.sql
              .get('SELECT id FROM graph_relations WHERE source_id = ? AND type = ? AND target_id = ? AND valid_to IS NULL')
              .get(newSource, rel.type, newTarget) as { id: number } | undefined)
          : undefined;
      if (twin) {
        core.foldInto(twin.id, rel.id, now);
        folded++;
      } else {
        core.sql
          .get('UPDATE graph_relations SET source_id = ?, target_id = ?, updated_at = ? WHERE id = ?')
          .run(newSource, newTarget, now, rel.id);
        moved++;
      }
    }
    core.sql.get('UPDATE graph_aliases SET entity_id = ? WHERE entity_id = ?').run(into.id, from.id);
    core.sql
      .get('INSERT OR IGNORE INTO graph_aliases (norm_alias, alias, entity_id) VALUES (?, ?, ?)')
      .run(from.norm_name, from.name, into.id);
    core.sql.get('DELETE FROM graph_aliases WHERE norm_alias = ?').run(into.norm_name);
    core.sql
      .get(
        "UPDATE graph_entities SET mention_count = mention_count + ?, type = CASE WHEN type = '' THEN ? ELSE type END, updated_at = ? WHERE id = ?",
      )
      .run(from.mention_count, from.type, now, into.id);
    core.deleteEntityRow(from.id);
    core.resolveSingleValued(into.id, now);
    return {
      merged: true,
      target: core.entity(into.id) as GraphEntity,
      relations_moved: moved,
      relations_folded: folded,
      relations_dropped: dropped,
    };
  });
}

/** Deletes an entity with all its relations (memory_delete_entity). */
export function deleteEntity(
  core: GraphCore,
  entity: EntityKey,
): { deleted: false } | { deleted: true; entity: GraphEntity; relations_removed: number } {
  return core.write(() => {
    const found = core.entity(entity);
    if (!found) return { deleted: false as const };
    const { n } = core.sql
      .get('SELECT count(*) AS n FROM graph_relations WHERE source_id = @id OR target_id = @id')
      .get({ id: found.id }) as {
      n: number;
    };
    core.deleteEntityRow(found.id);
    return { deleted: true as const, entity: found, relations_removed: n };
  });
}

/**
 * Bulk removal by criteria (memory_purge; all given criteria must match). `soft` ends current
 * relations (valid_to = now, kept as history); `hard` deletes matching relations, history
 * included. At least one criterion is required.
 */
export function purgeRelations(core: GraphCore, criteria: PurgeCriteria, mode: 'soft' | 'hard'): { relations: number } {
  const subject = normalizeName(criteria.subject_contains ?? '');
  const object = normalizeName(criteria.target_contains ?? '');
  const type = criteria.relation_type === undefined ? '' : normalizeRelationType(criteria.relation_type);
  if (subject === '' && object === '' && type === '') {
    throw new ToolError({
      reason: 'required',
      field: 'subject_contains',
      detail: 'memory_purge needs at least one of subject_contains, relation_type, target_contains',
    });
  }
  const where = [
    subject === '' ? '' : "s.norm_name LIKE ? ESCAPE '\\'",
    type === '' ? '' : 'r.type = ?',
    object === '' ? '' : "t.norm_name LIKE ? ESCAPE '\\'",
    mode === 'soft' ? 'r.valid_to IS NULL' : '',
  ].filter((w) => w !== '');
  const params = [
    subject === '' ? [] : [`%${escapeLike(subject)}%`],
    type === '' ? [] : [type],
    object === '' ? [] : [`%${escapeLike(object)}%`],
  ].flat();
  return core.write(() => {
    const ids = (
      core.sql
        .get(
          `SELECT r.id FROM graph_relations r JOIN graph_entities s ON s.id = r.source_id JOIN graph_entities t ON t.id = r.target_id WHERE ${where.join(' AND ')}`,
        )
        .all(...params) as Array<{ id: number }>
    ).map((r) => r.id);
    const now = core.options.clock.now();
    for (const id of ids) {
      if (mode === 'soft') core.sql.get('UPDATE graph_relations SET valid_to = ?, updated_at = ? WHERE id = ?').run(now, now, id);
      else core.sql.get('DELETE FROM graph_relations WHERE id = ?').run(id);
    }
    return { relations: ids.length };
  });
}

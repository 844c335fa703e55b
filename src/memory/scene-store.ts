/**
 * The scenes of the household (tables `scenes`, `scene_sightings`, `scene_refs`): each finished
 * turn's fingerprint either joins the most similar scene of its channel, or, matching a turn seen
 * once before, makes the two of them a new scene — a scene exists only on its second occurrence,
 * so one-off turns leave no scene behind, only a bounded list of sightings. Events are attached
 * to scenes by id; scenes are an extra index and never touch what memory holds (documents,
 * sentences, facts): recall only reads which events belong to which scene to rank or narrow.
 */
import { StatementCache } from '../store/statement-cache.js';
import type { SqlDatabase } from '../store/types.js';
import { type SceneFingerprint, sceneKey, sceneSimilarity, underScene } from './scene-fingerprint.js';

export interface SceneStoreLimits {
  /** A fingerprint at least this similar (weighted Jaccard) to a scene joins it. */
  similarity: number;
  /** Sightings (fingerprints seen once) kept; the oldest go first. */
  maxSightings: number;
}

export interface Scene {
  key: string;
  occurrences: number;
  created_at: number;
  last_seen_at: number;
}

/** Scenes and sightings of one channel compared per turn at most (the most recent ones). */
const CANDIDATES = 500;

function channelOf(fingerprint: SceneFingerprint): string {
  return fingerprint.find((f) => f.kind === 'chan')?.value ?? '';
}

export class SceneStore {
  readonly #db: SqlDatabase;
  readonly #sql: StatementCache;
  readonly #limits: () => SceneStoreLimits;

  constructor(db: SqlDatabase, limits: () => SceneStoreLimits) {
    this.#db = db;
    this.#sql = new StatementCache(db);
    this.#limits = limits;
  }

  /** The existing scene a fingerprint belongs to (the most similar above the threshold), without writing. */
  match(fingerprint: SceneFingerprint): string | undefined {
    return this.#best(fingerprint)?.key;
  }

  /**
   * Records a finished turn: joins its scene, or creates the scene with the sighting it repeats
   * (both events attached), or is kept as a sighting. Returns the scene key, if any. An event
   * already attached to a scene keeps it (a turn is observed once).
   */
  observe(eventId: string, fingerprint: SceneFingerprint, at: number): string | undefined {
    return this.#db.transaction(() => {
      const known = this.scenesOfEvent(eventId)[0];
      if (known !== undefined) return known;
      const scene = this.#best(fingerprint);
      if (scene) {
        this.#sql
          .get('UPDATE scenes SET occurrences = occurrences + 1, last_seen_at = max(last_seen_at, ?) WHERE key = ?')
          .run(at, scene.key);
        this.attach(eventId, scene.key);
        return scene.key;
      }
      const sighting = this.#bestSighting(fingerprint);
      if (sighting) {
        const key = this.#freeKey(sceneKey(sighting.fingerprint, fingerprint));
        this.#sql
          .get('INSERT INTO scenes (key, channel, features, occurrences, created_at, last_seen_at) VALUES (?, ?, ?, 2, ?, ?)')
          .run(key, channelOf(fingerprint), JSON.stringify(sighting.fingerprint), at, Math.max(at, sighting.seen_at));
        this.#sql.get('DELETE FROM scene_sightings WHERE event_id = ?').run(sighting.event_id);
        this.attach(sighting.event_id, key);
        this.attach(eventId, key);
        return key;
      }
      this.#sql
        .get('INSERT OR REPLACE INTO scene_sightings (event_id, channel, features, seen_at) VALUES (?, ?, ?, ?)')
        .run(eventId, channelOf(fingerprint), JSON.stringify(fingerprint), at);
      this.#sql
        .get(
          'DELETE FROM scene_sightings WHERE event_id IN (SELECT event_id FROM scene_sightings ORDER BY seen_at DESC, event_id DESC LIMIT -1 OFFSET ?)',
        )
        .run(this.#limits().maxSightings);
      return undefined;
    })();
  }

  /** Attaches an event to a scene (no-op when the scene does not exist or the event is attached already). */
  attach(eventId: string, key: string): boolean {
    const result = this.#sql
      .get('INSERT OR IGNORE INTO scene_refs (event_id, scene_key) SELECT ?, key FROM scenes WHERE key = ?')
      .run(eventId, key);
    return result.changes > 0 || this.scenesOfEvent(eventId).includes(key);
  }

  /** True when the scene exists. */
  has(key: string): boolean {
    return this.#sql.get('SELECT 1 FROM scenes WHERE key = ?').get(key) !== undefined;
  }

  scenesOfEvent(eventId: string): string[] {
    return (
      this.#sql.get('SELECT scene_key FROM scene_refs WHERE event_id = ? ORDER BY scene_key').all(eventId) as Array<{ scene_key: string }>
    ).map((r) => r.scene_key);
  }

  /** Of the given events, those attached to a scene under `prefix` (`/`-bounded). */
  eventsUnder(prefix: string, eventIds: readonly string[]): Set<string> {
    const out = new Set<string>();
    if (eventIds.length === 0) return out;
    const rows = this.#sql
      // IN (json_each) keeps the primary key as the lookup: one probe per event asked about.
      .get('SELECT event_id, scene_key FROM scene_refs WHERE event_id IN (SELECT value FROM json_each(?))')
      .all(JSON.stringify([...new Set(eventIds)])) as Array<{ event_id: string; scene_key: string }>;
    for (const row of rows) if (underScene(row.scene_key, prefix)) out.add(row.event_id);
    return out;
  }

  /** Scenes under a prefix, most recently seen first. */
  list(prefix = '', limit = 100): Scene[] {
    const rows = this.#sql
      .get('SELECT key, occurrences, created_at, last_seen_at FROM scenes ORDER BY last_seen_at DESC, key')
      .all() as unknown as Scene[];
    return rows.filter((s) => underScene(s.key, prefix)).slice(0, limit);
  }

  #best(fingerprint: SceneFingerprint): { key: string; similarity: number } | undefined {
    const rows = this.#sql
      .get('SELECT key, features FROM scenes WHERE channel = ? ORDER BY last_seen_at DESC LIMIT ?')
      .all(channelOf(fingerprint), CANDIDATES) as Array<{ key: string; features: string }>;
    return this.#mostSimilar(
      fingerprint,
      rows.map((r) => ({ ...r, fingerprint: JSON.parse(r.features) as SceneFingerprint })),
    );
  }

  #bestSighting(fingerprint: SceneFingerprint) {
    const rows = this.#sql
      .get('SELECT event_id, features, seen_at FROM scene_sightings WHERE channel = ? ORDER BY seen_at DESC LIMIT ?')
      .all(channelOf(fingerprint), CANDIDATES) as Array<{ event_id: string; features: string; seen_at: number }>;
    return this.#mostSimilar(
      fingerprint,
      rows.map((r) => ({ ...r, fingerprint: JSON.parse(r.features) as SceneFingerprint })),
    );
  }

  #mostSimilar<T extends { fingerprint: SceneFingerprint }>(
    fingerprint: SceneFingerprint,
    rows: T[],
  ): (T & { similarity: number }) | undefined {
    const threshold = this.#limits().similarity;
    let best: (T & { similarity: number }) | undefined;
    for (const row of rows) {
      const similarity = sceneSimilarity(fingerprint, row.fingerprint);
      if (similarity >= threshold && (!best || similarity > best.similarity)) best = { ...row, similarity };
    }
    return best;
  }

  /** Two different scenes may share a key's parts: the later one gets `~2`, `~3`, ... */
  #freeKey(key: string): string {
    if (!this.has(key)) return key;
    for (let n = 2; ; n++) if (!this.has(`${key}~${n}`)) return `${key}~${n}`;
  }
}

/**
 * Recall shaped by the current scene: a memory whose turn belongs to the scene (or to one under it,
 * by `/`-bounded key prefix) counts `1 + boost` times as much, or, narrowed, only such memories are
 * recalled (all of them when none is of the scene). Only the order and the choice of items change; their texts are what memory holds.
 */

export interface SceneRanking {
  mode: 'boost' | 'narrow';
  /** Extra weight of an in-scene memory in boost mode (0.3: 1.3 times). */
  boost: number;
  /** Of the given events, those in the scene. */
  inScene: (eventIds: readonly string[]) => ReadonlySet<string>;
}

/** The fused ranking re-weighed (boost) or filtered (narrow) by the scene; same shape, re-sorted. */
export function rankByScene(
  fused: ReadonlyArray<[string, number]>,
  sourcesOf: (key: string) => readonly string[],
  scene: SceneRanking,
): Array<[string, number]> {
  // Narrowing looks at every candidate; boosting only at the head of the ranking (as recall's
  // other re-weighings do): what ranks below it cannot reach the list even when boosted.
  const looked = scene.mode === 'narrow' ? fused : fused.slice(0, BOOST_DEPTH);
  const inScene = scene.inScene(looked.flatMap(([key]) => sourcesOf(key)));
  const member = (key: string) => sourcesOf(key).some((id) => inScene.has(id));
  // Narrowed with nothing of the scene found, the whole ranking stays: "no record" would be untrue.
  if (scene.mode === 'narrow') {
    const kept = fused.filter(([key]) => member(key));
    return kept.length > 0 ? kept : [...fused];
  }
  const head = looked
    .map(([key, score]): [string, number] => [key, member(key) ? score * (1 + scene.boost) : score])
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  return [...head, ...fused.slice(BOOST_DEPTH)];
}

/** Candidates the boost looks at (recall's DEMOTION_DEPTH). */
const BOOST_DEPTH = 40;

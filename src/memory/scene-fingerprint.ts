/**
 * Scene fingerprints (the original's scene memory, §1.11): what kind of situation a turn was —
 * which channel, which person or group, which tools, which topic words, what time of day — as a
 * set of weighted features, and how alike two such sets are (weighted Jaccard). A scene is a
 * recurring situation ("the evening in the living room", "the family group chat about dinner");
 * its key is hierarchical (`chan:qq/peer:group_1027/topic:dinner`) so that a prefix names every
 * scene under it. Fingerprints only index memory: nothing here reads or changes what is stored.
 */

/** The feature kinds and the original's weights: where and with whom count most, the hour least. */
export const SCENE_WEIGHTS = { chan: 1, peer: 1, tool: 0.8, topic: 0.4, part: 0.2 } as const;
export type SceneFeatureKind = keyof typeof SCENE_WEIGHTS;

export interface SceneFeature {
  kind: SceneFeatureKind;
  value: string;
}

/** A turn's fingerprint: its features, each once. */
export type SceneFingerprint = readonly SceneFeature[];

/** What a fingerprint is made from (a recorded input, or a finished turn with its tools). */
export interface SceneTurn {
  channel: string;
  /** The transport peer: a person's id or a group / chat id. */
  peer: string;
  input: string;
  timestamp: number;
  tools?: readonly string[];
}

/**
 * Topic words taken per turn. More words would let the topic outweigh channel and peer in the
 * Jaccard union (each word weighs 0.4); fewer would miss the shared one.
 */
export const MAX_TOPIC_WORDS = 6;

/** Parts of the day (local time): a morning routine and an evening routine are different scenes. */
export function partOfDay(timestamp: number): 'night' | 'morning' | 'afternoon' | 'evening' {
  const hour = new Date(timestamp).getHours();
  if (hour < 5) return 'night';
  if (hour < 12) return 'morning';
  if (hour < 18) return 'afternoon';
  return hour < 23 ? 'evening' : 'night';
}

/**
 * The fingerprint of a turn. `tokens` is the analyser's search tokens (stopwords already out);
 * only words of two or more characters that are not bare numbers are topic words, the longest
 * first (they tell more about the topic than short ones).
 */
export function sceneFingerprint(turn: SceneTurn, tokens: (text: string) => string[]): SceneFingerprint {
  const features: SceneFeature[] = [{ kind: 'chan', value: turn.channel }];
  if (turn.peer !== '') features.push({ kind: 'peer', value: turn.peer });
  for (const tool of new Set(turn.tools ?? [])) features.push({ kind: 'tool', value: tool });
  const words = [...new Set(tokens(turn.input).map((w) => w.toLowerCase()))].filter((w) => [...w].length >= 2 && !/^\d+$/.test(w));
  words.sort((a, b) => [...b].length - [...a].length || a.localeCompare(b));
  for (const word of words.slice(0, MAX_TOPIC_WORDS)) features.push({ kind: 'topic', value: word });
  features.push({ kind: 'part', value: partOfDay(turn.timestamp) });
  return features;
}

function featureId(f: SceneFeature): string {
  return `${f.kind}\u0000${f.value}`;
}

/** Weighted Jaccard: the weight of the shared features over the weight of all of them (0..1). */
export function sceneSimilarity(a: SceneFingerprint, b: SceneFingerprint): number {
  const left = new Map(a.map((f) => [featureId(f), SCENE_WEIGHTS[f.kind]]));
  const right = new Map(b.map((f) => [featureId(f), SCENE_WEIGHTS[f.kind]]));
  let shared = 0;
  let union = 0;
  for (const [id, weight] of left) {
    union += weight;
    if (right.has(id)) shared += weight;
  }
  for (const [id, weight] of right) if (!left.has(id)) union += weight;
  return union === 0 ? 0 : shared / union;
}

/** A key part: `/` bounds the hierarchy and `:` the kind, so neither may appear in a value. */
function keyPart(kind: SceneFeatureKind, value: string): string {
  return `${kind}:${value.replace(/[/:\s]+/g, '_').slice(0, 64)}`;
}

/**
 * The key of a scene seen in two turns: channel, then peer, then what else the two share most
 * specifically (a tool, else a topic word, else the part of the day). `chan:qq/peer:group_1027/topic:dinner`.
 */
export function sceneKey(first: SceneFingerprint, second: SceneFingerprint): string {
  const shared = new Set(second.map(featureId));
  const common = first.filter((f) => shared.has(featureId(f)));
  const parts: string[] = [];
  for (const kind of ['chan', 'peer'] as const) {
    const f = common.find((c) => c.kind === kind) ?? first.find((c) => c.kind === kind);
    if (f) parts.push(keyPart(kind, f.value));
  }
  const detail = common.find((c) => c.kind === 'tool') ?? common.find((c) => c.kind === 'topic') ?? common.find((c) => c.kind === 'part');
  if (detail) parts.push(keyPart(detail.kind, detail.value));
  return parts.join('/');
}

/** `/`-bounded prefix match: `chan:qq` covers `chan:qq/peer:g1` but not `chan:qqmail`. */
export function underScene(key: string, prefix: string): boolean {
  const p = prefix.endsWith('/') ? prefix.slice(0, -1) : prefix;
  return p === '' || key === p || key.startsWith(`${p}/`);
}

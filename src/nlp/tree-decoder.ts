/**
 * Turns a parser model's scores into a well-formed dependency tree: every word gets one head,
 * exactly one word hangs from the root, and there are no cycles, whatever the scores say. Heads
 * come from the maximum spanning arborescence (Chu-Liu/Edmonds, which unlike Eisner also finds
 * non-projective trees); labels are the best label other than HED for every word but the root.
 */
import { HomeAgentError } from '../shared/errors.js';
import type { DependencyArc, DependencyLabel } from './dependency-parser.js';

/**
 * Heads of words 1..n (result[i] is the head of word i + 1, 0 = the root) maximising the summed
 * score. `scores[d][h]` is the score of head h (0..n) for word d (1..n); row 0 and the diagonal are
 * ignored. With `singleRoot` (the default) exactly one word is attached to the root.
 */
export function maximumSpanningTree(scores: ReadonlyArray<ArrayLike<number>>, singleRoot = true): number[] {
  const m = scores.length;
  if (m <= 1) return [];
  const w = new Float64Array(m * m).fill(Number.NEGATIVE_INFINITY);
  let spread = 0;
  for (let d = 1; d < m; d++) {
    const row = scores[d] as ArrayLike<number>;
    if (row.length !== m) throw new RangeError(`scores row ${d} has ${row.length} entries for ${m - 1} words (expected ${m})`);
    let min = Number.POSITIVE_INFINITY;
    let max = Number.NEGATIVE_INFINITY;
    for (let h = 0; h < m; h++) {
      if (h === d) continue;
      const s = row[h] as number;
      if (!Number.isFinite(s)) throw new RangeError(`scores[${d}][${h}] is ${s}; scores must be finite`);
      w[d * m + h] = s;
      min = Math.min(min, s);
      max = Math.max(max, s);
    }
    spread += max - min;
  }
  if (singleRoot) {
    // A penalty larger than any score difference between two trees: the best tree with one root
    // arc then beats every tree with more, and among one-root trees the scores decide as before.
    const penalty = spread + 1;
    for (let d = 1; d < m; d++) w[d * m] = (w[d * m] as number) - penalty;
  }
  return Array.from(chuLiuEdmonds(w, m).subarray(1));
}

/** `w[d * m + h]`: score of head h for node d; node 0 is the root. Returns head per node (root: -1). */
function chuLiuEdmonds(w: Float64Array, m: number): Int32Array {
  const head = new Int32Array(m).fill(-1);
  for (let d = 1; d < m; d++) {
    let best = -1;
    let bestScore = Number.NEGATIVE_INFINITY;
    for (let h = 0; h < m; h++) {
      const s = w[d * m + h] as number;
      if (h !== d && s > bestScore) {
        best = h;
        bestScore = s;
      }
    }
    head[d] = best;
  }
  const cycle = findCycle(head);
  if (cycle === undefined) return head;

  // Contract the cycle into one node c and solve the smaller problem.
  const inCycle = new Uint8Array(m);
  for (const v of cycle) inCycle[v] = 1;
  const toNew = new Int32Array(m).fill(-1);
  const toOld: number[] = [];
  for (let v = 0; v < m; v++) {
    if (inCycle[v]) continue;
    toNew[v] = toOld.length;
    toOld.push(v);
  }
  const c = toOld.length;
  const m2 = c + 1;
  const w2 = new Float64Array(m2 * m2).fill(Number.NEGATIVE_INFINITY);
  /** For a node outside: its best head inside the cycle. */
  const enterFrom = new Int32Array(m).fill(-1);
  /** For a head outside: the cycle node it would best take over (breaking the cycle there). */
  const enterTo = new Int32Array(m).fill(-1);
  for (const d of toOld) {
    if (d === 0) continue;
    for (const h of toOld) if (h !== d) w2[(toNew[d] as number) * m2 + (toNew[h] as number)] = w[d * m + h] as number;
    let best = Number.NEGATIVE_INFINITY;
    for (const h of cycle) {
      const s = w[d * m + h] as number;
      if (s > best) {
        best = s;
        enterFrom[d] = h;
      }
    }
    w2[(toNew[d] as number) * m2 + c] = best;
  }
  for (const h of toOld) {
    let best = Number.NEGATIVE_INFINITY;
    for (const d of cycle) {
      // Entering at d replaces d's arc in the cycle: the gain is relative to that arc.
      const s = (w[d * m + h] as number) - (w[d * m + (head[d] as number)] as number);
      if (s > best) {
        best = s;
        enterTo[h] = d;
      }
    }
    w2[c * m2 + (toNew[h] as number)] = best;
  }

  const sub = chuLiuEdmonds(w2, m2);
  const result = head.slice();
  for (const d of toOld) {
    if (d === 0) continue;
    const h2 = sub[toNew[d] as number] as number;
    result[d] = h2 === c ? (enterFrom[d] as number) : (toOld[h2] as number);
  }
  const entering = toOld[sub[c] as number] as number;
  result[enterTo[entering] as number] = entering;
  return result;
}

/** The nodes of one cycle among the heads, if any (node 0 has no head and ends every path). */
function findCycle(head: Int32Array): number[] | undefined {
  const m = head.length;
  // 0 unvisited, 1 on the current path, 2 done.
  const state = new Uint8Array(m);
  state[0] = 2;
  for (let start = 1; start < m; start++) {
    const path: number[] = [];
    let v = start;
    while (v >= 0 && state[v] === 0) {
      state[v] = 1;
      path.push(v);
      v = head[v] as number;
    }
    if (v >= 0 && state[v] === 1) return path.slice(path.indexOf(v));
    for (const p of path) state[p] = 2;
  }
  return undefined;
}

/**
 * Decodes one sentence of model output: `arcScores` is [n, n + 1] (scores of heads 0..n per word,
 * row by row), `labelScores` [n, labels.length]. The arc confidence is the softmax probability of
 * the chosen head among the word's candidates (itself excluded).
 */
export function decodeArcs(
  arcScores: ArrayLike<number>,
  labelScores: ArrayLike<number>,
  n: number,
  labels: readonly DependencyLabel[],
): DependencyArc[] {
  const L = labels.length;
  if (arcScores.length !== n * (n + 1) || labelScores.length !== n * L)
    throw new HomeAgentError(
      'HA_ERR_EMBED_FAILED',
      `parser scores have ${arcScores.length} arc and ${labelScores.length} label values for ${n} words`,
    );
  if (n === 0) return [];
  const logProbs: Float64Array[] = [new Float64Array(n + 1)];
  for (let i = 0; i < n; i++) {
    const self = i + 1;
    const row = new Float64Array(n + 1);
    let max = Number.NEGATIVE_INFINITY;
    for (let h = 0; h <= n; h++) {
      const s = arcScores[i * (n + 1) + h] as number;
      if (!Number.isFinite(s)) throw new HomeAgentError('HA_ERR_EMBED_FAILED', `the parser model gave word ${i + 1} a head score of ${s}`);
      if (h !== self) max = Math.max(max, s);
    }
    let sum = 0;
    for (let h = 0; h <= n; h++) if (h !== self) sum += Math.exp((arcScores[i * (n + 1) + h] as number) - max);
    const logSum = max + Math.log(sum);
    for (let h = 0; h <= n; h++) row[h] = h === self ? 0 : (arcScores[i * (n + 1) + h] as number) - logSum;
    logProbs.push(row);
  }
  const heads = maximumSpanningTree(logProbs);
  return heads.map((head, i): DependencyArc => {
    const confidence = Math.exp(logProbs[i + 1]?.[head] as number);
    if (head === 0) return { head, label: 'HED', confidence };
    let best = -1;
    for (let k = 0; k < L; k++) {
      if (labels[k] === 'HED') continue;
      if (best < 0 || (labelScores[i * L + k] as number) > (labelScores[i * L + best] as number)) best = k;
    }
    return { head, label: labels[best] as DependencyLabel, confidence };
  });
}

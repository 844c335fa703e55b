/**
 * An in-memory copy of the vectors of one embedding space (one fingerprint), for brute-force
 * cosine search. Reading every BLOB from SQLite per query costs tens of milliseconds at 10k rows;
 * the copy is loaded on first use, kept in one contiguous Float32Array (a tight loop over it is
 * several times faster than a Map of small arrays), and kept in step by the store that owns the
 * rows. When a transaction fails, the owner calls {@link VectorIndex.invalidate} and the copy is
 * reloaded from the database on the next search, so it never keeps a vector that was rolled back.
 */

export interface VectorHit {
  id: number;
  /** Cosine similarity of unit vectors, -1..1. */
  score: number;
}

interface Matrix {
  dim: number;
  ids: number[];
  positions: Map<number, number>;
  data: Float32Array;
}

export class VectorIndex {
  readonly #load: () => Iterable<readonly [number, Float32Array]>;
  #matrix: Matrix | undefined;

  /** `load` yields every stored vector of the current fingerprint. */
  constructor(load: () => Iterable<readonly [number, Float32Array]>) {
    this.#load = load;
  }

  get size(): number {
    return this.#ensure().ids.length;
  }

  get(id: number): Float32Array | undefined {
    const m = this.#ensure();
    const at = m.positions.get(id);
    return at === undefined ? undefined : m.data.slice(at * m.dim, (at + 1) * m.dim);
  }

  set(id: number, vector: Float32Array): void {
    // Not loaded yet: the next load reads it from the database.
    if (this.#matrix) put(this.#matrix, id, vector);
  }

  delete(id: number): void {
    const m = this.#matrix;
    const at = m?.positions.get(id);
    if (!m || at === undefined) return;
    const last = m.ids.length - 1;
    const lastId = m.ids[last] as number;
    if (at !== last) {
      m.data.copyWithin(at * m.dim, last * m.dim, (last + 1) * m.dim);
      m.ids[at] = lastId;
      m.positions.set(lastId, at);
    }
    m.ids.pop();
    m.positions.delete(id);
  }

  invalidate(): void {
    this.#matrix = undefined;
  }

  /** The `limit` most similar vectors with a score of at least `minScore`, best first. */
  search(query: Float32Array, limit: number, minScore = -Infinity): VectorHit[] {
    const m = this.#ensure();
    if (limit <= 0 || query.length !== m.dim) return [];
    const { data, dim, ids } = m;
    const best: VectorHit[] = [];
    let floor = minScore;
    for (let row = 0, offset = 0; row < ids.length; row++, offset += dim) {
      // Two accumulators: measurably faster than one in V8 for 256-512 dimensions.
      let even = 0;
      let odd = 0;
      let k = 0;
      let j = offset;
      for (; k + 1 < dim; k += 2, j += 2) {
        even += (query[k] as number) * (data[j] as number);
        odd += (query[k + 1] as number) * (data[j + 1] as number);
      }
      if (k < dim) even += (query[k] as number) * (data[j] as number);
      const dot = even + odd;
      if (!(dot >= floor)) continue;
      insertSorted(best, { id: ids[row] as number, score: dot }, limit);
      if (best.length === limit) floor = Math.max(minScore, (best[limit - 1] as VectorHit).score);
    }
    return best;
  }

  #ensure(): Matrix {
    if (!this.#matrix) {
      const m: Matrix = { dim: 0, ids: [], positions: new Map(), data: new Float32Array(0) };
      for (const [id, vector] of this.#load()) put(m, id, vector);
      this.#matrix = m;
    }
    return this.#matrix;
  }
}

function put(m: Matrix, id: number, vector: Float32Array): void {
  if (m.ids.length === 0 && m.dim !== vector.length) {
    m.dim = vector.length;
    m.data = new Float32Array(0);
  }
  // Every vector of one fingerprint has the embedder's dimension; anything else is not comparable.
  if (vector.length !== m.dim || m.dim === 0) return;
  let at = m.positions.get(id);
  if (at === undefined) {
    at = m.ids.length;
    if ((at + 1) * m.dim > m.data.length) {
      const grown = new Float32Array(Math.max(64, (at + 1) * 2) * m.dim);
      grown.set(m.data);
      m.data = grown;
    }
    m.ids.push(id);
    m.positions.set(id, at);
  }
  m.data.set(vector, at * m.dim);
}

/** Keeps `list` sorted by score (best first) and at most `limit` long. */
function insertSorted(list: VectorHit[], hit: VectorHit, limit: number): void {
  let i = list.length;
  while (i > 0 && (list[i - 1] as VectorHit).score < hit.score) i--;
  if (i >= limit) return;
  list.splice(i, 0, hit);
  if (list.length > limit) list.pop();
}

/**
 * Where the graph view draws each entity: a radial start (the centre in the middle, each hop on
 * its own ring, a node near the angle of the node that reached it) relaxed by a few rounds of a
 * force layout (Fruchterman–Reingold: every pair repels, every relation pulls, the moves cool
 * down), with the centre held in place. Written here rather than taken from a library: the page
 * must stay small and nothing may be downloaded, and a neighbourhood is capped at a couple of
 * hundred nodes (pairs × rounds stays in the low millions). Deterministic: the same answer draws
 * the same picture, so a re-render does not shuffle what the person was looking at.
 */

export interface LayoutNode {
  id: number;
  /** Hops from the centre (0 for the centre). */
  depth: number;
}

export interface LayoutEdge {
  source: number;
  target: number;
}

export interface Point {
  x: number;
  y: number;
}

export interface LayoutOptions {
  width: number;
  height: number;
  /** Space kept free at every side (labels, circles). */
  margin?: number;
  /** Rounds of the force layout; fewer for bigger graphs keeps the cost flat. */
  iterations?: number;
}

const TAU = Math.PI * 2;

/** Positions inside [margin, width - margin] × [margin, height - margin], keyed by node id. */
export function layoutGraph(
  nodes: readonly LayoutNode[],
  edges: readonly LayoutEdge[],
  centre: number,
  options: LayoutOptions,
): Map<number, Point> {
  const out = new Map<number, Point>();
  if (nodes.length === 0) return out;
  const index = new Map(nodes.map((n, i) => [n.id, i]));
  const n = nodes.length;
  const xs = new Float64Array(n);
  const ys = new Float64Array(n);
  const links: Array<[number, number]> = [];
  const neighbours: number[][] = nodes.map(() => []);
  for (const e of edges) {
    const a = index.get(e.source);
    const b = index.get(e.target);
    if (a === undefined || b === undefined || a === b) continue;
    links.push([a, b]);
    neighbours[a]?.push(b);
    neighbours[b]?.push(a);
  }

  // Radial start: rings by depth, each node placed in angle order of the node that reached it.
  const centreIndex = index.get(centre) ?? 0;
  const angle = new Float64Array(n);
  const byDepth = new Map<number, number[]>();
  nodes.forEach((node, i) => {
    if (i === centreIndex) return;
    const ring = Math.max(1, node.depth);
    byDepth.set(ring, [...(byDepth.get(ring) ?? []), i]);
  });
  for (const ring of [...byDepth.keys()].sort((a, b) => a - b)) {
    const members = byDepth.get(ring) ?? [];
    const parentAngle = (i: number) => {
      const parent = neighbours[i]?.find((j) => j === centreIndex || (nodes[j]?.depth ?? 0) < ring);
      return parent === undefined || parent === centreIndex ? 0 : (angle[parent] ?? 0);
    };
    const ordered = ring === 1 ? members : [...members].sort((a, b) => parentAngle(a) - parentAngle(b) || a - b);
    ordered.forEach((i, k) => {
      // Each ring a little turned, so spokes of successive rings do not line up.
      const a = (k / ordered.length) * TAU + ring * 0.5;
      angle[i] = a;
      xs[i] = Math.cos(a) * ring;
      ys[i] = Math.sin(a) * ring;
    });
  }
  xs[centreIndex] = 0;
  ys[centreIndex] = 0;

  // Force rounds in the same units (ring radius 1); k is the distance the forces balance at.
  const rings = Math.max(1, ...byDepth.keys());
  const k = Math.max(0.25, (rings * 1.6) / Math.sqrt(n));
  const iterations = options.iterations ?? (n > 120 ? 80 : n > 40 ? 150 : 250);
  const dx = new Float64Array(n);
  const dy = new Float64Array(n);
  let temperature = rings * 0.25;
  const cooling = temperature / (iterations + 1);
  for (let round = 0; round < iterations; round++) {
    dx.fill(0);
    dy.fill(0);
    for (let i = 0; i < n; i++) {
      for (let j = i + 1; j < n; j++) {
        let ddx = (xs[i] as number) - (xs[j] as number);
        let ddy = (ys[i] as number) - (ys[j] as number);
        let d2 = ddx * ddx + ddy * ddy;
        if (d2 < 1e-9) {
          // Two nodes on one spot: push them apart along a fixed direction (deterministic).
          ddx = 1e-3 * (1 + ((i + j) % 3));
          ddy = 1e-3;
          d2 = ddx * ddx + ddy * ddy;
        }
        const force = (k * k) / d2;
        dx[i] = (dx[i] as number) + ddx * force;
        dy[i] = (dy[i] as number) + ddy * force;
        dx[j] = (dx[j] as number) - ddx * force;
        dy[j] = (dy[j] as number) - ddy * force;
      }
    }
    for (const [a, b] of links) {
      const ddx = (xs[a] as number) - (xs[b] as number);
      const ddy = (ys[a] as number) - (ys[b] as number);
      const d = Math.sqrt(ddx * ddx + ddy * ddy) || 1e-6;
      const pull = d / k;
      dx[a] = (dx[a] as number) - ddx * pull;
      dy[a] = (dy[a] as number) - ddy * pull;
      dx[b] = (dx[b] as number) + ddx * pull;
      dy[b] = (dy[b] as number) + ddy * pull;
    }
    for (let i = 0; i < n; i++) {
      if (i === centreIndex) continue;
      const mx = dx[i] as number;
      const my = dy[i] as number;
      const length = Math.sqrt(mx * mx + my * my);
      if (length === 0) continue;
      const step = Math.min(length, temperature);
      xs[i] = (xs[i] as number) + (mx / length) * step;
      ys[i] = (ys[i] as number) + (my / length) * step;
    }
    temperature = Math.max(cooling, temperature - cooling);
  }

  // Fit into the box, the centre kept in the middle (scaled alike in both directions).
  const margin = options.margin ?? 40;
  const half = { x: Math.max(1, options.width / 2 - margin), y: Math.max(1, options.height / 2 - margin) };
  let reach = { x: 1e-6, y: 1e-6 };
  for (let i = 0; i < n; i++) {
    reach = { x: Math.max(reach.x, Math.abs(xs[i] as number)), y: Math.max(reach.y, Math.abs(ys[i] as number)) };
  }
  const scale = Math.min(half.x / reach.x, half.y / reach.y);
  nodes.forEach((node, i) => {
    out.set(node.id, { x: options.width / 2 + (xs[i] as number) * scale, y: options.height / 2 + (ys[i] as number) * scale });
  });
  return out;
}

/**
 * The category tree: every category (intermediate and empty ones included) with the entries
 * directly in it and the count of everything below, built from the index's lists.
 */
import { preview } from './knowledge-text.js';
import type { TreeNode } from './types.js';

export interface TreeEntry {
  name: string;
  category: string;
  /** The start of the entry's text (at least `previewLimit` characters when items are asked for). */
  plain: string;
  media: number;
}

export interface BuildTreeOptions {
  /** The start: '' for the whole library. Must be '' or one of `categories`. */
  category: string;
  /** Levels below the start that are expanded (Infinity: all). */
  maxDepth: number;
  includeItems: boolean;
  previewLimit: number;
}

interface Building {
  node: TreeNode;
  items: TreeEntry[];
  children: Map<string, Building>;
}

function nameOf(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

function byName(a: { name: string }, b: { name: string }): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/** All nodes keyed by path, with their counts filled in. */
function assemble(categories: readonly string[], entries: readonly TreeEntry[]): Map<string, Building> {
  const nodes = new Map<string, Building>();
  const ensure = (path: string): Building => {
    let b = nodes.get(path);
    if (b) return b;
    b = { node: { name: nameOf(path), path, item_count: 0, total_count: 0, children: [] }, items: [], children: new Map() };
    nodes.set(path, b);
    if (path !== '') {
      const parent = ensure(path.includes('/') ? path.slice(0, path.lastIndexOf('/')) : '');
      parent.children.set(path, b);
    }
    return b;
  };
  ensure('');
  for (const c of categories) ensure(c);
  for (const e of entries) {
    const home = ensure(e.category);
    home.items.push(e);
    home.node.item_count++;
    for (let path: string | undefined = e.category; path !== undefined; path = parentOf(path)) ensure(path).node.total_count++;
  }
  return nodes;
}

function parentOf(path: string): string | undefined {
  if (path === '') return undefined;
  return path.includes('/') ? path.slice(0, path.lastIndexOf('/')) : '';
}

export function buildTree(categories: readonly string[], entries: readonly TreeEntry[], options: BuildTreeOptions): TreeNode {
  const nodes = assemble(categories, entries);
  const start = nodes.get(options.category) ?? (nodes.get('') as Building);
  const render = (b: Building, depth: number): TreeNode => {
    const node: TreeNode = { ...b.node, children: [] };
    if (options.includeItems) {
      node.items = b.items
        .map((e) => ({ name: nameOf(e.name), path: e.name, preview: preview(e.plain, options.previewLimit), media: e.media }))
        .sort(byName);
    }
    if (depth < options.maxDepth) node.children = [...b.children.values()].map((c) => render(c, depth + 1)).sort(byName);
    return node;
  };
  return render(start, 0);
}

/** Entries in each category and below, most first, ties by name. */
export function countCategories(categories: readonly string[], entries: readonly TreeEntry[]): Array<{ category: string; count: number }> {
  const nodes = assemble(categories, entries);
  return [...nodes.values()]
    .filter((b) => b.node.path !== '')
    .map((b) => ({ category: b.node.path, count: b.node.total_count }))
    .sort((a, b) => b.count - a.count || (a.category < b.category ? -1 : a.category > b.category ? 1 : 0));
}

/** Every category path including the levels above each (sorted). */
export function allCategories(categories: readonly string[], entries: readonly TreeEntry[]): string[] {
  return [...assemble(categories, entries).keys()].filter((p) => p !== '').sort();
}

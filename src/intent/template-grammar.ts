const WHITESPACE = /\s/u;

/**
 * The sentence-template language of the local intent engine: literal text, alternatives `(a|b)`,
 * optional parts `[x]`, slots `{list}` or `{list:slot}` bound to lists given at compile time, and
 * any nesting of these. Matching is per character on normalised text, so Chinese needs no word
 * splitting; a space in a template matches the space between two English words and is optional
 * next to CJK. Only whole-sentence matches count. Results are memoised per (node, position) so a
 * template with many optional parts stays linear in practice. Templates compiled through one
 * {@link TemplateSet} share identical subtrees: the shipped sentences (about 3,000 templates, 220,000
 * nodes written out) have under 5,000 distinct nodes, and kept apart they held 25 MB of heap.
 */

import { HomeAgentError } from '../shared/errors.js';
import { parseDuration, parseNumberWords, parsePercent } from './number-words.js';
import { APOSTROPHES, isCjk, normalizeText, PUNCTUATION } from './text-normalize.js';

export type SlotValue = string | number;

/** A list of named things: each value may be said in several ways (names and aliases). */
export interface ValueList {
  type: 'values';
  values: ReadonlyArray<{ value: SlotValue; phrases: readonly string[] }>;
}

/** Numbers from..to (inclusive); step, when given, must divide value - from. */
export interface RangeList {
  type: 'range';
  from: number;
  to: number;
  step?: number;
  /** Accept "50%", "百分之五十", "half" as well as a plain number. */
  percent?: boolean;
  /** Words that may follow the number and are not part of it: "度", "degrees". */
  units?: readonly string[];
}

/** A duration, as seconds. */
export interface DurationList {
  type: 'duration';
}

/** Any non-empty text; the shortest reading wins when several fit. */
export interface WildcardList {
  type: 'wildcard';
}

export type SlotList = ValueList | RangeList | DurationList | WildcardList;

export interface SlotMatch {
  value: SlotValue;
  /** The matched span of the normalised sentence. */
  text: string;
  /** Free text (a wildcard list): the value is the span itself, in its normalised form. */
  free?: true;
}

export interface TemplateMatch {
  slots: Record<string, SlotMatch>;
  /** Higher is better: literal characters count 1, slot characters more, wildcard characters less. */
  score: number;
}

type Node =
  | { kind: 'text'; id: number; chars: string }
  | { kind: 'space'; id: number }
  | { kind: 'seq'; id: number; items: Node[] }
  | { kind: 'alt'; id: number; options: Node[]; optional: boolean }
  | { kind: 'slot'; id: number; slot: string; listName: string; list: CompiledList };

type CompiledList =
  | { type: 'values'; trie: TrieNode; edges: EdgeChars }
  | { type: 'range'; spec: RangeList; units: string[] }
  | { type: 'duration' }
  | { type: 'wildcard' };

interface TrieNode {
  children: Map<string, TrieNode>;
  values: SlotValue[];
}

export interface CompiledTemplate {
  readonly source: string;
  readonly root: Node;
  readonly nodeCount: number;
  /** The characters a match can begin and end with (see mayMatch). */
  readonly edges: TemplateEdges;
  /** Each slot's list name: `{area:floor}` binds slot floor from list area. */
  readonly slotLists: Readonly<Record<string, string>>;
}

/**
 * The characters a match can start and end with; undefined means any (a number, a wildcard), and
 * `empty` says the empty text matches. Cheap to test, and most templates fail it for a given
 * sentence: a sentence starting with "t" never meets the templates that start with "set" or "what".
 */
export interface TemplateEdges {
  first: ReadonlySet<string> | undefined;
  last: ReadonlySet<string> | undefined;
  empty: boolean;
}

// Weights that make the matcher prefer longer list matches and shorter wildcards (see TemplateMatch.score).
const LITERAL_WEIGHT = 1;
const SLOT_WEIGHT = 1.2;
const WILDCARD_WEIGHT = 0.5;
// A spoken number or duration is never longer than this many characters; bounds the span search.
const MAX_NUMBER_SPAN = 32;
const MAX_DURATION_SPAN = 48;
const NUMBER_START = /[\d零〇一二两三四五六七八九十百千万半a-z.]/u;

/** Parse `source` against `lists`; throws HA_ERR_INTENT_TEMPLATE naming the position of bad syntax. */
export function compileTemplate(source: string, lists: Readonly<Record<string, SlotList>>): CompiledTemplate {
  return new TemplateSet(lists).compile(source);
}

type NodeShape = Node extends infer N ? (N extends Node ? Omit<N, 'id'> : never) : never;

/**
 * Compiles templates against one set of lists, sharing every subtree that is the same in several
 * of them (a node's id is then unique within the set, which is what the match memo needs). Keep it
 * only while compiling: what it holds besides the nodes is its lookup table.
 */
export class TemplateSet {
  readonly #lists: Readonly<Record<string, SlotList>>;
  readonly #nodes = new Map<string, Node>();
  /** Bracketed groups already parsed, by their text: the shipped templates repeat the same groups thousands of times. */
  readonly #groups = new Map<string, ParsedGroup>();
  #nextId = 0;

  constructor(lists: Readonly<Record<string, SlotList>>) {
    this.#lists = lists;
  }

  /** Parse `source`; throws HA_ERR_INTENT_TEMPLATE naming the position of bad syntax. */
  compile(source: string): CompiledTemplate {
    return parseTemplate(source, this.#lists, (shape) => this.#intern(shape), this.#groups);
  }

  /** The one node of this shape: children are already shared, so their ids identify them. */
  #intern(shape: NodeShape): Node {
    const key = shapeKey(shape);
    const known = this.#nodes.get(key);
    if (known) return known;
    const node = { ...shape, id: this.#nextId++ } as Node;
    this.#nodes.set(key, node);
    return node;
  }

  /** Every node id of the templates compiled so far is below this. */
  get nodeCount(): number {
    return this.#nextId;
  }
}

function shapeKey(shape: NodeShape): string {
  switch (shape.kind) {
    case 'text':
      return `t${shape.chars}`;
    case 'space':
      return 's';
    case 'seq':
      return `q${shape.items.map((n) => n.id).join(',')}`;
    case 'alt':
      return `${shape.optional ? 'o' : 'a'}${shape.options.map((n) => n.id).join(',')}`;
    case 'slot':
      // The list follows from its name: one set compiles against one lists record.
      return `l${shape.slot}:${shape.listName}`;
  }
}

/** A group's parse, reusable wherever the same text appears in a template of the same set. */
interface ParsedGroup {
  node: Node;
  /** The highest node id in its subtree. */
  maxId: number;
  /** The slots it binds, as [slot, list name]. */
  bindings: ReadonlyArray<readonly [string, string]>;
}

/** Where the group opening at `start` closes, by bracket depth alone (slots skipped); -1 when it does not. */
function groupEnd(source: string, start: number): number {
  let depth = 0;
  for (let i = start; i < source.length; i++) {
    const ch = source[i];
    if (ch === '(' || ch === '[') depth += 1;
    else if (ch === ')' || ch === ']') {
      depth -= 1;
      if (depth === 0) return i;
    } else if (ch === '{') {
      const close = source.indexOf('}', i);
      if (close < 0) return -1;
      i = close;
    }
  }
  return -1;
}

function parseTemplate(
  source: string,
  lists: Readonly<Record<string, SlotList>>,
  node: (shape: NodeShape) => Node,
  groups: Map<string, ParsedGroup> = new Map(),
): CompiledTemplate {
  const compiledLists = new Map<string, CompiledList>();
  const slotLists: Record<string, string> = {};
  const bindings: Array<readonly [string, string]> = [];
  let maxId = -1;
  const made = (shape: NodeShape): Node => {
    const n = node(shape);
    maxId = Math.max(maxId, n.id);
    return n;
  };
  let pos = 0;

  const fail = (message: string, at: number): never => {
    throw new HomeAgentError('HA_ERR_INTENT_TEMPLATE', `template "${source}": ${message} at position ${at}`, {
      details: { template: source, position: at },
    });
  };

  const listFor = (name: string, at: number): CompiledList => {
    const known = compiledLists.get(name);
    if (known) return known;
    const spec = Object.hasOwn(lists, name) ? lists[name] : undefined;
    if (!spec) return fail(`unknown list "${name}"`, at);
    let compiled = listCache.get(spec);
    if (!compiled) {
      compiled = compileList(name, spec, (message) => fail(message, at));
      listCache.set(spec, compiled);
    }
    compiledLists.set(name, compiled);
    return compiled;
  };

  // sequence := (literal | group | slot)*   stops at | ) ] or the end
  const parseSequence = (): Node => {
    const items: Node[] = [];
    let literal = '';
    const flush = (): void => {
      for (const shape of literalShapes(literal)) items.push(made(shape));
      literal = '';
    };
    while (pos < source.length) {
      const ch = source[pos] ?? '';
      if (ch === '|' || ch === ')' || ch === ']') break;
      if (ch === '(' || ch === '[') {
        flush();
        items.push(parseGroup(ch));
        continue;
      }
      if (ch === '{') {
        flush();
        items.push(parseSlot());
        continue;
      }
      if (ch === '}') fail('"}" without a matching "{"', pos);
      literal += ch;
      pos += 1;
    }
    flush();
    return items.length === 1 && items[0] ? items[0] : made({ kind: 'seq', items });
  };

  // A group seen before in this set is taken whole: same text, same lists, so the same node. Only a
  // group that parsed cleanly is remembered, so errors are still found and placed by parsing.
  const parseGroup = (open: '(' | '['): Node => {
    const end = groupEnd(source, pos);
    const text = end < 0 ? undefined : source.slice(pos, end + 1);
    const known = text === undefined ? undefined : groups.get(text);
    if (known) {
      for (const [slot, listName] of known.bindings) {
        listFor(listName, pos);
        slotLists[slot] = listName;
        bindings.push([slot, listName]);
      }
      maxId = Math.max(maxId, known.maxId);
      pos = end + 1;
      return known.node;
    }
    const outerMax = maxId;
    const firstBinding = bindings.length;
    maxId = -1;
    const parsed = parseGroupText(open);
    if (text !== undefined && pos === end + 1) groups.set(text, { node: parsed, maxId, bindings: bindings.slice(firstBinding) });
    maxId = Math.max(outerMax, maxId);
    return parsed;
  };

  const parseGroupText = (open: '(' | '['): Node => {
    const start = pos;
    const close = open === '(' ? ')' : ']';
    pos += 1;
    const options = [parseSequence()];
    while (source[pos] === '|') {
      pos += 1;
      options.push(parseSequence());
    }
    if (source[pos] !== close) {
      if (pos >= source.length) fail(`"${open}" is never closed`, start);
      fail(`"${source[pos]}" does not close "${open}" opened at position ${start}`, pos);
    }
    pos += 1;
    return made({ kind: 'alt', options, optional: open === '[' });
  };

  const parseSlot = (): Node => {
    const start = pos;
    const end = source.indexOf('}', pos);
    if (end < 0) return fail('"{" is never closed', start);
    const inner = source.slice(pos + 1, end).trim();
    const m = /^([\p{L}_][\p{L}\p{N}_]*)(?::([\p{L}_][\p{L}\p{N}_]*))?$/u.exec(inner);
    if (!m) return fail(`"{${inner}}" is not a list name`, start);
    const listName = m[1] ?? '';
    const slot = m[2] ?? listName;
    const list = listFor(listName, start);
    pos = end + 1;
    slotLists[slot] = listName;
    bindings.push([slot, listName]);
    return made({ kind: 'slot', slot, listName, list });
  };

  const first = parseSequence();
  const options = [first];
  while (source[pos] === '|') {
    pos += 1;
    options.push(parseSequence());
  }
  if (pos < source.length) fail(`"${source[pos]}" without a matching opening bracket`, pos);
  const root: Node = options.length === 1 ? first : made({ kind: 'alt', options, optional: false });
  return { source, root, nodeCount: maxId + 1, edges: edgesOf(root), slotLists };
}

/** False only when no match can exist for the normalised `input` within these edges (see TemplateEdges). */
export function mayMatch(edges: TemplateEdges, input: string): boolean {
  const { first, last, empty } = edges;
  if (input === '') return empty;
  return (first === undefined || first.has(input[0] as string)) && (last === undefined || last.has(input.at(-1) as string));
}

/** Edges while compiling: the characters as a string (repeats allowed), undefined for any. */
interface EdgeChars {
  first: string | undefined;
  last: string | undefined;
  empty: boolean;
}

/** Two edge strings as one, each character once: repeats made the strings of big alternatives grow with every option. */
const join = (a: string | undefined, b: string | undefined): string | undefined => {
  if (a === undefined || b === undefined) return undefined;
  let out = a;
  for (const ch of b) if (!out.includes(ch)) out += ch;
  return out;
};
const asSet = (chars: string | undefined): ReadonlySet<string> | undefined => (chars === undefined ? undefined : new Set(chars));

/**
 * Where `template`'s matches can begin and end with the lists in `open` taking any text (see
 * matchNormalised): the template's own edges, except that an end an open slot can reach is any.
 */
export function templateEdges(template: CompiledTemplate, open?: ReadonlySet<string>): TemplateEdges {
  if (open === undefined) return template.edges;
  const { first, last, empty } = template.edges;
  return {
    first: reachesEdge(template.root, open, 'first') ? undefined : first,
    last: reachesEdge(template.root, open, 'last') ? undefined : last,
    empty,
  };
}

/** Whether a slot of an `open` list can take the first (or last) character of a match. */
function reachesEdge(node: Node, open: ReadonlySet<string>, edge: 'first' | 'last'): boolean {
  switch (node.kind) {
    case 'slot':
      return open.has(node.listName);
    case 'alt':
      return node.options.some((option) => reachesEdge(option, open, edge));
    case 'seq': {
      const items = edge === 'first' ? node.items : [...node.items].reverse();
      for (const item of items) {
        if (reachesEdge(item, open, edge)) return true;
        if (!canBeEmpty(item)) return false;
      }
      return false;
    }
    default:
      return false;
  }
}

function canBeEmpty(node: Node): boolean {
  switch (node.kind) {
    case 'space':
      return true;
    case 'alt':
      return node.optional || node.options.some(canBeEmpty);
    case 'seq':
      return node.items.every(canBeEmpty);
    default:
      return false;
  }
}

function edgesOf(root: Node): TemplateEdges {
  const { first, last, empty } = edgeCharsOf(root);
  return { first: asSet(first), last: asSet(last), empty };
}

/**
 * Edges per node, kept: nodes are shared between templates (see TemplateSet), so without this
 * the same subtree's edges were worked out again for every template holding it. Keyed weakly by
 * the node, so a recompiled home lets the old ones go.
 */
const edgeMemo = new WeakMap<Node, EdgeChars>();

function edgeCharsOf(node: Node): EdgeChars {
  const known = edgeMemo.get(node);
  if (known) return known;
  const edges = edgeCharsOfNode(node);
  edgeMemo.set(node, edges);
  return edges;
}

function edgeCharsOfNode(node: Node): EdgeChars {
  switch (node.kind) {
    case 'text':
      return { first: node.chars[0] as string, last: node.chars.at(-1) as string, empty: false };
    case 'space':
      // Matches nothing at either end of a sentence (normalised text never starts or ends with one).
      return { first: '', last: '', empty: true };
    case 'slot':
      return node.list.type === 'values' ? node.list.edges : { first: undefined, last: undefined, empty: false };
    case 'alt': {
      const out: EdgeChars = { first: '', last: '', empty: node.optional };
      for (const option of node.options) {
        const e = edgeCharsOf(option);
        out.first = join(out.first, e.first);
        out.last = join(out.last, e.last);
        out.empty ||= e.empty;
      }
      return out;
    }
    case 'seq': {
      // Only the items up to the first (and from the last) that cannot be empty decide the edges;
      // the middle of a long template is never visited.
      let first: string | undefined = '';
      let empty = true;
      for (const item of node.items) {
        const e = edgeCharsOf(item);
        first = join(first, e.first);
        if (!e.empty) {
          empty = false;
          break;
        }
      }
      let last: string | undefined = '';
      for (let i = node.items.length - 1; i >= 0; i--) {
        const e = edgeCharsOf(node.items[i] as Node);
        last = join(last, e.last);
        if (!e.empty) break;
      }
      return { first, last, empty };
    }
  }
}

/**
 * Literal pieces seen before, with their shapes: the shipped templates say the same few hundred
 * pieces ("turn ", " the ", "打开") thousands of times, and normalising each again was a tenth of
 * compiling. Shapes are plain data the interning copies, so sharing them is safe.
 */
const literalShapeCache = new Map<string, readonly NodeShape[]>();
const LITERAL_CACHE_LIMIT = 20_000;

/** Literal template text → text and space nodes, normalised like the sentences they will meet. */
function literalShapes(literal: string): readonly NodeShape[] {
  const known = literalShapeCache.get(literal);
  if (known) return known;
  const shapes = literalShapesOf(literal);
  // Bounded so that a caller compiling endless distinct templates cannot grow it without end.
  if (literalShapeCache.size < LITERAL_CACHE_LIMIT) literalShapeCache.set(literal, shapes);
  return shapes;
}

function literalShapesOf(literal: string): NodeShape[] {
  const nodes: NodeShape[] = [];
  let chars = '';
  const prepared = literal.normalize('NFKC').toLowerCase().replace(APOSTROPHES, '').replace(PUNCTUATION, ' ');
  for (const ch of prepared) {
    if (WHITESPACE.test(ch)) {
      if (chars !== '') nodes.push({ kind: 'text', chars });
      chars = '';
      if (nodes.at(-1)?.kind !== 'space') nodes.push({ kind: 'space' });
    } else chars += ch;
  }
  if (chars !== '') nodes.push({ kind: 'text', chars });
  return nodes;
}

/**
 * Lists compiled once per list object, not once per template using them: a home's names and areas
 * are shared by thousands of templates (a new home brings new list objects).
 */
const listCache = new WeakMap<SlotList, CompiledList>();

function compileList(name: string, spec: SlotList, fail: (message: string) => never): CompiledList {
  switch (spec.type) {
    case 'values': {
      const trie: TrieNode = { children: new Map(), values: [] };
      for (const entry of spec.values) {
        const phrases = entry.phrases.length > 0 ? entry.phrases : [String(entry.value)];
        for (const phrase of phrases) {
          const normal = normalizeText(phrase);
          if (normal === '') fail(`list "${name}" has an empty phrase for ${JSON.stringify(entry.value)}`);
          let node = trie;
          for (const ch of normal) {
            let child = node.children.get(ch);
            if (!child) {
              child = { children: new Map(), values: [] };
              node.children.set(ch, child);
            }
            node = child;
          }
          if (!node.values.includes(entry.value)) node.values.push(entry.value);
        }
      }
      return { type: 'values', trie, edges: trieEdges(trie) };
    }
    case 'range':
      if (!(Number.isFinite(spec.from) && Number.isFinite(spec.to) && spec.from <= spec.to))
        fail(`list "${name}" has a range whose from is not <= to`);
      if (spec.step !== undefined && !(spec.step > 0)) fail(`list "${name}" has a step that is not positive`);
      return { type: 'range', spec, units: (spec.units ?? []).map(normalizeText).filter((u) => u !== '') };
    case 'duration':
      return { type: 'duration' };
    case 'wildcard':
      return { type: 'wildcard' };
    default:
      return fail(`list "${name}" has an unknown type`);
  }
}

/** The first and last characters of the phrases of a values list. */
function trieEdges(trie: TrieNode): EdgeChars {
  const last = new Set<string>();
  const walk = (node: TrieNode): void => {
    for (const [ch, child] of node.children) {
      if (child.values.length > 0) last.add(ch);
      walk(child);
    }
  };
  walk(trie);
  return { first: [...trie.children.keys()].join(''), last: [...last].join(''), empty: false };
}

interface Partial {
  end: number;
  score: number;
  /** Slot bindings in template order; small, so arrays are fine. */
  slots: ReadonlyArray<readonly [string, SlotMatch]>;
}

/**
 * The (node, position) memo, shared by every call: a recogniser tries hundreds of templates per
 * sentence and most fail within a few characters, so allocating a fresh nodes × positions table
 * each time cost more than the matching. A cell counts only when its stamp is the current call's,
 * and the cells written are emptied afterwards so old partial matches do not linger for the garbage
 * collector to promote. Matching is synchronous and never nested, so one table serves all calls.
 */
const memo = { stamp: 0, stamps: new Uint32Array(0), cells: [] as Array<Partial[] | undefined>, written: [] as number[] };

function resetMemo(size: number): number {
  if (memo.stamps.length < size) {
    const grown = Math.max(size, memo.stamps.length * 2);
    memo.stamps = new Uint32Array(grown);
    memo.cells = new Array(grown);
    memo.stamp = 0;
  }
  memo.stamp += 1;
  if (memo.stamp === 0xffffffff) {
    memo.stamps.fill(0);
    memo.stamp = 1;
  }
  return memo.stamp;
}

function releaseMemo(): void {
  const { cells, written } = memo;
  for (const key of written) cells[key] = undefined;
  written.length = 0;
}

/** Every whole-sentence match of `template` against `text`, best score first, no duplicates. */
export function matchTemplate(template: CompiledTemplate, text: string): TemplateMatch[] {
  return matchNormalised(template, normalizeText(text));
}

/**
 * Lists opened for a match: their slots take any span of whole words (or of CJK characters) that
 * `accepts` lets through, instead of their phrases. The recogniser's second try when a name was
 * said not quite as registered; `accepts` prunes spans that resemble no name before the rest of
 * the template is tried after them. It runs inside a match, so it must not match templates itself
 * (the memo is shared).
 */
export interface OpenLists {
  lists: ReadonlySet<string>;
  accepts(list: string, text: string): boolean;
}

/** As matchTemplate, for text already in normalizeText's form (a recogniser normalises a sentence once). */
export function matchNormalised(template: CompiledTemplate, input: string, open?: OpenLists): TemplateMatch[] {
  const width = input.length + 1;
  const stamp = resetMemo(template.nodeCount * width);
  const { stamps, cells, written } = memo;

  const match = (node: Node, pos: number): Partial[] => {
    const key = node.id * width + pos;
    if (stamps[key] === stamp) return cells[key] as Partial[];
    const result = dedupe(matchUncached(node, pos));
    stamps[key] = stamp;
    cells[key] = result;
    written.push(key);
    return result;
  };

  const matchUncached = (node: Node, pos: number): Partial[] => {
    switch (node.kind) {
      case 'text':
        return input.startsWith(node.chars, pos)
          ? [{ end: pos + node.chars.length, score: node.chars.length * LITERAL_WEIGHT, slots: [] }]
          : [];
      case 'space':
        if (input[pos] === ' ') return [{ end: pos + 1, score: 0, slots: [] }];
        // Optional at the edges, after a space already consumed (skipped optional word), or next to CJK.
        if (pos === 0 || pos === input.length || input[pos - 1] === ' ' || isCjk(input[pos - 1]) || isCjk(input[pos]))
          return [{ end: pos, score: 0, slots: [] }];
        return [];
      case 'seq': {
        let current: Partial[] = [{ end: pos, score: 0, slots: [] }];
        for (const item of node.items) {
          const next: Partial[] = [];
          for (const left of current)
            for (const right of match(item, left.end))
              next.push({ end: right.end, score: left.score + right.score, slots: joinSlots(left.slots, right.slots) });
          current = dedupe(next);
          if (current.length === 0) break;
        }
        return current;
      }
      case 'alt': {
        const out = node.options.flatMap((option) => match(option, pos));
        if (node.optional) out.push({ end: pos, score: 0, slots: [] });
        return out;
      }
      case 'slot':
        if (open?.lists.has(node.listName)) {
          if (!atWordEdge(input, pos)) return [];
          const { listName } = node;
          return matchSlot(node.slot, WILDCARD, input, pos).filter(
            (p) => atWordEdge(input, p.end) && open.accepts(listName, p.slots[0]?.[1].text ?? ''),
          );
        }
        return matchSlot(node.slot, node.list, input, pos);
    }
  };

  let full: Partial[];
  try {
    full = match(template.root, 0).filter((p) => p.end === input.length);
  } finally {
    releaseMemo();
  }
  return full.map((p) => ({ slots: Object.fromEntries(p.slots), score: p.score })).sort((a, b) => b.score - a.score);
}

const WILDCARD: CompiledList = { type: 'wildcard' };

/** Between two words: an end of the text, a space, or a CJK character on either side. */
function atWordEdge(input: string, pos: number): boolean {
  return pos === 0 || pos === input.length || input[pos] === ' ' || input[pos - 1] === ' ' || isCjk(input[pos - 1]) || isCjk(input[pos]);
}

function matchSlot(slot: string, list: CompiledList, input: string, pos: number): Partial[] {
  if (pos >= input.length || input[pos] === ' ') return [];
  const out: Partial[] = [];
  const bind = (end: number, value: SlotValue, weight: number, free = false): void => {
    const text = input.slice(pos, end);
    out.push({ end, score: text.length * weight, slots: [[slot, free ? { value, text, free: true } : { value, text }]] });
  };
  switch (list.type) {
    case 'values': {
      let node: TrieNode | undefined = list.trie;
      for (let i = pos; i < input.length && node; i++) {
        node = node.children.get(input[i] ?? '');
        if (node) for (const value of node.values) bind(i + 1, value, SLOT_WEIGHT);
      }
      return out;
    }
    case 'range': {
      if (!NUMBER_START.test(input[pos] ?? '')) return out;
      for (let end = pos + 1; end <= Math.min(input.length, pos + MAX_NUMBER_SPAN); end++) {
        if (input[end - 1] === ' ') continue;
        const value = readRangeValue(input.slice(pos, end), list);
        if (value !== undefined) bind(end, value, SLOT_WEIGHT);
      }
      return out;
    }
    case 'duration': {
      if (!NUMBER_START.test(input[pos] ?? '')) return out;
      for (let end = pos + 1; end <= Math.min(input.length, pos + MAX_DURATION_SPAN); end++) {
        if (input[end - 1] === ' ') continue;
        const seconds = parseDuration(input.slice(pos, end));
        if (seconds !== undefined) bind(end, seconds, SLOT_WEIGHT);
      }
      return out;
    }
    case 'wildcard':
      for (let end = pos + 1; end <= input.length; end++) {
        if (input[end - 1] !== ' ') bind(end, input.slice(pos, end), WILDCARD_WEIGHT, true);
      }
      return out;
  }
}

function readRangeValue(span: string, list: { spec: RangeList; units: string[] }): number | undefined {
  let numberText = span;
  for (const unit of list.units) {
    if (span.length > unit.length && span.endsWith(unit)) {
      numberText = span.slice(0, -unit.length).trimEnd();
      break;
    }
  }
  const { spec } = list;
  let value: number | undefined;
  if (spec.percent) value = parsePercent(numberText)?.value;
  else value = parseNumberWords(numberText);
  if (value === undefined || value < spec.from || value > spec.to) return undefined;
  if (spec.step !== undefined) {
    const steps = (value - spec.from) / spec.step;
    if (Math.abs(steps - Math.round(steps)) > 1e-9) return undefined;
  }
  return value;
}

function joinSlots(left: Partial['slots'], right: Partial['slots']): Partial['slots'] {
  if (right.length === 0) return left;
  return left.length === 0 ? right : [...left, ...right];
}

/** One partial per (end, slot bindings): the best-scoring one. Keeps ambiguity from multiplying. */
function dedupe(partials: Partial[]): Partial[] {
  if (partials.length < 2) return partials;
  const best = new Map<string | number, Partial>();
  for (const p of partials) {
    let key: string | number = p.end;
    for (const [name, m] of p.slots) key = `${key}\u0001${name}=${m.text}=${m.value}`;
    const known = best.get(key);
    if (!known || p.score > known.score) best.set(key, p);
  }
  return [...best.values()];
}

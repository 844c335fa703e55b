/**
 * The sentence-template language of the local intent engine: literal text, alternatives `(a|b)`,
 * optional parts `[x]`, slots `{list}` or `{list:slot}` bound to lists given at compile time, and
 * any nesting of these. Matching is per character on normalised text, so Chinese needs no word
 * splitting; a space in a template matches the space between two English words and is optional
 * next to CJK. Only whole-sentence matches count. Results are memoised per (node, position) so a
 * template with many optional parts stays linear in practice.
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
  | { kind: 'slot'; id: number; slot: string; list: CompiledList };

type CompiledList =
  | { type: 'values'; trie: TrieNode }
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
  const compiledLists = new Map<string, CompiledList>();
  let nextId = 0;
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
      for (const node of literalNodes(literal, () => nextId++)) items.push(node);
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
    return items.length === 1 && items[0] ? items[0] : { kind: 'seq', id: nextId++, items };
  };

  const parseGroup = (open: '(' | '['): Node => {
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
    return { kind: 'alt', id: nextId++, options, optional: open === '[' };
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
    return { kind: 'slot', id: nextId++, slot, list };
  };

  const first = parseSequence();
  const options = [first];
  while (source[pos] === '|') {
    pos += 1;
    options.push(parseSequence());
  }
  if (pos < source.length) fail(`"${source[pos]}" without a matching opening bracket`, pos);
  const root: Node = options.length === 1 ? first : { kind: 'alt', id: nextId++, options, optional: false };
  return { source, root, nodeCount: nextId };
}

/** Literal template text → text and space nodes, normalised like the sentences they will meet. */
function literalNodes(literal: string, newId: () => number): Node[] {
  const nodes: Node[] = [];
  let chars = '';
  const prepared = literal.normalize('NFKC').toLowerCase().replace(APOSTROPHES, '').replace(PUNCTUATION, ' ');
  for (const ch of prepared) {
    if (/\s/u.test(ch)) {
      if (chars !== '') nodes.push({ kind: 'text', id: newId(), chars });
      chars = '';
      if (nodes.at(-1)?.kind !== 'space') nodes.push({ kind: 'space', id: newId() });
    } else chars += ch;
  }
  if (chars !== '') nodes.push({ kind: 'text', id: newId(), chars });
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
      return { type: 'values', trie };
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

interface Partial {
  end: number;
  score: number;
  /** Slot bindings in template order; small, so arrays are fine. */
  slots: ReadonlyArray<readonly [string, SlotMatch]>;
}

/** Every whole-sentence match of `template` against `text`, best score first, no duplicates. */
export function matchTemplate(template: CompiledTemplate, text: string): TemplateMatch[] {
  const input = normalizeText(text);
  const memo: Array<Partial[] | undefined> = new Array(template.nodeCount * (input.length + 1));

  const match = (node: Node, pos: number): Partial[] => {
    const key = node.id * (input.length + 1) + pos;
    const cached = memo[key];
    if (cached) return cached;
    const result = dedupe(matchUncached(node, pos));
    memo[key] = result;
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
              next.push({ end: right.end, score: left.score + right.score, slots: [...left.slots, ...right.slots] });
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
        return matchSlot(node.slot, node.list, input, pos);
    }
  };

  const full = match(template.root, 0).filter((p) => p.end === input.length);
  return full.map((p) => ({ slots: Object.fromEntries(p.slots), score: p.score })).sort((a, b) => b.score - a.score);
}

function matchSlot(slot: string, list: CompiledList, input: string, pos: number): Partial[] {
  if (pos >= input.length || input[pos] === ' ') return [];
  const out: Partial[] = [];
  const bind = (end: number, value: SlotValue, weight: number): void => {
    const text = input.slice(pos, end);
    out.push({ end, score: text.length * weight, slots: [[slot, { value, text }]] });
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
        if (input[end - 1] !== ' ') bind(end, input.slice(pos, end), WILDCARD_WEIGHT);
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

/** One partial per (end, slot bindings): the best-scoring one. Keeps ambiguity from multiplying. */
function dedupe(partials: Partial[]): Partial[] {
  if (partials.length < 2) return partials;
  const best = new Map<string, Partial>();
  for (const p of partials) {
    const key = `${p.end}\u0001${p.slots.map(([name, m]) => `${name}=${m.text}=${m.value}`).join('\u0001')}`;
    const known = best.get(key);
    if (!known || p.score > known.score) best.set(key, p);
  }
  return [...best.values()];
}

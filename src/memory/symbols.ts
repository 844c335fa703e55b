/**
 * Exact symbols: numbers, versions and identifiers that must match literally. Sentence vectors
 * dilute them (the original ranked "13010/13011" outside the top 2000 while LIKE found it), so
 * they get their own lookup path.
 */

/** Numbers and versions (`42`, `13010/13011` gives both, `1.2.3`, `v2.0`, `192.168.1.10`, `3,5`). */
const NUMBER_OR_VERSION = /(?<![A-Za-z0-9_])v?\d+(?:[.:]\d+)*(?![A-Za-z0-9_]|\.\d)/gi;
/** Identifiers: Latin words with a digit, `_`, `-`, `.` inside, or inner capitals (`node_red`, `zigbee2mqtt`, `HomeAssistant`). */
const IDENTIFIER =
  /(?<![A-Za-z0-9_.-])[A-Za-z][A-Za-z0-9]*(?:[_.-][A-Za-z0-9]+)+(?![A-Za-z0-9_])|(?<![A-Za-z0-9_])[A-Za-z]+\d[A-Za-z0-9]*|(?<![A-Za-z0-9_])[A-Za-z][a-z]+[A-Z][A-Za-z0-9]*|(?<![A-Za-z0-9_])[A-Z]{2,}[a-z][A-Za-z0-9]*/g;

/** The exact symbols in a text, in order of first appearance, without duplicates (case kept). */
export function extractSymbols(text: string): string[] {
  const found: Array<{ at: number; symbol: string }> = [];
  for (const pattern of [NUMBER_OR_VERSION, IDENTIFIER]) {
    for (const m of text.matchAll(pattern)) found.push({ at: m.index ?? 0, symbol: m[0] });
  }
  found.sort((a, b) => a.at - b.at);
  const seen = new Set<string>();
  const symbols: string[] = [];
  for (const { symbol } of found) {
    const key = symbol.toLowerCase();
    if (seen.has(key)) continue;
    seen.add(key);
    symbols.push(symbol);
  }
  return symbols;
}

/**
 * True when `symbol` occurs in `text` as a whole symbol (case-insensitive): `13010` is in
 * "端口 13010/13011" but not in "130105", `1.2` not in "1.2.3", `redis` not in "redisson".
 * Only Latin letters and digits count as neighbours, so "我今年42岁" contains `42`.
 */
export function containsSymbol(text: string, symbol: string): boolean {
  const escaped = symbol.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`(?<![A-Za-z0-9_]|\\d\\.)${escaped}(?![A-Za-z0-9_]|\\.\\d)`, 'i').test(text);
}

/** A LIKE pattern that finds every text containing `symbol` (a superset: `_` and `%` stay wildcards). */
export function likePattern(symbol: string): string {
  return `%${symbol}%`;
}

/** Helpers for SQL `IN (...)` lists. */

/** Bound parameters per statement stay well under SQLite's limit (32766). */
export const ID_CHUNK = 500;

/** `?, ?, ?` for `n` parameters. */
export function placeholders(n: number): string {
  return Array.from({ length: n }, () => '?').join(', ');
}

export function chunks<T>(items: readonly T[], size: number = ID_CHUNK): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

export function unique<T>(items: readonly T[]): T[] {
  return [...new Set(items)];
}

/** Escapes backslash, `%` and `_` for a LIKE pattern written with `ESCAPE` backslash. */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/**
 * "Did you mean ...?" for names someone typed: the known names within a few edits of it, closest
 * first. Used where a typo in a configuration key or setting would otherwise only get the list of
 * every key back.
 */
import { distance } from 'fastest-levenshtein';

/** Names at most this many edits away count as near misses (a third of the name, at least 1, at most 3). */
function allowedEdits(name: string): number {
  return Math.min(3, Math.max(1, Math.floor(name.length / 3)));
}

/** The names of `known` close to `name`, closest first, at most `limit`. */
export function nearNames(name: string, known: Iterable<string>, limit = 3): string[] {
  const allowed = allowedEdits(name);
  const scored: Array<{ name: string; edits: number }> = [];
  for (const candidate of known) {
    if (candidate === name) continue;
    const edits = distance(name.toLowerCase(), candidate.toLowerCase());
    if (edits <= allowed) scored.push({ name: candidate, edits });
  }
  scored.sort((a, b) => a.edits - b.edits || a.name.localeCompare(b.name));
  return scored.slice(0, limit).map((s) => s.name);
}

/** ` (did you mean socket_path?)`, or '' when nothing is near. */
export function didYouMean(name: string, known: Iterable<string>): string {
  const near = nearNames(name, known);
  return near.length === 0 ? '' : ` (did you mean ${near.join(' or ')}?)`;
}

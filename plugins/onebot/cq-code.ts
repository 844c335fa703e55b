/**
 * CQ codes: the string form of OneBot v11 messages (`hello [CQ:at,qq=123] [CQ:image,file=a.jpg]`).
 * Implementations send either that or an array of segments; both are turned into segments here so
 * the rest of the plugin reads one shape. Escaping follows the spec: in text `&`, `[`, `]`; inside
 * a parameter value also `,`.
 */
import type { Segment } from './protocol.js';

const CQ = /\[CQ:([a-zA-Z0-9_.-]+)((?:,[^,\]]*)*)\]/g;

export function escapeText(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/\[/g, '&#91;').replace(/\]/g, '&#93;');
}

export function escapeParam(value: string): string {
  return escapeText(value).replace(/,/g, '&#44;');
}

export function unescapeCq(text: string): string {
  return text.replace(/&#91;/g, '[').replace(/&#93;/g, ']').replace(/&#44;/g, ',').replace(/&amp;/g, '&');
}

/** Parses a CQ-code string into segments; text between codes becomes text segments. */
export function parseCq(message: string): Segment[] {
  const segments: Segment[] = [];
  let last = 0;
  for (const match of message.matchAll(CQ)) {
    const index = match.index ?? 0;
    if (index > last) segments.push({ type: 'text', data: { text: unescapeCq(message.slice(last, index)) } });
    const data: Record<string, string> = {};
    for (const pair of (match[2] ?? '').split(',').slice(1)) {
      const eq = pair.indexOf('=');
      if (eq > 0) data[pair.slice(0, eq)] = unescapeCq(pair.slice(eq + 1));
    }
    segments.push({ type: match[1] ?? 'text', data });
    last = index + match[0].length;
  }
  if (last < message.length) segments.push({ type: 'text', data: { text: unescapeCq(message.slice(last)) } });
  return segments;
}

/** The CQ-code string of segments (the inverse of parseCq). */
export function toCq(segments: readonly Segment[]): string {
  return segments
    .map((s) => {
      if (s.type === 'text') return escapeText(s.data.text ?? '');
      const params = Object.entries(s.data).map(([k, v]) => `,${k}=${escapeParam(String(v))}`);
      return `[CQ:${s.type}${params.join('')}]`;
    })
    .join('');
}

/** Segments of a message in either format; segment data values are turned into strings. */
export function toSegments(message: unknown): Segment[] {
  if (typeof message === 'string') return parseCq(message);
  if (!Array.isArray(message)) return [];
  const segments: Segment[] = [];
  for (const item of message) {
    if (typeof item !== 'object' || item === null || typeof item.type !== 'string') continue;
    const data: Record<string, string> = {};
    for (const [k, v] of Object.entries((item.data ?? {}) as Record<string, unknown>)) {
      if (v !== null && v !== undefined) data[k] = String(v);
    }
    segments.push({ type: item.type, data });
  }
  return segments;
}

/**
 * Splits a long reply into QQ-sized messages. QQ clients cut or refuse very long messages, so a
 * reply is sent as several, each ending at the last paragraph break, else line break, else
 * sentence end (Western or CJK), else space before the limit; only text without any of those is
 * cut hard.
 */

const BOUNDARIES: RegExp[] = [/\n\s*\n/g, /\n/g, /[.!?。！？；;](?=\s|$)|[。！？；]/g, /\s/g];

export function splitText(text: string, maxChars: number): string[] {
  const parts: string[] = [];
  let rest = text.trim();
  while (rest.length > maxChars) {
    const cut = cutPoint(rest, maxChars);
    const head = rest.slice(0, cut).trimEnd();
    if (head !== '') parts.push(head);
    rest = rest.slice(cut).trimStart();
  }
  if (rest !== '') parts.push(rest);
  return parts;
}

/** Where to end the first part: after the last boundary in the window, preferring the strongest kind; never in its first half. */
function cutPoint(text: string, maxChars: number): number {
  const window = text.slice(0, maxChars);
  const floor = Math.floor(maxChars / 2);
  for (const boundary of BOUNDARIES) {
    let best = -1;
    for (const match of window.matchAll(boundary)) {
      const end = (match.index ?? 0) + match[0].length;
      if (end <= maxChars) best = end;
    }
    if (best >= floor) return best;
  }
  // Do not cut a surrogate pair (emoji) in two.
  const code = text.charCodeAt(maxChars - 1);
  return code >= 0xd800 && code <= 0xdbff ? maxChars - 1 : maxChars;
}

/**
 * Splits mixed text into Han runs (segmented by jieba) and everything else (Latin words, numbers,
 * identifiers: handled by our own rules). jieba would cut `v1.2.3` into five pieces and
 * `wang@example.com` into seven, so Latin material never goes to it.
 */

export interface ScriptRun {
  text: string;
  han: boolean;
}

/** Han characters plus CJK and full-width punctuation, so `，` and `。` stay inside Chinese runs. */
const HAN_RUN = /[\p{Script=Han}\u3000-\u303f\uff01-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65]+/gu;
const HAN_CHAR = /\p{Script=Han}/u;

export function hasHan(text: string): boolean {
  return HAN_CHAR.test(text);
}

export function splitScriptRuns(text: string): ScriptRun[] {
  const runs: ScriptRun[] = [];
  let last = 0;
  for (const match of text.matchAll(HAN_RUN)) {
    const start = match.index;
    if (start > last) runs.push({ text: text.slice(last, start), han: false });
    runs.push({ text: match[0], han: true });
    last = start + match[0].length;
  }
  if (last < text.length) runs.push({ text: text.slice(last), han: false });
  return runs;
}

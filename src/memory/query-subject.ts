/**
 * What a question asks about: its nouns ("spare batteries", "car charger", "小雨", "电池"), as the
 * analyser tags them. Recall uses them to tell an item that names the subject from one that merely
 * shares a word with the question ("phone charger" for "car charger"), and to say "no record" when
 * memory holds nothing naming the subject at all. Question words, time words and frame verbs
 * ("where", "以前", "like", "喜欢") are not the subject: only nouns count.
 */

/** One noun of the question with its search tokens (a Chinese noun may split into several). */
export interface QuerySubject {
  word: string;
  tokens: string[];
  /** Nouns next to each other form one phrase ("car charger", "车载 充电器"): its index in the question. */
  phrase: number;
}

/** English NN, NNS, NNP, NNPS; jieba n, nr, ns, nt, nz, ng, nrt…, eng (a Latin word), j (an abbreviation such as 家长会). */
const NOUN_TAG = /^(?:NN|n|eng$|j$)/;

/** Words asking for something; the noun right after one names the answer's kind, not the subject. */
const INTERROGATIVE = /^(?:什么|啥|哪|哪个|哪些|哪种|哪家|多少|几|what|which|whose|how)$/i;

/**
 * The question's nouns that are search words (stop words such as "时候" drop out). `isFrameWord`
 * leaves out words that shape the question rather than name its subject (past markers: "before").
 */
export function subjectWords(
  query: string,
  tag: (text: string) => ReadonlyArray<{ word: string; tag: string }>,
  tokens: (text: string) => string[],
  isFrameWord: (word: string) => boolean = () => false,
): QuerySubject[] {
  const out: QuerySubject[] = [];
  const seen = new Set<string>();
  let previous = '';
  let phrase = 0;
  let inPhrase = false;
  for (const { word, tag: pos } of tag(query)) {
    if (word.trim() === '') continue;
    // "什么时候", "哪个房间", "what time": the noun after an interrogative is the kind of answer asked for.
    const answerKind = INTERROGATIVE.test(previous);
    previous = word;
    const wordTokens = NOUN_TAG.test(pos) && !isFrameWord(word) && !answerKind ? tokens(word) : [];
    if (wordTokens.length === 0) {
      if (inPhrase) phrase += 1;
      inPhrase = false;
      continue;
    }
    inPhrase = true;
    const key = word.toLowerCase();
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ word: key, tokens: wordTokens, phrase });
  }
  return out;
}

/**
 * The share (0..1) of the subject's nouns that `text` names: a noun counts when the text holds all
 * of its tokens (English stems: "batteries" ~ "battery") or the word itself (a Chinese name the
 * segmenter splits differently in another sentence: "王芳" as 王 + 芳). `said`: named in what was
 * said; `named`: also counting a transcript line's speaker label ("Emma: what is the weather
 * like?" is by Emma, not about her); `phrases`: the share of noun phrases named whole (speaker
 * labels counting), "phone charger" naming none of "car charger".
 */
export function subjectCoverage(
  text: string,
  subject: readonly QuerySubject[],
  tokens: (text: string) => string[],
): { said: number; named: number; phrases: number } {
  if (subject.length === 0) return { said: 1, named: 1, phrases: 1 };
  const lines = text.split('\n');
  // A speaker is what their line is about when they speak of themselves ("Anna: I love hiking",
  // "王芳: 我的车停在车库"); asking ("Emma: what is the weather like?"), commanding ("turn on the
  // fan") or telling of someone else ("王芳: 李明喜欢吃面") says nothing of them.
  const speakers = lines
    .map((line) => {
      const label = SPEAKER_LABEL.exec(line);
      const spokenText = label ? line.slice(label[0].length) : '';
      return label && FIRST_PERSON.test(spokenText) && !onlyAsks(spokenText) ? (label[1]?.toLowerCase() ?? '') : '';
    })
    .join('\n');
  const spoken = lines.map((line) => line.replace(SPEAKER_LABEL, '')).join('\n');
  const lower = spoken.toLowerCase();
  // Tokenising is the costly part (recall checks dozens of candidates per question): only when the plain word is not there.
  let held: Set<string> | undefined;
  const inSpeech = subject.filter((s) => {
    if (lower.includes(s.word)) return true;
    held ??= new Set(tokens(spoken));
    const words = held;
    return s.tokens.every((t) => words.has(t));
  });
  const bySpeaker = subject.filter((s) => !inSpeech.includes(s) && speakers.includes(s.word));
  const named = new Set([...inSpeech, ...bySpeaker]);
  const phrases = [...new Set(subject.map((s) => s.phrase))];
  const whole = phrases.filter((p) => subject.every((s) => s.phrase !== p || named.has(s)));
  return {
    said: inSpeech.length / subject.length,
    named: named.size / subject.length,
    phrases: whole.length / phrases.length,
  };
}

/** Words by which speakers speak of themselves (and of the household they are part of). */
const FIRST_PERSON = /\b(?:i|i'm|i've|i'd|i'll|me|my|mine|myself|we|we're|we've|us|our|ours)\b|我|咱/i;

/** A line whose every sentence is a question ("what is the weather like?", "今天天气怎么样？"). */
function onlyAsks(spoken: string): boolean {
  return /[?？]/.test(spoken) && !/[.!。！]/.test(spoken.replace(/\.\.\.|…/g, ''));
}

/** "Anna: …" at the start of a transcript line: who spoke, not what was said. */
const SPEAKER_LABEL = /^([^\n:：]{1,40})[:：] /;

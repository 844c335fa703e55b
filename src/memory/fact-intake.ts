/**
 * What memory does to facts between extraction and the graph, so that a correction supersedes
 * what it corrects: discourse words are no part of a name ("Actually the key" is "the key"),
 * every way of saying where a thing is becomes one relation type (`located_in`: one current place
 * per thing), and a short name ("the key", "钥匙") is the one known thing it is the head of ("spare
 * key", "备用钥匙") when exactly one such thing has a current place.
 */
import type { GraphStore } from './graph-store.js';

/** A fact as extraction gives it (src/nlp Triple's shape). */
export interface IntakeTriple {
  subject: string;
  relation: string;
  object: string;
  confidence: number;
  sentence: string;
  subject_type?: string;
  object_type?: string;
  method?: string;
}

/** The relation type of "where a thing is"; single-valued: a thing is in one place at a time. */
export const LOCATION_RELATION = 'located_in';

/** Ways of saying where something is, in both languages, as extraction names the relation. */
const LOCATION_TYPES = new Set([
  'located_in',
  'is_in',
  'in',
  'at',
  'under',
  'on',
  'kept_in',
  'stored_in',
  'parked_in',
  'parked_at',
  '放',
  '放在',
  '放到',
  '在',
  '停在',
  '停',
  '位于',
  '藏在',
  '搁在',
  '收在',
  '挂在',
]);

/** Words that open a sentence without being part of what it names. */
const LEADING_DISCOURSE =
  /^(?:(?:actually|now|so|well|oh|ok|okay|by the way|btw|anyway|also|and|but|just so you know|fyi|note that|remember that|update)[,:]?\s+)+/i;
const LEADING_DISCOURSE_ZH = /^(?:其实|现在|对了|另外|顺便说一下|顺便|还有|更正一下|更正|改一下|注意)[，,：:]?/;
/** Articles and determiners before a name ("the key", "my key" stays: the speaker resolved it). */
const LEADING_ARTICLE = /^(?:the|a|an|this|that|our)\s+/i;

/** The name without discourse words and articles. */
export function cleanName(name: string): string {
  let out = name.trim();
  for (let i = 0; i < 3; i++) {
    const next = out.replace(LEADING_DISCOURSE, '').replace(LEADING_DISCOURSE_ZH, '').replace(LEADING_ARTICLE, '').trim();
    if (next === out) break;
    out = next;
  }
  return out === '' ? name.trim() : out;
}

/** The relation type memory stores: every location verb is {@link LOCATION_RELATION}. */
export function normaliseRelation(relation: string): string {
  const lower = relation.trim().toLowerCase().replace(/\s+/g, '_');
  return LOCATION_TYPES.has(lower) ? LOCATION_RELATION : relation;
}

// "X is (now) in/under/on Y", "X放在Y了": the commonest household fact, read by rule where the
// general extractor reads nothing (放在…了, …下面) or something else.
const WHERE_EN =
  /^(?:(?:actually|now|so|ok|okay|by the way)[,\s]+)*(?:the|my|our|your)?\s*([\p{L}\d' -]{2,40}?)\s+(?:is|are)\s+(?:now\s+)?(?:kept\s+|stored\s+|parked\s+)?(?:in|under|on|at|inside|behind|beside|next to)\s+(?:the\s+|my\s+|our\s+)?([\p{L}\d' -]{2,60}?)(?:\s+now)?[.!]?$/iu;
const WHERE_ZH =
  /^(?:其实|现在|对了)?[，,]?(?:我的|我们的|家里的)?([\p{Script=Han}A-Za-z\d]{1,12}?)(?:现在|已经|还)?(?:放在|放到|放进|放|停在|搁在|收在|挂在|藏在|在)([\p{Script=Han}A-Za-z\d]{1,20}?)(?:里面|里|下面|上面|上|下)?(?:了|呢|啦)?[。！!.]?$/u;

/** A location fact read by rule from one sentence, or undefined. */
export function locationFact(sentence: string): IntakeTriple | undefined {
  const text = sentence.trim();
  const m = WHERE_EN.exec(text) ?? WHERE_ZH.exec(text);
  if (!m?.[1] || !m[2]) return undefined;
  return {
    subject: m[1].trim(),
    relation: LOCATION_RELATION,
    object: m[2].trim(),
    confidence: 0.7,
    sentence: text,
    method: 'location-rule',
    object_type: 'place',
  };
}

/** Adds the rule's location fact to each sentence whose extraction holds none. */
export function withLocationFacts(sentences: readonly string[], extracted: readonly IntakeTriple[]): IntakeTriple[] {
  const out = [...extracted];
  for (const sentence of sentences) {
    const fact = locationFact(sentence);
    if (!fact) continue;
    const own = out.filter((t) => t.sentence.trim() === fact.sentence);
    if (own.some((t) => normaliseRelation(t.relation) === LOCATION_RELATION)) continue;
    // The rule's reading replaces a garbled one of the same sentence ("Actually the key" located_in …).
    out.push(fact);
  }
  return out;
}

/**
 * Applies the intake rules to extracted facts. `graph` resolves short names against what is
 * already known (read only).
 */
export function prepareFacts(triples: readonly IntakeTriple[], graph: GraphStore): IntakeTriple[] {
  return triples.map((t) => {
    const relation = normaliseRelation(t.relation);
    let subject = cleanName(t.subject);
    const object = cleanName(t.object);
    if (relation === LOCATION_RELATION) subject = headReferent(subject, graph) ?? subject;
    return { ...t, subject, relation, object };
  });
}

/**
 * The one known thing `name` is the head of that has a current place: "key" → "spare key",
 * "钥匙" → "备用钥匙". Undefined when `name` is itself known, or none or several match.
 */
function headReferent(name: string, graph: GraphStore): string | undefined {
  if (graph.entity(name)) return undefined;
  const lower = name.toLowerCase();
  const latin = /^[\p{Script=Latin}\d\s'-]+$/u.test(name);
  const matches = graph.searchEntities(name, 20).filter((e) => {
    const other = e.name.toLowerCase();
    if (other === lower) return false;
    // English heads end the phrase after a space; Chinese ones end the word.
    const isHead = latin ? other.endsWith(` ${lower}`) : other.endsWith(lower);
    return isHead && graph.relationsOf(e.id).some((r) => r.source.id === e.id && r.type === LOCATION_RELATION);
  });
  return matches.length === 1 ? matches[0]?.name : undefined;
}

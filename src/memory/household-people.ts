/**
 * Who said an input, as memory names them: the household's people (core.home.people) matched by
 * how their words arrive (the sender id the transport vouched for, the source, a voice by room),
 * never the transport itself. "cli", "webui", "voice" or "qq:12345" are ways in, not people: an
 * input nobody in the list matches is said by {@link UNKNOWN_SPEAKER}, and what memory reads from
 * it counts for less ({@link UNKNOWN_SPEAKER_CONFIDENCE}).
 */

/** One person of the household as configured. */
export interface HouseholdPerson {
  name: string;
  /** Other names for the person ("Mum", "妈妈"); extraction and recall treat them as the person. */
  aliases: readonly string[];
  /**
   * How the person's words arrive: a sender id (`cli`, `webui:admin`, `qq:12345`), a source
   * (`cli`, `webui`), or `voice@<area>` for a voice in that room when nothing better is known.
   * A trailing `*` matches any rest (`webui:*`).
   */
  senders: readonly string[];
}

/** What an input says about where it came from. */
export interface SpeakerClues {
  /** InputSender.id, when the composition passes it. */
  sender_id?: string | undefined;
  source: string;
  channel: string;
  /** The peer the transport named (a chat nickname), or the source when it named none. */
  peer?: string | undefined;
  /** The room a voice was heard in (input meta.area). */
  area?: string | undefined;
}

/** The name memory gives a speaker it cannot name. */
export const UNKNOWN_SPEAKER = 'someone';
/** What memory's confidence in a fact is multiplied by when nobody known said it. */
export const UNKNOWN_SPEAKER_CONFIDENCE = 0.5;

/**
 * Names of ways in, never people: a peer equal to one of these (or to the input's source or
 * channel, or shaped like a sender id `kind:id`) is no name.
 */
const TRANSPORT_NAMES = new Set([
  'cli',
  'webui',
  'web',
  'http',
  'openai',
  'voice',
  'mqtt',
  'qq',
  'onebot',
  'timer',
  'automation',
  'self',
  'unknown',
  'user',
  'system',
  'cold_storage',
  'agent',
]);

/** The configured person the input came from, or undefined. */
export function matchPerson(people: readonly HouseholdPerson[], clues: SpeakerClues): HouseholdPerson | undefined {
  const keys = [clues.sender_id, clues.area ? `${clues.sender_id ?? clues.source}@${clues.area}` : undefined, clues.source].filter(
    (k): k is string => k !== undefined && k !== '',
  );
  // The most specific key first: a sender id beats a room, a room beats a source.
  for (const key of keys) {
    const person = people.find((p) => p.senders.some((pattern) => matches(pattern, key)));
    if (person) return person;
  }
  const peer = clues.peer?.trim() ?? '';
  if (peer !== '') {
    const lower = peer.toLowerCase();
    return people.find((p) => p.name.toLowerCase() === lower || p.aliases.some((a) => a.toLowerCase() === lower));
  }
  return undefined;
}

/**
 * The speaker's name for memory: a configured person, else a peer that names a person (a chat
 * nickname), else {@link UNKNOWN_SPEAKER}.
 */
export function speakerName(people: readonly HouseholdPerson[], clues: SpeakerClues): string {
  const person = matchPerson(people, clues);
  if (person) return person.name;
  const peer = clues.peer?.trim() ?? '';
  return isPersonName(peer, clues) ? peer : UNKNOWN_SPEAKER;
}

/** False for what names a transport, a sender id or nothing. */
export function isPersonName(name: string, clues?: Pick<SpeakerClues, 'source' | 'channel'>): boolean {
  const trimmed = name.trim();
  if (trimmed === '' || trimmed === UNKNOWN_SPEAKER) return false;
  const lower = trimmed.toLowerCase();
  if (TRANSPORT_NAMES.has(lower)) return false;
  if (clues && (lower === clues.source.toLowerCase() || lower === clues.channel.toLowerCase())) return false;
  // `qq:12345`, `webui:admin`, `plugin:x`: a sender id, not a name.
  if (/^[a-z_]+:[^\s]+$/i.test(trimmed)) return false;
  return true;
}

/** Every name a configured person goes by, mapped to the person's name (for recall seeds). */
export function aliasMap(people: readonly HouseholdPerson[]): Map<string, string> {
  const map = new Map<string, string>();
  for (const p of people) {
    map.set(p.name.toLowerCase(), p.name);
    for (const alias of p.aliases) map.set(alias.toLowerCase(), p.name);
  }
  return map;
}

function matches(pattern: string, key: string): boolean {
  const p = pattern.trim().toLowerCase();
  const k = key.toLowerCase();
  return p.endsWith('*') ? k.startsWith(p.slice(0, -1)) : p === k;
}

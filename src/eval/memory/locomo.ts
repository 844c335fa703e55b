/**
 * Loads LoCoMo conversations ("Evaluating Very Long-Term Conversational Memory of LLM Agents")
 * into events and questions for the retrieval evaluation. Accepts one conversation object per
 * file (speaker_a, session_N, session_N_date_time, qa at the top), the published locomo10.json
 * records ({sample_id, conversation, qa}), or a list of either.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, extname, join } from 'node:path';
import { type HomeAgentError, isHomeAgentError } from '../../shared/errors.js';
import { evalError } from './eval-error.js';
import type { EvalEvent } from './eval-memory.js';
import { parseLocomoDateTime } from './locomo-date.js';

/** Turns of one session get increasing timestamps this far apart, in their order. */
export const TURN_SPACING_MS = 5_000;

/** The question categories the retrieval metric uses; 5 (adversarial) has no answer in the data. */
export const CATEGORY_NAMES = { 1: 'multi-hop', 2: 'temporal', 3: 'open-domain', 4: 'single-hop' } as const;
export type QuestionCategory = keyof typeof CATEGORY_NAMES;

export interface LocomoQuestion {
  /** `<conversation>/q<index in qa>`. */
  id: string;
  conversation_id: string;
  category: QuestionCategory;
  question: string;
  answer: string | undefined;
  /** Evidence turns as qualified source ids ({@link EvalEvent.source_id}), without duplicates. */
  evidence: string[];
}

export interface LocomoConversation {
  id: string;
  /** The file it was read from. */
  file: string;
  speakers: [string, string];
  /** Sessions that have turns. */
  sessions: number;
  /** Every turn, in session and turn order. */
  events: EvalEvent[];
  /** Questions of categories 1–4 with at least one known evidence turn. */
  questions: LocomoQuestion[];
  skipped: {
    /** Category 5 questions. */
    adversarial: number;
    /** Questions whose evidence is empty or names no turn of the conversation. */
    no_evidence: number;
  };
}

export interface LocomoDataset {
  /** The directory (or single file) given. */
  path: string;
  conversations: LocomoConversation[];
  /** Tolerated oddities of the data (unknown evidence ids), one readable line each. */
  warnings: string[];
}

/** Qualifies a turn id by its conversation, the form used for event source ids and evidence. */
export function qualifiedId(conversationId: string, diaId: string): string {
  return `${conversationId}/${diaId}`;
}

/**
 * Reads every `.json` file of a directory (or the one file given) in name order. Throws an
 * evaluation error naming the file and the field when a file does not have the LoCoMo shape.
 */
export async function loadLocomo(path: string): Promise<LocomoDataset> {
  const files = await conversationFiles(path);
  const conversations: LocomoConversation[] = [];
  const warnings: string[] = [];
  const seen = new Map<string, string>();
  for (const file of files) {
    let json: unknown;
    try {
      json = JSON.parse(await readFile(file, 'utf8'));
    } catch (error) {
      throw evalError(`${file}: not readable as JSON: ${error instanceof Error ? error.message : String(error)}`, { file });
    }
    for (const conversation of parseLocomoFile(json, file, warnings)) {
      const earlier = seen.get(conversation.id);
      if (earlier !== undefined) {
        throw evalError(`${file}: conversation id ${JSON.stringify(conversation.id)} is also used by ${earlier}`, { file });
      }
      seen.set(conversation.id, file);
      conversations.push(conversation);
    }
  }
  return { path, conversations, warnings };
}

async function conversationFiles(path: string): Promise<string[]> {
  let info: Awaited<ReturnType<typeof stat>>;
  try {
    info = await stat(path);
  } catch {
    throw evalError(`${path}: no such file or directory`, { path });
  }
  if (info.isFile()) return [path];
  const names = (await readdir(path)).filter((name) => extname(name).toLowerCase() === '.json');
  if (names.length === 0) throw evalError(`${path}: no .json conversation files in this directory`, { path });
  // Numeric-aware order so 2.json comes before 10.json.
  names.sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
  return names.map((name) => join(path, name));
}

/**
 * Conversations of one parsed file. `warnings` collects what is tolerated; anything else that
 * does not fit throws, naming `file` and the field.
 */
export function parseLocomoFile(json: unknown, file: string, warnings: string[] = []): LocomoConversation[] {
  const stem = basename(file, extname(file));
  if (Array.isArray(json)) {
    if (json.length === 0) throw evalError(`${file}: the list holds no conversations`, { file });
    return json.map((record, index) => parseRecord(record, new Place(file, `[${index}]`), `${stem}-${index}`, warnings));
  }
  return [parseRecord(json, new Place(file, ''), stem, warnings)];
}

/** A position in a file, for error messages: `26.json: session_3[2].dia_id`. */
class Place {
  constructor(
    readonly file: string,
    private readonly path: string,
  ) {}

  field(name: string | number): Place {
    if (typeof name === 'number') return new Place(this.file, `${this.path}[${name}]`);
    return new Place(this.file, this.path === '' ? name : `${this.path}.${name}`);
  }

  error(problem: string): HomeAgentError {
    return evalError(`${this}: ${problem}`, { file: this.file, field: this.path });
  }

  toString(): string {
    return this.path === '' ? this.file : `${this.file}: ${this.path}`;
  }
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  return typeof value === 'object' ? 'an object' : `${typeof value} ${JSON.stringify(value)}`;
}

function requireString(record: Json, key: string, place: Place, options: { nonEmpty?: boolean } = {}): string {
  const value = record[key];
  if (typeof value !== 'string')
    throw place.field(key).error(value === undefined ? 'missing (expected a string)' : `expected a string, got ${describe(value)}`);
  if (options.nonEmpty && value.trim() === '') throw place.field(key).error('is empty');
  return value;
}

function parseRecord(record: unknown, place: Place, fallbackId: string, warnings: string[]): LocomoConversation {
  if (!isObject(record)) throw place.error(`expected a conversation object (speaker_a, session_N, qa), got ${describe(record)}`);
  // The published locomo10.json nests the turns under `conversation`; the per-conversation files do not.
  const nested = isObject(record.conversation);
  const body = nested ? (record.conversation as Json) : record;
  const bodyPlace = nested ? place.field('conversation') : place;
  const sampleId = record.sample_id;
  const id =
    typeof sampleId === 'string' && sampleId.trim() !== '' ? sampleId.trim() : typeof sampleId === 'number' ? String(sampleId) : fallbackId;
  const speakers: [string, string] = [
    requireString(body, 'speaker_a', bodyPlace, { nonEmpty: true }),
    requireString(body, 'speaker_b', bodyPlace, { nonEmpty: true }),
  ];
  const { events, sessions } = parseSessions(body, bodyPlace, id);
  const known = new Set(events.map((event) => event.dia_id));
  const { questions, skipped } = parseQuestions(record.qa, place.field('qa'), id, known, warnings);
  return { id, file: place.file, speakers, sessions, events, questions, skipped };
}

function parseSessions(body: Json, place: Place, conversationId: string): { events: EvalEvent[]; sessions: number } {
  const numbers = Object.keys(body)
    .map((key) => /^session_(\d+)$/.exec(key)?.[1])
    .filter((n): n is string => n !== undefined)
    .map(Number)
    .sort((a, b) => a - b);
  if (numbers.length === 0) throw place.error('no session_N turn lists');
  const events: EvalEvent[] = [];
  const seen = new Map<string, string>();
  for (const session of numbers) {
    const key = `session_${session}`;
    const turns = body[key];
    if (!Array.isArray(turns)) throw place.field(key).error(`expected a list of turns, got ${describe(turns)}`);
    const dateKey = `${key}_date_time`;
    const dateText = requireString(body, dateKey, place);
    let start: number;
    try {
      start = parseLocomoDateTime(dateText);
    } catch (error) {
      if (!isHomeAgentError(error)) throw error;
      throw place.field(dateKey).error(error.message);
    }
    turns.forEach((turn, index) => {
      const turnPlace = place.field(key).field(index);
      if (!isObject(turn)) throw turnPlace.error(`expected a turn object {speaker, dia_id, text}, got ${describe(turn)}`);
      const diaId = requireString(turn, 'dia_id', turnPlace, { nonEmpty: true }).trim();
      const earlier = seen.get(diaId);
      if (earlier !== undefined) throw turnPlace.field('dia_id').error(`${JSON.stringify(diaId)} is also the id of ${earlier}`);
      seen.set(diaId, `${key}[${index}]`);
      const speaker = requireString(turn, 'speaker', turnPlace, { nonEmpty: true });
      let text = requireString(turn, 'text', turnPlace);
      const caption = turn.blip_caption;
      if (caption !== undefined && caption !== null) {
        if (typeof caption !== 'string') throw turnPlace.field('blip_caption').error(`expected a string, got ${describe(caption)}`);
        // The caption is what the speaker showed: without it "Take a look at this." carries no fact.
        if (caption.trim() !== '') text = text === '' ? `[image: ${caption.trim()}]` : `${text} [image: ${caption.trim()}]`;
      }
      events.push({
        source_id: qualifiedId(conversationId, diaId),
        dia_id: diaId,
        conversation_id: conversationId,
        session,
        timestamp: start + index * TURN_SPACING_MS,
        speaker,
        text,
      });
    });
  }
  return { events, sessions: numbers.filter((n) => (body[`session_${n}`] as unknown[]).length > 0).length };
}

function parseQuestions(
  qa: unknown,
  place: Place,
  conversationId: string,
  known: ReadonlySet<string>,
  warnings: string[],
): { questions: LocomoQuestion[]; skipped: LocomoConversation['skipped'] } {
  if (!Array.isArray(qa))
    throw place.error(qa === undefined ? 'missing (expected a list of questions)' : `expected a list of questions, got ${describe(qa)}`);
  const questions: LocomoQuestion[] = [];
  const skipped = { adversarial: 0, no_evidence: 0 };
  qa.forEach((entry, index) => {
    const entryPlace = place.field(index);
    if (!isObject(entry)) throw entryPlace.error(`expected a question object {question, evidence, category}, got ${describe(entry)}`);
    const category = entry.category;
    if (category !== 1 && category !== 2 && category !== 3 && category !== 4 && category !== 5) {
      throw entryPlace.field('category').error(`expected a category 1–5, got ${describe(category)}`);
    }
    if (category === 5) {
      skipped.adversarial++;
      return;
    }
    const question = requireString(entry, 'question', entryPlace, { nonEmpty: true });
    const evidence = parseEvidence(entry.evidence, entryPlace.field('evidence'), conversationId, known, warnings);
    if (evidence.length === 0) {
      skipped.no_evidence++;
      return;
    }
    const answer = entry.answer;
    questions.push({
      id: `${conversationId}/q${index}`,
      conversation_id: conversationId,
      category,
      question,
      answer: typeof answer === 'string' || typeof answer === 'number' ? String(answer) : undefined,
      evidence,
    });
  });
  return { questions, skipped };
}

/**
 * Evidence ids of one question, qualified. An entry may hold several ids ("D8:6; D9:17"). Ids no
 * turn has are left out with a warning: counting them would cap every memory's recall alike.
 */
function parseEvidence(value: unknown, place: Place, conversationId: string, known: ReadonlySet<string>, warnings: string[]): string[] {
  if (!Array.isArray(value))
    throw place.error(value === undefined ? 'missing (expected a list of dia_ids)' : `expected a list of dia_ids, got ${describe(value)}`);
  const ids = new Set<string>();
  value.forEach((entry, index) => {
    if (typeof entry !== 'string') throw place.field(index).error(`expected a dia_id string, got ${describe(entry)}`);
    for (const part of entry.split(';')) {
      const raw = part.trim();
      if (raw === '') continue;
      const id = known.has(raw) ? raw : normalisedDiaId(raw);
      if (id !== undefined && known.has(id)) {
        if (id !== raw) warnings.push(`${place.field(index)}: ${JSON.stringify(raw)} read as ${id}`);
        ids.add(qualifiedId(conversationId, id));
      } else {
        warnings.push(`${place.field(index)}: ${JSON.stringify(raw)} is not a turn of this conversation; ignored`);
      }
    }
  });
  return [...ids];
}

/** "D:11:26", "d11 : 026" → "D11:26", for hand-typed evidence in other copies of the data. */
function normalisedDiaId(raw: string): string | undefined {
  const match = /^D\s*:?\s*(\d+)\s*:\s*(\d+)$/i.exec(raw);
  return match ? `D${Number(match[1])}:${Number(match[2])}` : undefined;
}

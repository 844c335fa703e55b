/**
 * Streaming speech: while the model is still writing its answer to a spoken command, every
 * complete sentence is handed to the speaker at once, so the first sentence plays while the rest is
 * being written (the speaker synthesises queued sentences in parallel and plays them in order).
 * When the final answer arrives on the speaker channel, only what was not spoken yet is spoken.
 * Barge-in stops both: the playback and queued sentences (the speaker), and the model's turn (the
 * input is cancelled), and the turn's later text is dropped.
 *
 * The text deltas come from the kernel's `agent.text_delta` event, filtered by the input ids the
 * voice plugin gave its own inputs. The same rules as the OpenAI-compatible stream apply to a turn's
 * rounds: text of a round that then called tools was said and stays said; a pre-empted request
 * that starts over does not say its sentences twice; an answer a stage replaced is said whole.
 */
import type { EventMap } from '../../src/sdk/index.js';
import type { SpeechLanguage } from './speech.js';

/** Sentence ends: . ! ? ; and their CJK forms, and a line break. */
const SENTENCE_END = /[.!?;。！？；…\n]/;
/** Turns followed, the oldest forgotten first: a turn nobody finished (a crash) cannot pile up. */
const MAX_TURNS = 16;
/** A sentence longer than this is spoken at a comma or a space, so speech never waits for long. */
export const MAX_SENTENCE_CHARS = 240;

/** What the stream needs of the speaker (SpeakerOutput). */
export interface StreamSpeaker {
  say(text: string, language?: SpeechLanguage): Promise<unknown>;
  interrupt(): boolean;
}

/**
 * Cuts the complete sentences off the front of `text`: those that end in a sentence mark followed
 * by white space (or a CJK mark, which needs none), and an over-long run at its last comma or space.
 */
export function takeSentences(text: string): { sentences: string[]; rest: string } {
  const sentences: string[] = [];
  let rest = text;
  for (;;) {
    let cut = -1;
    for (let i = 0; i < rest.length; i++) {
      const ch = rest[i] as string;
      if (!SENTENCE_END.test(ch)) continue;
      const next = rest[i + 1];
      const cjk = /[。！？；…]/.test(ch);
      // "3.5" or "e.g." mid-word is not an end; the end is known once white space follows.
      if (cjk || ch === '\n' || (next !== undefined && /\s/.test(next))) {
        cut = i + 1;
        break;
      }
    }
    if (cut < 0 && rest.length > MAX_SENTENCE_CHARS) {
      const head = rest.slice(0, MAX_SENTENCE_CHARS);
      const at = Math.max(head.lastIndexOf(','), head.lastIndexOf('，'), head.lastIndexOf(' '));
      cut = at > 0 ? at + 1 : MAX_SENTENCE_CHARS;
    }
    if (cut < 0) return { sentences, rest };
    const sentence = rest.slice(0, cut).trim();
    if (sentence !== '') sentences.push(sentence);
    rest = rest.slice(cut);
  }
}

interface Turn {
  /** Everything handed to the speaker, joined. */
  spoken: string;
  /** Text of the current round not yet spoken (an unfinished sentence). */
  pending: string;
  /** The current round's text since its start, to tell the final answer's unspoken rest. */
  round: string;
  /** After a restart: the text the round had said before, not to be said again. */
  replay: string;
  turn: number | undefined;
  stopped: boolean;
}

export interface SpokenStreamOptions {
  speaker: StreamSpeaker;
  /** Cancels the model's turn of an input (PluginIo.cancelInput); false when it had ended. */
  cancel?: (inputId: string) => boolean;
  language: (text: string) => SpeechLanguage;
  onError?: (error: unknown) => void;
}

export class SpokenStream {
  readonly #options: SpokenStreamOptions;
  readonly #turns = new Map<string, Turn>();
  /** The input whose answer is being spoken or written now: barge-in stops it. */
  #current: string | undefined;

  constructor(options: SpokenStreamOptions) {
    this.#options = options;
  }

  /** A spoken command was handed to the agent with this input id: follow its text. */
  begin(inputId: string): void {
    this.#turns.set(inputId, { spoken: '', pending: '', round: '', replay: '', turn: undefined, stopped: false });
    this.#current = inputId;
    while (this.#turns.size > MAX_TURNS) {
      const oldest = this.#turns.keys().next().value as string;
      this.#turns.delete(oldest);
    }
  }

  /** True while a turn of this input is followed (its text goes to the speaker as it comes). */
  follows(inputId: string | undefined): boolean {
    return inputId !== undefined && this.#turns.has(inputId);
  }

  /** One agent.text_delta event. */
  delta(event: Pick<EventMap['agent.text_delta'], 'input_id' | 'turn' | 'delta' | 'restart'>): void {
    const turn = this.#turns.get(event.input_id);
    if (!turn || turn.stopped) return;
    if (event.turn !== turn.turn) {
      // A new round: what the last one left unfinished is said now, before the new text.
      this.#flush(turn);
      turn.turn = event.turn;
      turn.round = '';
      turn.replay = '';
    } else if (event.restart) {
      // The request starts over: what it said before is not said again.
      // Only what was said: an unfinished sentence is said from the new request's text.
      turn.replay = turn.round.slice(0, turn.round.length - turn.pending.length);
      turn.round = '';
      turn.pending = '';
    }
    turn.round += event.delta;
    let text = event.delta;
    if (turn.replay !== '') {
      const overlap = commonPrefix(turn.replay, text);
      turn.replay = turn.replay.slice(overlap);
      text = text.slice(overlap);
      // A re-sent request that says something else: say the new text from here on.
      if (text !== '') turn.replay = '';
    }
    turn.pending += text;
    const { sentences, rest } = takeSentences(turn.pending);
    turn.pending = rest;
    for (const sentence of sentences) this.#say(turn, sentence);
  }

  /**
   * The final answer of a followed input reached the speaker channel: returns what is still to
   * say (undefined: nothing), and forgets the turn.
   */
  final(inputId: string, text: string): string | undefined {
    const turn = this.#turns.get(inputId);
    if (!turn) return text;
    this.#turns.delete(inputId);
    if (this.#current === inputId) this.#current = undefined;
    if (turn.stopped) return undefined;
    if (turn.spoken === '' && turn.pending === '') return text;
    if (turn.round !== '' && text.startsWith(turn.round)) {
      const rest = `${turn.pending}${text.slice(turn.round.length)}`.trim();
      return rest === '' ? undefined : rest;
    }
    // A stage replaced the streamed answer: say the final one whole, as the person must hear it.
    return text;
  }

  /** The person spoke over the answer: stop its playback and its model turn. Returns whether a turn was stopped. */
  bargeIn(): boolean {
    const id = this.#current;
    const turn = id === undefined ? undefined : this.#turns.get(id);
    if (id === undefined || !turn || turn.stopped) return false;
    turn.stopped = true;
    this.#current = undefined;
    this.#options.cancel?.(id);
    return true;
  }

  #flush(turn: Turn): void {
    const rest = turn.pending.trim();
    turn.pending = '';
    if (rest !== '') this.#say(turn, rest);
  }

  #say(turn: Turn, sentence: string): void {
    turn.spoken += `${sentence} `;
    this.#options.speaker.say(sentence, this.#options.language(sentence)).catch((error: unknown) => this.#options.onError?.(error));
  }
}

function commonPrefix(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

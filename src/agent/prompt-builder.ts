/**
 * Builds the system prompt of a turn, always in the same order: the persona (verbatim, first,
 * never rewritten), the memory slots (filled by the memory subsystem), the rules for interrupts,
 * the output rules for the channel this input came from, further sections (the skills index, the
 * home summary), and a per-owner summary of the tools. Sections are built per turn from the
 * request, so what they say (the home's states) is as of this turn.
 */
import type { Language } from '../shared/language.js';
import type { Persona } from './persona.js';

export interface ToolGroupSummary {
  owner: string;
  count: number;
  tools: Array<{ name: string; description: string }>;
}

/** Text blocks other subsystems contribute to a turn's prompt. */
export interface PromptSlots {
  /** "[Memory index] ..." from the memory indexer. */
  memory_index?: string;
  /** Related documents recalled for this input. */
  document_recall?: string;
}

export interface ChannelFacts {
  name: string;
  synchronous: boolean;
  description: string;
}

export interface PromptRequest {
  source: string;
  channel: ChannelFacts | undefined;
  slots: PromptSlots;
  now: Date;
  /** The person's words this turn (sections may favour what they name). */
  text?: string;
  /** The language of this turn's input; sections speak it. Default English. */
  language?: Language;
}

/** A further block of the prompt; undefined leaves it out. */
export type PromptSection = (request: PromptRequest) => string | undefined;

/** Above this length a single send should be split; the model is told so. */
export const SEND_SPLIT_CHARS = 4000;

export class PromptBuilder {
  readonly #persona: Persona;
  readonly #tools: () => ToolGroupSummary[];
  readonly #sections: readonly PromptSection[];

  /** `sections`: further blocks (the skills index, the home summary) placed before the tool summary; undefined ones are left out. */
  constructor(options: { persona: Persona; toolSummary: () => ToolGroupSummary[]; sections?: readonly PromptSection[] }) {
    this.#persona = options.persona;
    this.#tools = options.toolSummary;
    this.#sections = options.sections ?? [];
  }

  build(request: PromptRequest): string {
    const blocks = [this.#persona.text()];
    if (request.slots.memory_index) blocks.push(`[Memory index]\n${request.slots.memory_index}`);
    if (request.slots.document_recall) blocks.push(`[Related documents]\n${request.slots.document_recall}`);
    blocks.push(
      [
        '[Interrupt messages]',
        'A system message starting with [interrupt] arrived while you were working on something else.',
        'Deal with it first if it is urgent, then carry on with the earlier request.',
      ].join('\n'),
    );
    blocks.push(outputRules(request));
    for (const section of this.#sections) {
      const text = section(request);
      if (text) blocks.push(text);
    }
    const tools = this.#tools();
    if (tools.length > 0) {
      const lines = [
        '[Available tools]',
        'Tools in one reply may run in parallel; do not rely on their order (sends to the same channel keep theirs).',
      ];
      for (const group of tools) {
        lines.push(`- ${group.owner} (${group.count}): ${group.tools.map((t) => `${t.name}: ${t.description}`).join('; ')}`);
      }
      lines.push('Call get_plugin_tools for the full schema of any tool.');
      blocks.push(lines.join('\n'));
    }
    blocks.push(`[Now]\n${request.now.toISOString()} (local time ${request.now.toString()})`);
    return blocks.join('\n\n');
  }
}

function outputRules(request: PromptRequest): string {
  const channel = request.channel;
  const lines = ['[Output rules]'];
  if (!channel) {
    lines.push(`This input came from ${request.source} and has no output channel: answer in plain text.`);
  } else if (channel.synchronous) {
    lines.push(
      `This input came from the ${channel.name} channel (${channel.description}). Your final text is shown to the person directly:`,
      `answer in plain text and do not call output_send__${channel.name}.`,
    );
  } else {
    lines.push(
      `This input came from the ${channel.name} channel (${channel.description}). The person only sees what you send:`,
      `call output_send__${channel.name} once with your whole answer (split it only above about ${SEND_SPLIT_CHARS} characters).`,
      'A send returns "ok"; do not send the same text again. For a long task, send a short acknowledgement first.',
    );
  }
  return lines.join('\n');
}

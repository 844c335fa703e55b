/**
 * Pictures tools show the model during one turn (ToolContext.attachImage). A tool stores an image
 * in the media store and attaches its digest; after the tool round the agent adds one user message
 * with the pictures, after the tool results. The bytes travel in the requests of this turn only:
 * the message is part of the turn's message list (so every remaining request of the turn still
 * shows what the model already answered about), while history and memory keep text alone.
 * Per turn at most `max_images` pictures and `max_bytes` bytes: a picture over either limit, or one
 * the store does not have, becomes a text line the model can read instead.
 */
import type { ChatMessage, UserContentPart } from '../llm/spec/index.js';
import { sniffMedia } from '../store/media-store.js';

/** What the agent reads stored pictures from (the media store). */
export interface MediaReader {
  read(digest: string): Buffer | undefined;
}

export interface TurnImageLimits {
  max_images: number;
  max_bytes: number;
}

/** core.agent.max_images_per_turn until the key exists in the schema. */
export const DEFAULT_MAX_IMAGES_PER_TURN = 4;
/** Bytes of pictures one turn may send (before base64): a few camera JPEGs, far below vendor limits. */
export const MAX_IMAGE_BYTES_PER_TURN = 8 * 1024 * 1024;

interface Attached {
  tool: string;
  digest: string;
}

/** One turn's pictures; {@link TurnImages.round} gives the collector of one tool round. */
export class TurnImages {
  readonly #media: MediaReader | undefined;
  readonly #limits: TurnImageLimits;
  #shown = 0;
  #bytes = 0;

  constructor(media: MediaReader | undefined, limits: TurnImageLimits) {
    this.#media = media;
    this.#limits = limits;
  }

  /**
   * A collector for one tool round: `attach` is handed to the tools, `message` (called once the
   * round is over) returns the user message with the round's pictures, or undefined when none was
   * attached. Attachments after `message` (a timed-out tool finishing late) are ignored.
   */
  round(): { attach: (tool: string, image: { digest: string; mime: string }) => void; message: () => ChatMessage | undefined } {
    const attached: Attached[] = [];
    let open = true;
    return {
      attach: (tool, image) => {
        if (open && typeof image?.digest === 'string') attached.push({ tool, digest: image.digest.toLowerCase() });
      },
      message: () => {
        open = false;
        return attached.length === 0 ? undefined : { role: 'user', content: this.#parts(attached) };
      },
    };
  }

  #parts(attached: Attached[]): UserContentPart[] {
    const parts: UserContentPart[] = [];
    let tool: string | undefined;
    for (const item of attached) {
      if (item.tool !== tool) {
        tool = item.tool;
        parts.push({ type: 'text', text: `Picture(s) from ${tool}:` });
      }
      const image = this.#image(item.digest);
      parts.push(typeof image === 'string' ? { type: 'text', text: `[picture ${item.digest.slice(0, 12)} not shown: ${image}]` } : image);
    }
    return parts;
  }

  /** The image part, or why it is not shown. The type comes from the bytes, not from the tool. */
  #image(digest: string): UserContentPart | string {
    if (this.#shown >= this.#limits.max_images) return `at most ${this.#limits.max_images} pictures are shown per request`;
    let bytes: Buffer | undefined;
    try {
      bytes = this.#media?.read(digest);
    } catch {
      // An unreadable file is, for the model, the same as a missing one.
    }
    if (!bytes) return 'it is not in the media store';
    const type = sniffMedia(bytes);
    if (type?.kind !== 'image') return 'it is not an image';
    if (this.#bytes + bytes.byteLength > this.#limits.max_bytes)
      return `pictures of one request may have at most ${this.#limits.max_bytes} bytes`;
    this.#shown++;
    this.#bytes += bytes.byteLength;
    return { type: 'image', mime: type.mime, data: bytes.toString('base64'), digest };
  }
}

/**
 * Pictures for models that cannot take them. A user message may carry image parts (a camera
 * picture shown to the model for one turn); a source without vision, or a Lua adapter, gets each
 * image replaced by a line naming the stored media instead, so the model still knows a picture
 * exists and can say so, and no vendor ever receives parts it would refuse.
 */
import type { ChatMessage, GenerateRequest, UserContentPart } from './spec/model.js';

/** The note a model without vision reads in place of a picture. */
export function pictureNotShown(digest: string | undefined, why: string): string {
  const stored = digest ? `; it is stored as media ${digest.slice(0, 12)}` : '';
  return `[picture not shown: ${why}${stored}]`;
}

export const NO_VISION = 'this model does not take pictures';

/** True when some message of the request carries an image part. */
export function hasImages(messages: readonly ChatMessage[]): boolean {
  return messages.some((m) => m.role === 'user' && typeof m.content !== 'string' && m.content.some((p) => p.type === 'image'));
}

/** The messages with every image part replaced by a text note, each user message's parts joined into one text. */
export function withoutImages(messages: readonly ChatMessage[], why: string): ChatMessage[] {
  return messages.map((m) => {
    if (m.role !== 'user' || typeof m.content === 'string') return m;
    return { role: 'user', content: m.content.map((p) => partText(p, why)).join('\n') };
  });
}

/** The request unchanged when it has no images, otherwise with {@link withoutImages} applied. */
export function requestWithoutImages(request: GenerateRequest, why: string): GenerateRequest {
  return hasImages(request.messages) ? { ...request, messages: withoutImages(request.messages, why) } : request;
}

function partText(part: UserContentPart, why: string): string {
  return part.type === 'text' ? part.text : pictureNotShown(part.digest, why);
}

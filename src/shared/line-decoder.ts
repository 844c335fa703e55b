/**
 * Splits a byte stream into newline-terminated frames with a size limit. An oversized frame is
 * reported as soon as it passes the limit and then skipped up to its terminating newline, so the
 * stream stays usable.
 */
export type DecodedFrame = { kind: 'line'; text: string } | { kind: 'too_large'; bytes: number };

const NEWLINE = 0x0a;

export class LineDecoder {
  #pending: Buffer[] = [];
  #pendingBytes = 0;
  #discarding = false;
  readonly #maxBytes: () => number;

  /** `maxBytes` is read on every chunk, so a changed limit applies at once. */
  constructor(maxBytes: number | (() => number)) {
    this.#maxBytes = typeof maxBytes === 'number' ? () => maxBytes : maxBytes;
  }

  push(chunk: Buffer): DecodedFrame[] {
    const frames: DecodedFrame[] = [];
    const max = this.#maxBytes();
    let start = 0;
    while (start < chunk.length) {
      const newline = chunk.indexOf(NEWLINE, start);
      const end = newline === -1 ? chunk.length : newline;
      const piece = chunk.subarray(start, end);
      if (!this.#discarding) {
        this.#pending.push(piece);
        this.#pendingBytes += piece.length;
        if (this.#pendingBytes > max) {
          // Reported at once, so a client waiting for an answer is not left hanging.
          frames.push({ kind: 'too_large', bytes: this.#pendingBytes });
          this.#discarding = true;
          this.#pending = [];
          this.#pendingBytes = 0;
        }
      }
      if (newline === -1) break;
      if (this.#discarding) {
        this.#discarding = false;
      } else {
        frames.push({ kind: 'line', text: Buffer.concat(this.#pending, this.#pendingBytes).toString('utf8') });
        this.#pending = [];
        this.#pendingBytes = 0;
      }
      start = newline + 1;
    }
    return frames;
  }

  /** True while an oversized frame is being skipped. */
  get discarding(): boolean {
    return this.#discarding;
  }
}

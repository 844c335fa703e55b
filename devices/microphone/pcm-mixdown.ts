/**
 * Turns the raw bytes arecord writes (interleaved S16_LE or S32_LE, one or two channels) into the
 * mono 16-bit samples the rest of the voice pipeline uses. A pipe read can end inside a frame, so
 * the bytes of an incomplete frame are kept for the next chunk instead of shifting every later
 * sample.
 */
export type SampleFormat = 'S16_LE' | 'S32_LE';

const S32_TO_S16 = 65536;

export class PcmMixdown {
  private readonly bytesPerSample: number;
  private readonly frameBytes: number;
  private leftover: Buffer = Buffer.alloc(0);

  constructor(
    private readonly format: SampleFormat,
    private readonly channels: 1 | 2,
  ) {
    this.bytesPerSample = format === 'S16_LE' ? 2 : 4;
    this.frameBytes = this.bytesPerSample * channels;
  }

  /** The complete frames of `chunk` (after any bytes held back) as mono 16-bit samples. */
  push(chunk: Buffer): Int16Array {
    const bytes = this.leftover.length > 0 ? Buffer.concat([this.leftover, chunk]) : chunk;
    const frames = Math.floor(bytes.length / this.frameBytes);
    const used = frames * this.frameBytes;
    this.leftover = Buffer.from(bytes.subarray(used));
    const out = new Int16Array(frames);
    // Fast path: mono 16-bit is already what we want (copied so the caller may keep it).
    if (this.format === 'S16_LE' && this.channels === 1) {
      for (let i = 0; i < frames; i++) out[i] = bytes.readInt16LE(i * 2);
      return out;
    }
    const divisor = this.channels * (this.format === 'S16_LE' ? 1 : S32_TO_S16);
    for (let i = 0; i < frames; i++) {
      let sum = 0;
      for (let c = 0; c < this.channels; c++) sum += this.read(bytes, i * this.frameBytes + c * this.bytesPerSample);
      // The mean of the channels, scaled to 16 bits; floor keeps it in range and matches an arithmetic shift.
      out[i] = Math.floor(sum / divisor);
    }
    return out;
  }

  /** Forgets a partial frame (a new recording starts on a frame boundary). */
  reset(): void {
    this.leftover = Buffer.alloc(0);
  }

  private read(bytes: Buffer, offset: number): number {
    return this.format === 'S16_LE' ? bytes.readInt16LE(offset) : bytes.readInt32LE(offset);
  }
}

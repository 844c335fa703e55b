/**
 * Minimal RIFF/WAVE reading for PCM audio. espeak-ng writes its header before it knows the length,
 * so with `--stdout` the RIFF and data sizes are placeholders (0x7ffff000): the parser trusts the
 * bytes actually present, and {@link withExactSizes} rewrites the two size fields so players and
 * files downstream see a well-formed WAV.
 */
import { HomeAgentError } from '../../src/sdk/index.js';

export interface WavInfo {
  sampleRate: number;
  channels: number;
  bitsPerSample: number;
  /** Byte offset of the first PCM byte. */
  dataOffset: number;
  /** PCM bytes actually present (the declared size clamped to the buffer). */
  dataLength: number;
  durationMs: number;
}

const RIFF_HEADER_BYTES = 12;
const CHUNK_HEADER_BYTES = 8;

function bad(problem: string): HomeAgentError {
  return new HomeAgentError('HA_ERR_VOICE_TTS', `not a PCM WAV: ${problem}`);
}

export function parseWav(wav: Buffer): WavInfo {
  if (wav.length < RIFF_HEADER_BYTES || wav.toString('ascii', 0, 4) !== 'RIFF' || wav.toString('ascii', 8, 12) !== 'WAVE') {
    throw bad('no RIFF/WAVE header');
  }
  let format: { channels: number; sampleRate: number; bitsPerSample: number } | undefined;
  let offset = RIFF_HEADER_BYTES;
  while (offset + CHUNK_HEADER_BYTES <= wav.length) {
    const id = wav.toString('ascii', offset, offset + 4);
    const size = wav.readUInt32LE(offset + 4);
    const body = offset + CHUNK_HEADER_BYTES;
    if (id === 'fmt ') {
      if (size < 16 || body + 16 > wav.length) throw bad('fmt chunk too short');
      if (wav.readUInt16LE(body) !== 1) throw bad(`format tag ${wav.readUInt16LE(body)} is not PCM`);
      format = { channels: wav.readUInt16LE(body + 2), sampleRate: wav.readUInt32LE(body + 4), bitsPerSample: wav.readUInt16LE(body + 14) };
      if (format.channels === 0 || format.sampleRate === 0 || format.bitsPerSample === 0) throw bad('fmt chunk has zero fields');
    } else if (id === 'data') {
      if (!format) throw bad('data chunk before fmt chunk');
      const dataLength = Math.min(size, wav.length - body);
      const bytesPerSecond = format.sampleRate * format.channels * (format.bitsPerSample / 8);
      return { ...format, dataOffset: body, dataLength, durationMs: Math.round((dataLength / bytesPerSecond) * 1000) };
    }
    // Chunks are word-aligned: an odd size is followed by one pad byte.
    offset = body + size + (size % 2);
  }
  throw bad(format ? 'no data chunk' : 'no fmt chunk');
}

/** A copy of the WAV cut to the PCM present, with the RIFF and data sizes set to match. */
export function withExactSizes(wav: Buffer): Buffer {
  const info = parseWav(wav);
  const fixed = Buffer.from(wav.subarray(0, info.dataOffset + info.dataLength));
  fixed.writeUInt32LE(fixed.length - CHUNK_HEADER_BYTES, 4);
  fixed.writeUInt32LE(info.dataLength, info.dataOffset - 4);
  return fixed;
}

/** A 16-bit PCM WAV around raw samples, for tests and for silence. */
export function pcmToWav(pcm: Buffer, sampleRate: number, channels: number): Buffer {
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + pcm.length, 4);
  header.write('WAVEfmt ', 8, 'ascii');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(channels, 22);
  header.writeUInt32LE(sampleRate, 24);
  header.writeUInt32LE(sampleRate * channels * 2, 28);
  header.writeUInt16LE(channels * 2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(pcm.length, 40);
  return Buffer.concat([header, pcm]);
}

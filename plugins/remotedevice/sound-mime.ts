/**
 * The type of a sound by its first bytes (wav, ogg, flac, mp3): what the gateway tells a device it
 * is to play. The media store also holds pictures, and a media id the model passes as a sound must
 * be one.
 */
export function soundMime(bytes: Uint8Array): string | undefined {
  const ascii = (offset: number, text: string) => [...text].every((c, i) => bytes[offset + i] === c.charCodeAt(0));
  if (ascii(0, 'RIFF') && ascii(8, 'WAVE')) return 'audio/wav';
  if (ascii(0, 'OggS')) return 'audio/ogg';
  if (ascii(0, 'fLaC')) return 'audio/flac';
  if (ascii(0, 'ID3') || (bytes[0] === 0xff && ((bytes[1] ?? 0) & 0xe0) === 0xe0)) return 'audio/mpeg';
  return undefined;
}

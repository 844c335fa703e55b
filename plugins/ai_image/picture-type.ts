/**
 * Whether bytes are a picture, checked before they reach the media store: the store also takes
 * audio, and what an images API sends must be stored only when it is an image (an error page or a
 * sound is refused, and nothing is written). The magic numbers are the store's image formats.
 */
export function pictureType(bytes: Uint8Array): string | undefined {
  const at = (i: number): number => bytes[i] ?? -1;
  const ascii = (offset: number, text: string): boolean => [...text].every((c, i) => at(offset + i) === c.charCodeAt(0));
  if ([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a].every((b, i) => at(i) === b)) return 'image/png';
  if (at(0) === 0xff && at(1) === 0xd8 && at(2) === 0xff) return 'image/jpeg';
  if (ascii(0, 'GIF87a') || ascii(0, 'GIF89a')) return 'image/gif';
  if (ascii(0, 'RIFF') && ascii(8, 'WEBP')) return 'image/webp';
  return undefined;
}

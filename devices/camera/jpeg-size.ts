/**
 * Width and height of a JPEG, read from its SOF (start of frame) marker. A camera may ignore the
 * requested resolution and pick the nearest one it supports, so the size reported to callers is
 * the one inside the picture, not the one asked for. Only the marker headers are walked: the
 * entropy-coded data after SOS is never decoded.
 */
import { HomeAgentError } from '../../src/sdk/index.js';

export interface JpegSize {
  width: number;
  height: number;
}

/** Every JPEG starts with SOI (ff d8) followed by the first marker's ff. */
export function hasJpegMagic(data: Uint8Array): boolean {
  return data.length >= 3 && data[0] === 0xff && data[1] === 0xd8 && data[2] === 0xff;
}

const SOS = 0xda;
const EOI = 0xd9;

/** SOF0..SOF15, except DHT (c4), JPG (c8) and DAC (cc), which share the range. */
function isStartOfFrame(marker: number): boolean {
  return marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
}

/** Markers that stand alone, without a length field: TEM and the restart markers RST0..RST7. */
function hasNoLength(marker: number): boolean {
  return marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7);
}

function imageError(problem: string): HomeAgentError {
  return new HomeAgentError('HA_ERR_CAMERA_IMAGE', `not a complete JPEG image: ${problem}`);
}

export function readJpegSize(data: Uint8Array): JpegSize {
  if (!hasJpegMagic(data)) throw imageError(`it does not start with ff d8 ff (${data.length} bytes)`);
  let offset = 2;
  while (offset < data.length) {
    if (data[offset] !== 0xff) throw imageError(`expected a marker at byte ${offset}`);
    // Any number of ff fill bytes may come before the marker code.
    while (offset < data.length && data[offset] === 0xff) offset++;
    if (offset >= data.length) break;
    const marker = data[offset] as number;
    offset++;
    if (hasNoLength(marker)) continue;
    if (marker === SOS || marker === EOI) throw imageError(`no frame header (SOF) before the image data at byte ${offset - 2}`);
    if (offset + 2 > data.length) break;
    const length = ((data[offset] as number) << 8) | (data[offset + 1] as number);
    if (length < 2) throw imageError(`marker ${marker.toString(16)} at byte ${offset - 2} has a bad length ${length}`);
    if (isStartOfFrame(marker)) {
      // Segment: length(2) precision(1) height(2) width(2) components...
      if (length < 7 || offset + 7 > data.length) break;
      const height = ((data[offset + 3] as number) << 8) | (data[offset + 4] as number);
      const width = ((data[offset + 5] as number) << 8) | (data[offset + 6] as number);
      if (width === 0 || height === 0) throw imageError(`the frame header gives a size of ${width}x${height}`);
      return { width, height };
    }
    offset += length;
  }
  throw imageError(`it is truncated: ${data.length} bytes end before the frame header (SOF)`);
}

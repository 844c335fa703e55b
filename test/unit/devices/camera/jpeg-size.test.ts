import t from 'tap';
import { captureJpeg } from '../../../../devices/camera/fswebcam-capture.js';
import { hasJpegMagic, readJpegSize } from '../../../../devices/camera/jpeg-size.js';
import { fswebcamMissing } from '../../../helpers/system-tools.js';

/** A hand-made header: SOI, an APP0 segment, fill bytes, a restart marker, then SOF2 (progressive). */
function handMade(width: number, height: number): Buffer {
  const app0 = [0xff, 0xe0, 0x00, 0x06, 0x41, 0x42, 0x43, 0x44];
  const sof2 = [0xff, 0xc2, 0x00, 0x0b, 0x08, height >> 8, height & 0xff, width >> 8, width & 0xff, 0x01, 0x01, 0x11, 0x00];
  return Buffer.from([0xff, 0xd8, ...app0, 0xff, 0xff, 0xd0, ...sof2, 0xff, 0xd9]);
}

t.test('reads the size from a hand-made header, skipping fill bytes and other segments', async (t) => {
  t.same(readJpegSize(handMade(1920, 1080)), { width: 1920, height: 1080 });
  t.same(readJpegSize(handMade(16, 4096)), { width: 16, height: 4096 });
});

t.test('DHT (c4) is not mistaken for a frame header', async (t) => {
  const dht = [0xff, 0xc4, 0x00, 0x07, 0x00, 0x01, 0x02, 0x03, 0x04];
  const data = Buffer.concat([Buffer.from([0xff, 0xd8, ...dht]), handMade(64, 48).subarray(2)]);
  t.same(readJpegSize(data), { width: 64, height: 48 });
});

t.test('reads the size of a real fswebcam picture, and refuses it cut short', { skip: fswebcamMissing() }, async (t) => {
  const { jpeg } = await captureJpeg({ device: 'TEST', resolution: '320x240', jpegQuality: 80, skipFrames: 0, timeoutMs: 20_000 });
  t.same(readJpegSize(jpeg), { width: 320, height: 240 });
  const sof = jpeg.indexOf(Buffer.from([0xff, 0xc0]));
  t.ok(sof > 0, 'the baseline frame header is there');
  for (const end of [3, 4, sof, sof + 2, sof + 6]) {
    t.throws(() => readJpegSize(jpeg.subarray(0, end)), { code: 'HA_ERR_CAMERA_IMAGE', message: /truncated/ }, `cut at ${end} bytes`);
  }
  t.same(readJpegSize(jpeg.subarray(0, sof + 9)), { width: 320, height: 240 }, 'the frame header alone is enough');
});

t.test('data that is not a JPEG, or a bad header, is a clear error', async (t) => {
  t.notOk(hasJpegMagic(Buffer.from('GIF89a')));
  t.notOk(hasJpegMagic(Buffer.alloc(0)));
  t.throws(() => readJpegSize(Buffer.alloc(0)), { code: 'HA_ERR_CAMERA_IMAGE', message: /does not start with ff d8 ff \(0 bytes\)/ });
  t.throws(() => readJpegSize(Buffer.from('GIF89a')), { code: 'HA_ERR_CAMERA_IMAGE' });
  // Image data (SOS) before any frame header.
  t.throws(() => readJpegSize(Buffer.from([0xff, 0xd8, 0xff, 0xda, 0x00, 0x02])), {
    message: /no frame header \(SOF\) before the image data/,
  });
  // Garbage where a marker should be.
  t.throws(() => readJpegSize(Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x04, 0x00, 0x00, 0x12, 0x34])), {
    message: /expected a marker at byte 8/,
  });
  // A segment length below 2 would loop forever if it were trusted.
  t.throws(() => readJpegSize(Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x01])), { message: /bad length 1/ });
  // A zero size in the frame header.
  const zero = handMade(0, 10);
  t.throws(() => readJpegSize(zero), { message: /size of 0x10/ });
});

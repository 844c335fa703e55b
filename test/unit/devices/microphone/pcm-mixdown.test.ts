import t from 'tap';
import { PcmMixdown } from '../../../../devices/microphone/pcm-mixdown.js';

function s16(...values: number[]): Buffer {
  const b = Buffer.alloc(values.length * 2);
  for (const [i, v] of values.entries()) b.writeInt16LE(v, i * 2);
  return b;
}

function s32(...values: number[]): Buffer {
  const b = Buffer.alloc(values.length * 4);
  for (const [i, v] of values.entries()) b.writeInt32LE(v, i * 4);
  return b;
}

t.test('mono 16-bit passes through, a split sample is kept for the next chunk', async (t) => {
  const mix = new PcmMixdown('S16_LE', 1);
  const bytes = s16(1, -2, 32767, -32768, 300);
  t.same([...mix.push(bytes.subarray(0, 3))], [1]);
  t.same([...mix.push(bytes.subarray(3, 4))], [-2]);
  t.same([...mix.push(bytes.subarray(4, 9))], [32767, -32768]);
  t.same([...mix.push(bytes.subarray(9))], [300]);
  t.same([...mix.push(Buffer.alloc(0))], []);
});

t.test('stereo 16-bit is the floored mean of the channels, frames split anywhere', async (t) => {
  const mix = new PcmMixdown('S16_LE', 2);
  const bytes = s16(100, 201, -1, 0, 32767, 32767, -32768, -32768, -3, 2);
  const out: number[] = [];
  for (let i = 0; i < bytes.length; i += 3) out.push(...mix.push(bytes.subarray(i, i + 3)));
  t.same(out, [150, -1, 32767, -32768, -1]);
});

t.test('32-bit keeps the top 16 bits; stereo 32-bit is mixed before scaling', async (t) => {
  const mono = new PcmMixdown('S32_LE', 1);
  t.same([...mono.push(s32(0x7fffffff, -0x80000000, 0x00010000, 0x0000ffff, -1))], [32767, -32768, 1, 0, -1]);
  const stereo = new PcmMixdown('S32_LE', 2);
  const bytes = s32(0x00010000, 0x00020000, 0x7fffffff, 0x7fffffff, -0x80000000, 0x7fffffff);
  t.same([...stereo.push(bytes.subarray(0, 5)), ...stereo.push(bytes.subarray(5))], [1, 32767, -1]);
});

t.test('reset forgets a partial frame', async (t) => {
  const mix = new PcmMixdown('S16_LE', 1);
  t.same([...mix.push(Buffer.from([0x01]))], []);
  mix.reset();
  t.same([...mix.push(s16(7))], [7]);
});

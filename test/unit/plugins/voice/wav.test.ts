import t from 'tap';
import { parseWav, pcmToWav, withExactSizes } from '../../../../plugins/voice/wav.js';
import { expectError } from '../../fixtures/support.js';

t.test('pcmToWav and parseWav agree', async (t) => {
  const wav = pcmToWav(Buffer.alloc(32000), 16000, 1);
  t.same(parseWav(wav), { sampleRate: 16000, channels: 1, bitsPerSample: 16, dataOffset: 44, dataLength: 32000, durationMs: 1000 });
});

t.test('a streamed header (placeholder sizes) is cut to the bytes present', async (t) => {
  const wav = pcmToWav(Buffer.alloc(1000, 7), 22050, 1);
  wav.writeUInt32LE(0x7ffff024, 4);
  wav.writeUInt32LE(0x7ffff000, 40);
  t.equal(parseWav(wav).dataLength, 1000);
  const fixed = withExactSizes(wav);
  t.equal(fixed.readUInt32LE(4), fixed.length - 8);
  t.equal(fixed.readUInt32LE(40), 1000);
  t.equal(wav.readUInt32LE(40), 0x7ffff000, 'the input is not modified');
});

t.test('chunks before data are skipped, odd sizes padded', async (t) => {
  const plain = pcmToWav(Buffer.alloc(8), 8000, 2);
  const list = Buffer.concat([Buffer.from('LIST'), Buffer.from([3, 0, 0, 0]), Buffer.from('abc'), Buffer.alloc(1)]);
  const wav = Buffer.concat([plain.subarray(0, 36), list, plain.subarray(36)]);
  t.match(parseWav(wav), { channels: 2, dataOffset: 56, dataLength: 8 });
});

t.test('not a PCM WAV', async (t) => {
  const cases: Array<[Buffer, RegExp]> = [
    [Buffer.from('hello'), /no RIFF/],
    [Buffer.from('RIFF\0\0\0\0WAVE'), /no fmt chunk/],
    [
      (() => {
        const w = pcmToWav(Buffer.alloc(4), 8000, 1);
        w.writeUInt16LE(3, 20);
        return w;
      })(),
      /format tag 3/,
    ],
    [pcmToWav(Buffer.alloc(4), 8000, 1).subarray(0, 36), /no data chunk/],
  ];
  for (const [wav, message] of cases) t.match(expectError(t, () => parseWav(wav), 'HA_ERR_VOICE_TTS').message, message);
});

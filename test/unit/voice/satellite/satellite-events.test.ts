// The satellite events read and written by the plugin: checked shapes with coded errors for what a
// satellite may send, and the answer's audio cut into whole-frame chunks with their times.
import t from 'tap';
import {
  audioEvents,
  chunkSamples,
  readPcmFormat,
  readRunPipeline,
  readSatelliteInfo,
} from '../../../../plugins/voice/satellites/satellite-events.js';
import { expectError } from '../../fixtures/support.js';

t.test('run-pipeline: the start and end stages and the wake word, or a coded refusal', async (t) => {
  t.same(readRunPipeline({ type: 'run-pipeline', data: { start_stage: 'asr', end_stage: 'tts', wake_word_name: 'ok_nabu' } }), {
    start: 'asr',
    end: 'tts',
    wakeWord: 'ok_nabu',
  });
  t.same(readRunPipeline({ type: 'run-pipeline', data: { start_stage: 'wake', end_stage: 'handle', restart_on_end: true } }), {
    start: 'wake',
    end: 'handle',
  });
  expectError(t, () => readRunPipeline({ type: 'run-pipeline', data: { start_stage: 'tts', end_stage: 'tts' } }), 'HA_ERR_VOICE_SATELLITE');
  expectError(
    t,
    () => readRunPipeline({ type: 'run-pipeline', data: { start_stage: 'asr', end_stage: 'dance' } }),
    'HA_ERR_VOICE_SATELLITE',
  );
  expectError(t, () => readRunPipeline({ type: 'run-pipeline', data: {} }), 'HA_ERR_VOICE_SATELLITE');
});

t.test('info: the satellite section, whatever else the server says', async (t) => {
  t.same(
    readSatelliteInfo({ type: 'info', data: { satellite: { name: 'Kitchen', area: 'kitchen', active_wake_words: ['ok_nabu', 3] } } }),
    {
      name: 'Kitchen',
      area: 'kitchen',
      wakeWords: ['ok_nabu'],
    },
  );
  t.equal(readSatelliteInfo({ type: 'info', data: { asr: [] } }), undefined, 'not a satellite');
  t.same(readSatelliteInfo({ type: 'info', data: { satellite: {} } }), { wakeWords: [] });
});

t.test('audio chunks: 16 kHz 16-bit, stereo mixed down; anything else refused by name', async (t) => {
  const mono = Buffer.alloc(6);
  mono.writeInt16LE(100, 0);
  mono.writeInt16LE(-200, 2);
  mono.writeInt16LE(300, 4);
  t.same([...chunkSamples({ rate: 16000, width: 2, channels: 1 }, mono)], [100, -200, 300]);
  const stereo = Buffer.alloc(8);
  stereo.writeInt16LE(100, 0);
  stereo.writeInt16LE(300, 2);
  stereo.writeInt16LE(-1000, 4);
  stereo.writeInt16LE(0, 6);
  t.same([...chunkSamples({ rate: 16000, width: 2, channels: 2 }, stereo)], [200, -500]);
  t.same([...chunkSamples({ rate: 16000, width: 2, channels: 1 }, undefined)], []);
  const refused = (format: { rate: number; width: number; channels: number }, bytes: number, message: RegExp) =>
    t.throws(() => chunkSamples(format, Buffer.alloc(bytes)), { code: 'HA_ERR_VOICE_SATELLITE', message });
  refused({ rate: 22050, width: 2, channels: 1 }, 4, /22050 Hz/);
  refused({ rate: 16000, width: 4, channels: 1 }, 4, /32-bit/);
  refused({ rate: 16000, width: 2, channels: 3 }, 6, /3 channel/);
  refused({ rate: 16000, width: 2, channels: 2 }, 6, /6 bytes is not a whole number of 4-byte frames/);
  expectError(t, () => readPcmFormat({ type: 'audio-chunk', data: { rate: '16000', width: 2, channels: 1 } }), 'HA_ERR_VOICE_SATELLITE');
  t.same(readPcmFormat({ type: 'audio-start', data: { rate: 16000, width: 2, channels: 1, timestamp: 5 } }), {
    rate: 16000,
    width: 2,
    channels: 1,
  });
});

t.test("the answer's audio: start, whole-frame chunks with their times, stop", async (t) => {
  const pcm = Buffer.alloc(22050 * 2); // one second at 22 050 Hz
  const events = audioEvents(pcm, { rate: 22050, width: 2, channels: 1 }, 2049);
  t.same(events[0], { type: 'audio-start', data: { rate: 22050, width: 2, channels: 1, timestamp: 0 } });
  const chunks = events.filter((e) => e.type === 'audio-chunk');
  t.ok(
    chunks.every((e) => (e.payload?.length ?? 0) % 2 === 0),
    'an odd chunk size is rounded down to whole samples',
  );
  t.equal(
    chunks.reduce((sum, e) => sum + (e.payload?.length ?? 0), 0),
    pcm.length,
  );
  t.equal(chunks[1]?.data.timestamp, Math.round((1024 / 22050) * 1000));
  t.same(events.at(-1), { type: 'audio-stop', data: { timestamp: 1000 } });
  t.same(
    audioEvents(Buffer.alloc(0), { rate: 16000, width: 2, channels: 1 }, 2048).map((e) => e.type),
    ['audio-start', 'audio-stop'],
  );
});

#!/usr/bin/env node
/**
 * A stand-in for `arecord` in integration tests, put first on the daemon's PATH under that name. An
 * ALSA file-plugin capture device is unpaced and endless (arecord reads gigabytes a second and stale
 * data past the file's end), which no real microphone does; this script gives the microphone
 * driver what a sound card would: the raw PCM file named by PACED_ARECORD_FILE at real-time pace,
 * then silence until it is killed. It checks arecord's arguments as the driver passes them
 * (-q -D dev -t raw -f S16_LE -r rate -c ch -), so a driver change that breaks the command fails
 * the test. PACED_ARECORD_DEVICE, when set, is the only device that "exists": any other is refused
 * the way arecord refuses a missing device.
 */
import { closeSync, openSync, readSync } from 'node:fs';

const args = process.argv.slice(2);
const fail = (message) => {
  process.stderr.write(`arecord: main:831: ${message}\n`);
  process.exit(1);
};

const options = {};
for (let i = 0; i < args.length; i++) {
  const arg = args[i];
  if (arg === '-q') continue;
  if (arg === '-') {
    if (i !== args.length - 1) fail('"-" must be the last argument');
    continue;
  }
  const value = args[i + 1];
  if (!['-D', '-t', '-f', '-r', '-c'].includes(arg) || value === undefined) fail(`unexpected argument ${arg}`);
  options[arg] = value;
  i++;
}
if (args.at(-1) !== '-') fail('no "-" (standard output) argument');
if (options['-t'] !== 'raw' || options['-f'] !== 'S16_LE') fail(`expected -t raw -f S16_LE, got ${args.join(' ')}`);
const rate = Number(options['-r']);
const channels = Number(options['-c']);
if (![8000, 16000].includes(rate) || ![1, 2].includes(channels)) fail(`unexpected rate/channels ${rate}/${channels}`);
const wanted = process.env.PACED_ARECORD_DEVICE;
if (wanted !== undefined && options['-D'] !== wanted) {
  fail(`audio open error: No such file or directory (device "${options['-D']}")`);
}

const file = process.env.PACED_ARECORD_FILE;
const fd = file ? openSync(file, 'r') : undefined;
const CHUNK_MS = 20;
const chunkBytes = (rate * channels * 2 * CHUNK_MS) / 1000;
const started = process.hrtime.bigint();
let sent = 0;

function nextChunk() {
  const chunk = Buffer.alloc(chunkBytes);
  if (fd !== undefined) {
    const read = readSync(fd, chunk, 0, chunkBytes, null);
    if (read < chunkBytes) {
      // The file ended: the rest of this chunk and every later one is silence.
      closeSync(fd);
      return { chunk, done: true };
    }
  }
  return { chunk, done: false };
}

let fileOpen = fd !== undefined;
function pump() {
  const elapsedMs = Number(process.hrtime.bigint() - started) / 1e6;
  // Catch up on whatever the timer was late for, so the pace stays real time on average.
  while (sent * CHUNK_MS <= elapsedMs) {
    let chunk = Buffer.alloc(chunkBytes);
    if (fileOpen) {
      const next = nextChunk();
      chunk = next.chunk;
      if (next.done) fileOpen = false;
    }
    process.stdout.write(chunk);
    sent++;
  }
  setTimeout(pump, CHUNK_MS / 2);
}

process.on('SIGTERM', () => process.exit(0));
process.on('SIGINT', () => process.exit(0));
process.stdout.on('error', () => process.exit(0));
pump();

import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import t from 'tap';
import type { PcmAudio } from '../../../../plugins/voice/speech.js';
import { CommandStt, type CommandSttOptions, commandArgs } from '../../../../plugins/voice/stt/command-stt.js';
import { until } from '../../../helpers/until.js';
import { expectErrorAsync } from '../../fixtures/support.js';

/** A stand-in recogniser: reads the WAV header and prints what it found, so the transcript depends on the audio. */
const READ_WAV = `
const { readFileSync } = require('node:fs');
const args = process.argv.slice(2);
const path = args[args.indexOf('-f') + 1];
const wav = readFileSync(path);
if (wav.toString('ascii', 0, 4) !== 'RIFF') { console.error('not a wav: ' + path); process.exit(2); }
const rate = wav.readUInt32LE(24);
const ms = Math.round((wav.readUInt32LE(40) / 2 / rate) * 1000);
console.log('  heard ' + ms + ' ms at ' + rate + ' Hz in ' + args[args.indexOf('-l') + 1] + ' from ' + path + '  \\n');
`;

function utterance(ms: number, sampleRate = 16000): PcmAudio {
  return { samples: new Int16Array(Math.round((ms / 1000) * sampleRate)).fill(1000), sampleRate };
}

function script(dir: string, name: string, body: string): string {
  const path = join(dir, name);
  writeFileSync(path, body);
  chmodSync(path, 0o755);
  return path;
}

/** Alive and not a zombie (a container's init may be slow to reap). */
function running(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

function stt(command: string[], options: Partial<CommandSttOptions> = {}): CommandStt {
  return new CommandStt({ command, timeoutMs: 10_000, language: 'auto', maxOutputChars: 4000, ...options });
}

t.test('commandArgs replaces the placeholders inside each argument, and nothing is a shell', async (t) => {
  t.same(commandArgs(['whisper-cli', '-f', '{wav}', '--language={language}', '$(reboot)'], '/tmp/a b.wav', 'zh'), {
    program: 'whisper-cli',
    args: ['-f', '/tmp/a b.wav', '--language=zh', '$(reboot)'],
  });
});

t.test('the program reads the WAV and its stdout is the transcript; the WAV is removed after', async (t) => {
  const dir = t.testdir({});
  const reader = script(dir, 'reader.cjs', READ_WAV);
  const command = [process.execPath, reader, '-f', '{wav}', '-l', '{language}'];
  const first = await stt(command).transcribe(utterance(1500), {});
  t.match(first.text, /^heard 1500 ms at 16000 Hz in auto from (\S+)$/, 'trimmed');
  t.equal(first.language, undefined);
  const wavPath = / from (\S+)$/.exec(first.text)?.[1] ?? '';
  t.notOk(existsSync(wavPath), 'the WAV is gone');
  t.notOk(existsSync(dirname(wavPath)), 'its private directory too');

  const second = await stt(command, { language: 'en' }).transcribe(utterance(250, 8000), { language: 'zh' });
  t.match(second.text, /^heard 250 ms at 8000 Hz in zh from /);
  const third = await stt(command, { language: 'en' }).transcribe(utterance(250, 8000), {});
  t.match(third.text, / in en from /);
});

t.test('a failing program: exit status and stderr in the message, the WAV still removed', async (t) => {
  const dir = t.testdir({});
  const failing = script(dir, 'fail.sh', '#!/bin/sh\necho "$2" > "$1.seen"\necho "model file not found: /models/x.bin" >&2\nexit 3\n');
  const error = await expectErrorAsync(
    t,
    () => stt([failing, join(dir, 'out'), '{wav}']).transcribe(utterance(100), {}),
    'HA_ERR_VOICE_STT',
  );
  t.match(error.message, /speech-to-text command ".*fail\.sh" failed \(exit 3\): model file not found: \/models\/x\.bin/);
  const wavPath = readFileSync(join(dir, 'out.seen'), 'utf8').trim();
  t.notOk(existsSync(dirname(wavPath)), 'the temp directory is removed after a failure');
});

t.test('a missing or non-executable program', async (t) => {
  const dir = t.testdir({ 'not-exec.sh': '#!/bin/sh\necho hi\n' });
  const missing = await expectErrorAsync(t, () => stt(['no-such-whisper-cli', '{wav}']).transcribe(utterance(100), {}), 'HA_ERR_VOICE_STT');
  t.equal(missing.message, 'speech-to-text command: program "no-such-whisper-cli" was not found (not installed, or not on PATH)');
  const notExec = await expectErrorAsync(
    t,
    () => stt([join(dir, 'not-exec.sh'), '{wav}']).transcribe(utterance(100), {}),
    'HA_ERR_VOICE_STT',
  );
  t.match(notExec.message, /is not executable/);
});

t.test('a hung program is stopped at the timeout', async (t) => {
  const dir = t.testdir({});
  const hung = script(dir, 'hang.sh', '#!/bin/sh\nexec sleep 600\n');
  const error = await expectErrorAsync(
    t,
    () => stt([hung, '{wav}'], { timeoutMs: 300 }).transcribe(utterance(100), {}),
    'HA_ERR_VOICE_STT',
  );
  t.match(error.message, /did not finish within 300 ms and was stopped/);
});

t.test('cancelled by the caller: the program is killed with its children', async (t) => {
  const dir = t.testdir({});
  const pidFile = join(dir, 'sleep.pid');
  // The shell's child holds the output pipe open: only killing the process group ends it.
  const hung = script(dir, 'hang.sh', `#!/bin/sh\nsleep 600 &\necho $! > "${pidFile}.tmp"\nmv "${pidFile}.tmp" "${pidFile}"\nwait\n`);
  const controller = new AbortController();
  const call = stt([hung, '{wav}']).transcribe(utterance(100), { signal: controller.signal });
  await until('the program to start its child', () => (existsSync(pidFile) ? true : undefined));
  controller.abort();
  const error = await expectErrorAsync(t, () => call, 'HA_ERR_VOICE_STT');
  t.match(error.message, /was cancelled/);
  const sleepPid = Number(readFileSync(pidFile, 'utf8'));
  await until('the grandchild to be killed', () => (running(sleepPid) ? undefined : true));
  t.pass(`the child's own child (pid ${sleepPid}) is gone too`);

  const before = new AbortController();
  before.abort();
  const early = await expectErrorAsync(
    t,
    () => stt([hung, '{wav}']).transcribe(utterance(100), { signal: before.signal }),
    'HA_ERR_VOICE_STT',
  );
  t.match(early.message, /cancelled/);
});

t.test('runaway output is stopped; a long transcript is refused', async (t) => {
  const dir = t.testdir({});
  const flood = script(
    dir,
    'flood.cjs',
    'const line = "x".repeat(1000) + "\\n"; const write = () => { while (process.stdout.write(line)); process.stdout.once("drain", write); }; write();',
  );
  const error = await expectErrorAsync(
    t,
    () => stt([process.execPath, flood, '{wav}'], { maxOutputChars: 16 }).transcribe(utterance(100), {}),
    'HA_ERR_VOICE_STT',
  );
  t.match(error.message, /printed more than 1088 bytes and was stopped/);
  const echo = script(dir, 'echo.sh', '#!/bin/sh\necho "01234567890123456789"\n');
  const long = await expectErrorAsync(
    t,
    () => stt([echo, '{wav}'], { maxOutputChars: 16 }).transcribe(utterance(100), {}),
    'HA_ERR_VOICE_STT',
  );
  t.match(long.message, /20 characters, over plugin\.voice\.stt\.max_output_chars \(16\)/);
});

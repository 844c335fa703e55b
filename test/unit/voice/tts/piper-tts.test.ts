import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { PiperTts, type PiperTtsOptions } from '../../../../plugins/voice/tts/piper-tts.js';
import { parseWav } from '../../../../plugins/voice/wav.js';
import { expectErrorAsync } from '../../fixtures/support.js';

/**
 * A stand-in for piper (not installed here) that behaves like it: reads the text from stdin,
 * insists on --model <existing file> and --output-raw, and writes raw S16LE, 100 samples per
 * character of the first line, so the audio length proves the text arrived. It records its
 * arguments and input next to itself.
 */
const FAKE_PIPER = `#!/usr/bin/env node
const { existsSync, writeFileSync } = require('node:fs');
const args = process.argv.slice(2);
const model = args[args.indexOf('--model') + 1];
if (!model || !existsSync(model)) { console.error('Model file does not exist: ' + model); process.exit(1); }
if (!args.includes('--output-raw')) { console.error('expected --output-raw'); process.exit(1); }
let input = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => { input += chunk; });
process.stdin.on('end', () => {
  writeFileSync(__filename + '.log', JSON.stringify({ args, input }));
  if (input.includes('FAIL')) { console.error('[error] phonemizer crashed'); process.exit(134); }
  if (input.includes('HANG')) { setInterval(() => {}, 1000); return; }
  const line = input.split('\\n')[0];
  const pcm = Buffer.alloc([...line].length * 100 * 2 + (input.includes('ODD') ? 1 : 0));
  for (let i = 0; i + 1 < pcm.length; i += 2) pcm.writeInt16LE((i * 37) % 20000 - 10000, i);
  process.stdout.write(pcm);
});
`;

function setup(dir: string): { program: string; en: string; log: () => { args: string[]; input: string } } {
  const program = join(dir, 'piper');
  writeFileSync(program, `#!${process.execPath}\n${FAKE_PIPER.split('\n').slice(1).join('\n')}`);
  chmodSync(program, 0o755);
  const en = join(dir, 'en_US-lessac-medium.onnx');
  writeFileSync(en, 'not really onnx');
  writeFileSync(`${en}.json`, JSON.stringify({ audio: { sample_rate: 22050, quality: 'medium' }, espeak: { voice: 'en-us' } }));
  return { program, en, log: () => JSON.parse(readFileSync(`${program}.log`, 'utf8')) };
}

function piper(options: Partial<PiperTtsOptions> & { program: string }): PiperTts {
  return new PiperTts({ models: { en: '', zh: '' }, timeoutMs: 10_000, maxChars: 2000, ...options });
}

t.test('text on stdin, raw audio out, wrapped at the model sample rate', async (t) => {
  const dir = t.testdir({});
  const fake = setup(dir);
  const tts = piper({ program: fake.program, models: { en: fake.en, zh: '' } });
  const speech = await tts.synthesize('The light is on.\nThe door is locked.', { language: 'en' });
  const text = 'The light is on. The door is locked.';
  t.same(fake.log(), { args: ['--model', fake.en, '--output-raw'], input: `${text}\n` }, 'one line: one utterance');
  t.equal(speech.sampleRate, 22050);
  t.equal(speech.channels, 1);
  const info = parseWav(speech.wav);
  t.equal(info.dataLength, text.length * 100 * 2);
  t.equal(speech.wav.readUInt32LE(4), speech.wav.length - 8);
  t.equal(speech.durationMs, Math.round(((text.length * 100) / 22050) * 1000));

  const odd = await tts.synthesize('ODD', { language: 'en' });
  t.equal(parseWav(odd.wav).dataLength, 600, 'a trailing half sample is dropped');
  const options = await tts.synthesize('--help -v xx', { language: 'en' });
  t.equal(fake.log().input, '--help -v xx\n', 'text that looks like options stays text');
  t.ok(options.durationMs > 0);
});

t.test('a language without a model fails so the fallback can speak it', async (t) => {
  const dir = t.testdir({});
  const fake = setup(dir);
  const error = await expectErrorAsync(
    t,
    () => piper({ program: fake.program, models: { en: fake.en, zh: '' } }).synthesize('你好', { language: 'zh' }),
    'HA_ERR_VOICE_TTS',
  );
  t.equal(error.message, 'no piper model for zh (plugin.voice.tts.piper_model_zh is empty)');
});

t.test('a model without its .onnx.json, or with a bad one', async (t) => {
  const dir = t.testdir({ 'bare.onnx': 'x', 'bad.onnx': 'x', 'bad.onnx.json': '{"audio":{}}', 'junk.onnx': 'x', 'junk.onnx.json': '{' });
  const fake = setup(dir);
  const bare = await expectErrorAsync(
    t,
    () => piper({ program: fake.program, models: { en: join(dir, 'bare.onnx'), zh: '' } }).synthesize('hi', { language: 'en' }),
    'HA_ERR_VOICE_TTS',
  );
  t.match(bare.message, /bare\.onnx\.json cannot be read/);
  const bad = await expectErrorAsync(
    t,
    () => piper({ program: fake.program, models: { en: join(dir, 'bad.onnx'), zh: '' } }).synthesize('hi', { language: 'en' }),
    'HA_ERR_VOICE_TTS',
  );
  t.match(bad.message, /has no valid audio\.sample_rate/);
  const junk = await expectErrorAsync(
    t,
    () => piper({ program: fake.program, models: { en: join(dir, 'junk.onnx'), zh: '' } }).synthesize('hi', { language: 'en' }),
    'HA_ERR_VOICE_TTS',
  );
  t.match(junk.message, /is not JSON/);

  // Installed later: the failed read is not cached.
  const tts = piper({ program: fake.program, models: { en: join(dir, 'bare.onnx'), zh: '' } });
  await expectErrorAsync(t, () => tts.synthesize('hi', { language: 'en' }), 'HA_ERR_VOICE_TTS');
  writeFileSync(join(dir, 'bare.onnx.json'), JSON.stringify({ audio: { sample_rate: 16000 } }));
  t.equal((await tts.synthesize('hi', { language: 'en' })).sampleRate, 16000);
});

t.test('piper missing, failing, hung', async (t) => {
  const dir = t.testdir({});
  const fake = setup(dir);
  const missing = await expectErrorAsync(
    t,
    () => piper({ program: join(dir, 'no-piper'), models: { en: fake.en, zh: '' } }).synthesize('hi', { language: 'en' }),
    'HA_ERR_VOICE_TTS',
  );
  t.match(missing.message, /^piper: program ".*no-piper" was not found/);
  const failing = await expectErrorAsync(
    t,
    () => piper({ program: fake.program, models: { en: fake.en, zh: '' } }).synthesize('FAIL', { language: 'en' }),
    'HA_ERR_VOICE_TTS',
  );
  t.match(failing.message, /failed \(exit 134\): \[error\] phonemizer crashed/);
  const wrongModel = await expectErrorAsync(
    t,
    () => piper({ program: fake.program, models: { en: join(dir, 'gone.onnx'), zh: '' } }).synthesize('hi', { language: 'en' }),
    'HA_ERR_VOICE_TTS',
  );
  t.match(wrongModel.message, /gone\.onnx\.json cannot be read/, 'the config is checked before piper runs');
  const hung = await expectErrorAsync(
    t,
    () => piper({ program: fake.program, models: { en: fake.en, zh: '' }, timeoutMs: 300 }).synthesize('HANG', { language: 'en' }),
    'HA_ERR_VOICE_TTS',
  );
  t.match(hung.message, /did not finish within 300 ms and was stopped/);
  const empty = await expectErrorAsync(
    t,
    () => piper({ program: fake.program, models: { en: fake.en, zh: '' } }).synthesize(' ', { language: 'en' }),
    'HA_ERR_VOICE_TTS',
  );
  t.match(empty.message, /empty/);
  const long = await expectErrorAsync(
    t,
    () => piper({ program: fake.program, models: { en: fake.en, zh: '' }, maxChars: 10 }).synthesize('x'.repeat(11), { language: 'en' }),
    'HA_ERR_VOICE_TTS',
  );
  t.match(long.message, /11 characters, over plugin\.voice\.tts\.max_chars \(10\)/);
});

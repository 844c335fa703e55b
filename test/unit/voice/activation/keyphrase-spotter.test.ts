/**
 * The local wake word on the real pocketsphinx: speech made with espeak-ng (resampled to 16 kHz by
 * sox) goes through the spotter in microphone-sized pieces, as the plugin feeds it.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { type KeyphraseDetection, KeyphraseSpotter, phraseWords } from '../../../../plugins/voice/activation/keyphrase-spotter.js';
import { keyphraseMissing } from '../../../helpers/system-tools.js';
import { expectErrorAsync } from '../../fixtures/support.js';

/** 16 kHz mono PCM of a text, with a second of silence either side (the decoder ends utterances on silence). */
function speech(text: string, voice = 'en-us+f3', speed = 150, pitch = 70): Int16Array {
  const wav = execFileSync('espeak-ng', ['-v', voice, '-s', String(speed), '-p', String(pitch), '--stdout', text]);
  const raw = execFileSync(
    'sox',
    ['-t', 'wav', '-', '-t', 'raw', '-r', '16000', '-c', '1', '-b', '16', '-e', 'signed', '-', 'pad', '1', '1'],
    {
      input: wav,
    },
  );
  return new Int16Array(raw.buffer, raw.byteOffset, raw.byteLength / 2);
}

const limits = () => ({ min_ms: 100, max_ms: 400 });

async function spot(audio: Int16Array, phrase = 'hey home'): Promise<KeyphraseDetection[]> {
  const detections: KeyphraseDetection[] = [];
  const spotter = await KeyphraseSpotter.open({
    phrase,
    threshold: 1e-40,
    phoneLoopPenalty: 1e-20,
    restart: limits,
    onDetection: (d) => detections.push(d),
  });
  // 100 ms pieces, as arecord delivers them; then silence so the decoder's utterance ends.
  for (let i = 0; i < audio.length; i += 1600) spotter.push(audio.subarray(i, i + 1600));
  await spotter.finish();
  return detections;
}

t.test('phrases are spelled in dictionary words', async (t) => {
  t.same(phraseWords('Hey, Home!'), ['hey', 'home']);
  t.same(phraseWords('  '), []);
});

t.test('hears "hey home" said by espeak-ng, and nothing in silence', { skip: keyphraseMissing() }, async (t) => {
  const heard = await spot(speech('hey home'));
  t.ok(heard.length >= 1, `detections: ${JSON.stringify(heard)}`);
  t.equal(heard[0]?.phrase, 'hey home');
  t.ok((heard[0]?.score ?? 0) > 0 && (heard[0]?.score ?? 0) <= 1, 'the posterior is a probability');
  const quiet = await spot(new Int16Array(16000 * 3));
  t.same(quiet, [], 'nothing heard in silence');
});

t.test('a phrase the dictionary cannot spell, a missing program or model are coded errors', { skip: keyphraseMissing() }, async (t) => {
  const open = (over: Partial<Parameters<typeof KeyphraseSpotter.open>[0]>) =>
    KeyphraseSpotter.open({
      phrase: 'hey home',
      threshold: 1e-20,
      phoneLoopPenalty: 1e-10,
      restart: limits,
      onDetection: () => {},
      ...over,
    });
  let e = await expectErrorAsync(t, () => open({ phrase: 'hey zzqxhome' }), 'HA_ERR_VOICE_KEYPHRASE');
  t.match(e.message, /zzqxhome/);
  e = await expectErrorAsync(t, () => open({ program: '/nonexistent/pocketsphinx_continuous' }), 'HA_ERR_VOICE_KEYPHRASE');
  e = await expectErrorAsync(t, () => open({ program: 'no-such-pocketsphinx' }), 'HA_ERR_VOICE_KEYPHRASE');
  t.match(e.message, /apt-get install pocketsphinx/);
  e = await expectErrorAsync(t, () => open({ modelDir: t.testdir({}) }), 'HA_ERR_VOICE_KEYPHRASE');
  t.match(e.message, /pocketsphinx-en-us/);
});

t.test('a decoder that exits is restarted with growing waits and the problem is reported', { skip: keyphraseMissing() }, async (t) => {
  const dir = t.testdir({});
  // A decoder that dies at once, as one with a broken model does.
  const program = join(dir, 'dying-decoder');
  writeFileSync(program, '#!/bin/sh\necho "ERROR: acoustic model is damaged" >&2\nexit 3\n');
  chmodSync(program, 0o755);
  const problems: Array<string | undefined> = [];
  const spotter = await KeyphraseSpotter.open({
    phrase: 'hey home',
    threshold: 1e-20,
    phoneLoopPenalty: 1e-10,
    program,
    restart: limits,
    onDetection: () => {},
    onProblem: (p) => problems.push(p),
  });
  // Audio keeps coming as from the microphone; each piece is where a dead decoder is noticed.
  const piece = new Int16Array(1600);
  while (problems.filter((p) => p !== undefined).length < 3) {
    spotter.push(piece);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await spotter.close();
  const lines = problems.filter((p): p is string => p !== undefined);
  t.match(lines[0], /exited \(code 3: ERROR: acoustic model is damaged\); restarting in \d+ ms/);
  const waits = lines.map((line) => Number(/restarting in (\d+) ms/.exec(line)?.[1]));
  t.ok((waits[2] as number) > (waits[0] as number), `waits grow: ${waits.join(', ')}`);
  t.ok(
    waits.every((w) => w >= 100 && w <= 400),
    'within the configured limits',
  );
});

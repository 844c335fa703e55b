import t from 'tap';
import type { SynthesizedSpeech, SynthesizeOptions, TextToSpeech } from '../../../../plugins/voice/speech.js';
import { EspeakTts } from '../../../../plugins/voice/tts/espeak-tts.js';
import { FallbackTts } from '../../../../plugins/voice/tts/fallback-tts.js';
import { WyomingTts } from '../../../../plugins/voice/tts/wyoming-tts.js';
import { pcmToWav } from '../../../../plugins/voice/wav.js';
import { espeakMissing } from '../../../helpers/system-tools.js';
import { captureLogs, expectErrorAsync } from '../../fixtures/support.js';

/** A back end whose outcome the test switches; it records the texts it was asked for. */
class ScriptedTts implements TextToSpeech {
  fail: string | undefined;
  asked: string[] = [];
  constructor(
    readonly name: string,
    private readonly durationMs: number,
  ) {}
  async synthesize(text: string, options: SynthesizeOptions): Promise<SynthesizedSpeech> {
    this.asked.push(`${options.language}:${text}`);
    if (this.fail) throw new Error(this.fail);
    const pcm = Buffer.alloc((this.durationMs / 1000) * 16000 * 2);
    return { wav: pcmToWav(pcm, 16000, 1), sampleRate: 16000, channels: 1, durationMs: this.durationMs };
  }
}

t.test('the chosen back end speaks while it works; the result names it', async (t) => {
  const primary = new ScriptedTts('wyoming', 100);
  const fallback = new ScriptedTts('espeak', 200);
  const tts = new FallbackTts(primary, fallback);
  t.equal(tts.name, 'wyoming');
  const speech = await tts.synthesize('hello', { language: 'en' });
  t.equal(speech.backend, 'wyoming');
  t.equal(speech.durationMs, 100);
  t.same(fallback.asked, []);
});

t.test('on failure espeak speaks; one warning per outage, not per sentence', async (t) => {
  const captured = captureLogs('debug');
  const log = captured.logs.child('plugin.voice');
  const primary = new ScriptedTts('wyoming', 100);
  const fallback = new ScriptedTts('espeak', 200);
  const tts = new FallbackTts(primary, fallback, log);
  primary.fail = 'Wyoming server 10.0.0.5:10200: connection refused';
  const first = await tts.synthesize('灯开了', { language: 'zh' });
  t.equal(first.backend, 'espeak');
  t.equal(first.durationMs, 200);
  t.same(fallback.asked, ['zh:灯开了'], 'the same text and language');
  await tts.synthesize('again', { language: 'en' });
  primary.fail = undefined;
  t.equal((await tts.synthesize('back', { language: 'en' })).backend, 'wyoming');
  primary.fail = 'down again';
  await tts.synthesize('and down', { language: 'en' });

  const records = captured.records().map((r) => [r.level, r.msg, r.error]);
  t.same(records, [
    ['warn', 'text-to-speech back end wyoming failed; espeak speaks instead', 'Wyoming server 10.0.0.5:10200: connection refused'],
    ['debug', 'text-to-speech back end failed again; falling back', 'Wyoming server 10.0.0.5:10200: connection refused'],
    ['info', 'text-to-speech back end works again', undefined],
    ['warn', 'text-to-speech back end wyoming failed; espeak speaks instead', 'down again'],
  ]);
});

t.test('both failing: one error naming both; a cancelled turn is not retried', async (t) => {
  const primary = new ScriptedTts('openai', 100);
  const fallback = new ScriptedTts('espeak', 200);
  primary.fail = 'HTTP 429';
  fallback.fail = 'espeak-ng is not installed';
  const tts = new FallbackTts(primary, fallback);
  const both = await expectErrorAsync(t, () => tts.synthesize('hi', { language: 'en' }), 'HA_ERR_VOICE_TTS');
  t.equal(both.message, 'openai failed (HTTP 429) and so did espeak (espeak-ng is not installed)');

  fallback.fail = undefined;
  const controller = new AbortController();
  controller.abort();
  const cancelledPrimary = new ScriptedTts('openai', 100);
  cancelledPrimary.fail = 'cancelled';
  const asked = fallback.asked.length;
  await t.rejects(new FallbackTts(cancelledPrimary, fallback).synthesize('hi', { language: 'en', signal: controller.signal }), /cancelled/);
  t.equal(fallback.asked.length, asked, 'espeak was not asked');
});

t.test('without a fallback: the result names the back end, a failure is its own', async (t) => {
  const only = new ScriptedTts('piper', 100);
  const tts = new FallbackTts(only, undefined);
  t.equal((await tts.synthesize('hi', { language: 'en' })).backend, 'piper');
  only.fail = 'no piper model for zh';
  await t.rejects(tts.synthesize('你好', { language: 'zh' }), { message: 'no piper model for zh' });
});

t.test('a dead Wyoming server: real espeak-ng speaks instead', { skip: espeakMissing() }, async (t) => {
  const dead = new WyomingTts({ host: '127.0.0.1', port: 1, voice: '', timeoutMs: 2000, maxPayloadBytes: 1 << 20, maxChars: 2000 });
  const espeak = new EspeakTts({ voices: { en: 'en-us', zh: 'cmn' }, rate: 175, timeoutMs: 20_000, maxChars: 2000 });
  const speech = await new FallbackTts(dead, espeak).synthesize('The front door is locked.', { language: 'en' });
  t.equal(speech.backend, 'espeak');
  t.ok(speech.durationMs > 300, `${speech.durationMs} ms`);
});

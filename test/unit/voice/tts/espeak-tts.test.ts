import t from 'tap';
import { EspeakTts, type EspeakTtsOptions } from '../../../../plugins/voice/tts/espeak-tts.js';
import { espeakMissing } from '../../../helpers/system-tools.js';
import { expectErrorAsync } from '../../fixtures/support.js';

function tts(options: Partial<EspeakTtsOptions> = {}): EspeakTts {
  return new EspeakTts({ voices: { en: 'en-us', zh: 'cmn' }, rate: 175, timeoutMs: 20_000, maxChars: 2000, ...options });
}

t.test('speaks English and Chinese with the configured voices; the rate changes the length', { skip: espeakMissing() }, async (t) => {
  const en = await tts().synthesize('The kitchen light is now on.', { language: 'en' });
  t.equal(en.sampleRate, 22050);
  t.ok(en.durationMs > 300, `${en.durationMs} ms`);
  const zh = await tts().synthesize('客厅的灯已经打开了。', { language: 'zh' });
  t.ok(zh.durationMs > 300, `${zh.durationMs} ms`);
  const slow = await tts({ rate: 100 }).synthesize('The kitchen light is now on.', { language: 'en' });
  t.ok(slow.durationMs > en.durationMs * 1.3, `rate 100: ${slow.durationMs} ms against ${en.durationMs} ms at 175`);
  const wrongVoice = await expectErrorAsync(
    t,
    () => tts({ voices: { en: 'en-us', zh: 'nosuchvoice' } }).synthesize('你好', { language: 'zh' }),
    'HA_ERR_VOICE_TTS',
  );
  t.match(wrongVoice.message, /voice does not exist/, 'the zh voice setting is the one used for zh');
});

t.test('refusals before espeak-ng runs', async (t) => {
  const missing = tts({ env: { PATH: t.testdir({}) } });
  const empty = await expectErrorAsync(t, () => missing.synthesize('  ', { language: 'en' }), 'HA_ERR_VOICE_TTS');
  t.match(empty.message, /empty/);
  const long = await expectErrorAsync(t, () => tts({ maxChars: 10 }).synthesize('x'.repeat(11), { language: 'en' }), 'HA_ERR_VOICE_TTS');
  t.match(long.message, /over plugin\.voice\.tts\.max_chars \(10\)/);
  const controller = new AbortController();
  controller.abort();
  const cancelled = await expectErrorAsync(
    t,
    () => missing.synthesize('hi', { language: 'en', signal: controller.signal }),
    'HA_ERR_VOICE_TTS',
  );
  t.match(cancelled.message, /cancelled/);
  const notInstalled = await expectErrorAsync(t, () => missing.synthesize('hi', { language: 'en' }), 'HA_ERR_VOICE_TTS');
  t.match(notInstalled.message, /espeak-ng is not installed/);
});

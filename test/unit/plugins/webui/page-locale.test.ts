// The page's language and the locale it writes dates and numbers in, from the browser's languages.
import t from 'tap';
import { pickLanguage, pickLocale } from '../../../../plugins/webui/page/src/locale.js';

t.test('Chinese browsers get Chinese and zh-CN dates; others English in their own locale', async (t) => {
  for (const languages of [['zh'], ['zh-CN', 'en'], ['zh-TW'], ['ZH-hk']]) {
    t.equal(pickLanguage(languages), 'zh', languages.join());
    t.equal(pickLocale(languages), 'zh-CN', `${languages.join()}: yyyy/M/d, 24-hour`);
  }
  t.equal(pickLanguage(['en-GB']), 'en');
  t.equal(pickLocale(['en-GB', 'en']), 'en-GB', 'not forced to the US');
  t.equal(pickLocale(['de-de']), 'de-DE', "a German browser's dates are German, canonicalised");
  t.equal(pickLocale([]), 'en', 'no languages at all');
  t.equal(pickLocale(['not a tag!']), 'en', 'a malformed tag falls back to English');
  const zhDate = new Intl.DateTimeFormat(pickLocale(['zh-TW']), {
    timeZone: 'UTC',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  });
  t.equal(zhDate.format(Date.UTC(2026, 11, 3, 14, 5)), '2026/12/3 14:05', 'a zh-TW browser writes the date as the page does');
});
